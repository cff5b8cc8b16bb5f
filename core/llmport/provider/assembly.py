"""Stream assembly, one implementation for every vendor.

:class:`StreamAssembler` (and :func:`assemble`) build a
:class:`~llmport.messages.types.Response` from provider events;
:func:`response_events` turns a whole response back into events (how a
provider without streaming streams); :func:`parse_arguments` reads a tool
call's JSON arguments.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..messages.order import in_order, settle_positions
from ..messages.types import (
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
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    UsageEvent,
)
from .wire import loads

__all__ = ["StreamAssembler", "assemble", "parse_arguments", "response_events"]


class StreamAssembler:
    """Builds a :class:`Response` from provider events.

    Content blocks keep their stream order: consecutive text deltas of one
    ``key`` form one text block (citations attach to the current one; a new
    key, or a tool call between them, starts a new block, as the vendor's whole
    answer has), thinking deltas are joined per ``key``, server-tool events are
    whole blocks, and so are images (:class:`MediaBlock`; their previews,
    :class:`MediaDelta`, are not content). Tool-call fragments are joined per
    ``key`` (vendor index or id) in the order calls first appeared; each call
    keeps its place among the blocks (``ToolCall.position``).
    """

    def __init__(self) -> None:
        self.text_parts: list[str] = []
        self.calls: dict[str | int, dict[str, Any]] = {}
        self.usage = Usage()
        self.stop: StopEvent | None = None
        # Ordered content: ("text", [parts], [citations]) | ("thinking", key) | ("block", Block)
        self._order: list[tuple[Any, ...]] = []
        self._thinking: dict[str | int, dict[str, Any]] = {}
        self._rich = False
        #: The key of the text block being streamed (None: no text yet).
        self._text_key: str | int | None = None
        self._after_call = False

    def _text_slot(self) -> tuple[Any, ...]:
        if self._after_call or not self._order or self._order[-1][0] != "text":
            self._order.append(("text", [], []))
            self._after_call = False
        return self._order[-1]

    def feed(self, event: ProviderEvent) -> None:
        if isinstance(event, TextDelta):
            if event.key != self._text_key:
                self._new_text_block(event.key)
            self.text_parts.append(event.text)
            if self._rich:
                self._text_slot()[1].append(event.text)
            elif not self._order:
                self._order.append(("text", self.text_parts, []))
        elif isinstance(event, ToolCallDelta):
            slot = self.calls.get(event.key)
            if slot is None:  # its position: the content blocks begun before it
                slot = {"id": None, "name": None, "args": [], "extra": {}, "at": len(self._order)}
                self.calls[event.key] = slot
                self._after_call = True  # text after a call is a block of its own
            if event.id:
                slot["id"] = event.id
            if event.name:
                slot["name"] = event.name
            if event.arguments:
                slot["args"].append(event.arguments)
            slot["extra"].update(event.extra)
        elif isinstance(event, UsageEvent):
            # Vendors send cumulative usage; the last report wins per field.
            u = event.usage
            self.usage = Usage(
                input_tokens=u.input_tokens or self.usage.input_tokens,
                output_tokens=u.output_tokens or self.usage.output_tokens,
                cache_read_tokens=u.cache_read_tokens or self.usage.cache_read_tokens,
                cache_write_tokens=u.cache_write_tokens or self.usage.cache_write_tokens,
                reasoning_tokens=u.reasoning_tokens or self.usage.reasoning_tokens,
                requests=1,
            )
        elif isinstance(event, StopEvent):
            self.stop = event
        elif isinstance(event, MediaDelta):
            return  # a preview of an image still being made: the finished one is the content
        else:
            self._feed_rich(event)

    def _new_text_block(self, key: str | int) -> None:
        """A text delta of another ``key``: a text block of its own (after any text so far)."""
        if self._text_key is not None and self.text_parts:
            self._become_rich()  # two text blocks: the answer is no longer one plain text
            self._order.append(("text", [], []))
        self._text_key = key

    def _become_rich(self) -> None:
        if not self._rich:
            # Until now the only content was plain text: keep it as its own block.
            self._rich = True
            if self._order:
                self._order[0] = ("text", list(self.text_parts), [])

    def _feed_rich(
        self, event: ThinkingDelta | CitationEvent | ServerToolEvent | MediaBlock
    ) -> None:
        self._become_rich()
        if isinstance(event, ThinkingDelta):
            slot = self._thinking.get(event.key)
            if slot is None:
                slot = {"text": [], "signature": None, "redacted": None, "vendor": "", "extra": {}}
                self._thinking[event.key] = slot
                self._order.append(("thinking", event.key))
            if event.text:
                slot["text"].append(event.text)
            if event.signature is not None:
                slot["signature"] = (slot["signature"] or "") + event.signature
            if event.redacted is not None:
                slot["redacted"] = event.redacted
            if event.vendor:
                slot["vendor"] = event.vendor
            slot["extra"].update(event.extra)
        elif isinstance(event, CitationEvent):
            self._text_slot()[2].append(event.citation)
        elif isinstance(event, MediaBlock):  # an image answered, in its place among the blocks
            self._order.append(("block", event))
        else:
            self._order.append(("block", event.block))

    def blocks(self) -> list[Block]:
        """The content blocks assembled so far (empty for plain text answers)."""
        if not self._rich:
            return []
        out: list[Block] = []
        for entry in self._order:
            if entry[0] == "text":
                citations: list[Citation] = entry[2]
                out.append(TextBlock("".join(entry[1]), citations=tuple(citations)))
            elif entry[0] == "thinking":
                slot = self._thinking[entry[1]]
                out.append(
                    ThinkingBlock(
                        text="".join(slot["text"]),
                        signature=slot["signature"],
                        redacted=slot["redacted"],
                        vendor=slot["vendor"],
                        extra=slot["extra"],
                    )
                )
            else:
                out.append(entry[1])
        return out

    def tool_call(self, key: str | int) -> ToolCall:
        slot = self.calls[key]
        raw = "".join(slot["args"])
        return ToolCall(
            id=slot["id"] or f"call_{key}",
            name=slot["name"] or "",
            arguments=parse_arguments(raw),
            raw_arguments=raw,
            extra=slot["extra"],
            position=slot["at"],
        )

    def response(self) -> Response:
        from ..errors import MalformedResponseError

        if self.stop is None:
            raise MalformedResponseError(
                "stream ended before the response was complete", retryable=True
            )
        blocks = self.blocks()
        calls = settle_positions([self.tool_call(k) for k in self.calls], len(blocks))
        usage = self.usage
        usage.requests = 1
        return Response(
            text="".join(self.text_parts),
            tool_calls=calls,
            usage=usage,
            stop_reason=self.stop.stop_reason,
            raw_stop_reason=self.stop.raw_stop_reason,
            model=self.stop.model,
            id=self.stop.id,
            extra=dict(self.stop.extra),
            blocks=blocks,
        )


def parse_arguments(raw: str) -> dict[str, Any]:
    """Parse tool-call arguments; invalid JSON yields ``{}`` (raw text is kept).

    Invalid is what :func:`~llmport.provider.wire.loads` refuses: ``NaN``,
    ``Infinity``, deep nesting, an integer too long to read.
    """
    if not raw.strip():
        return {}
    try:
        value = loads(raw)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def response_events(response: Response) -> Iterable[ProviderEvent]:
    """A non-streamed response as a sequence of provider events (calls where they were)."""
    if response.blocks:
        calls = 0
        for n, block in enumerate(in_order(response.blocks, response.tool_calls)):
            if isinstance(block, ToolCall):
                yield _call_delta(block, calls)
                calls += 1
                continue
            if isinstance(block, TextBlock):
                yield TextDelta(block.text, n)
                for citation in block.citations:
                    yield CitationEvent(citation)
            elif isinstance(block, ThinkingBlock):
                yield ThinkingDelta(
                    block.text, n, block.signature, block.redacted, block.vendor, dict(block.extra)
                )
            elif isinstance(block, (ServerToolCall, ServerToolResult)):
                yield ServerToolEvent(block)
            elif isinstance(block, MediaBlock):
                yield block
    else:
        if response.text:
            yield TextDelta(response.text)
        for i, call in enumerate(response.tool_calls):
            yield _call_delta(call, i)
    yield UsageEvent(response.usage)
    yield StopEvent(
        response.stop_reason,
        response.raw_stop_reason,
        response.model,
        response.id,
        dict(response.extra),
    )


def _call_delta(call: ToolCall, key: int) -> ToolCallDelta:
    """A whole tool call as one delta."""
    arguments = call.raw_arguments or json.dumps(call.arguments)
    return ToolCallDelta(key=key, id=call.id, name=call.name, arguments=arguments, extra=call.extra)


def assemble(events: Iterable[ProviderEvent]) -> Response:
    """Assemble a complete list of provider events into a Response."""
    asm = StreamAssembler()
    for event in events:
        asm.feed(event)
    return asm.response()
