"""Messages API answers -> neutral :class:`~llmport.messages.types.Response` / provider events.

A whole answer is read from its JSON object (``send`` parses the body of the
SDK's raw response once: no SDK ``Message`` is built); an answer of the wrong
shape is a :class:`~llmport.errors.MalformedResponseError`. Stream events
are read as their JSON objects too (the SDK's SSE decoder hands them over
parsed), so this module imports no SDK. Thinking, citations and
server-tool blocks become :class:`~llmport.messages.types.ThinkingBlock`, text
citations and :class:`~llmport.messages.types.ServerToolCall` /
:class:`~llmport.messages.types.ServerToolResult` blocks in ``Response.blocks``
(vendor ``"anthropic"``, the vendor's block kept verbatim for the echo);
the code-execution container goes to ``Response.extra["anthropic_container"]``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from llmport.errors import MalformedResponseError
from llmport.messages.order import settle_positions
from llmport.messages.types import (
    Block,
    Citation,
    CitationEvent,
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
from llmport.output.streaming import ForcedToolText
from llmport.provider.assembly import parse_arguments
from llmport.provider.chunks import ChunkReader
from llmport.provider.claude import MESSAGES_API
from llmport.provider.translate import event_json

from .convert_in import CITATION_RANGE, CONTAINER_KEY, VENDOR, AnthropicPrepared


def stop_reason(raw: str | None) -> StopReason:
    """Anthropic's ``stop_reason`` as a neutral one (``pause_turn`` and unknowns are ``other``)."""
    return MESSAGES_API.stop_reason(raw)


def usage(raw: Any) -> Usage:
    """Anthropic usage (a JSON object, or a stream event's usage object) -> neutral Usage.

    ``input_tokens`` is the whole prompt (Anthropic's uncached ``input_tokens``
    plus cache reads and writes); ``output_tokens_details.thinking_tokens``
    (where sent) is ``reasoning_tokens``.
    """
    return MESSAGES_API.usage(raw)


def raw_block(block: Any) -> dict[str, Any]:
    """An SDK block as the JSON the API sent (fields it did not send are left out)."""
    if isinstance(block, dict):
        return dict(block)
    out: dict[str, Any] = block.to_dict(mode="json", exclude_unset=True)
    return out


def citation(raw: Any) -> Citation:
    """An Anthropic citation as a neutral :class:`Citation`.

    ``web_search_result_location`` is a ``"url"`` citation (``encrypted_index``
    kept in ``extra`` for the echo); ``char_location`` / ``page_location`` /
    ``content_block_location`` are ``"document"`` citations whose
    ``start``/``end`` are the character (page, block) range in the cited
    document. ``extra["type"]`` keeps Anthropic's citation type.
    """
    data = raw_block(raw)
    kind = data.pop("type", "")
    cited = data.pop("cited_text", None)
    if kind == "web_search_result_location":
        return Citation(
            "url",
            url=data.pop("url", None),
            title=data.pop("title", None),
            cited_text=cited,
            vendor=VENDOR,
            extra={"type": kind, **data},
        )
    start_key, end_key = CITATION_RANGE.get(kind, ("start_char_index", "end_char_index"))
    return Citation(
        "document",
        title=data.pop("document_title", None),
        cited_text=cited,
        document_index=data.pop("document_index", None),
        file_id=data.pop("file_id", None),
        source_start=data.pop(start_key, None),
        source_end=data.pop(end_key, None),
        vendor=VENDOR,
        extra={"type": kind, **data},
    )


def server_block(raw: dict[str, Any], names: dict[str, str]) -> ServerToolCall | ServerToolResult:
    """A server-tool block (``server_tool_use``, ``*_tool_result``, ...), verbatim in ``raw``."""
    if raw.get("type") == "server_tool_use":
        call_id = str(raw.get("id", ""))
        name = str(raw.get("name", ""))
        names[call_id] = name
        arguments = raw.get("input")
        return ServerToolCall(
            call_id, name, arguments if isinstance(arguments, dict) else {}, VENDOR, raw
        )
    call_id = str(raw.get("tool_use_id", ""))
    return ServerToolResult(
        call_id, names.get(call_id, str(raw.get("type", ""))), raw.get("content"), VENDOR, raw
    )


def thinking_block(block: dict[str, Any]) -> ThinkingBlock:
    if block["type"] == "redacted_thinking":
        return ThinkingBlock(redacted=block.get("data"), vendor=VENDOR)
    return ThinkingBlock(
        text=block.get("thinking") or "", signature=block.get("signature"), vendor=VENDOR
    )


def response(message: Any, prepared: AnthropicPrepared) -> Response:
    """A whole (non-streamed) answer, its JSON object, as a Response.

    ``blocks`` stays empty for a plain answer (text and tool calls only);
    with thinking, citations or server-tool blocks it holds the whole answer
    in order.
    """
    try:
        return _response(message, prepared)
    except (AttributeError, TypeError, KeyError) as exc:
        raise MalformedResponseError(
            f"{VENDOR}: the answer did not match the API schema ({type(exc).__name__}: {exc})",
            provider=VENDOR,
        ) from exc


def _response(message: dict[str, Any], prepared: AnthropicPrepared) -> Response:
    texts: list[str] = []
    calls: list[ToolCall] = []
    # Built only once the answer turns out not to be plain (the fast path allocates nothing).
    blocks: list[Block] | None = None
    names: dict[str, str] = {}
    output = prepared.output_tool
    answered = False
    if not isinstance(message["content"], list):  # {"content": {}} is no empty answer
        raise TypeError(f"content is a {type(message['content']).__name__}, not a list")
    for block in message["content"]:
        kind = block["type"]
        if kind == "text":
            cites = block.get("citations")
            # A second text block keeps its boundary (as streamed): the answer is not plain.
            if blocks is None and (cites or texts):
                blocks = [TextBlock(t) for t in texts]
            text = block["text"]
            texts.append(text)
            if blocks is not None:
                marks = tuple(citation(c) for c in cites) if cites else ()
                blocks.append(TextBlock(text, citations=marks))
        elif kind == "tool_use":
            name = block["name"]
            arguments = block["input"]
            if output is not None and name == output.name:
                if blocks is None and texts:
                    blocks = [TextBlock(t) for t in texts]
                reply = output.reply_text(arguments)
                texts.append(reply)
                if blocks is not None:
                    blocks.append(TextBlock(reply))
                answered = True
                continue
            calls.append(
                ToolCall(
                    block["id"],
                    name,
                    arguments if isinstance(arguments, dict) else {},
                    json.dumps(arguments),
                    # Its place among the blocks (settled below, once they are known).
                    position=len(texts) if blocks is None else len(blocks),
                )
            )
        else:
            if blocks is None:
                blocks = [TextBlock(t) for t in texts]
            if kind in ("thinking", "redacted_thinking"):
                blocks.append(thinking_block(block))
            else:
                blocks.append(server_block(dict(block), names))
    raw_stop = message.get("stop_reason")
    reason = "end_turn" if answered and not calls else stop_reason(raw_stop)
    container = message.get("container")
    return Response(
        text="".join(texts),
        tool_calls=settle_positions(calls, len(blocks) if blocks is not None else 0),
        usage=usage(message.get("usage")),
        stop_reason=reason,
        model=message.get("model") or "",
        id=message.get("id"),
        raw_stop_reason=raw_stop,
        extra={CONTAINER_KEY: dict(container)} if container is not None else {},
        blocks=blocks if blocks is not None else [],
    )


class StreamState(ChunkReader):
    """Turns raw stream events into provider events, one event at a time.

    Tool-call fragments (``input_json_delta``) are keyed by content-block
    index; the forced output tool's fragments are the reply text, sent as
    they arrive (``ForcedToolText``). Thinking is streamed as
    :class:`ThinkingDelta` keyed by block index; a text block's citations
    are sent after its text (at ``content_block_stop``); server-tool blocks
    are buffered and sent whole (``ServerToolEvent``) when they end.
    """

    __slots__ = (
        "citations",
        "container",
        "id",
        "model",
        "names",
        "output",
        "output_index",
        "output_text",
        "raw_stop",
        "server",
    )

    def __init__(self, prepared: AnthropicPrepared) -> None:
        self.output = prepared.output_tool
        self.output_index: int | None = None
        self.output_text: ForcedToolText | None = None
        # Server-tool blocks being streamed, by index: (raw block, input JSON fragments).
        self.server: dict[int, tuple[dict[str, Any], list[str]]] = {}
        self.citations: dict[int, list[Citation]] = {}
        self.names: dict[str, str] = {}
        self.container: dict[str, Any] | None = None
        self.model = ""
        self.id: str | None = None
        self.raw_stop: str | None = None

    def feed(self, event: Any) -> Iterator[ProviderEvent]:
        """Events for one stream event: its JSON object (an SDK event object is read as JSON)."""
        event = event_json(event, VENDOR)
        step = self.STEPS.get(event["type"])
        if step is not None:
            yield from step(self, event)

    def block_delta(self, event: dict[str, Any]) -> Iterator[ProviderEvent]:
        delta = event["delta"]
        dtype = delta.get("type")
        if dtype == "text_delta":
            if delta.get("text"):
                yield TextDelta(delta["text"], event["index"])
        elif dtype == "input_json_delta":
            index = event["index"]
            part = delta.get("partial_json") or ""
            if index == self.output_index and self.output_text is not None:
                if text := self.output_text.fragment(part):
                    yield TextDelta(text, index)
            elif index in self.server:
                self.server[index][1].append(part)
            elif part:
                yield ToolCallDelta(key=index, arguments=part)
        elif dtype == "thinking_delta":
            if delta.get("thinking"):
                yield ThinkingDelta(delta["thinking"], event["index"], vendor=VENDOR)
        elif dtype == "signature_delta":
            yield ThinkingDelta(key=event["index"], signature=delta["signature"], vendor=VENDOR)
        elif dtype == "citations_delta":
            self.citations.setdefault(event["index"], []).append(citation(delta["citation"]))

    def block_start(self, event: dict[str, Any]) -> Iterator[ProviderEvent]:
        block = event["content_block"]
        btype = block.get("type")
        index = event["index"]
        if btype == "text":
            if block.get("citations"):
                self.citations[index] = [citation(c) for c in block["citations"]]
            if block.get("text"):
                yield TextDelta(block["text"], index)
        elif btype == "tool_use":
            if self.output is not None and block.get("name") == self.output.name:
                self.output_index = index
                self.output_text = ForcedToolText(self.output)
            else:
                yield ToolCallDelta(key=index, id=block.get("id"), name=block.get("name"))
        elif btype == "thinking":
            # Opens the block here, so it keeps its place before the text.
            yield ThinkingDelta(
                block.get("thinking") or "",
                index,
                signature=block.get("signature") or None,
                vendor=VENDOR,
            )
        elif btype == "redacted_thinking":
            yield ThinkingDelta(key=index, redacted=block.get("data"), vendor=VENDOR)
        else:
            self.server[index] = (dict(block), [])

    def block_stop(self, event: dict[str, Any]) -> Iterator[ProviderEvent]:
        index = event["index"]
        if index in self.citations:
            for c in self.citations.pop(index):
                yield CitationEvent(c)
        elif index in self.server:
            raw, parts = self.server.pop(index)
            if parts:
                raw["input"] = parse_arguments("".join(parts))
            yield ServerToolEvent(server_block(raw, self.names))
        elif (
            index == self.output_index
            and self.output_text is not None
            and (text := self.output_text.end())
        ):
            yield TextDelta(text, index)

    def message_start(self, event: dict[str, Any]) -> Iterator[ProviderEvent]:
        message = event["message"]
        self.model = message.get("model") or ""
        self.id = message.get("id")
        if message.get("container") is not None:
            self.container = dict(message["container"])
        yield UsageEvent(usage(message.get("usage")))

    def message_delta(self, event: dict[str, Any]) -> Iterator[ProviderEvent]:
        delta = event.get("delta") or {}
        self.raw_stop = delta.get("stop_reason")
        if delta.get("container") is not None:
            self.container = dict(delta["container"])
        if event.get("usage") is not None:
            yield UsageEvent(usage(event["usage"]))

    def message_stop(self, event: dict[str, Any]) -> Iterator[ProviderEvent]:
        reason = stop_reason(self.raw_stop)
        if self.output_index is not None and reason == "tool_use":
            reason = "end_turn"  # the output tool was the answer, not a call to run
        yield StopEvent(
            reason,
            self.raw_stop,
            self.model,
            self.id,
            {CONTAINER_KEY: self.container} if self.container is not None else {},
        )

    #: Stream event type -> the step that reads it (other types, ``ping``, carry nothing).
    STEPS: ClassVar[dict[str, Callable[[StreamState, dict[str, Any]], Iterator[ProviderEvent]]]] = {
        "content_block_delta": block_delta,
        "content_block_start": block_start,
        "content_block_stop": block_stop,
        "message_start": message_start,
        "message_delta": message_delta,
        "message_stop": message_stop,
    }
