"""``GenerateContentResponse`` -> neutral :class:`~llmport.types.Response` / provider events.

Works on the SDK's response objects by attribute (duck typing), so this
module imports no SDK. Gemini sends function calls whole (never in
fragments), so a streamed call is one :class:`~llmport.types.ToolCallDelta`.
Thought signatures are kept (standard base64) in ``ToolCall.extra`` and
``Response.extra`` under :data:`~.convert_in.SIGNATURE_KEY` so the next turn
sends them back, as the API requires.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

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

from .convert_in import SIGNATURE_KEY, SYNTHETIC_ID_KEY

_FILTERED = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "MODEL_ARMOR",
        "LANGUAGE",
    }
)


def _name(value: Any) -> str | None:
    """An SDK enum (or plain string) as its name."""
    if value is None:
        return None
    return str(getattr(value, "value", value))


def stop_reason(raw: str | None, has_calls: bool) -> StopReason:
    """Gemini's ``finishReason`` as a neutral stop reason.

    ``STOP`` also ends a turn that stopped on a stop sequence (Gemini does not
    tell them apart) and a turn with function calls (then ``tool_use``).
    """
    if has_calls and raw in (None, "STOP"):
        return "tool_use"
    if raw in (None, "STOP"):
        return "end_turn"
    if raw == "MAX_TOKENS":
        return "max_tokens"
    if raw in _FILTERED:
        return "content_filter"
    return "other"


def usage(meta: Any) -> Usage:
    """``usageMetadata`` -> Usage.

    ``output_tokens`` counts the answer and the thoughts (both are billed as
    output); ``reasoning_tokens`` the thoughts alone; ``cache_read_tokens`` the
    part of the prompt served from a context cache (included in ``input_tokens``).
    """
    if meta is None:
        return Usage(requests=1)
    thoughts = getattr(meta, "thoughts_token_count", None) or 0
    return Usage(
        input_tokens=(getattr(meta, "prompt_token_count", None) or 0)
        + (getattr(meta, "tool_use_prompt_token_count", None) or 0),
        output_tokens=(getattr(meta, "candidates_token_count", None) or 0) + thoughts,
        cache_read_tokens=getattr(meta, "cached_content_token_count", None) or 0,
        reasoning_tokens=thoughts,
        requests=1,
    )


def signature_text(raw: Any) -> str | None:
    """A thought signature (bytes from the SDK) as standard base64 text, JSON-safe for sessions."""
    if not raw:
        return None
    if isinstance(raw, bytes):
        return base64.b64encode(raw).decode("ascii")
    return str(raw)


class Turn:
    """What one answer holds so far: text, function calls, signatures, finish reason.

    Fed one response (or stream chunk) at a time; the same code reads whole
    and streamed answers.
    """

    __slots__ = ("asked", "calls", "finish", "id", "model", "text_signature")

    def __init__(self, model: str) -> None:
        self.asked = model  # the model requested: the answer's name when it gives none
        self.calls: list[ToolCall] = []
        self.text_signature: str | None = None
        self.finish: str | None = None
        self.model = ""
        self.id: str | None = None

    def feed(self, chunk: Any) -> Iterator[TextDelta | ToolCall]:
        """Text pieces and whole function calls of one response or chunk."""
        self.model = getattr(chunk, "model_version", None) or self.model or self.asked
        self.id = getattr(chunk, "response_id", None) or self.id
        candidates = getattr(chunk, "candidates", None) or []
        if not candidates:
            feedback = getattr(chunk, "prompt_feedback", None)
            if feedback is not None and getattr(feedback, "block_reason", None) is not None:
                self.finish = self.finish or "SAFETY"  # the prompt itself was blocked
            return
        candidate = candidates[0]
        content = getattr(candidate, "content", None)
        for part in getattr(content, "parts", None) or []:
            signature = signature_text(getattr(part, "thought_signature", None))
            if getattr(part, "thought", None):
                continue  # a thought summary: not part of the answer
            call = getattr(part, "function_call", None)
            if call is not None:
                found = self._call(call, signature)
                if found is not None:
                    yield found
                continue
            if signature:
                self.text_signature = signature
            text = getattr(part, "text", None)
            if text:
                yield TextDelta(text)
        finish = _name(getattr(candidate, "finish_reason", None))
        if finish is not None:
            self.finish = finish

    def _call(self, call: Any, signature: str | None) -> ToolCall | None:
        args = call.args if isinstance(call.args, dict) else {}
        raw = json.dumps(args, ensure_ascii=False)
        extra: dict[str, Any] = {}
        if signature:
            extra[SIGNATURE_KEY] = signature
        call_id = getattr(call, "id", None)
        if not call_id:
            call_id = f"gemini_call_{self.id or 'x'}_{len(self.calls)}"
            extra[SYNTHETIC_ID_KEY] = True
        made = ToolCall(call_id, call.name or "", args, raw, extra)
        self.calls.append(made)
        return made

    def extra(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.text_signature:
            out[SIGNATURE_KEY] = self.text_signature
        return out


def response(answer: Any, model: str) -> Response:
    """A whole (non-streamed) ``GenerateContentResponse`` to ``model`` as a Response."""
    turn = Turn(model)
    texts = [item.text for item in turn.feed(answer) if isinstance(item, TextDelta)]
    return Response(
        text="".join(texts),
        tool_calls=list(turn.calls),
        usage=usage(getattr(answer, "usage_metadata", None)),
        stop_reason=stop_reason(turn.finish, bool(turn.calls)),
        model=turn.model,
        id=turn.id,
        raw_stop_reason=turn.finish,
        extra=turn.extra(),
    )


class StreamState:
    """Turns stream chunks into provider events, one chunk at a time.

    The stop event comes only once a chunk carried a ``finishReason``: a
    stream cut short before that never looks like a finished answer.
    """

    __slots__ = ("stopped", "turn")

    def __init__(self, model: str) -> None:
        self.turn = Turn(model)
        self.stopped = False

    def feed(self, chunk: Any) -> Iterator[ProviderEvent]:
        for item in self.turn.feed(chunk):
            if isinstance(item, TextDelta):
                yield item
            else:
                yield ToolCallDelta(
                    key=item.id,
                    arguments=item.raw_arguments,
                    id=item.id,
                    name=item.name,
                    extra=dict(item.extra),
                )
        meta = getattr(chunk, "usage_metadata", None)
        if meta is not None:
            yield UsageEvent(usage(meta))

    def end(self) -> Iterator[ProviderEvent]:
        turn = self.turn
        if turn.finish is None or self.stopped:
            return
        self.stopped = True
        yield StopEvent(
            stop_reason(turn.finish, bool(turn.calls)),
            turn.finish,
            turn.model,
            turn.id,
            turn.extra(),
        )
