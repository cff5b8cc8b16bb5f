"""Recorded Gemini exchanges in neutral types (``llmport cassette show``).

``generateContent`` and ``streamGenerateContent``: the request's ``contents``
become neutral messages (text, inline media, function calls and responses);
the answer is read by the converters a live call uses:
:func:`~.convert_out.response_json` (else google-genai's object and
:func:`~.convert_out.response`) for a JSON answer, :class:`~.convert_out.StreamState`
and the core's assembler for a stream. Embeddings (``batchEmbedContents``, and
Vertex's ``:predict`` on an embedding model) show how many inputs went and how
many vectors of what size came back (:func:`~.embeddings.answer`), never the
vectors. Imported by the cassette-reader hook only.
"""

from __future__ import annotations

import json
from typing import Any, Literal

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

from .convert_out import StreamState, response, response_json, sdk_response
from .embeddings import BATCH, PREDICT
from .embeddings import answer as embed_answer

_METHODS = (":generateContent", ":streamGenerateContent")


def read_generate(exchange: RecordedExchange) -> ShownExchange | None:
    """A ``models/<model>:generateContent`` exchange (or its stream), or ``None``."""
    sent = exchange.sent
    if not exchange.path.endswith(_METHODS) or not isinstance(sent, dict):
        return None
    model = exchange.path.rsplit("/", 1)[-1].split(":", 1)[0]
    contents = [_message(c) for c in sent.get("contents") or [] if isinstance(c, dict)]
    try:
        answer = _answer(exchange, model)
    except LlmportError:  # an answer the converters refuse: the generic reading shows it
        return None
    return ShownExchange(contents, answer, model)


def read_embeddings(exchange: RecordedExchange) -> ShownExchange | None:
    """A ``:batchEmbedContents`` or embedding ``:predict`` exchange, or ``None``.

    Imagen's ``:predict`` answers images: the embedding reader refuses it, and
    the exchange keeps the generic reading.
    """
    sent = exchange.sent
    method = next((m for m in (BATCH, PREDICT) if exchange.path.endswith(m)), None)
    if method is None or not isinstance(sent, dict):
        return None
    model = exchange.path.rsplit("/", 1)[-1].removesuffix(method)
    given = sent.get("requests" if method == BATCH else "instances")
    count = len(given) if isinstance(given, list) else 0
    request = EmbedRequest(model, ())
    return ShownExchange.read_embedding(
        exchange, model, count, lambda data: embed_answer(data, request, method, "gemini")
    )


def _answer(exchange: RecordedExchange, model: str) -> Response | None:
    answer = exchange.answer
    if isinstance(answer, dict) and answer.get("candidates"):
        return response_json(answer, model) or response(sdk_response(answer, None), model)
    chunks = [chunk for chunk in exchange.events if isinstance(chunk, dict)]
    if isinstance(answer, list):  # a stream read as one JSON array (no SSE)
        chunks = [chunk for chunk in answer if isinstance(chunk, dict)]
    if not chunks:
        return None
    state = StreamState(model)
    events = [event for chunk in chunks for event in state.feed_json(chunk, None)]
    return assemble([*events, *state.end()])


def _message(raw: dict[str, Any]) -> Message:
    role: Literal["user", "assistant"] = "assistant" if raw.get("role") == "model" else "user"
    blocks: list[Any] = []
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    for part in raw.get("parts") or []:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str) and not part.get("thought"):
            blocks.append(TextBlock(part["text"]))
        elif isinstance(part.get("inlineData"), dict):
            blocks.append(_inline(part["inlineData"]))
        elif isinstance(part.get("fileData"), dict):
            where = part["fileData"]
            kind = str(_either(where, "mimeType", "mime_type") or "application/octet-stream")
            uri = str(_either(where, "fileUri", "file_uri") or "")
            blocks.append(MediaBlock(_kind(kind), kind, url=uri))
        elif isinstance(part.get("functionCall"), dict):
            call = part["functionCall"]
            given = call.get("args")
            arguments: dict[str, Any] = given if isinstance(given, dict) else {}
            name = str(call.get("name") or "")
            calls.append(
                ToolCall(str(call.get("id") or name), name, arguments, json.dumps(arguments))
            )
        elif isinstance(part.get("functionResponse"), dict):
            answered = part["functionResponse"]
            name = str(answered.get("name") or "")
            content = answered.get("response")
            shown = content.get("output", content) if isinstance(content, dict) else content
            text = shown if isinstance(shown, str) else json.dumps(shown)
            results.append(ToolResult(str(answered.get("id") or name), name, text))
    if results:
        return Message("tool", tuple(blocks), tool_results=tuple(results))
    return Message(role, tuple(blocks), tuple(calls))


def _either(value: dict[str, Any], camel: str, snake: str) -> Any:
    """A field google-genai may write in either case (``mimeType`` or ``mime_type``)."""
    return value.get(camel, value.get(snake))


def _kind(media_type: str) -> Literal["image", "audio", "file"]:
    if media_type.startswith("image/"):
        return "image"
    return "audio" if media_type.startswith("audio/") else "file"


def _inline(blob: dict[str, Any]) -> MediaBlock:
    media_type = str(_either(blob, "mimeType", "mime_type") or "application/octet-stream")
    return MediaBlock(_kind(media_type), media_type, data=recorded_bytes(blob.get("data")))
