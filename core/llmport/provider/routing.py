"""Model routing: from ``"sonnet"`` or ``"openai:gpt-4o-mini"`` to a provider.

A model string is resolved in this order: a named configuration, an alias
(from configuration, then from plugins), then ``prefix:model``. Aliases may
chain (up to 8 steps). Only the first ``:`` splits, so Bedrock ids such as
``bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0`` keep theirs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from ..errors import UnknownModelError
from ..slotted import dataclass
from .config import Config
from .contract import ProviderInfo

_MAX_ALIAS_DEPTH = 8

#: The distribution that provides each first-party prefix, named in the error
#: when that prefix is used but its plugin is not installed.
KNOWN_PLUGINS: dict[str, str] = {
    "openai": "llmport-openai",
    "openai-responses": "llmport-openai",
    "anthropic": "llmport-anthropic",
    "anthropic-vertex": "llmport-anthropic",
    "gemini": "llmport-gemini",
    "gemini-vertex": "llmport-gemini",
    "bedrock": "llmport-bedrock",
    "cohere": "llmport-cohere",
    "voyage": "llmport-voyage",
    # OpenAI-compatible services: profiles of the openai plugin
    **dict.fromkeys(
        (
            "ollama",
            "vllm",
            "lmstudio",
            "openrouter",
            "groq",
            "deepseek",
            "deepseek-responses",
            "mistral",
            "xai",
            "together",
            "fireworks",
            "cerebras",
            "huggingface",
        ),
        "llmport-openai",
    ),
}


@dataclass(slots=True, frozen=True)
class Route:
    """Where a model string leads."""

    prefix: str
    model: str
    info: ProviderInfo
    options: dict[str, Any] = field(default_factory=dict)  # from a named configuration

    @property
    def qualified(self) -> str:
        return f"{self.prefix}:{self.model}"


def available_models(config: Config, providers: Mapping[str, ProviderInfo]) -> list[str]:
    names = [f"{p}:<model>" for p in sorted(providers)]
    names += sorted(config.aliases)
    names += sorted(config.configurations)
    for info in providers.values():
        names += sorted(info.aliases)
    return names


def resolve(model: str, config: Config, providers: Mapping[str, ProviderInfo]) -> Route:
    """Resolve ``model`` or raise :class:`UnknownModelError` listing what exists."""
    options: dict[str, Any] = {}
    current = model
    for _ in range(_MAX_ALIAS_DEPTH):
        if current in config.configurations:
            conf = dict(config.configurations[current])
            current = conf.pop("model")
            options = {**conf, **options}
            continue
        if current in config.aliases:
            current = config.aliases[current]
            continue
        plugin_alias = next((i for i in providers.values() if current in i.aliases), None)
        if plugin_alias is not None:
            target = plugin_alias.aliases[current]
            current = target if ":" in target else f"{plugin_alias.prefix}:{target}"
            continue
        break
    else:
        raise UnknownModelError(model, hint="alias chain too long (a cycle?)")

    prefix, sep, name = current.partition(":")
    if not sep or not name:
        raise UnknownModelError(
            model, available_models(config, providers), hint="not an alias; use 'provider:model'"
        )
    if prefix not in providers:
        raise UnknownModelError(
            model, available_models(config, providers), hint=_missing_plugin_hint(prefix)
        )
    return Route(prefix, name, providers[prefix], options)


def _missing_plugin_hint(prefix: str) -> str:
    package = KNOWN_PLUGINS.get(prefix)
    if package is None:
        return f"no provider plugin for prefix {prefix!r}"
    return f"no provider plugin for prefix {prefix!r} is installed: pip install {package}"
