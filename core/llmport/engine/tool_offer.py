"""The tools a run offers: provider-native tools and the function tools policy allows.

:func:`offered_tools` builds the toolbox from ``tools=``, ``toolset=`` and
``tools_source=``, narrowed by ``tools_allow``/``tools_deny``, the scope an
outer exec allowed (:data:`tool_scope`) and the offer-stage policy.
"""

from __future__ import annotations

import contextvars
from fnmatch import fnmatchcase
from typing import Any

from ..errors import (
    OptionError,
)
from ..messages.types import (
    NATIVE_TOOL_KINDS,
    NativeTool,
)
from ..tools.policy import CallInfo, ToolCheck
from ..tools.tool import ToolBox, ToolSettings, build_toolbox
from .hooks import RunHooks
from .snapshot import RunSnapshot

__all__ = [
    "offered_tools",
    "tool_scope",
]

#: Tools an outer exec allowed; a nested exec (from inside a tool) may only narrow it.
tool_scope: contextvars.ContextVar[frozenset[str] | None] = contextvars.ContextVar(
    "llmport_tool_scope", default=None
)


def offered_tools(
    settings: RunSnapshot,
    params: dict[str, Any],
    info: CallInfo,
    hooks: RunHooks,
    tool_settings: ToolSettings,
) -> tuple[list[NativeTool], ToolBox | None]:
    """(provider-native tools, the function tools policy lets this run offer), checked."""
    native_tools: list[NativeTool] = []
    if params["tools"] is not None:
        native_tools, params = _native_tools(params)
    toolbox = _toolbox(params, info, hooks, settings)
    tool_choice = params["tool_choice"]
    # "required" may force a native tool alone (recorded: image_generation with tool_choice
    # "required", wire-samples openai-responses/image-generation.json); a name needs a function.
    forced_native = tool_choice == "required" and bool(native_tools)
    if tool_choice != "auto" and tool_choice != "none" and toolbox is None and not forced_native:
        raise OptionError(
            f"tool_choice={tool_choice!r} needs tools, but this call offers none "
            "(give tools=, toolset= or tools_source=, or check tools_allow/tools_deny)"
        )
    if (
        isinstance(tool_choice, dict)
        and toolbox is not None
        and tool_choice["name"] not in toolbox.tools
    ):
        raise OptionError(
            f"tool_choice names {tool_choice['name']!r}, which is not among the tools "
            f"({', '.join(sorted(toolbox.tools))})"
        )
    return native_tools, toolbox


def _native_tools(params: dict[str, Any]) -> tuple[list[NativeTool], dict[str, Any]]:
    """Separate provider-native tools from the function tools of ``tools=``."""
    tools = params["tools"]
    if not isinstance(tools, (list, tuple)) or not any(isinstance(t, NativeTool) for t in tools):
        return [], params
    native = [t for t in tools if isinstance(t, NativeTool)]
    for t in native:
        if t.kind not in NATIVE_TOOL_KINDS:
            raise OptionError(
                f"unknown native tool {t.kind!r}; "
                f"expected one of {', '.join(sorted(NATIVE_TOOL_KINDS))}"
            )
    return native, {**params, "tools": [t for t in tools if not isinstance(t, NativeTool)]}


def _patterns(value: Any, name: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    items = list(value)
    if not all(isinstance(p, str) for p in items):
        raise TypeError(f"{name} must be a list of glob patterns")
    return items


def _toolbox(
    params: dict[str, Any], info: CallInfo, hooks: RunHooks, settings: RunSnapshot
) -> ToolBox | None:
    if not (params["tools"] or params["toolset"] or params["tools_source"]):
        return None
    host = settings.plugins
    toolbox = build_toolbox(params["tools"], params["toolset"], params["tools_source"], host, info)
    if toolbox is None:
        return None
    allow = _patterns(params["tools_allow"], "tools_allow")
    deny = _patterns(params["tools_deny"], "tools_deny")
    scope = tool_scope.get()
    kept = {}
    for name, t in toolbox.tools.items():
        if allow is not None and not any(fnmatchcase(name, p) for p in allow):
            continue
        if deny and any(fnmatchcase(name, p) for p in deny):
            continue
        if scope is not None and name not in scope:
            continue
        verdict = hooks.tool_verdict(ToolCheck(name, "offer", info, None, t.description))
        if verdict == "deny":
            continue
        if verdict == "approve":  # offered; each call is put to the approver before it runs
            toolbox.needs_approval.add(name)
        kept[name] = t
    toolbox.tools = kept
    return toolbox if kept else None
