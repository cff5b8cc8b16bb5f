"""``llmport keys``: API keys in a file only the user can read (mode 0600).

A key saved with ``llmport keys set NAME`` is used for the provider
``NAME`` when the environment has no ``<NAME>_API_KEY`` (the environment
wins). Keys are read from the terminal without echo (or from stdin when
piped) and never printed: ``llmport keys list`` shows the names only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..provider.wire import loads as strict_json
from .paths import config_dir

__all__ = ["check_key_name", "env_name", "keys_path", "load_keys", "provider_keys", "save_key"]


def keys_path() -> Path:
    """The keys file (it may not exist yet)."""
    return config_dir() / "keys.json"


def env_name(name: str) -> str:
    """The environment variable that takes precedence over a saved key: ``OPENAI_API_KEY``."""
    return name.upper().replace("-", "_") + "_API_KEY"


def load_keys() -> dict[str, str]:
    """The saved keys by name ({} when there is no file); a damaged file is a ConfigError."""
    path = keys_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the keys file {path}: {type(exc).__name__}") from None
    try:
        data = strict_json(text)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ConfigError(f"the keys file {path} is not a JSON object of strings")
    return {str(k): v for k, v in data.items()}


def check_key_name(name: str) -> str:
    """``name`` if it can name a key (a provider: letters, digits, ``-``, ``_``), else a
    ConfigError."""
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ConfigError(f"bad key name {name!r}: use a provider name such as openai")
    return name


def save_key(name: str, value: str) -> Path:
    """Store ``value`` as the key ``name``; the file is created and kept at mode 0600."""
    check_key_name(name)
    value = value.strip()
    if not value:
        raise ConfigError("the key is empty")
    keys = {**load_keys(), name: value}
    path = keys_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    # Created 0600 from the start: the key is never readable by others, not even briefly.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(keys, out, indent=2)
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)
    return path


def provider_keys() -> dict[str, dict[str, Any]]:
    """Provider settings (``{"openai": {"api_key": ...}}``) for saved keys the environment lacks."""
    return {
        name: {"api_key": value}
        for name, value in load_keys().items()
        if not os.environ.get(env_name(name))
    }
