"""Tools from the command line: ``-T NAME``, ``--toolset mcp:NAME``, ``--functions FILE``,
``--approve``.

``-T`` and ``--toolset`` name toolsets registered through entry points (the
``llmport_toolsets`` hook; ``mcp:NAME`` is each ``[mcp.servers.NAME]`` of
llmport-mcp). ``--functions FILE`` makes a tool of every public function a
Python file defines. ``--approve`` asks on the terminal before each call.
Calls are shown on stderr as they run (:func:`show_tool_event`).
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..plugins.hookspecs import hookimpl
from ..tools.policy import ToolCheck

__all__ = ["ApproveEveryCall", "ask_on_terminal", "functions_in", "show_tool_event", "tool_params"]


def functions_in(path: str) -> list[Any]:
    """The public functions defined in the Python file ``path`` (not those it imports)."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(
            f"--functions {path}: {'not a file' if file.exists() else 'file not found'}"
        )
    spec = importlib.util.spec_from_file_location(f"llmport_cli_functions_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise InputError(f"--functions {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's file: its own error, told in one line
        raise InputError(f"--functions {path}: {type(exc).__name__}: {exc}") from None
    found = [
        fn
        for name, fn in vars(module).items()
        if inspect.isfunction(fn) and not name.startswith("_") and fn.__module__ == module.__name__
    ]
    if not found:
        raise InputError(f"--functions {path}: the file defines no public function")
    return found


class ApproveEveryCall:
    """A tool policy plugin: every tool call needs approval (``--approve``)."""

    @hookimpl
    def llmport_tool_policy(self, check: ToolCheck) -> str | None:
        return "approve" if check.stage == "run" else None


def ask_on_terminal(check: ToolCheck) -> bool:
    """Ask ``Run NAME(ARGS)? [y/N]`` on stderr; only ``y`` or ``yes`` runs the call.

    The answer comes from stdin when it is a terminal, else from ``/dev/tty``
    (stdin may have been the prompt); with no terminal at all the call is refused.
    """
    arguments = json.dumps(check.call.arguments if check.call else {}, default=str)
    sys.stderr.write(f"Run {check.tool_name}({arguments})? [y/N] ")
    sys.stderr.flush()
    if sys.stdin is not None and sys.stdin.isatty():
        answer = sys.stdin.readline()
    else:
        try:
            with open("/dev/tty", encoding="utf-8") as tty:
                answer = tty.readline()
        except OSError:
            answer = ""
    return answer.strip().lower() in {"y", "yes"}


def tool_params(args: Any) -> dict[str, Any]:
    """The call parameters the tool flags ask for (none when no tool flag was given)."""
    params: dict[str, Any] = {}
    toolsets = [*(args.tool or []), *(args.toolset or [])]
    if toolsets:
        params["toolset"] = toolsets
    tools = [fn for path in args.functions or [] for fn in functions_in(path)]
    if tools:
        params["tools"] = tools
    if args.approve:
        params["approver"] = ask_on_terminal
    return params


def show_tool_event(event: Any) -> None:
    """One stderr line per tool call as it starts and as it ends."""
    from ..messages.types import ToolCallStarted, ToolResultEvent

    if isinstance(event, ToolCallStarted):
        arguments = json.dumps(event.call.arguments, default=str)
        sys.stderr.write(f"\n[tool] {event.call.name}({arguments})\n")
    elif isinstance(event, ToolResultEvent):
        status = "error" if event.result.is_error else "ok"
        sys.stderr.write(f"[tool] {status} in {event.duration:.2f}s\n")
    sys.stderr.flush()
