"""Where an answer's tool calls sit among its content blocks, in the vendor's order.

A model may interleave calls with other output: OpenAI Responses sends
reasoning, ``function_call``, reasoning, ``function_call`` items, and each
reasoning item must be sent back before the item that followed it. A
:class:`~llmport.messages.types.ToolCall` records this in ``position`` (how
many of the message's blocks come before it); ``None``, the usual case, puts
it after every block. Plugins set positions as they read an answer (the
stream assembler does for streamed ones) and emit the conversation back with
:func:`in_order`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .types import Block, ToolCall

__all__ = ["in_order", "settle_positions"]


def settle_positions(calls: Sequence[ToolCall], count: int) -> list[ToolCall]:
    """``calls`` with a ``position`` kept only where it puts a call before one of ``count`` blocks.

    A call after the last block gets ``None``, so an answer whose calls all
    come last is stored as before (no position at all), however it was read.
    """
    return [
        call if call.position is None or call.position < count else replace(call, position=None)
        for call in calls
    ]


def in_order(blocks: Sequence[Block], calls: Sequence[ToolCall]) -> list[Block | ToolCall]:
    """An answer's blocks and calls in the order the model produced them.

    Calls keep their own order; a call without a position, and every call
    after it, follows the last block.
    """
    out: list[Block | ToolCall] = []
    pending = 0
    for count, block in enumerate(blocks):
        while pending < len(calls):
            position = calls[pending].position
            if position is None or position > count:
                break
            out.append(calls[pending])
            pending += 1
        out.append(block)
    out.extend(calls[pending:])
    return out
