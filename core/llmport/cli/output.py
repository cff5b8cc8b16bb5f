"""What every command prints with: rich consoles, literal text, JSON, and UsageError."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["UsageError", "console", "emit_json", "escape"]


class UsageError(Exception):
    """A bad command line found after parsing: reported by argparse, exit status 2."""


def console(stderr: bool = False) -> Any:
    """A rich console on stdout (or stderr) that highlights nothing by itself."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def escape(value: object) -> str:
    """``value`` as text that rich prints literally (``[session]`` is not a tag)."""
    from rich.markup import escape as rich_escape

    return rich_escape(str(value))


def emit_json(data: Any) -> None:
    """``data`` as indented JSON on stdout."""
    import json  # here: ``llmport --version`` prints no JSON

    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
