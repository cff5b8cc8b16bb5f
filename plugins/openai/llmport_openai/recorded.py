"""Recorded OpenAI exchanges in neutral types (``llmport cassette show``).

Chat Completions: the request's ``messages`` become neutral messages (text,
images and audio as media, assistant tool calls, tool results). Responses:
the request's ``instructions`` and ``input`` items (messages, function calls
and their outputs) the same way. Each answer is read by the converters a
live call uses: :func:`~.convert_out.chat_response` /
:func:`~.convert_out.responses_response` for a JSON answer,
:class:`~.convert_out.ChatStream` / :class:`~.convert_out.ResponsesStream` and
the core's assembler for a stream. Embeddings show how many inputs went and
how many vectors of what size came back (:func:`~.embed.embed_answer`), with
the usage, never the vectors. Imported by the cassette-reader hook only,
never at plugin import.
"""

from __future__ import annotations

import json
from typing import Any

from llmport.errors import LlmportError
from llmport.plugin_api import (
    EmbedRequest,
    MediaBlock,
    Message,
    RecordedExchange,
    Response,
    ShownExchange,
    TextBlock,
    ToolCall,
    ToolResult,
    assemble,
    recorded_bytes,
)

from .convert_out import ChatStream, ResponsesStream, chat_response, responses_response
from .embed import embed_answer

_MEDIA_PARTS = {"image_url": "image", "input_audio": "audio", "file": "file"}


def read_chat(exchange: RecordedExchange) -> ShownExchange | None:
    """A Chat Completions exchange (``.../chat/completions``), or ``None`` for another."""
    sent = exchange.sent
    if not exchange.path.endswith("/chat/completions") or not isinstance(sent, dict):
        return None
    try:
        answer = _answer(exchange)
    except LlmportError:  # an answer the converters refuse: the generic reading shows it
        return None
    given = sent.get("messages")
    listed = given if isinstance(given, list) else []
    messages = [chat_message(m) for m in listed if isinstance(m, dict)]
    return ShownExchange(messages, answer, str(sent.get("model") or ""))


def read_responses(exchange: RecordedExchange) -> ShownExchange | None:
    """A Responses exchange, or ``None``.

    ``POST .../responses`` (whole or streamed), and a background response's
    retrieval or cancel (``.../responses/resp_...``, ``.../cancel``): those send
    no conversation, and their answer is the response object (or its stream).
    """
    sent = exchange.sent
    created = exchange.path.endswith("/responses") and isinstance(sent, dict)
    if not created and not _retrieved(exchange.path):
        return None
    try:
        answer = _responses_answer(exchange)
    except LlmportError:  # an answer the converters refuse: the generic reading shows it
        return None
    if not isinstance(sent, dict):
        return ShownExchange([], answer, answer.model if answer else "")
    return ShownExchange(responses_messages(sent), answer, str(sent.get("model") or ""))


def _retrieved(path: str) -> bool:
    """``.../responses/resp_<id>`` or its ``/cancel``: a stored response read back."""
    parts = path.removesuffix("/cancel").split("/")
    return len(parts) >= 2 and parts[-2] == "responses" and parts[-1].startswith("resp_")


def read_embeddings(exchange: RecordedExchange) -> ShownExchange | None:
    """An Embeddings exchange (``.../embeddings``): the input count, vectors and usage."""
    sent = exchange.sent
    if not exchange.path.endswith("/embeddings") or not isinstance(sent, dict):
        return None
    given = sent.get("input")
    count = len(given) if isinstance(given, list) and given else 1
    model = str(sent.get("model") or "")
    request = EmbedRequest(model, ())
    return ShownExchange.read_embedding(
        exchange, model, count, lambda answer: embed_answer(answer, request, "openai")
    )


def _answer(exchange: RecordedExchange) -> Response | None:
    if isinstance(exchange.answer, dict) and exchange.answer.get("choices"):
        return chat_response(exchange.answer)
    chunks = [chunk for chunk in exchange.events if isinstance(chunk, dict)]  # not "[DONE]"
    if not chunks:
        return None
    stream = ChatStream()
    events = [event for chunk in chunks for event in stream.feed(chunk)]
    return assemble([*events, *stream.end()])


def _responses_answer(exchange: RecordedExchange) -> Response | None:
    if isinstance(exchange.answer, dict) and isinstance(exchange.answer.get("output"), list):
        return responses_response(exchange.answer)
    chunks = [chunk for chunk in exchange.events if isinstance(chunk, dict)]
    if not chunks:
        return None
    stream = ResponsesStream()
    events = [event for chunk in chunks for event in stream.feed(chunk)]
    return assemble([*events, *stream.end()])


def responses_messages(sent: dict[str, Any]) -> list[Message]:
    """A Responses request's ``instructions`` and ``input`` as neutral messages."""
    messages: list[Message] = []
    if isinstance(sent.get("instructions"), str):
        messages.append(Message("system", (TextBlock(sent["instructions"]),)))
    given = sent.get("input")
    if isinstance(given, str):
        return [*messages, Message("user", (TextBlock(given),))]
    for item in given if isinstance(given, list) else []:
        message = _input_item(item) if isinstance(item, dict) else None
        if message is not None:
            messages.append(message)
    return messages


def _input_item(item: dict[str, Any]) -> Message | None:
    """One ``input`` item: a message, a function call or its output (reasoning is not shown)."""
    kind = item.get("type")
    if kind == "function_call":
        call = _tool_call({"id": item.get("call_id"), "function": item})
        return Message("assistant", tool_calls=(call,))
    if kind == "function_call_output":
        output = item.get("output")
        result = ToolResult(str(item.get("call_id") or ""), "", _text_of(output))
        return Message("tool", tool_results=(result,))
    if kind not in (None, "message") or "role" not in item:
        return None
    role = str(item.get("role"))
    shown_role = role if role in ("system", "user", "assistant") else "system"  # developer
    return Message(shown_role, _input_blocks(item.get("content")))  # type: ignore[arg-type]


def _input_blocks(content: Any) -> tuple[Any, ...]:
    if isinstance(content, str):
        return (TextBlock(content),)
    blocks: list[Any] = []
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text"):
            blocks.append(TextBlock(str(part.get("text") or "")))
        elif kind == "input_image":
            where = part.get("image_url") or part.get("file_id") or ""
            blocks.append(_inline_or_url("image", str(where), "image/*"))
        elif kind == "input_file":
            where = part.get("file_data") or part.get("file_url") or part.get("file_id") or ""
            blocks.append(_inline_or_url("file", str(where), "application/octet-stream"))
    return tuple(blocks)


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
        return _inline_or_url("image", str(value.get("url") or ""), "image/*")
    if kind == "audio":
        fmt = str(value.get("format") or "wav")
        return MediaBlock("audio", f"audio/{fmt}", data=recorded_bytes(value.get("data")))
    where = value.get("file_data") or value.get("file_id") or ""
    return _inline_or_url("file", str(where), "application/octet-stream")


def _inline_or_url(kind: Any, where: str, unknown: str) -> MediaBlock:
    """A ``data:`` URL's bytes and type, else the URL or file id it is sent by."""
    if where.startswith("data:") and ";base64," in where:
        head, data = where[len("data:") :].split(";base64,", 1)
        return MediaBlock(kind, head or unknown, data=recorded_bytes(data))
    return MediaBlock(kind, unknown, url=where)


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
