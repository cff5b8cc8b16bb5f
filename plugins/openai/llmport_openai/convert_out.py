"""``openai`` SDK responses and stream chunks -> neutral llmport types.

Non-streamed answers become a :class:`~llmport.types.Response`; streamed
ones become provider events (``TextDelta``, ``ToolCallDelta`` keyed by the
vendor's tool-call index, ``UsageEvent``, ``StopEvent``) that the core's
``StreamAssembler`` joins. A stream that ends before its finish reason
yields no ``StopEvent``, which the assembler reports as a (retryable)
``MalformedResponseError``.

Usage keeps OpenAI's meaning: ``input_tokens`` includes the cached ones
(``cache_read_tokens``), ``output_tokens`` includes ``reasoning_tokens``.
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

from .convert_in import REASONING_ITEMS, drop_added_nulls
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
    value = getattr(obj, name, default)
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
    except ValueError:
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
        reasoning_tokens=_get(completion, "reasoning_tokens", 0),
        requests=1,
    )


def chat_response(completion: Any, restore: Restore = None) -> Response:
    """A ``ChatCompletion`` as a Response (the first choice)."""
    choices = _get(completion, "choices", [])
    if not choices:
        raise MalformedResponseError("Chat Completions answer has no choices", provider="openai")
    choice = choices[0]
    message = choice.message
    raw_stop = _get(choice, "finish_reason")
    stop = CHAT_STOP.get(raw_stop or "", "other")
    text = _get(message, "content", "")
    refusal = _get(message, "refusal")
    if refusal and not text:
        text, stop = refusal, "refusal"
    calls = [
        ToolCall(
            id=tc.id,
            name=tc.function.name,
            arguments=parse_arguments(tc.function.arguments or ""),
            raw_arguments=tc.function.arguments or "",
        )
        for tc in _get(message, "tool_calls", [])
        if _get(tc, "type", "function") == "function"
    ]
    if stop != "refusal":
        text = restore_optional(restore, text)
    return Response(
        text=text,
        tool_calls=calls,
        usage=chat_usage(_get(completion, "usage")),
        stop_reason=stop,
        model=_get(completion, "model", ""),
        id=_get(completion, "id"),
        raw_stop_reason=raw_stop,
    )


class ChatStream:
    """Turns ``ChatCompletionChunk`` objects into provider events.

    With a strict ``response_format`` whose schema has optional properties
    the text is held back and sent once, fixed by :func:`restore_optional`
    (a streamed ``null`` cannot be taken back).
    """

    def __init__(self, restore: Restore = None) -> None:
        self.restore = restore
        self.hold_text = restore is not None
        self.held: list[str] = []
        self.refusal: list[str] = []
        self.sent_text = False
        self.finish: str | None = None
        self.model = ""
        self.id: str | None = None

    def feed(self, chunk: Any) -> Iterator[ProviderEvent]:
        self.id = _get(chunk, "id") or self.id
        self.model = _get(chunk, "model") or self.model
        usage = _get(chunk, "usage")
        if usage is not None:
            yield UsageEvent(chat_usage(usage))
        for choice in _get(chunk, "choices", []):
            if _get(choice, "index", 0) != 0:
                continue
            delta = _get(choice, "delta")
            content = _get(delta, "content")
            if content:
                if self.hold_text:
                    self.held.append(content)
                else:
                    self.sent_text = True
                    yield TextDelta(content)
            refusal = _get(delta, "refusal")
            if refusal:
                self.refusal.append(refusal)
            for position, tc in enumerate(_get(delta, "tool_calls", [])):
                function = _get(tc, "function")
                key = _get(tc, "index")
                yield ToolCallDelta(
                    key=key if key is not None else (_get(tc, "id") or position),
                    id=_get(tc, "id"),
                    name=_get(function, "name"),
                    arguments=_get(function, "arguments", ""),
                )
            if _get(choice, "finish_reason"):
                self.finish = choice.finish_reason

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
    return Usage(
        input_tokens=_get(usage, "input_tokens", 0),
        output_tokens=_get(usage, "output_tokens", 0),
        cache_read_tokens=_get(_get(usage, "input_tokens_details"), "cached_tokens", 0),
        reasoning_tokens=_get(_get(usage, "output_tokens_details"), "reasoning_tokens", 0),
        requests=1,
    )


def _item_dict(item: Any) -> dict[str, Any]:
    """An output item as the JSON the API sent (only the fields it set)."""
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


def responses_response(response: Any, restore: Restore = None) -> Response:
    """A Responses API ``Response`` object as a neutral Response."""
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[dict[str, Any]] = []
    for item in _get(response, "output", []):
        kind = _get(item, "type")
        if kind == "message":
            for part in _get(item, "content", []):
                if _get(part, "type") == "output_text":
                    texts.append(_get(part, "text", ""))
                elif _get(part, "type") == "refusal":
                    refusals.append(_get(part, "refusal", ""))
        elif kind == "function_call":
            raw = _get(item, "arguments", "")
            calls.append(
                ToolCall(
                    id=item.call_id,
                    name=item.name,
                    arguments=parse_arguments(raw),
                    raw_arguments=raw,
                    extra={"item_id": _get(item, "id")},
                )
            )
        elif kind == "reasoning":
            reasoning.append(_item_dict(item))
    stop, raw_stop = responses_stop(response, bool(calls))
    text = "".join(texts)
    if refusals and not text:
        text, stop = "".join(refusals), "refusal"
    elif text:
        text = restore_optional(restore, text)
    return Response(
        text=text,
        tool_calls=calls,
        usage=responses_usage(_get(response, "usage")),
        stop_reason=stop,
        model=_get(response, "model", ""),
        id=_get(response, "id"),
        raw_stop_reason=raw_stop,
        extra={REASONING_ITEMS: reasoning} if reasoning else {},
    )


class ResponsesStream:
    """Turns Responses streaming events into provider events."""

    def __init__(self, restore: Restore = None) -> None:
        self.restore = restore
        self.hold_text = restore is not None
        self.held: list[str] = []
        self.refusal: list[str] = []
        self.calls = 0
        self.reasoning: list[dict[str, Any]] = []
        self.done: Any = None

    def feed(self, event: Any) -> Iterator[ProviderEvent]:
        kind = _get(event, "type")
        if kind == "response.output_text.delta":
            if self.hold_text:
                self.held.append(event.delta)
            else:
                yield TextDelta(event.delta)
        elif kind == "response.refusal.delta":
            self.refusal.append(event.delta)
        elif kind == "response.output_item.added" and _get(event.item, "type") == "function_call":
            self.calls += 1
            item = event.item
            yield ToolCallDelta(
                key=event.output_index,
                id=item.call_id,
                name=item.name,
                arguments=_get(item, "arguments", ""),
                extra={"item_id": _get(item, "id")},
            )
        elif kind == "response.function_call_arguments.delta":
            yield ToolCallDelta(key=event.output_index, arguments=event.delta)
        elif kind == "response.output_item.done" and _get(event.item, "type") == "reasoning":
            self.reasoning.append(_item_dict(event.item))
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self.done = event.response
        elif kind == "error":
            code = _get(event, "code")
            raise stream_error(_get(event, "message"), code, code, provider="openai-responses")

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
        yield StopEvent(
            stop,
            raw,
            _get(self.done, "model", ""),
            _get(self.done, "id"),
            {REASONING_ITEMS: self.reasoning} if self.reasoning else {},
        )
