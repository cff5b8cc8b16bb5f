"""Provider settings checked by type, once, before any client is made.

A wrong type is a ConfigError naming the setting.

Every table of provider settings passes :func:`check_providers`, whatever it
came from: ``Runtime(providers=...)`` when the runtime is built, and each
``[providers.NAME]`` of a configuration file or ``[tool.llmport]`` when it is
read. A setting of the wrong type is a :class:`~llmport.errors.ConfigError`
naming the provider and the setting, before any plugin sees it, so no SDK
constructor raises a raw ``TypeError`` and no request leaves with it.

The table is keyed by the setting's name, not by the plugin: a name means
the same thing to every base and profile (``timeout`` is seconds
everywhere). Which names a plugin takes stays the plugin's check (its
unknown-setting error); a value the core cannot judge (``credentials``, a
Google credentials object) is left to the plugin.

A provider's name is what ``NAME:model`` routes by, so it is a word of
letters, digits, ``_``, ``.`` and ``-`` (no colon, no space, not empty).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigError
from ..patterns import pattern

__all__ = ["PROVIDER_NAME", "SETTING_KINDS", "check_providers", "check_setting"]

#: What a provider (or named instance) may be called: what ``NAME:model`` can route by.
PROVIDER_NAME = pattern(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
#: An HTTP header name (RFC 9110 token characters).
HEADER_NAME = pattern(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: Characters that would split a header line or a URL (a value reaches both).
LINE_BREAKS = pattern(r"[\r\n\x00]")


def _text(value: Any) -> str | None:
    """What is wrong with ``value`` as a one-line string (None: nothing)."""
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    if LINE_BREAKS.search(value):
        return "must be one line (no CR, LF or NUL)"
    return None


def _url(value: Any) -> str | None:
    """What is wrong with ``value`` as an endpoint URL."""
    wrong = _text(value)
    if wrong is None and (not value.strip() or any(c.isspace() for c in value)):
        return "must be a URL without spaces"
    return wrong


def _seconds(value: Any) -> str | None:
    """What is wrong with ``value`` as a number of seconds (> 0, finite)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be a number of seconds, got {type(value).__name__}"
    if not math.isfinite(value) or value <= 0:
        return f"must be > 0 seconds and finite, got {value!r}"
    return None


def _count(value: Any) -> str | None:
    """What is wrong with ``value`` as a count (an integer >= 1)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return f"must be an integer >= 1, got {type(value).__name__}"
    return None


def _flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"must be true or false, got {type(value).__name__}"


def _headers(value: Any) -> str | None:
    """What is wrong with ``value`` as extra HTTP headers (header name -> one-line value)."""
    if not isinstance(value, Mapping):
        return f"must map header names to values, got {type(value).__name__}"
    for name, header in value.items():
        if not isinstance(name, str) or not HEADER_NAME.fullmatch(name):
            return f"has a header name that is not a token: {name!r}"
        if (wrong := _text(header)) is not None:
            return f"[{name!r}] {wrong}"
    return None


def _names(value: Any) -> str | None:
    """What is wrong with ``value`` as a table of non-empty strings to strings."""
    if not isinstance(value, Mapping):
        return f"must map names to strings, got {type(value).__name__}"
    for name, target in value.items():
        if not isinstance(name, str) or not name or not isinstance(target, str) or not target:
            return f"must map non-empty names to non-empty strings, got {name!r}: {target!r}"
    return None


def _variable(value: Any) -> str | None:
    """What is wrong with ``value`` as the name of an environment variable."""
    wrong = _text(value)
    if wrong is None and not value:
        return "must name an environment variable"
    return wrong


Check = Callable[[Any], "str | None"]

#: setting name -> its check. Names a plugin reads with the same meaning share one row.
SETTING_KINDS: dict[str, Check] = {
    **dict.fromkeys(
        (
            "base_url",
            "endpoint_url",
            "control_endpoint_url",
            "s3_endpoint_url",
            "azure_endpoint",
        ),
        _url,
    ),
    **dict.fromkeys(
        (
            "api_key",
            "auth_token",
            "access_token",
            "azure_ad_token",
            "aws_access_key_id",
            "aws_secret_access_key",
            "aws_session_token",
            "region",
            "profile",
            "project",
            "project_id",
            "location",
            "organization",
            "api_version",
            "azure_deployment",
            "async_transport",
            "max_tokens_field",
            "plugin",
        ),
        _text,
    ),
    **dict.fromkeys(("timeout", "connect_timeout"), _seconds),
    "max_workers": _count,
    **dict.fromkeys(("vertexai", "azure"), _flag),
    "default_headers": _headers,
    **dict.fromkeys(("aliases", "inference_profiles"), _names),
    "api_key_env": _variable,
}


def check_setting(provider: str, name: Any, value: Any, where: str = "providers") -> None:
    """Raise :class:`ConfigError` if ``value`` is not what setting ``name`` takes.

    The message names the provider and the setting, never the value of a
    string (it may be a key).
    """
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: provider {provider!r}: a setting name must be a string")
    check = SETTING_KINDS.get(name)
    if value is None or check is None:
        return  # None means "not set"; an unknown name is the plugin's to refuse
    wrong = check(value)
    if wrong is not None:
        raise ConfigError(f"{where}: provider {provider!r}: setting {name!r} {wrong}")


def check_providers(providers: Any, where: str = "providers") -> dict[str, dict[str, Any]]:
    """``providers`` (name -> settings) checked, as plain dicts: a :class:`ConfigError` names
    the first provider name, table or setting of the wrong type."""
    if providers is None:
        return {}
    if not isinstance(providers, Mapping):
        raise ConfigError(
            f"{where} must map provider names to settings tables, got {type(providers).__name__}"
        )
    checked: dict[str, dict[str, Any]] = {}
    for name, settings in providers.items():
        if not isinstance(name, str) or not PROVIDER_NAME.fullmatch(name):
            raise ConfigError(
                f"{where}: {name!r} is not a provider name (letters, digits, '_', '.', '-'; "
                "it is what 'NAME:model' routes by)"
            )
        if not isinstance(settings, Mapping):
            raise ConfigError(
                f"{where}: provider {name!r} settings must be a table (setting -> value), "
                f"got {type(settings).__name__}"
            )
        for key, value in settings.items():
            check_setting(name, key, value, where)
        checked[name] = dict(settings)
    return checked
