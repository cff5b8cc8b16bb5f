"""The first request's conversation: DAG context, ``history=``, then the new content.

:func:`first_messages` joins them (keeping, inside an agentic function, what
the history was read from); :func:`portable` drops the thinking and
server-tool blocks another vendor produced, which only that vendor accepts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import (
    ContentError,
)
from ..messages.types import (
    Block,
    Message,
    ServerToolCall,
    ServerToolResult,
    TextBlock,
    ThinkingBlock,
)
from ..sessions.dag import Frame, Prompt
from .result import Dropped

__all__ = [
    "VENDOR_BLOCKS",
    "first_messages",
    "portable",
    "split_messages",
]

VENDOR_BLOCKS = (ThinkingBlock, ServerToolCall, ServerToolResult)


def portable(messages: list[Message], vendor: str) -> tuple[list[Message], list[Dropped]]:
    """The conversation without other vendors' thinking and server-tool blocks; what was removed.

    Signed thinking, encrypted reasoning and server-tool results are only
    valid for the vendor that produced them; they are sent back to it alone.
    """
    dropped: list[Dropped] = []
    out: list[Message] | None = None
    for i, message in enumerate(messages):
        if message.role != "assistant":
            continue
        foreign = [b for b in message.blocks if isinstance(b, VENDOR_BLOCKS) and b.vendor != vendor]
        if not foreign:
            continue
        if out is None:
            out = list(messages)
        for block in foreign:
            what = "thinking" if isinstance(block, ThinkingBlock) else "server-side tool"
            dropped.append(
                Dropped(
                    i,
                    block.type,
                    block.vendor or "unknown",
                    f"{what} from {block.vendor or 'an unknown vendor'} cannot be sent to {vendor}",
                )
            )
        kept = tuple(
            b for b in message.blocks if not (isinstance(b, VENDOR_BLOCKS) and b.vendor != vendor)
        )
        out[i] = Message(
            message.role, kept, message.tool_calls, message.tool_results, dict(message.extra)
        )
    if out is None:
        return messages, dropped
    if isinstance(messages, Prompt):
        prompt = Prompt(out, content=messages.content, reads=messages.reads)
        prompt.dag_count = messages.dag_count
        return prompt, dropped
    return out, dropped


def split_messages(content: Any) -> tuple[list[Message], Any]:
    """(leading Messages of ``content``, the rest): ``exec(result.messages + ["next"])``."""
    if not isinstance(content, (list, tuple)) or not any(isinstance(c, Message) for c in content):
        return [], content
    messages: list[Message] = []
    rest: list[Any] = []
    for i, item in enumerate(content):
        if isinstance(item, Message):
            if rest:
                raise ContentError(i, "Message items must come before the new content blocks")
            messages.append(item)
        else:
            rest.append(item)
    return messages, rest


def first_messages(
    blocks: list[Block],
    context: str | None,
    frame: Frame | None,
    given: Sequence[Message],
    read_budget: int | None = None,
) -> list[Message]:
    history: list[Message]
    if context is not None:
        if not isinstance(context, str):
            raise TypeError("context must be a string")
        history = [Message("user", (TextBlock(context),))] if context else []
    elif frame is not None:
        # A context policy's max_tokens bounds the DAG read too (newest first).
        history = (
            frame.context_messages(max_tokens=read_budget)
            if read_budget is not None
            else frame.context_messages()
        )
    else:
        history = []
    # history= (and Messages given as content) come after the DAG context, before the new content.
    messages = [*history, *given]
    if blocks:
        if messages and messages[-1].role == "user" and not messages[-1].tool_results:
            last = messages.pop()
            messages.append(Message("user", (*last.blocks, *blocks)))
        else:
            messages.append(Message("user", tuple(blocks)))
    if frame is None:
        return messages
    # Inside an agentic function: keep the exec's own blocks and what the
    # history was read from, for its llm node (see llmport.sessions.dag.Prompt).
    prompt = Prompt(messages, content=blocks, reads=getattr(history, "reads", None))
    prompt.dag_count = len(history)
    return prompt
