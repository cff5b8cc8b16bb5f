"""Recorded OpenAI Chat Completions exchanges in neutral types (``llmport cassette show``).

The request's ``messages`` become neutral messages (text, images and audio
as media, assistant tool calls, tool results); the answer is read by the same
converters a live call uses: :func:`~.convert_out.chat_response` for a JSON
answer, :class:`~.convert_out.ChatStream` and the core's assembler for a
stream. Imported by the cassette-reader hook only, never at plugin import.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from llmport.plugin_api import (
    MediaBlock,
    Message,
    RecordedExchange,
    Response,
    ShownExchange,
    TextBlock,
    ToolCall,
    ToolResult,
    assemble,
)

from .convert_out import ChatStream, chat_response

_MEDIA_PARTS = {"image_url": "image", "input_audio": "audio", "file": "file"}


def read_chat(exchange: RecordedExchange) -> ShownExchange | None:
    """A Chat Completions exchange (``.../chat/completions``), or ``None`` for another."""
    sent = exchange.sent
    if not exchange.path.endswith("/chat/completions") or not isinstance(sent, dict):
        return None
    messages = [chat_message(m) for m in sent.get("messages") or [] if isinstance(m, dict)]
    return ShownExchange(messages, _answer(exchange), str(sent.get("model") or ""))


def _answer(exchange: RecordedExchange) -> Response | None:
    if isinstance(exchange.answer, dict) and exchange.answer.get("choices"):
        return chat_response(exchange.answer)
    chunks = [chunk for chunk in exchange.events if isinstance(chunk, dict)]  # not "[DONE]"
    if not chunks:
        return None
    stream = ChatStream()
    events = [event for chunk in chunks for event in stream.feed(chunk)]
    return assemble([*events, *stream.end()])


def chat_message(raw: dict[str, Any]) -> Message:
    """One Chat Completions message as a neutral :class:`Message`."""
    role = str(raw.get("role") or "user")
    if role == "tool":
        result = ToolResult(str(raw.get("tool_call_id") or ""), "", _text_of(raw.get("content")))
        return Message("tool", tool_results=(result,))
    calls = tuple(_tool_call(c) for c in raw.get("tool_calls") or [] if isinstance(c, dict))
    shown_role = role if role in ("system", "user", "assistant") else "system"  # developer
    return Message(shown_role, _blocks(raw.get("content")), calls)  # type: ignore[arg-type]


def _blocks(content: Any) -> tuple[Any, ...]:
    if isinstance(content, str):
        return (TextBlock(content),)
    blocks: list[Any] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            blocks.append(TextBlock(str(part.get("text") or "")))
        elif part.get("type") in _MEDIA_PARTS:
            blocks.append(_media(part))
    return tuple(blocks)


def _media(part: dict[str, Any]) -> MediaBlock:
    """An image, audio or file part: its bytes when inline, else the URL or file id."""
    kind = _MEDIA_PARTS[str(part["type"])]
    value = part.get(part["type"]) or {}
    if kind == "image":
        url = str(value.get("url") or "")
        if url.startswith("data:") and ";base64," in url:
            head, data = url[len("data:") :].split(";base64,", 1)
            return MediaBlock("image", head or "image/*", data=_decoded(data))
        return MediaBlock("image", "image/*", url=url)
    if kind == "audio":
        fmt = str(value.get("format") or "wav")
        return MediaBlock("audio", f"audio/{fmt}", data=_decoded(str(value.get("data") or "")))
    data = str(value.get("file_data") or "")
    if data.startswith("data:") and ";base64," in data:
        head, encoded = data[len("data:") :].split(";base64,", 1)
        return MediaBlock("file", head, data=_decoded(encoded))
    return MediaBlock("file", "application/octet-stream", url=str(value.get("file_id") or ""))


def _decoded(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return b""


def _tool_call(raw: dict[str, Any]) -> ToolCall:
    function = raw.get("function") or {}
    arguments = str(function.get("arguments") or "")
    try:
        parsed = json.loads(arguments) if arguments else {}
    except ValueError:
        parsed = {}
    return ToolCall(
        str(raw.get("id") or ""),
        str(function.get("name") or ""),
        parsed if isinstance(parsed, dict) else {},
        arguments,
    )


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = [p.get("text") for p in content or [] if isinstance(p, dict)]
    return "".join(t for t in texts if isinstance(t, str))
