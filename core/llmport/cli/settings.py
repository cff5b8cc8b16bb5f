"""The command line's own settings: aliases and the default model (``llmport aliases``,
``llmport models default``), in ``settings.json`` in the user's config directory.

They are the lowest layer: an alias or default model from ``llmport.toml`` or
the environment (``LLMPORT_MODEL``) wins over them.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..provider.wire import loads as strict_json
from .paths import config_dir

if TYPE_CHECKING:
    from ..provider.config import Config

__all__ = ["load_settings", "save_settings", "settings_path", "with_user_settings"]


def settings_path() -> Path:
    return config_dir() / "settings.json"


def load_settings() -> dict[str, Any]:
    """``{"aliases": {...}, "default_model": ...}`` (empty when never set)."""
    path = settings_path()
    try:
        data = strict_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"aliases": {}, "default_model": None}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {type(exc).__name__}") from None
    aliases = data.get("aliases", {}) if isinstance(data, dict) else None
    default = data.get("default_model") if isinstance(data, dict) else None
    if not isinstance(aliases, dict) or not isinstance(default, (str, type(None))):
        raise ConfigError(f"{path} is not an llmport settings file")
    return {"aliases": {str(k): str(v) for k, v in aliases.items()}, "default_model": default}


def save_settings(settings: dict[str, Any]) -> None:
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    os.replace(temporary, path)


def with_user_settings(config: Config) -> Config:
    """``config`` with the user's aliases and default model under its own."""
    settings = load_settings()
    return replace(
        config,
        aliases={**settings["aliases"], **config.aliases},
        default_model=config.default_model or settings["default_model"],
    )
