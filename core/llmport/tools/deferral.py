"""Deferred tools and the vendor's tool search, which loads them when the model asks.

``Tool(defer_loading=True)`` keeps a tool's definition out of the model's
context until the vendor's tool search finds it. Where the model has tool
search (``"tool_search"`` among its native tool kinds: OpenAI Responses,
Anthropic) the tool is sent with ``defer_loading`` and, when the caller did
not offer ``NativeTool("tool_search")`` itself, the vendor's default search
tool is added (both APIs reject deferred tools without one). Elsewhere
deferral is only a hint: the tool is sent like any other, and the model sees
it from the start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..messages.types import ModelCapabilities, NativeTool, ToolSpec

__all__ = ["settle_deferral"]

TOOL_SEARCH = "tool_search"


def settle_deferral(
    specs: Sequence[ToolSpec], natives: Sequence[NativeTool], caps: ModelCapabilities
) -> tuple[list[ToolSpec], list[NativeTool]]:
    """The tools and native tools one request sends, deferral settled for ``caps``."""
    if not any(spec.defer_loading for spec in specs):
        return list(specs), list(natives)
    if TOOL_SEARCH not in caps.native_tool_kinds:
        return [replace(s, defer_loading=False) if s.defer_loading else s for s in specs], list(
            natives
        )
    if any(native.kind == TOOL_SEARCH for native in natives):
        return list(specs), list(natives)
    return list(specs), [*natives, NativeTool(TOOL_SEARCH)]
