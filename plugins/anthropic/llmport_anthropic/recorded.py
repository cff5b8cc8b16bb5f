"""Recorded Anthropic Messages exchanges in neutral types (``llmport cassette show``).

The request's ``messages`` become neutral messages (text, images and
documents as media, tool uses, tool results); the answer is read by the same
converters a live call uses: :func:`~.convert_out.response` for a JSON answer,
:class:`~.convert_out.StreamState` and the core's assembler for a stream.
Imported by the cassette-reader hook only, never at plugin import.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from llmport.errors import LlmportError
from llmport.plugin_api import (
    MediaBlock,
    Message,
    RecordedExchange,
    Request,
    Response,
    ShownExchange,
    TextBlock,
    ToolCall,
    ToolResult,
    assemble,
    recorded_bytes,
)

from .convert_in import AnthropicPrepared
from .convert_out import StreamState, response

_MEDIA = {"image": "image", "document": "file"}


def read_messages(exchange: RecordedExchange) -> ShownExchange | None:
    """A Messages exchange (``.../v1/messages``), or ``None`` for another."""
    sent = exchange.sent
    if not exchange.path.endswith("/v1/messages") or not isinstance(sent, dict):
        return None
    model = str(sent.get("model") or "")
    messages = [_message(m) for m in sent.get("messages") or [] if isinstance(m, dict)]
    try:
        answer = _answer(exchange, model)
    except LlmportError:  # an answer the converters refuse: the generic reading shows it
        return None
    return ShownExchange(messages, answer, model)


def _answer(exchange: RecordedExchange, model: str) -> Response | None:
    # Nothing here was forced (no output tool): what the answer says is shown as it is.
    prepared = AnthropicPrepared(Request(model=model, messages=[]), payload={})
    if isinstance(exchange.answer, dict) and isinstance(exchange.answer.get("content"), list):
        return response(exchange.answer, prepared)
    events = [event for event in exchange.events if isinstance(event, dict) and "type" in event]
    if not events:
        return None
    state = StreamState(prepared)
    return assemble([out for event in events for out in state.feed(event)])


def _message(raw: dict[str, Any]) -> Message:
    role: Literal["user", "assistant"] = "assistant" if raw.get("role") == "assistant" else "user"
    content = raw.get("content")
    if isinstance(content, str):
        return Message(role, (TextBlock(content),))
    blocks: list[Any] = []
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            blocks.append(TextBlock(str(block.get("text") or "")))
        elif kind in _MEDIA:
            blocks.append(_media(block))
        elif kind == "tool_use":
            given = block.get("input")
            arguments: dict[str, Any] = given if isinstance(given, dict) else {}
            raw_arguments = json.dumps(arguments)
            calls.append(
                ToolCall(str(block.get("id")), str(block.get("name")), arguments, raw_arguments)
            )
        elif kind == "tool_result":
            results.append(_tool_result(block))
    if results:
        return Message("tool", tuple(blocks), tool_results=tuple(results))
    return Message(role, tuple(blocks), tuple(calls))


def _media(block: dict[str, Any]) -> MediaBlock:
    kind = _MEDIA[str(block["type"])]
    source = block.get("source") or {}
    media_type = str(
        source.get("media_type") or ("image/*" if kind == "image" else "application/pdf")
    )
    if source.get("type") == "base64":
        return MediaBlock(kind, media_type, data=recorded_bytes(source.get("data")))  # type: ignore[arg-type]
    if source.get("type") == "text":
        return MediaBlock(kind, "text/plain", data=str(source.get("data") or "").encode())  # type: ignore[arg-type]
    where = source.get("url") or source.get("file_id") or ""
    return MediaBlock(kind, media_type, url=str(where))  # type: ignore[arg-type]


def _tool_result(block: dict[str, Any]) -> ToolResult:
    content = block.get("content")
    if isinstance(content, list):
        content = "".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
    return ToolResult(
        str(block.get("tool_use_id") or ""), "", str(content or ""), bool(block.get("is_error"))
    )
