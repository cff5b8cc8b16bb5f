"""Recorded Bedrock exchanges in neutral types (``llmport cassette show``).

Converse and ConverseStream (``/model/<id>/converse`` and ``.../converse-stream``):
the request's ``system`` and ``messages`` become neutral messages (text,
images and documents as media, tool uses, tool results); the answer is read
by the converters a live call uses: :func:`~.convert_out.response` for a
JSON answer, :class:`~.convert_out.StreamState` and the core's assembler for
the AWS event stream (the cassette keeps each frame's event type and JSON
payload, the dict botocore gives the stream reader). InvokeModel embeddings
(``/model/<id>/invoke`` on an embedding model) show how many inputs went and
how many vectors of what size came back (the family's own answer reader),
with the usage, never the vectors. Imported by the cassette-reader hook only.
"""

from __future__ import annotations

import json
from typing import Any, Literal
from urllib.parse import unquote

from llmport.errors import LlmportError
from llmport.plugin_api import (
    EmbedRequest,
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

from .convert_in import ConversePrepared
from .convert_out import StreamState, response
from .embeddings import answer as embed_answer
from .embeddings import embed_family
from .models import DOCUMENT_FORMATS

_DOCUMENT_TYPES = {fmt: media_type for media_type, fmt in DOCUMENT_FORMATS.items()}
#: The request fields that hold an embedding call's inputs, by family.
_INPUT_LISTS = ("texts", "inputs", "images")


def read_converse(exchange: RecordedExchange) -> ShownExchange | None:
    """A Converse or ConverseStream exchange, or ``None`` for another."""
    sent = exchange.sent
    model = _model(exchange.path, ("/converse", "/converse-stream"))
    if model is None or not isinstance(sent, dict):
        return None
    try:
        answer = _answer(exchange, model)
    except LlmportError:  # an answer the converters refuse: the generic reading shows it
        return None
    return ShownExchange(_messages(sent), answer, model)


def read_embeddings(exchange: RecordedExchange) -> ShownExchange | None:
    """An InvokeModel exchange on an embedding model: the input count, vectors and usage."""
    sent = exchange.sent
    model = _model(exchange.path, ("/invoke",))
    family = embed_family(model or "")
    if model is None or family is None or not isinstance(sent, dict):
        return None
    count = next((len(sent[k]) for k in _INPUT_LISTS if isinstance(sent.get(k), list)), 1)
    request = EmbedRequest(model, ())
    return ShownExchange.read_embedding(
        exchange, model, count, lambda data: embed_answer(data, {}, request, family, "bedrock")
    )


def _model(path: str, operations: tuple[str, ...]) -> str | None:
    """The model id of ``/model/<id>/<operation>`` (unquoted), or ``None`` for another path."""
    parts = path.split("/")
    if len(parts) != 4 or parts[1] != "model" or f"/{parts[3]}" not in operations:
        return None
    return unquote(parts[2])


def _answer(exchange: RecordedExchange, model: str) -> Response | None:
    # Nothing here was forced (no output tool): what the answer says is shown as it is.
    prepared = ConversePrepared(Request(model=model, messages=[]), {"modelId": model})
    if isinstance(exchange.answer, dict) and "output" in exchange.answer:
        return response(exchange.answer, prepared)
    events = _stream_events(exchange.received or {})
    if not events:
        return None
    state = StreamState(prepared)
    return assemble([*(out for event in events for out in state.feed(event)), *state.end()])


def _stream_events(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Each event frame as botocore gives it: ``{event type: payload}`` (exceptions left out)."""
    frames = body.get("aws_events")
    events: list[dict[str, Any]] = []
    for frame in frames if isinstance(frames, list) else []:
        headers = frame.get("headers") if isinstance(frame, dict) else None
        payload = frame.get("payload") if isinstance(frame, dict) else None
        if not isinstance(headers, dict) or not isinstance(payload, dict):
            continue
        kind, data = headers.get(":event-type"), payload.get("json")
        if headers.get(":message-type") == "event" and isinstance(kind, str):
            events.append({kind: data if isinstance(data, dict) else {}})
    return events


def _messages(sent: dict[str, Any]) -> list[Message]:
    """The request's ``system`` text and ``messages`` as neutral messages."""
    system = sent.get("system")
    texts = [str(b.get("text")) for b in system or [] if isinstance(b, dict) and "text" in b]
    shown = [Message("system", (TextBlock("\n".join(texts)),))] if texts else []
    given = sent.get("messages")
    for raw in given if isinstance(given, list) else []:
        shown += _message(raw) if isinstance(raw, dict) else []
    return shown


def _message(raw: dict[str, Any]) -> list[Message]:
    """One Converse message: tool results first (a message of their own), then the rest."""
    role: Literal["user", "assistant"] = "assistant" if raw.get("role") == "assistant" else "user"
    blocks: list[Any] = []
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    content = raw.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and isinstance(block.get("toolUse"), dict):
            calls.append(_tool_use(block["toolUse"]))
        elif isinstance(block, dict) and isinstance(block.get("toolResult"), dict):
            results.append(_tool_result(block["toolResult"]))
        elif isinstance(block, dict):
            blocks += _content(block)
    answered = [Message("tool", tool_results=tuple(results))] if results else []
    if results and not blocks:
        return answered
    return [*answered, Message(role, tuple(blocks), tuple(calls))]


def _content(block: dict[str, Any]) -> list[Any]:
    """A text, image or document block (``[]`` for another: reasoning, cache points)."""
    if isinstance(block.get("text"), str):
        return [TextBlock(block["text"])]
    if isinstance(block.get("image"), dict):
        fmt = str(block["image"].get("format") or "*")
        return [_media("image", f"image/{fmt}", block["image"])]
    if isinstance(block.get("document"), dict):
        fmt = str(block["document"].get("format") or "")
        kind = _DOCUMENT_TYPES.get(fmt, "application/octet-stream")
        return [_media("file", kind, block["document"])]
    return []


def _media(kind: Literal["image", "file"], media_type: str, raw: dict[str, Any]) -> MediaBlock:
    """Inline bytes (base64 on the wire), else the S3 location they are read from."""
    source = raw.get("source")
    source = source if isinstance(source, dict) else {}
    if "bytes" in source:
        return MediaBlock(kind, media_type, data=recorded_bytes(source.get("bytes")))
    where = source.get("s3Location")
    uri = where.get("uri") if isinstance(where, dict) else None
    return MediaBlock(kind, media_type, url=str(uri or ""))


def _tool_use(use: dict[str, Any]) -> ToolCall:
    given = use.get("input")
    arguments: dict[str, Any] = given if isinstance(given, dict) else {}
    return ToolCall(
        str(use.get("toolUseId") or ""),
        str(use.get("name") or ""),
        arguments,
        json.dumps(arguments),
    )


def _tool_result(result: dict[str, Any]) -> ToolResult:
    """A tool result: its text and JSON parts as its content, its media as blocks."""
    content = result.get("content")
    parts = [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []
    texts = [
        str(p["text"]) if "text" in p else json.dumps(p["json"])
        for p in parts
        if "text" in p or "json" in p
    ]
    media = tuple(block for p in parts if "text" not in p for block in _content(p))
    failed = result.get("status") == "error"
    return ToolResult(str(result.get("toolUseId") or ""), "", " ".join(texts), failed, media)
