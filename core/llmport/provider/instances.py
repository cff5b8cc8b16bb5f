"""Named provider instances: one plugin serves several named providers.

A settings table with a ``plugin`` key declares an instance::

    [providers.groq]
    plugin = "openai"                       # the registered provider it is made from
    base_url = "https://api.groq.com/openai/v1"
    api_key_env = "GROQ_API_KEY"            # the variable its key is read from
    aliases = { fast = "llama-3.1-8b-instant" }

or ``Runtime(providers={"groq": {"plugin": "openai", ...}})``. ``groq:MODEL``
then routes to a provider of its own, made by the same factory as the one it
names, with its own settings, client, key and aliases; its capability table
is the one it was made from. The provider answers to the instance name
(errors, ``vendor=`` fields, thinking blocks, limits, budgets, fallback and
the session DAG all see ``groq``). ``plugin`` may name any registered prefix,
a built-in profile (``plugin = "groq"``) or another vendor (``"anthropic"``).

``plugin``, ``api_key_env`` and ``aliases`` are read here and never reach the
plugin; ``api_key_env`` works for every provider, named instance or not.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..errors import ConfigError
from .contract import ProviderInfo

__all__ = ["INSTANCE_KEYS", "declared_instances", "instance_settings", "with_instances"]

#: Settings the core reads for an instance; the plugin never sees them.
INSTANCE_KEYS = frozenset({"plugin", "api_key_env", "aliases"})

Settings = Mapping[str, Mapping[str, Any]]


def declared(*layers: Settings) -> dict[str, dict[str, Any]]:
    """Every provider's settings, later layers overriding earlier ones key by key."""
    merged: dict[str, dict[str, Any]] = {}
    for layer in layers:
        for name, settings in layer.items():
            merged[name] = {**merged.get(name, {}), **settings}
    return merged


def declared_instances(*layers: Settings) -> list[str]:
    """The names of the named instances ``layers`` declare (settings with ``plugin``)."""
    return [name for name, settings in declared(*layers).items() if "plugin" in settings]


def with_instances(table: Mapping[str, ProviderInfo], *layers: Settings) -> dict[str, ProviderInfo]:
    """``table`` plus one registration per declared instance (``plugin = ...`` settings)."""
    out = dict(table)
    for name, settings in declared(*layers).items():
        base = settings.get("plugin")
        if base is None:
            continue
        out[name] = _instance(name, base, settings.get("aliases"), table)
    return out


def _instance(
    name: str, base: Any, aliases: Any, table: Mapping[str, ProviderInfo]
) -> ProviderInfo:
    if not isinstance(base, str) or base not in table:
        known = ", ".join(sorted(table)) or "none"
        raise ConfigError(
            f"provider {name!r}: plugin {base!r} is not a registered provider (registered: {known})"
        )
    if name == base:
        raise ConfigError(f"provider {name!r}: an instance needs a name of its own, not {base!r}")
    if aliases is not None and not (
        isinstance(aliases, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in aliases.items())
    ):
        raise ConfigError(f"provider {name!r}: aliases must map names to model strings")
    made_from = table[base]
    # An alias names a model of this instance unless it names a provider (`qwen3:0.6b` is
    # a model here, not the prefix `qwen3`).
    own = {
        alias: target if target.partition(":")[0] in (*table, name) else f"{name}:{target}"
        for alias, target in (aliases or {}).items()
    }
    return replace(made_from, prefix=name, base=made_from.base or base, aliases=own)


def instance_settings(
    prefix: str, *layers: Settings, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The settings the plugin gets for ``prefix``: merged, the core's own keys resolved.

    ``api_key_env`` becomes ``api_key`` (read now; a missing variable is a
    :class:`ConfigError` naming it, so no other key is ever sent instead).
    """
    merged = dict(declared(*layers).get(prefix, {}))
    key_env = merged.get("api_key_env")
    for key in INSTANCE_KEYS:
        merged.pop(key, None)
    if key_env is not None and merged.get("api_key") is None:
        if not isinstance(key_env, str) or not key_env:
            raise ConfigError(f"provider {prefix!r}: api_key_env must name a variable")
        value = (os.environ if env is None else env).get(key_env)
        if not value:
            raise ConfigError(f"provider {prefix!r}: no API key: set {key_env} (or api_key)")
        merged["api_key"] = value
    return merged
