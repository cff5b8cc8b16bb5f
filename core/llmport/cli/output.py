"""What every command prints with: rich consoles, literal text, JSON, and UsageError.

:func:`print_dim` prints a short note (``llmport run``'s usage line) without
importing rich (a tenth of a scripted ``llmport run``) when rich would print it
as it is: to a stream that is no terminal, one line that fits its width.
"""

from __future__ import annotations

import builtins
import os
import sys
from typing import Any

__all__ = ["UsageError", "console", "emit_json", "escape", "print_dim"]


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


def print_dim(text: str) -> None:
    """``text`` (taken literally) dim on stderr; the bytes rich's console would write."""
    stream = sys.stderr
    width = _plain_width(stream)
    if width is not None and len(text) <= width and _prints_as_is(text):
        stream.write(text + "\n")
        stream.flush()
        return
    console(stderr=True).print(f"[dim]{escape(text)}[/]")


def _prints_as_is(text: str) -> bool:
    """Whether rich prints ``text`` unchanged: printable ASCII or the middle dot (one cell
    each), no markup to escape, and no ``:name:`` that could be an emoji code."""
    return (
        text.replace("·", "").isascii()
        and text.isprintable()
        and "[" not in text
        and "\\" not in text
        and all(word.count(":") < 2 for word in text.split(" "))
    )


def _plain_width(stream: Any) -> int | None:
    """The width rich wraps at when ``stream`` is no terminal it would style, else None.

    None (rich decides) for a terminal, a stream rich is told to style
    (``FORCE_COLOR``, ``TTY_COMPATIBLE``), Jupyter, Windows, or a ``COLUMNS`` that
    is not a positive number. Else ``COLUMNS``, or the first standard stream's
    terminal size, or 80: rich's order.
    """
    environ = os.environ
    if (
        stream is None
        or sys.platform == "win32"
        or "FORCE_COLOR" in environ
        or "TTY_COMPATIBLE" in environ
        or hasattr(builtins, "get_ipython")
    ):
        return None
    try:
        if stream.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    columns = environ.get("COLUMNS")
    if columns is not None:
        return int(columns) if columns.isdigit() and int(columns) > 0 else None
    for standard, fallback in ((sys.__stdin__, 0), (sys.__stdout__, 1), (sys.__stderr__, 2)):
        try:
            return os.get_terminal_size(_fileno(standard, fallback)).columns or 80
        except (AttributeError, ValueError, OSError):  # not a terminal
            continue
    return 80


def _fileno(stream: Any, fallback: int) -> int:
    """``stream``'s file descriptor, as rich finds it (``fallback`` when it has none)."""
    try:
        return int(stream.fileno())
    except Exception:
        return fallback
