"""Converse answers -> neutral :class:`~llmport.messages.types.Response` / provider events.

boto3 returns plain dicts (``converse``) and an iterator of event dicts
(``converse_stream``), so this module imports no SDK. Plain text answers
leave ``Response.blocks`` empty (the fast path); answers with reasoning,
citations or server-side tools get their content in order in ``blocks``:
``reasoningContent`` -> :class:`~llmport.messages.types.ThinkingBlock` (echoed back
verbatim in a tool loop, as Bedrock requires with extended thinking),
``citationsContent`` -> :class:`~llmport.messages.types.TextBlock` with citations,
server ``toolUse`` / ``toolResult`` (Nova's code interpreter) ->
:class:`~llmport.messages.types.ServerToolCall` / :class:`~llmport.messages.types.ServerToolResult`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

from llmport.errors import MalformedResponseError
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
from llmport.provider.claude import CONVERSE

from .convert_in import VENDOR, ConversePrepared

#: ``toolUse.type`` of a tool the vendor ran itself.
SERVER_TOOL_USE = "server_tool_use"


def stop_reason(raw: str | None) -> StopReason:
    """Bedrock's ``stopReason`` as a neutral one (``malformed_*`` and unknowns are ``other``)."""
    return CONVERSE.stop_reason(raw)


def usage(raw: Any) -> Usage:
    """Converse ``usage`` -> neutral Usage.

    ``input_tokens`` is the whole prompt (Bedrock's uncached ``inputTokens``
    plus cache reads and writes), as with the other vendors; the cache counts
    are kept apart too.
    """
    return CONVERSE.usage(raw)


def _request_id(raw: dict[str, Any]) -> str | None:
    meta = raw.get("ResponseMetadata")
    return meta.get("RequestId") if isinstance(meta, dict) else None


def citation(raw: dict[str, Any]) -> Citation:
    """A Converse citation (``citationsContent.citations[]`` or a streamed ``citation`` delta).

    ``location`` is kept verbatim in ``extra["location"]``: ``documentChar``,
    ``documentPage`` or ``documentChunk`` give the range in the *source*
    document (characters, pages or chunks), ``web`` a URL. Bedrock cites a
    whole ``citationsContent`` block, so ``start``/``end`` stay unset.
    """
    location = raw.get("location") or {}
    cited = "".join(part.get("text", "") for part in raw.get("sourceContent") or ())
    url = None
    index = None
    kind = "document"
    if "web" in location:
        kind, url = "url", location["web"].get("url")
    else:
        for where in location.values():
            if isinstance(where, dict) and "documentIndex" in where:
                index = where["documentIndex"]
                break
    extra: dict[str, Any] = {"location": location}
    if raw.get("source") is not None:
        extra["source"] = raw["source"]
    return Citation(
        kind,
        url=url,
        title=raw.get("title"),
        cited_text=cited or None,
        document_index=index,
        vendor=VENDOR,
        extra=extra,
    )


def thinking_block(content: dict[str, Any]) -> ThinkingBlock:
    """``reasoningContent`` -> ThinkingBlock (redacted bytes as a base64 string)."""
    if "redactedContent" in content:
        return ThinkingBlock(redacted=_b64(content["redactedContent"]), vendor=VENDOR)
    text = content.get("reasoningText") or {}
    return ThinkingBlock(text=text.get("text", ""), signature=text.get("signature"), vendor=VENDOR)


def _b64(data: Any) -> str:
    if isinstance(data, str):
        return data
    return base64.b64encode(bytes(data)).decode("ascii")


def response(raw: Any, prepared: ConversePrepared) -> Response:
    """A whole ``converse`` answer as a Response (MalformedResponseError if it is not one)."""
    output = raw.get("output") if isinstance(raw, dict) else None
    message = output.get("message") if isinstance(output, dict) else None
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        raise MalformedResponseError(
            f"{VENDOR}: the answer holds no output message (unparseable body?)", provider=VENDOR
        )
    whole = _Whole(prepared.output_tool)
    for block in message["content"]:
        whole.add(block)
    raw_stop = raw.get("stopReason")
    reason = "end_turn" if whole.answered and not whole.calls else stop_reason(raw_stop)
    return Response(
        text="".join(whole.texts),
        tool_calls=whole.calls,
        usage=usage(raw.get("usage")),
        stop_reason=reason,
        model=prepared.model,
        id=_request_id(raw),
        raw_stop_reason=raw_stop,
        blocks=whole.blocks or [],
    )


class _Whole:
    """A whole answer's content blocks, read in order: text, tool calls, then rich blocks."""

    __slots__ = ("answered", "blocks", "calls", "output", "server", "texts")

    def __init__(self, output: Any) -> None:
        #: The forced output tool (its call is the answer's text), if any.
        self.output = output
        self.texts: list[str] = []
        self.calls: list[ToolCall] = []
        #: Set at the first block that is not plain text (a plain answer builds none).
        self.blocks: list[Block] | None = None
        self.server: dict[str, str] = {}  # server tool call id -> name
        #: Whether the output tool answered.
        self.answered = False

    def add(self, block: dict[str, Any]) -> None:
        if "text" in block:
            self.text(block["text"])
        elif "toolUse" in block and block["toolUse"].get("type") != SERVER_TOOL_USE:
            self.tool_use(block["toolUse"])
        else:
            if self.blocks is None:
                self.blocks = [TextBlock(t) for t in self.texts]
            self.rich(block, self.blocks)

    def text(self, text: str) -> None:
        if self.blocks is None and self.texts:  # a second text block keeps its boundary
            self.blocks = [TextBlock(t) for t in self.texts]
        self.texts.append(text)
        if self.blocks is not None:
            self.blocks.append(TextBlock(text))

    def tool_use(self, use: dict[str, Any]) -> None:
        if self.output is not None and use.get("name") == self.output.name:
            self.text(self.output.reply_text(use.get("input")))
            self.answered = True
            return
        value = use.get("input")
        arguments = value if isinstance(value, dict) else {}
        self.calls.append(ToolCall(use["toolUseId"], use["name"], arguments, json.dumps(value)))

    def rich(self, block: dict[str, Any], blocks: list[Block]) -> None:
        if "toolUse" in block:  # a server tool call (Nova's code interpreter)
            use = block["toolUse"]
            self.server[use["toolUseId"]] = use["name"]
            value = use.get("input")
            blocks.append(
                ServerToolCall(
                    use["toolUseId"],
                    use["name"],
                    value if isinstance(value, dict) else {},
                    VENDOR,
                    {"toolUse": use},
                )
            )
        elif "toolResult" in block:  # in an assistant message: a server tool's result
            result = block["toolResult"]
            call_id = result.get("toolUseId", "")
            name = self.server.get(call_id) or str(result.get("type") or "")
            blocks.append(
                ServerToolResult(
                    call_id, name, result.get("content"), VENDOR, {"toolResult": result}
                )
            )
        elif "reasoningContent" in block:
            blocks.append(thinking_block(block["reasoningContent"]))
        elif "citationsContent" in block:
            cited = block["citationsContent"]
            text = "".join(part.get("text", "") for part in cited.get("content") or ())
            self.texts.append(text)
            marks = tuple(citation(c) for c in cited.get("citations") or ())
            blocks.append(TextBlock(text, citations=marks))


class StreamState(ChunkReader):
    """Turns ``converse_stream`` event dicts into provider events, one at a time.

    Tool-use input fragments are keyed by ``contentBlockIndex``; the forced
    output tool's fragments are the reply text, sent as they arrive
    (``ForcedToolText``). Reasoning deltas become ThinkingDelta events at once (text,
    then the signature; redacted bytes when their block ends); citation
    deltas CitationEvents; a server tool's call and result are assembled
    per block and given as whole ServerToolEvents when their block ends.
    ``messageStop`` arrives before the ``metadata`` (usage) event, so the
    StopEvent is given by :meth:`end`, once the stream is over.
    """

    __slots__ = (
        "model",
        "output",
        "output_index",
        "output_text",
        "raw_stop",
        "redacted",
        "request_id",
        "server",
        "server_names",
        "stopped",
    )

    def __init__(self, prepared: ConversePrepared, request_id: str | None = None) -> None:
        self.output = prepared.output_tool
        self.output_index: int | None = None
        self.output_text: ForcedToolText | None = None
        self.model: str = prepared.model
        self.request_id = request_id
        self.raw_stop: str | None = None
        self.stopped = False
        self.redacted: dict[int, bytes] = {}  # redacted reasoning being streamed
        self.server: dict[int, dict[str, Any]] = {}  # server tool blocks being streamed
        self.server_names: dict[str, str] = {}

    def feed(self, event: dict[str, Any]) -> Iterator[ProviderEvent]:
        if "contentBlockDelta" in event:
            body = event["contentBlockDelta"]
            index = body.get("contentBlockIndex", 0)
            delta = body.get("delta", {})
            if "text" in delta:
                if delta["text"]:
                    yield TextDelta(delta["text"], index)
            elif "toolUse" in delta:
                fragment = delta["toolUse"].get("input", "")
                if index == self.output_index and self.output_text is not None:
                    if text := self.output_text.fragment(fragment):
                        yield TextDelta(text, index)
                elif index in self.server:
                    self.server[index]["parts"].append(fragment)
                elif fragment:
                    yield ToolCallDelta(key=index, arguments=fragment)
            elif "reasoningContent" in delta:
                yield from self._reasoning(index, delta["reasoningContent"])
            elif "citation" in delta:
                yield CitationEvent(citation(delta["citation"]))
            elif "toolResult" in delta and index in self.server:
                self._result_delta(self.server[index], delta["toolResult"])
        elif "contentBlockStart" in event:
            body = event["contentBlockStart"]
            start = body.get("start", {})
            index = body.get("contentBlockIndex", 0)
            use = start.get("toolUse")
            if use is not None:
                if use.get("type") == SERVER_TOOL_USE:
                    self.server[index] = {"toolUse": dict(use), "parts": []}
                elif self.output is not None and use.get("name") == self.output.name:
                    self.output_index = index
                    self.output_text = ForcedToolText(self.output)
                else:
                    yield ToolCallDelta(key=index, id=use.get("toolUseId"), name=use.get("name"))
            elif "toolResult" in start:
                self.server[index] = {"toolResult": {**start["toolResult"], "content": []}}
        elif "contentBlockStop" in event:
            index = event["contentBlockStop"].get("contentBlockIndex", 0)
            if index in self.redacted:
                data = self.redacted.pop(index)
                yield ThinkingDelta(key=index, redacted=_b64(data), vendor=VENDOR)
            elif index in self.server:
                yield ServerToolEvent(self._server_block(self.server.pop(index)))
            elif (
                index == self.output_index
                and self.output_text is not None
                and (text := self.output_text.end())
            ):
                yield TextDelta(text, index)
        elif "messageStop" in event:
            self.raw_stop = event["messageStop"].get("stopReason")
            self.stopped = True
        elif "metadata" in event:
            yield UsageEvent(usage(event["metadata"].get("usage")))

    def _reasoning(self, index: int, delta: dict[str, Any]) -> Iterator[ProviderEvent]:
        if "redactedContent" in delta:
            self.redacted[index] = self.redacted.get(index, b"") + bytes(delta["redactedContent"])
            return
        if delta.get("text"):
            yield ThinkingDelta(delta["text"], key=index, vendor=VENDOR)
        if "signature" in delta:
            yield ThinkingDelta(key=index, signature=delta["signature"], vendor=VENDOR)

    @staticmethod
    def _result_delta(slot: dict[str, Any], items: list[dict[str, Any]]) -> None:
        content = slot["toolResult"]["content"]
        for item in items:
            if "text" in item and content and "text" in content[-1]:
                content[-1] = {"text": content[-1]["text"] + item["text"]}
            else:
                content.append(dict(item))

    def _server_block(self, slot: dict[str, Any]) -> ServerToolCall | ServerToolResult:
        if "toolUse" in slot:
            use = slot["toolUse"]
            use["input"] = parse_arguments("".join(slot["parts"]))
            self.server_names[use["toolUseId"]] = use["name"]
            return ServerToolCall(
                use["toolUseId"], use["name"], use["input"], VENDOR, {"toolUse": use}
            )
        result = slot["toolResult"]
        call_id = result.get("toolUseId", "")
        name = self.server_names.get(call_id) or str(result.get("type") or "")
        return ServerToolResult(call_id, name, result["content"], VENDOR, {"toolResult": result})

    def end(self) -> Iterator[ProviderEvent]:
        """The StopEvent, once the stream is over (nothing if ``messageStop`` never came)."""
        if not self.stopped:
            return
        reason = stop_reason(self.raw_stop)
        if self.output_index is not None and reason == "tool_use":
            reason = "end_turn"  # the output tool was the answer, not a call to run
        yield StopEvent(reason, self.raw_stop, self.model, self.request_id)
