"""Where the command line keeps the user's files: the log database, keys, aliases.

``LLMPORT_HOME`` puts everything in one directory. Otherwise the XDG base
directories: logs in ``$XDG_DATA_HOME/llmport`` (``~/.local/share/llmport``),
keys and settings in ``$XDG_CONFIG_HOME/llmport`` (``~/.config/llmport``).
Directories are created on first write, never on read.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["config_dir", "data_dir", "logs_path"]


def _base(xdg_name: str, fallback: str) -> Path:
    home = os.environ.get("LLMPORT_HOME")
    if home:
        return Path(home)
    xdg = os.environ.get(xdg_name)
    root = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / fallback
    return root / "llmport"


def data_dir() -> Path:
    """The directory of the log database."""
    return _base("XDG_DATA_HOME", ".local/share")


def config_dir() -> Path:
    """The directory of the keys file and the command line's own settings."""
    return _base("XDG_CONFIG_HOME", ".config")


def logs_path() -> Path:
    """The SQLite file every prompt and answer is logged to."""
    return data_dir() / "logs.sqlite"
