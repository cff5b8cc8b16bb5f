"""Converse answers -> neutral :class:`~llmport.types.Response` / provider events.

boto3 returns plain dicts (``converse``) and an iterator of event dicts
(``converse_stream``), so this module imports no SDK. ``reasoningContent``
blocks are kept in ``Response.extra["bedrock_reasoning"]`` so a tool loop
echoes them back, as Bedrock requires with extended thinking.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from llmport.errors import MalformedResponseError
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

from .convert_in import REASONING_KEY, VENDOR, ConversePrepared

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}


def stop_reason(raw: str | None) -> StopReason:
    """Bedrock's ``stopReason`` as a neutral one (``malformed_*`` and unknowns are ``other``)."""
    if raw is None:
        return "end_turn"
    return _STOP_REASONS.get(raw, "other")


def usage(raw: Any) -> Usage:
    """Converse ``usage`` -> neutral Usage.

    ``input_tokens`` is the whole prompt (Bedrock's uncached ``inputTokens``
    plus cache reads and writes), as with the other vendors; the cache counts
    are kept apart too.
    """
    if not isinstance(raw, dict):
        return Usage(requests=1)
    cache_read = int(raw.get("cacheReadInputTokens") or 0)
    cache_write = int(raw.get("cacheWriteInputTokens") or 0)
    return Usage(
        input_tokens=int(raw.get("inputTokens") or 0) + cache_read + cache_write,
        output_tokens=int(raw.get("outputTokens") or 0),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        requests=1,
    )


def _request_id(raw: dict[str, Any]) -> str | None:
    meta = raw.get("ResponseMetadata")
    return meta.get("RequestId") if isinstance(meta, dict) else None


def response(raw: Any, prepared: ConversePrepared) -> Response:
    """A whole ``converse`` answer as a Response (MalformedResponseError if it is not one)."""
    message = raw.get("output", {}).get("message") if isinstance(raw, dict) else None
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        raise MalformedResponseError(
            f"{VENDOR}: the answer holds no output message (unparseable body?)", provider=VENDOR
        )
    texts: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[dict[str, Any]] = []
    output = prepared.output_tool
    answered = False
    for block in message["content"]:
        if "text" in block:
            texts.append(block["text"])
        elif "toolUse" in block:
            use = block["toolUse"]
            if output is not None and use.get("name") == output.name:
                texts.append(output.reply_text(use.get("input")))
                answered = True
                continue
            arguments = use.get("input") if isinstance(use.get("input"), dict) else {}
            calls.append(
                ToolCall(use["toolUseId"], use["name"], arguments, json.dumps(use.get("input")))
            )
        elif "reasoningContent" in block:
            reasoning.append({"reasoningContent": block["reasoningContent"]})
    raw_stop = raw.get("stopReason")
    reason = "end_turn" if answered and not calls else stop_reason(raw_stop)
    return Response(
        text="".join(texts),
        tool_calls=calls,
        usage=usage(raw.get("usage")),
        stop_reason=reason,
        model=prepared.model,
        id=_request_id(raw),
        raw_stop_reason=raw_stop,
        extra={REASONING_KEY: reasoning} if reasoning else {},
    )


class StreamState:
    """Turns ``converse_stream`` event dicts into provider events, one at a time.

    Tool-use input fragments are keyed by ``contentBlockIndex``; the forced
    output tool's fragments are buffered and become the reply text when its
    block ends. ``messageStop`` arrives before the ``metadata`` (usage) event,
    so the StopEvent is given by :meth:`end`, once the stream is over.
    """

    __slots__ = (
        "model",
        "output",
        "output_index",
        "output_parts",
        "raw_stop",
        "reasoning",
        "request_id",
        "stopped",
        "thinking",
    )

    def __init__(self, prepared: ConversePrepared, request_id: str | None = None) -> None:
        self.output = prepared.output_tool
        self.output_index: int | None = None
        self.output_parts: list[str] = []
        self.model: str = prepared.model
        self.request_id = request_id
        self.raw_stop: str | None = None
        self.stopped = False
        self.reasoning: dict[int, dict[str, Any]] = {}  # reasoning blocks being streamed
        self.thinking: list[dict[str, Any]] = []

    def feed(self, event: dict[str, Any]) -> Iterator[ProviderEvent]:
        if "contentBlockDelta" in event:
            body = event["contentBlockDelta"]
            index = body.get("contentBlockIndex", 0)
            delta = body.get("delta", {})
            if "text" in delta:
                if delta["text"]:
                    yield TextDelta(delta["text"])
            elif "toolUse" in delta:
                fragment = delta["toolUse"].get("input", "")
                if index == self.output_index:
                    self.output_parts.append(fragment)
                elif fragment:
                    yield ToolCallDelta(key=index, arguments=fragment)
            elif "reasoningContent" in delta:
                self._reasoning(index, delta["reasoningContent"])
        elif "contentBlockStart" in event:
            body = event["contentBlockStart"]
            use = body.get("start", {}).get("toolUse")
            if use is not None:
                index = body.get("contentBlockIndex", 0)
                if self.output is not None and use.get("name") == self.output.name:
                    self.output_index = index
                else:
                    yield ToolCallDelta(key=index, id=use.get("toolUseId"), name=use.get("name"))
        elif "contentBlockStop" in event:
            index = event["contentBlockStop"].get("contentBlockIndex", 0)
            if index in self.reasoning:
                self.thinking.append({"reasoningContent": self.reasoning.pop(index)})
            elif index == self.output_index and self.output is not None:
                arguments = parse_arguments("".join(self.output_parts))
                yield TextDelta(self.output.reply_text(arguments))
        elif "messageStop" in event:
            self.raw_stop = event["messageStop"].get("stopReason")
            self.stopped = True
        elif "metadata" in event:
            yield UsageEvent(usage(event["metadata"].get("usage")))

    def _reasoning(self, index: int, delta: dict[str, Any]) -> None:
        block = self.reasoning.setdefault(index, {})
        if "redactedContent" in delta:
            block["redactedContent"] = block.get("redactedContent", b"") + delta["redactedContent"]
            return
        text = block.setdefault("reasoningText", {"text": ""})
        if "text" in delta:
            text["text"] += delta["text"]
        if "signature" in delta:
            text["signature"] = text.get("signature", "") + delta["signature"]

    def end(self) -> Iterator[ProviderEvent]:
        """The StopEvent, once the stream is over (nothing if ``messageStop`` never came)."""
        if not self.stopped:
            return
        reason = stop_reason(self.raw_stop)
        if self.output_index is not None and reason == "tool_use":
            reason = "end_turn"  # the output tool was the answer, not a call to run
        extra = {REASONING_KEY: self.thinking} if self.thinking else {}
        yield StopEvent(reason, self.raw_stop, self.model, self.request_id, extra)
