"""Input filters for :func:`llmport.handoff`: what the target sees of the conversation.

A filter is any function ``fn(messages: list[Message]) -> list[Message]``;
it never changes the messages it is given (they are frozen values)::

    from llmport import handoff
    from llmport.tools.filters import last_n_turns, remove_tool_calls

    tools = [handoff(billing, input_filter=remove_tool_calls)]
    tools = [handoff(billing, input_filter=last_n_turns(2))]
    tools = [handoff(billing, input_filter=chain(remove_tool_calls, last_n_turns(1)))]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..messages.types import Message, ServerToolCall, ServerToolResult

__all__ = ["Filter", "chain", "last_n_turns", "remove_tool_calls"]

Filter = Callable[[list[Message]], list[Message]]


def remove_tool_calls(messages: Sequence[Message]) -> list[Message]:
    """The conversation without tool calls and their results.

    ``tool`` messages go, assistant messages lose their tool calls (and
    server-side tool blocks); an assistant message left with nothing is
    dropped. Text, media and thinking stay.
    """
    out: list[Message] = []
    for message in messages:
        if message.tool_results:
            if message.blocks:  # a user turn carrying results and text: keep the text
                out.append(Message(message.role, message.blocks, extra=dict(message.extra)))
            continue
        if message.tool_calls or any(
            isinstance(b, (ServerToolCall, ServerToolResult)) for b in message.blocks
        ):
            blocks = tuple(
                b for b in message.blocks if not isinstance(b, (ServerToolCall, ServerToolResult))
            )
            if not blocks:
                continue
            message = Message(message.role, blocks, extra=dict(message.extra))
        out.append(message)
    return out


def _is_turn_start(message: Message) -> bool:
    return message.role == "user" and not message.tool_results


def last_n_turns(n: int) -> Filter:
    """A filter keeping the last ``n`` turns (a turn starts at a user message).

    Leading ``system`` messages are kept. ``n`` must be an integer >= 1.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"last_n_turns needs an integer >= 1, got {n!r}")

    def keep_last(messages: Sequence[Message]) -> list[Message]:
        items = list(messages)
        system = []
        while items and items[0].role == "system":
            system.append(items.pop(0))
        starts = [i for i, m in enumerate(items) if _is_turn_start(m)]
        if len(starts) <= n:
            return [*system, *items]
        return [*system, *items[starts[-n] :]]

    keep_last.__name__ = f"last_{n}_turns"
    return keep_last


def chain(*filters: Filter) -> Filter:
    """One filter applying ``filters`` in order."""

    def chained(messages: Sequence[Message]) -> list[Message]:
        out = list(messages)
        for f in filters:
            out = list(f(out))
        return out

    return chained
