"""Request building: the neutral request of one model turn, with its cache marks.

:func:`build_request` turns the plan and a conversation into one
:class:`~llmport.messages.types.Request` (tools, native tools, reasoning,
context editing); the cache-mark helpers keep its breakpoints under the
vendor's limit and place ``cache="auto"`` ones.
"""

from __future__ import annotations

from dataclasses import replace

from ..controls.window import (
    vendor_editing,
)
from ..errors import (
    OptionError,
)
from ..messages.types import (
    CacheControl,
    MediaBlock,
    Message,
    Request,
    ResponseFormat,
    TextBlock,
    ToolChoice,
    ToolSpec,
)
from ..tools.deferral import settle_deferral
from .plan import RunPlan

__all__ = [
    "build_request",
    "count_cache_marks",
    "mark_cache_breakpoints",
    "place_cache_marks",
]


def build_request(
    plan: RunPlan,
    messages: list[Message],
    *,
    tools: bool,
    tool_choice: ToolChoice,
    response_format: ResponseFormat | None,
    specs: list[ToolSpec] | None = None,
) -> Request:
    """The neutral request of one model turn (``specs``: the tools, else the toolbox's)."""
    if specs is None:
        specs = plan.toolbox.specs if (tools and plan.toolbox) else []
    native = plan.native_tools if tools else []
    if specs:
        specs, native = settle_deferral(specs, native, plan.caps)
    request = Request(
        model=plan.model,
        messages=list(messages),
        system=plan.system,
        tools=specs,
        tool_choice=tool_choice if (specs or native) else "auto",
        parallel_tool_calls=plan.parallel_tool_calls,
        response_format=response_format,
        options=dict(plan.options),
        stream=plan.stream,
        vendor=plan.vendor,
        system_blocks=plan.system_blocks,
        native_tools=native,
        reasoning=plan.reasoning,
        cache=plan.cache,
        context_editing=vendor_editing(plan.context_policy, plan.caps, plan.window_limit),
        output_modalities=plan.output_modalities,
    )
    auto = CacheControl(plan.cache.ttl) if plan.cache is not None and plan.cache.auto else None
    place_cache_marks(request, auto, plan.caps.max_cache_breakpoints, plan.qualified)
    return request


def place_cache_marks(
    request: Request, auto: CacheControl | None, limit: int | None, model: str
) -> None:
    """Cache breakpoints of one request, never more than the vendor's ``limit``.

    ``model`` is the qualified model name errors give.

    Marks left on earlier turns of a continued conversation move to the
    newest user turn (they would pile up, one per turn, past the vendor's
    limit); more explicit marks than ``limit`` are an :class:`OptionError`;
    ``auto`` (``cache="auto"``) marks go where room is left.
    """
    move_stale_marks(request)
    explicit = count_cache_marks(request)
    if limit is not None and explicit > limit:
        raise OptionError(
            f"{model}: {explicit} cache breakpoints in one request, over the limit of {limit}"
        )
    if auto is not None:
        mark_cache_breakpoints(request, auto, None if limit is None else limit - explicit)


def newest_user_turn(messages: list[Message]) -> int | None:
    """Index of the last user message with blocks (``None``: there is none)."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user" and messages[i].blocks:
            return i
    return None


def move_stale_marks(request: Request) -> None:
    """Drop block marks outside the newest user turn; the newest one dropped moves onto it."""
    newest = newest_user_turn(request.messages)
    moved: CacheControl | None = None
    for i, message in enumerate(request.messages):
        if i == newest or not any(marked(b) for b in message.blocks):
            continue
        blocks = []
        for block in message.blocks:
            if marked(block):
                assert isinstance(block, (TextBlock, MediaBlock))
                moved = block.cache
                block = replace(block, cache=None)
            blocks.append(block)
        request.messages[i] = replace(message, blocks=tuple(blocks))
    unmarked = newest is not None and not any(marked(b) for b in request.messages[newest].blocks)
    if moved is not None and newest is not None and unmarked:
        mark_newest_turn(request, newest, moved)


def marked(block: object) -> bool:
    """Whether ``block`` carries a cache mark."""
    return isinstance(block, (TextBlock, MediaBlock)) and block.cache is not None


def count_cache_marks(request: Request) -> int:
    """The cache breakpoints ``request`` carries (tools, system blocks, message blocks)."""
    return (
        sum(t.cache is not None for t in request.tools)
        + sum(b.cache is not None for b in request.system_blocks)
        + sum(marked(b) for m in request.messages for b in m.blocks)
    )


def mark_newest_turn(request: Request, index: int, mark: CacheControl) -> bool:
    """Mark the last block of the user turn at ``index`` if it can be and is not; whether it was."""
    message = request.messages[index]
    last = message.blocks[-1]
    if not isinstance(last, (TextBlock, MediaBlock)) or last.cache is not None:
        return False
    blocks = (*message.blocks[:-1], replace(last, cache=mark))
    request.messages[index] = replace(message, blocks=blocks)
    return True


def mark_cache_breakpoints(request: Request, mark: CacheControl, room: int | None = None) -> None:
    """``cache="auto"``: breakpoints on the newest user turn, the system prompt and the tools.

    In that order while ``room`` (breakpoints left under the vendor's limit)
    lasts: the newest turn's mark caches the most, the tools' the least.
    """
    left = -1 if room is None else room
    newest = newest_user_turn(request.messages)
    if left and newest is not None and mark_newest_turn(request, newest, mark):
        left -= 1
    if left and request.system_blocks and request.system_blocks[-1].cache is None:
        request.system_blocks = (
            *request.system_blocks[:-1],
            replace(request.system_blocks[-1], cache=mark),
        )
        left -= 1
    if left and request.tools and request.tools[-1].cache is None:
        request.tools[-1] = replace(request.tools[-1], cache=mark)
