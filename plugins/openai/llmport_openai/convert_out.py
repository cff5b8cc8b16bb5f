"""OpenAI answers (the JSON body) and stream chunks -> neutral llmport types.

Non-streamed answers are read from the vendor's JSON, parsed once with
:func:`json.loads` (``send`` takes the SDK's raw response, so no SDK response
model is built), and become a :class:`~llmport.messages.types.Response`; an answer of
the wrong shape is a :class:`~llmport.errors.MalformedResponseError`, as the
SDK's own schema check reports it. Streamed
ones become provider events (``TextDelta``, ``ToolCallDelta`` keyed by the
vendor's tool-call index, ``UsageEvent``, ``StopEvent``) that the core's
``StreamAssembler`` joins. A stream that ends before its finish reason
yields no ``StopEvent``, which the assembler reports as a (retryable)
``MalformedResponseError``.

Usage keeps OpenAI's meaning: ``input_tokens`` includes the cached ones
(``cache_read_tokens``, and ``cache_write_tokens`` where explicit breakpoints
wrote them), ``output_tokens`` includes ``reasoning_tokens``.

A plain text answer leaves ``Response.blocks`` empty (the fast path). An
answer with reasoning items, hosted-tool items or annotations gets its
content as blocks in output order: ``ThinkingBlock`` (summary text;
``redacted`` = ``encrypted_content``; ``extra`` = the item's other fields, so
it is echoed exactly), ``TextBlock`` with ``citations``, ``ServerToolCall``
(``raw`` = the item verbatim) and ``ServerToolResult`` (a view of the call's
outputs; not echoed).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from llmport.errors import MalformedResponseError
from llmport.messages.order import settle_positions
from llmport.messages.types import (
    Block,
    Citation,
    CitationEvent,
    MediaBlock,
    MediaDelta,
    ProviderEvent,
    Response,
    ServerToolCall,
    ServerToolEvent,
    ServerToolResult,
    StopEvent,
    StopReason,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    UsageEvent,
)
from llmport.provider.assembly import parse_arguments
from llmport.provider.chunks import SHAPE_ERRORS, ChunkReader, shape_error
from llmport.provider.media import answered_media
from llmport.provider.translate import event_json, malformed
from llmport.schema.transform import drop_added_nulls

from .convert_in import MESSAGE_IDS
from .errors import stream_error

CHAT_STOP: dict[str, StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
}
INCOMPLETE_STOP: dict[str, StopReason] = {
    "max_output_tokens": "max_tokens",
    "content_filter": "content_filter",
}


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` of a JSON object, or the attribute of an SDK stream model; None is missing."""
    value = obj.get(name) if type(obj) is dict else getattr(obj, name, None)
    return default if value is None else value


#: The caller's schema when strict mode's added nulls must be removed from replies
#: (``convert_in.restore_schema``, computed once in ``prepare``), else None.
Restore = dict[str, Any] | None


def restore_optional(restore: Restore, text: str) -> str:
    """Undo strict mode's ``null`` for optional properties (see convert_in)."""
    if restore is None or not text:
        return text
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text  # the core's validation reports it
    return json.dumps(drop_added_nulls(restore, value), ensure_ascii=False)


# ---------------------------------------------------------------------------
# Chat Completions
# ---------------------------------------------------------------------------


def chat_usage(usage: Any) -> Usage:
    if usage is None:
        return Usage(requests=1)
    prompt = _get(usage, "prompt_tokens_details")
    completion = _get(usage, "completion_tokens_details")
    return Usage(
        input_tokens=_get(usage, "prompt_tokens", 0),
        output_tokens=_get(usage, "completion_tokens", 0),
        cache_read_tokens=_get(prompt, "cached_tokens", 0),
        cache_write_tokens=_get(prompt, "cache_write_tokens", 0),
        reasoning_tokens=_get(completion, "reasoning_tokens", 0),
        requests=1,
    )


def chat_citation(annotation: Any, vendor: str) -> Citation | None:
    """A Chat ``url_citation`` annotation (``{"type", "url_citation": {...}}``)."""
    data = _item_dict(annotation)
    inner = data.get("url_citation")
    if data.get("type") != "url_citation" or not isinstance(inner, dict):
        return None
    return Citation(
        "url",
        url=inner.get("url"),
        title=inner.get("title"),
        start=inner.get("start_index"),
        end=inner.get("end_index"),
        vendor=vendor,
    )


def chat_response(completion: Any, restore: Restore = None, vendor: str = "openai") -> Response:
    """A Chat Completions answer (its JSON object) as a Response (the first choice)."""
    try:
        return _chat_response(completion, restore, vendor)
    except SHAPE_ERRORS as exc:
        raise shape_error(vendor, exc, "the answer") from exc


def _chat_response(completion: dict[str, Any], restore: Restore, vendor: str) -> Response:
    choices = completion.get("choices")
    if not choices:
        raise MalformedResponseError("Chat Completions answer has no choices", provider="openai")
    choice = choices[0]
    message = choice.get("message") or {}
    raw_stop = choice.get("finish_reason")
    stop = CHAT_STOP.get(raw_stop or "", "other")
    text = message.get("content") or ""
    refusal = message.get("refusal")
    if refusal and not text:
        text, stop = refusal, "refusal"
    calls = []
    for tc in message.get("tool_calls") or ():
        if (tc.get("type") or "function") == "function":
            function = tc["function"]
            raw = function.get("arguments") or ""
            calls.append(ToolCall(tc["id"], function["name"], parse_arguments(raw), raw))
    if stop != "refusal":
        text = restore_optional(restore, text)
    blocks: list[Block] = []
    annotations = message.get("annotations")
    if annotations:
        cites = [c for c in (chat_citation(a, vendor) for a in annotations) if c is not None]
        if cites:
            blocks.append(TextBlock(text, citations=tuple(cites)))
    return Response(
        text=text,
        tool_calls=calls,
        usage=chat_usage(completion.get("usage")),
        stop_reason=stop,
        model=completion.get("model") or "",
        id=completion.get("id"),
        raw_stop_reason=raw_stop,
        blocks=blocks,
    )


class ChatStream(ChunkReader):
    """Turns ``ChatCompletionChunk`` objects into provider events.

    With a strict ``response_format`` whose schema has optional properties
    the text is held back and sent once, fixed by :func:`restore_optional`
    (a streamed ``null`` cannot be taken back).
    """

    def __init__(self, restore: Restore = None, vendor: str = "openai") -> None:
        self.restore = restore
        self.vendor = vendor
        self.hold_text = restore is not None
        self.held: list[str] = []
        self.refusal: list[str] = []
        self.sent_text = False
        self.finish: str | None = None
        self.model = ""
        self.id: str | None = None

    def feed(self, chunk: Any) -> Iterator[ProviderEvent]:
        """Events for one chunk: its JSON object (an SDK chunk object is read as JSON)."""
        chunk = event_json(chunk, self.vendor)
        self.id = chunk.get("id") or self.id
        self.model = chunk.get("model") or self.model
        usage = chunk.get("usage")
        if usage is not None:
            yield UsageEvent(chat_usage(usage))
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if content:
                if self.hold_text:
                    self.held.append(content)
                else:
                    self.sent_text = True
                    yield TextDelta(content)
            refusal = delta.get("refusal")
            if refusal:
                self.refusal.append(refusal)
            for annotation in delta.get("annotations") or ():
                citation = chat_citation(annotation, self.vendor)
                if citation is not None:
                    yield CitationEvent(citation)
            for position, tc in enumerate(delta.get("tool_calls") or ()):
                function = tc.get("function") or {}
                key = tc.get("index")
                yield ToolCallDelta(
                    key=key if key is not None else (tc.get("id") or position),
                    id=tc.get("id"),
                    name=function.get("name"),
                    arguments=function.get("arguments") or "",
                )
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]

    def end(self) -> Iterator[ProviderEvent]:
        """Events after the last chunk; nothing if the stream never finished."""
        if self.finish is None:
            return
        stop = CHAT_STOP.get(self.finish, "other")
        if self.held:
            yield TextDelta(restore_optional(self.restore, "".join(self.held)))
        elif self.refusal and not self.sent_text:
            stop = "refusal"
            yield TextDelta("".join(self.refusal))
        yield StopEvent(stop, self.finish, self.model, self.id)


# ---------------------------------------------------------------------------
# Responses
# ---------------------------------------------------------------------------


def responses_usage(usage: Any) -> Usage:
    if usage is None:
        return Usage(requests=1)
    details = _get(usage, "input_tokens_details")
    return Usage(
        input_tokens=_get(usage, "input_tokens", 0),
        output_tokens=_get(usage, "output_tokens", 0),
        cache_read_tokens=_get(details, "cached_tokens", 0),
        cache_write_tokens=_get(details, "cache_write_tokens", 0),
        reasoning_tokens=_get(_get(usage, "output_tokens_details"), "reasoning_tokens", 0),
        requests=1,
    )


def _item_dict(item: Any) -> dict[str, Any]:
    """An output item as the JSON the API sent (only the fields it set); a JSON object as is."""
    if type(item) is dict:
        return item
    if hasattr(item, "to_dict"):
        return dict(item.to_dict())
    return dict(item)


def responses_stop(response: Any, has_calls: bool) -> tuple[StopReason, str | None]:
    status = _get(response, "status")
    if status == "incomplete":
        reason = _get(_get(response, "incomplete_details"), "reason")
        return INCOMPLETE_STOP.get(reason or "", "other"), reason
    if status == "failed":
        error = _get(response, "error")
        code = _get(error, "code")
        message = f"response failed: {_get(error, 'message', 'unknown error')}"
        raise stream_error(message, code, code, provider="openai-responses")
    return ("tool_use" if has_calls else "end_turn"), status


def thinking_block(item: dict[str, Any], vendor: str) -> ThinkingBlock:
    """A ``reasoning`` item: summary text joined; every other field kept for the echo."""
    extra = {k: v for k, v in item.items() if k != "type"}
    redacted = extra.pop("encrypted_content", None) if item.get("encrypted_content") else None
    parts = extra.get("summary") or extra.get("content") or ()
    text = "\n\n".join(p.get("text", "") for p in parts if isinstance(p, dict))
    return ThinkingBlock(text=text, redacted=redacted, vendor=vendor, extra=extra)


#: Hosted-tool output items and the neutral name of their tool.
SERVER_TOOLS = {
    "web_search_call": "web_search",
    "code_interpreter_call": "code_execution",
    "file_search_call": "file_search",
    "tool_search_call": "tool_search",
}


def server_blocks(item: dict[str, Any], vendor: str) -> list[Block]:
    """A hosted-tool item as a ServerToolCall (``raw``: verbatim) and, with outputs, its result.

    An ``image_generation_call`` is the call and its image (:func:`generated_image`).
    """
    kind = str(item.get("type", ""))
    item_id = str(item.get("id") or item.get("call_id") or "")
    if kind == "image_generation_call":
        return generated_image(item, item_id, vendor)
    if kind.endswith("_output"):  # e.g. tool_search_output: a result item of its own
        name = kind.removesuffix("_output")
        call_id = str(item.get("call_id") or item_id)
        content = item.get("tools", item.get("output"))
        return [ServerToolResult(call_id, name, content, vendor, raw=item)]
    name = SERVER_TOOLS.get(kind, kind.removesuffix("_call"))
    if kind == "code_interpreter_call":
        args: Any = {"code": item.get("code"), "container_id": item.get("container_id")}
        outputs = item.get("outputs")
    elif kind == "file_search_call":
        args, outputs = {"queries": item.get("queries")}, item.get("results")
    else:
        args, outputs = item.get("action", item.get("arguments")), None
    call = ServerToolCall(item_id, name, args if isinstance(args, dict) else {}, vendor, raw=item)
    if outputs is None:
        return [call]
    return [call, ServerToolResult(item_id, name, outputs, vendor)]


#: ``output_format`` of the image generation tool -> the image's media type.
IMAGE_FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}


def generated_image(item: dict[str, Any], item_id: str, vendor: str) -> list[Block]:
    """An ``image_generation_call``: a ServerToolCall, then the image as a MediaBlock.

    The call's ``raw`` is the bare reference ``{id, type}`` the next turn sends
    back in place of the image (as recorded: wire-samples
    ``openai-responses/image-generation-in-history.json``), so the base64 is
    not sent again; ``input`` keeps what the API said of the image
    (``revised_prompt``, ``size``, ``quality``, ``background``...). A call
    without a ``result`` (not completed) has no image.
    """
    described = {
        k: v
        for k, v in item.items()
        if k not in ("id", "type", "result", "status") and v is not None
    }
    call = ServerToolCall(
        item_id,
        "image_generation",
        described,
        vendor,
        raw={"id": item_id, "type": "image_generation_call"},
    )
    result = item.get("result")
    if not result:
        return [call]
    if not isinstance(result, str):
        raise malformed(vendor, f"image_generation_call result is a {type(result).__name__}")
    declared = IMAGE_FORMATS.get(str(item.get("output_format") or ""))
    return [call, answered_media(vendor, result, declared)]


def preview_image(event: dict[str, Any], vendor: str) -> MediaDelta:
    """A ``response.image_generation_call.partial_image`` event as a preview of its image."""
    data = event.get("partial_image_b64")
    if not isinstance(data, str) or not data:
        raise malformed(vendor, "partial_image event without partial_image_b64")
    block = answered_media(vendor, data, IMAGE_FORMATS.get(str(event.get("output_format") or "")))
    key = event.get("item_id") or event.get("output_index") or 0
    return MediaDelta(block, key, int(event.get("partial_image_index") or 0))


def responses_citation(annotation: Any, offset: int, vendor: str) -> Citation:
    """A Responses annotation; offsets shifted to the joined text of its message."""
    a = _item_dict(annotation)
    kind = a.get("type")
    start, end = a.get("start_index"), a.get("end_index")
    if start is None and a.get("index") is not None:
        start = end = a["index"]
    return Citation(
        "url" if kind == "url_citation" else "file",
        url=a.get("url"),
        title=a.get("title", a.get("filename")),
        file_id=a.get("file_id"),
        start=None if start is None else start + offset,
        end=None if end is None else end + offset,
        vendor=vendor,
        extra={"annotation": a},
    )


def responses_response(
    response: Any, restore: Restore = None, vendor: str = "openai-responses"
) -> Response:
    """A Responses API answer (its JSON object) as a neutral Response.

    The documented success is a response object whose ``output`` is a list:
    ``{}`` or an error object sent with a 2xx is a MalformedResponseError.
    """
    if not isinstance(response, dict) or not isinstance(response.get("output"), list):
        raise malformed(vendor, "a response object with an 'output' list expected")
    try:
        return _responses_response(response, restore, vendor)
    except SHAPE_ERRORS as exc:
        raise shape_error(vendor, exc, "the answer") from exc


@dataclass(slots=True)
class _Output:
    """A Responses answer's ``output`` items, read once and in order."""

    vendor: str
    texts: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    #: Blocks, and (text, citations) for messages until the end.
    blocks: list[Any] = field(default_factory=list)
    message_ids: list[str] = field(default_factory=list)
    #: Whether the answer needs blocks (citations, reasoning, server tools).
    rich: bool = False
    thinking: bool = False

    def add(self, item: Any) -> None:
        kind = item.get("type")
        if kind == "message":
            self.message(item)
        elif kind == "function_call":
            raw = item.get("arguments") or ""
            self.calls.append(
                ToolCall(
                    id=item["call_id"],
                    name=item["name"],
                    arguments=parse_arguments(raw),
                    raw_arguments=raw,
                    extra=call_extra(item),
                    position=len(self.blocks),  # among the items before it
                )
            )
        elif kind == "reasoning":
            self.rich = self.thinking = True
            self.blocks.append(thinking_block(item, self.vendor))
        elif kind is not None:
            self.rich = True
            self.blocks.extend(server_blocks(item, self.vendor))

    def message(self, item: Any) -> None:
        parts: list[str] = []
        citations: list[Citation] = []
        size = 0
        for part in item.get("content") or ():
            part_type = part.get("type")
            if part_type == "output_text":
                text = part.get("text") or ""
                for annotation in part.get("annotations") or ():
                    citations.append(responses_citation(annotation, size, self.vendor))
                parts.append(text)
                size += len(text)
            elif part_type == "refusal":
                self.refusals.append(part.get("refusal") or "")
        joined = parts[0] if len(parts) == 1 else "".join(parts)
        self.texts.append(joined)
        if citations:
            self.rich = True
        if joined:
            # A placeholder until the answer proves rich (plain answers build no blocks).
            self.blocks.append((joined, citations))
            self.message_ids.append(item.get("id") or "")

    def final_blocks(self, text: str | None) -> tuple[list[Any], dict[str, Any]]:
        """The answer's blocks (none for a plain answer) and its ``extra``.

        ``text`` (the restored structured text), when given, replaces every message's.
        """
        extra: dict[str, Any] = {}
        # Plain text builds no blocks, unless it came in several messages (kept apart,
        # as streamed); a restored structured text is one text, however it came.
        messages = sum(isinstance(b, tuple) for b in self.blocks)
        if not self.rich and (text is not None or messages < 2):
            return [], extra
        blocks = [
            (text, []) if text is not None and isinstance(b, tuple) else b for b in self.blocks
        ]
        if self.thinking and any(self.message_ids):
            extra[MESSAGE_IDS] = [i for i in self.message_ids if i]
        built = [
            TextBlock(b[0], citations=tuple(b[1])) if isinstance(b, tuple) else b for b in blocks
        ]
        return built, extra


def _responses_response(response: dict[str, Any], restore: Restore, vendor: str) -> Response:
    out = _Output(vendor)
    for item in response["output"]:
        out.add(item)
    stop, raw_stop = responses_stop(response, bool(out.calls))
    text = "".join(out.texts)
    restored = None
    if out.refusals and not text:
        text, stop = "".join(out.refusals), "refusal"
    elif text and restore is not None:
        text = restored = restore_optional(restore, text)
    blocks, extra = out.final_blocks(restored)
    return Response(
        text=text,
        tool_calls=settle_positions(out.calls, len(blocks)),
        usage=responses_usage(response.get("usage")),
        stop_reason=stop,
        model=response.get("model") or "",
        id=response.get("id"),
        raw_stop_reason=raw_stop,
        extra=extra,
        blocks=blocks,
    )


def call_extra(item: Any) -> dict[str, Any]:
    """What a function_call item needs echoed beside call_id, name and arguments."""
    extra = {"item_id": _get(item, "id")}
    namespace = _get(item, "namespace")
    if namespace:
        extra["namespace"] = namespace
    return extra


class ResponsesStream(ChunkReader):
    """Turns Responses streaming events into provider events."""

    def __init__(self, restore: Restore = None, vendor: str = "openai-responses") -> None:
        self.restore = restore
        self.vendor = vendor
        self.hold_text = restore is not None
        self.held: list[str] = []
        self.refusal: list[str] = []
        self.calls = 0
        self.thinking: set[int] = set()  # output indexes whose summary text was streamed
        self.reasoned = False
        self.message_ids: list[str] = []
        self.offsets: dict[tuple[int, int], int] = {}  # content part -> offset in its message
        self.sizes: dict[int, int] = {}  # message output index -> text length so far
        self.done: Any = None

    def feed(self, event: Any) -> Iterator[ProviderEvent]:
        """Events for one stream event: its JSON object (an SDK event object is read as JSON)."""
        event = event_json(event, self.vendor)
        kind = event.get("type")
        if not isinstance(kind, str):  # a new kind of event is skipped; no kind at all is not one
            raise malformed(self.vendor, f"a stream event has no type (got {type(kind).__name__})")
        if kind == "response.output_text.delta":
            index, delta = event["output_index"], event["delta"]
            self.sizes[index] = self.sizes.get(index, 0) + len(delta)
            if self.hold_text:
                self.held.append(delta)
            else:
                yield TextDelta(delta, index)  # one text block per message item, as whole
        elif kind == "response.content_part.added":
            index = event["output_index"]
            self.offsets[(index, event["content_index"])] = self.sizes.get(index, 0)
        elif kind == "response.output_text.annotation.added":
            offset = self.offsets.get((event["output_index"], event["content_index"]), 0)
            yield CitationEvent(responses_citation(event["annotation"], offset, self.vendor))
        elif kind == "response.reasoning_summary_text.delta":
            self.thinking.add(event["output_index"])
            yield ThinkingDelta(event["delta"], event["output_index"], vendor=self.vendor)
        elif kind == "response.reasoning_summary_part.added" and event.get("summary_index"):
            yield ThinkingDelta("\n\n", event["output_index"], vendor=self.vendor)
        elif kind == "response.image_generation_call.partial_image":
            yield preview_image(event, self.vendor)
        elif kind == "response.refusal.delta":
            self.refusal.append(event["delta"])
        elif kind == "response.output_item.added" and event["item"].get("type") == "function_call":
            self.calls += 1
            item = event["item"]
            yield ToolCallDelta(
                key=event["output_index"],
                id=item.get("call_id"),
                name=item.get("name"),
                arguments=item.get("arguments") or "",
                extra=call_extra(item),
            )
        elif kind == "response.function_call_arguments.delta":
            yield ToolCallDelta(key=event["output_index"], arguments=event["delta"])
        elif kind == "response.output_item.done":
            yield from self.item_done(event)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self.done = event["response"]
        elif kind == "error":
            code = event.get("code")
            raise stream_error(event.get("message"), code, code, provider="openai-responses")

    def item_done(self, event: dict[str, Any]) -> Iterator[ProviderEvent]:
        item = event["item"]
        item_type = item.get("type")
        if item_type in ("function_call", None):
            return
        if item_type == "message":
            self.message_ids.append(item.get("id") or "")
            return
        if item_type == "reasoning":
            self.reasoned = True
            block = thinking_block(item, self.vendor)
            text = "" if event["output_index"] in self.thinking else block.text
            yield ThinkingDelta(
                text,
                event["output_index"],
                redacted=block.redacted,
                vendor=self.vendor,
                extra=block.extra,
            )
            return
        for server in server_blocks(item, self.vendor):
            if isinstance(server, MediaBlock):  # a generated image: an event of its own
                yield server
                continue
            assert isinstance(server, (ServerToolCall, ServerToolResult))
            yield ServerToolEvent(server)

    def end(self) -> Iterator[ProviderEvent]:
        if self.done is None:
            return
        stop, raw = responses_stop(self.done, self.calls > 0)
        if self.held:
            yield TextDelta(restore_optional(self.restore, "".join(self.held)))
        elif self.refusal:
            stop = "refusal"
            yield TextDelta("".join(self.refusal))
        yield UsageEvent(responses_usage(_get(self.done, "usage")))
        ids = [i for i in self.message_ids if i]
        yield StopEvent(
            stop,
            raw,
            _get(self.done, "model", ""),
            _get(self.done, "id"),
            {MESSAGE_IDS: ids} if self.reasoned and ids else {},
        )
