"""Messages API answers -> neutral :class:`~llmport.types.Response` / provider events.

Works on the SDK's ``Message`` and raw stream event objects by attribute
(duck typing), so this module imports no SDK. Thinking blocks are kept in
``Response.extra["anthropic_thinking"]`` so a tool loop echoes them back,
as the API requires.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from llmport.provider import parse_arguments
from llmport.types import (
    ProviderEvent,
    Response,
    StopEvent,
    StopReason,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    UsageEvent,
)

from .convert_in import THINKING_KEY, AnthropicPrepared

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
}


def stop_reason(raw: str | None) -> StopReason:
    """Anthropic's ``stop_reason`` as a neutral one (``pause_turn`` and unknowns are ``other``)."""
    if raw is None:
        return "end_turn"
    return _STOP_REASONS.get(raw, "other")


def usage(raw: Any) -> Usage:
    """Anthropic usage -> neutral Usage.

    ``input_tokens`` is the whole prompt (Anthropic's uncached ``input_tokens``
    plus cache reads and writes), as with the other vendors; the cache
    counts are kept apart in ``cache_read_tokens`` / ``cache_write_tokens``.
    """
    if raw is None:
        return Usage(requests=1)
    cache_read = getattr(raw, "cache_read_input_tokens", None) or 0
    cache_write = getattr(raw, "cache_creation_input_tokens", None) or 0
    return Usage(
        input_tokens=(getattr(raw, "input_tokens", None) or 0) + cache_read + cache_write,
        output_tokens=getattr(raw, "output_tokens", None) or 0,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        requests=1,
    )


def thinking_param(block: Any) -> dict[str, Any] | None:
    """A thinking block as the request param that echoes it (None if not thinking)."""
    if block.type == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if block.type == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return None


def response(message: Any, prepared: AnthropicPrepared) -> Response:
    """A whole (non-streamed) ``Message`` as a Response."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[dict[str, Any]] = []
    output = prepared.output_tool
    answered = False
    for block in message.content:
        kind = block.type
        if kind == "text":
            texts.append(block.text)
        elif kind == "tool_use":
            if output is not None and block.name == output.name:
                texts.append(output.reply_text(block.input))
                answered = True
                continue
            arguments = block.input if isinstance(block.input, dict) else {}
            calls.append(ToolCall(block.id, block.name, arguments, json.dumps(block.input)))
        else:
            echo = thinking_param(block)
            if echo is not None:
                thinking.append(echo)
    raw_stop = message.stop_reason
    reason = "end_turn" if answered and not calls else stop_reason(raw_stop)
    return Response(
        text="".join(texts),
        tool_calls=calls,
        usage=usage(message.usage),
        stop_reason=reason,
        model=message.model,
        id=message.id,
        raw_stop_reason=raw_stop,
        extra={THINKING_KEY: thinking} if thinking else {},
    )


class StreamState:
    """Turns raw stream events into provider events, one event at a time.

    Tool-call fragments (``input_json_delta``) are keyed by content-block
    index; the forced output tool's fragments are buffered and become the
    reply text when its block ends.
    """

    __slots__ = (
        "blocks",
        "id",
        "model",
        "output",
        "output_index",
        "output_parts",
        "raw_stop",
        "thinking",
    )

    def __init__(self, prepared: AnthropicPrepared) -> None:
        self.output = prepared.output_tool
        self.output_index: int | None = None
        self.output_parts: list[str] = []
        self.blocks: dict[int, dict[str, Any]] = {}  # thinking blocks being streamed, by index
        self.thinking: list[dict[str, Any]] = []
        self.model = ""
        self.id: str | None = None
        self.raw_stop: str | None = None

    def feed(self, event: Any) -> Iterator[ProviderEvent]:
        kind = event.type
        if kind == "content_block_delta":
            delta = event.delta
            dtype = delta.type
            if dtype == "text_delta":
                if delta.text:
                    yield TextDelta(delta.text)
            elif dtype == "input_json_delta":
                if event.index == self.output_index:
                    self.output_parts.append(delta.partial_json)
                elif delta.partial_json:
                    yield ToolCallDelta(key=event.index, arguments=delta.partial_json)
            elif dtype == "thinking_delta":
                self.blocks[event.index]["thinking"] += delta.thinking
            elif dtype == "signature_delta":
                self.blocks[event.index]["signature"] += delta.signature
        elif kind == "content_block_start":
            block = event.content_block
            btype = block.type
            if btype == "tool_use":
                if self.output is not None and block.name == self.output.name:
                    self.output_index = event.index
                else:
                    yield ToolCallDelta(key=event.index, id=block.id, name=block.name)
            elif btype == "text":
                if block.text:
                    yield TextDelta(block.text)
            elif btype == "thinking":
                self.blocks[event.index] = {
                    "type": "thinking",
                    "thinking": block.thinking or "",
                    "signature": block.signature or "",
                }
            elif btype == "redacted_thinking":
                self.blocks[event.index] = {"type": "redacted_thinking", "data": block.data}
        elif kind == "content_block_stop":
            if event.index in self.blocks:
                self.thinking.append(self.blocks.pop(event.index))
            elif event.index == self.output_index and self.output is not None:
                arguments = parse_arguments("".join(self.output_parts))
                yield TextDelta(self.output.reply_text(arguments))
        elif kind == "message_start":
            message = event.message
            self.model = message.model
            self.id = message.id
            yield UsageEvent(usage(message.usage))
        elif kind == "message_delta":
            self.raw_stop = event.delta.stop_reason
            if event.usage is not None:
                yield UsageEvent(usage(event.usage))
        elif kind == "message_stop":
            reason = stop_reason(self.raw_stop)
            if self.output_index is not None and reason == "tool_use":
                reason = "end_turn"  # the output tool was the answer, not a call to run
            yield StopEvent(
                reason,
                self.raw_stop,
                self.model,
                self.id,
                {THINKING_KEY: self.thinking} if self.thinking else {},
            )
