"""``GenerateContentResponse`` -> neutral :class:`~llmport.messages.types.Response` and events.

Works on the SDK's response objects by attribute (duck typing), so this
module imports no SDK. Gemini sends function calls whole (never in
fragments), so a streamed call is one :class:`~llmport.messages.types.ToolCallDelta`.

What a part becomes:

* ``thought: true`` -> :class:`~llmport.messages.types.ThinkingBlock` (text, signature);
* a ``thoughtSignature`` on a text part -> an empty ThinkingBlock carrying the
  signature (``extra[SIGNED_PART_KEY] == "text"``) right before the text, so
  the next turn puts it back on that text part;
* ``functionCall`` -> :class:`~llmport.messages.types.ToolCall` (signature in ``extra``);
* ``executableCode`` / ``codeExecutionResult`` -> ServerToolCall / ServerToolResult
  (``raw``: the part verbatim, echoed back as it came);
* ``groundingMetadata`` -> :class:`~llmport.messages.types.Citation` objects on the text
  (byte offsets turned into character offsets); the metadata itself
  (``webSearchQueries``, ``searchEntryPoint``...) is kept in
  ``Response.extra["gemini_grounding"]`` and ``urlContextMetadata`` in
  ``Response.extra["gemini_url_context"]`` (wire JSON, camelCase).

A plain text answer keeps ``Response.blocks`` empty (the fast path).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any, TypeVar

from llmport.messages.types import (
    Block,
    Citation,
    CitationEvent,
    MediaBlock,
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
from llmport.provider.chunks import ChunkReader
from llmport.provider.media import answered_media as checked_media
from llmport.provider.translate import malformed

from . import sdk_internals
from .convert_in import SIGNATURE_KEY, SIGNED_PART_KEY, SYNTHETIC_ID_KEY

VENDOR = "gemini"
T = TypeVar("T")
GROUNDING_KEY = "gemini_grounding"
URL_CONTEXT_KEY = "gemini_url_context"
_CARRIER = {SIGNED_PART_KEY: "text"}

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


def _wire(obj: Any) -> Any:
    """An SDK object as its wire JSON (camelCase, no nulls)."""
    dump = getattr(obj, "model_dump", None)
    if dump is None:
        return obj
    return dump(mode="json", exclude_none=True, by_alias=True)


Item = TextDelta | ThinkingDelta | ServerToolEvent | ToolCall | MediaBlock


class Turn:
    """What one answer holds so far: function calls, finish reason, grounding.

    Fed one response (or stream chunk) at a time; the same code reads whole
    and streamed answers and yields the answer's content as it comes.
    """

    __slots__ = (
        "asked",
        "calls",
        "extra",
        "finish",
        "grounding",
        "id",
        "in_thought",
        "keys",
        "model",
        "part_offsets",
        "text_bytes",
    )

    def __init__(self, model: str) -> None:
        self.asked = model  # the model requested: the answer's name when it gives none
        self.calls: list[ToolCall] = []
        self.finish: str | None = None
        self.model = ""
        self.id: str | None = None
        self.extra: dict[str, Any] = {}
        self.grounding: Any = None
        self.in_thought = False
        self.keys = 0
        self.text_bytes = 0  # UTF-8 length of the answer text so far
        self.part_offsets: dict[int, int] | None = None  # part index -> byte offset (whole)

    def feed(self, chunk: Any) -> Iterator[Item]:
        """The content of one response or chunk, in order."""
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
        offsets = self.part_offsets
        for index, part in enumerate(getattr(content, "parts", None) or []):
            raw_signature = getattr(part, "thought_signature", None)
            signature = signature_text(raw_signature) if raw_signature else None
            text = getattr(part, "text", None)
            if getattr(part, "thought", None):
                if not self.in_thought:
                    self.in_thought = True
                    self.keys += 1
                yield ThinkingDelta(text or "", self.keys, signature, None, VENDOR)
                continue
            self.in_thought = False
            if text is None:  # not a text part: a call or a code execution part
                call = getattr(part, "function_call", None)
                if call is not None:
                    yield self._call(call, signature)
                    continue
                code = getattr(part, "executable_code", None)
                if code is not None:
                    yield ServerToolEvent(self._server(part, code, signature, call=True))
                    continue
                result = getattr(part, "code_execution_result", None)
                if result is not None:
                    yield ServerToolEvent(self._server(part, result, signature, call=False))
                    continue
                image = answered_media(getattr(part, "inline_data", None))
                if image is not None:
                    if signature:  # on the part: it goes back on the same part (history)
                        self.keys += 1
                        yield ThinkingDelta("", self.keys, signature, None, VENDOR, dict(_CARRIER))
                    yield image
                    continue
            if signature:
                self.keys += 1
                yield ThinkingDelta("", self.keys, signature, None, VENDOR, dict(_CARRIER))
            if text:
                if offsets is not None:  # a grounded whole answer: where each part starts
                    offsets[index] = self.text_bytes
                    self.text_bytes += len(text.encode("utf-8"))
                yield TextDelta(text, self.keys)  # the text after the last thought
        grounding = getattr(candidate, "grounding_metadata", None)
        if grounding is not None:
            self.grounding = grounding
            self.extra[GROUNDING_KEY] = _wire(grounding)
        url_context = getattr(candidate, "url_context_metadata", None)
        if url_context is not None:
            self.extra[URL_CONTEXT_KEY] = _wire(url_context)
        finish = _name(getattr(candidate, "finish_reason", None))
        if finish is not None:
            self.finish = finish

    def _call(self, call: Any, signature: str | None) -> ToolCall:
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

    def call_json(self, call: dict[str, Any], signature: str | None) -> ToolCall:
        """:meth:`_call` for a JSON ``functionCall``."""
        args = call.get("args")
        if not isinstance(args, dict):
            args = {}
        raw = json.dumps(args, ensure_ascii=False)
        extra: dict[str, Any] = {}
        if signature:
            extra[SIGNATURE_KEY] = signature
        call_id = call.get("id")
        if not call_id:
            call_id = f"gemini_call_{self.id or 'x'}_{len(self.calls)}"
            extra[SYNTHETIC_ID_KEY] = True
        made = ToolCall(call_id, call.get("name") or "", args, raw, extra)
        self.calls.append(made)
        return made

    def _server(
        self, part: Any, value: Any, signature: str | None, *, call: bool
    ) -> ServerToolCall | ServerToolResult:
        """A code execution part; ``raw`` is the part as the wire had it (signature included)."""
        key = "executableCode" if call else "codeExecutionResult"
        body = _wire(value)
        raw: dict[str, Any] = {key: body}
        if signature:
            raw["thoughtSignature"] = signature
        ident = str(body.get("id") or f"gemini_code_{self.keys}")
        self.keys += 1
        if call:
            return ServerToolCall(
                ident,
                "code_execution",
                {k: body[k] for k in ("language", "code") if k in body},
                VENDOR,
                raw,
            )
        content = {k: body[k] for k in ("outcome", "output") if k in body}
        return ServerToolResult(ident, "code_execution", content, VENDOR, raw)


def answered_media(blob: Any) -> MediaBlock | None:
    """An ``inlineData`` part of an answer (an image model's image) as a checked MediaBlock."""
    data = getattr(blob, "data", None) if blob is not None else None
    media_type = getattr(blob, "mime_type", None) or ""
    if not data or not media_type:
        return None
    return checked_media(VENDOR, data, media_type)


def grounding_wanted(candidate: Any) -> bool:
    """Byte lengths are only counted when the answer is grounded (citations need them)."""
    return getattr(candidate, "grounding_metadata", None) is not None


def _char_index(text: str, encoded: bytes, byte_index: int) -> int:
    """The character offset of a UTF-8 byte offset into ``text``."""
    if len(encoded) == len(text):
        return byte_index  # ASCII: bytes are characters
    return len(encoded[:byte_index].decode("utf-8", errors="ignore"))


def citations(grounding: Any, text: str, part_offsets: dict[int, int] | None) -> list[Citation]:
    """Grounding supports x chunks as citations (character offsets into ``text``)."""
    chunks = getattr(grounding, "grounding_chunks", None) or []
    supports = getattr(grounding, "grounding_supports", None) or []
    encoded = text.encode("utf-8")
    out: list[Citation] = []
    for support in supports:
        segment = getattr(support, "segment", None)
        if segment is None:
            continue
        base = 0
        part_index = getattr(segment, "part_index", None)
        if part_offsets and part_index:
            base = part_offsets.get(part_index, 0)
        b_start = base + (getattr(segment, "start_index", None) or 0)
        b_end = base + (getattr(segment, "end_index", None) or 0)
        start = _char_index(text, encoded, b_start)
        end = _char_index(text, encoded, b_end)
        cited = getattr(segment, "text", None) or text[start:end]
        for i in getattr(support, "grounding_chunk_indices", None) or []:
            if not 0 <= i < len(chunks):
                continue
            citation = _citation(chunks[i], cited, start, end)
            if citation is not None:
                out.append(citation)
    return out


def _citation(chunk: Any, cited: str, start: int, end: int) -> Citation | None:
    web = getattr(chunk, "web", None)
    if web is not None:
        return Citation(
            "url",
            url=getattr(web, "uri", None),
            title=getattr(web, "title", None),
            cited_text=cited,
            start=start,
            end=end,
            vendor=VENDOR,
        )
    context = getattr(chunk, "retrieved_context", None)
    if context is not None:
        extra: dict[str, Any] = {}
        if getattr(context, "text", None):
            extra["text"] = context.text
        return Citation(
            "file",
            url=getattr(context, "uri", None),
            title=getattr(context, "title", None),
            cited_text=cited,
            file_id=getattr(context, "file_search_store", None)
            or getattr(context, "document_name", None),
            start=start,
            end=end,
            vendor=VENDOR,
            extra=extra,
        )
    return None


def check_answer(answer: T) -> T:
    """``answer`` if it is a generateContent success: candidates, or a prompt blocked.

    A 2xx with neither (``{}``, an error object) is a MalformedResponseError,
    never an empty answer. ``answer`` is the JSON or google-genai's object.
    """
    if isinstance(answer, dict):
        candidates, feedback = answer.get("candidates"), answer.get("promptFeedback")
    else:
        candidates = getattr(answer, "candidates", None)
        feedback = getattr(answer, "prompt_feedback", None)
    if not candidates and not feedback:
        raise malformed(VENDOR, "candidates or promptFeedback expected")
    if isinstance(answer, dict):  # the JSON: each field of its documented type
        if candidates is not None and not isinstance(candidates, list):
            raise malformed(VENDOR, f"candidates is a {type(candidates).__name__}, not a list")
        if feedback is not None and not isinstance(feedback, dict):
            raise malformed(VENDOR, f"promptFeedback is a {type(feedback).__name__}, not an object")
    return answer


def response(answer: Any, model: str) -> Response:
    """A whole (non-streamed) ``GenerateContentResponse`` to ``model`` as a Response."""
    turn = Turn(model)
    candidates = getattr(answer, "candidates", None)
    if candidates and grounding_wanted(candidates[0]):
        turn.part_offsets = {}
    return _whole(turn, turn.feed(answer), usage(getattr(answer, "usage_metadata", None)))


def _whole(turn: Turn, items: Iterator[Item], used: Usage) -> Response:
    texts: list[str] = []
    blocks: list[Block] | None = None
    for item in items:
        if isinstance(item, TextDelta):
            texts.append(item.text)
            if blocks is not None:
                last = blocks[-1] if blocks else None
                if isinstance(last, TextBlock):
                    blocks[-1] = TextBlock(last.text + item.text)
                else:
                    blocks.append(TextBlock(item.text))
        elif isinstance(item, ToolCall):
            continue
        else:
            if blocks is None:
                blocks = [TextBlock("".join(texts))] if texts else []
            if isinstance(item, MediaBlock):
                blocks.append(item)
            elif isinstance(item, ThinkingDelta):
                blocks.append(
                    ThinkingBlock(item.text, item.signature, None, VENDOR, dict(item.extra))
                )
            else:
                blocks.append(item.block)
    text = "".join(texts)
    if turn.grounding is not None:
        if blocks is None:
            blocks = [TextBlock(text)] if text else []
        _attach(blocks, citations(turn.grounding, text, turn.part_offsets))
    return Response(
        text=text,
        tool_calls=list(turn.calls),
        usage=used,
        stop_reason=stop_reason(turn.finish, bool(turn.calls)),
        model=turn.model,
        id=turn.id,
        raw_stop_reason=turn.finish,
        extra=turn.extra,
        blocks=blocks or [],
    )


# ---------------------------------------------------------------------------
# Whole answers read from their JSON, without google-genai's response objects
# ---------------------------------------------------------------------------
#
# ``response_json`` reads the common answers (text, thoughts, signatures,
# function calls, usage) straight from the JSON into the same Response that
# ``response`` makes of google-genai's objects. Anything else (grounding,
# code execution, several candidates, a continuation token, an unknown enum
# value, a field of an unexpected type) returns None, and the caller builds
# the SDK's objects (``sdk_response``) so validation, warnings and errors stay
# google-genai's.

_TOP_KEYS = frozenset({"candidates", "modelVersion", "responseId", "usageMetadata"})
_CANDIDATE_KEYS = frozenset({"content", "finishReason", "index", "finishMessage"})
_PART_KEYS = frozenset({"text", "thought", "thoughtSignature", "functionCall"})
_CALL_KEYS = frozenset({"id", "name", "args"})
_COUNT_KEYS = frozenset(
    {
        "promptTokenCount",
        "candidatesTokenCount",
        "totalTokenCount",
        "thoughtsTokenCount",
        "cachedContentTokenCount",
        "toolUsePromptTokenCount",
        "responseTokenCount",
    }
)
_DETAIL_KEYS = frozenset(
    {
        "promptTokensDetails",
        "candidatesTokensDetails",
        "cacheTokensDetails",
        "toolUsePromptTokensDetails",
        "responseTokensDetails",
    }
)
_ENUMS: dict[str, frozenset[str]] = {}


def _enum(name: str) -> frozenset[str]:
    """The values of a google-genai enum (looked up once)."""
    found = _ENUMS.get(name)
    if found is None:
        from google.genai import types

        found = _ENUMS[name] = frozenset(m.value for m in getattr(types, name))
    return found


def _sig_json(value: Any) -> str | bool | None:
    """A JSON ``thoughtSignature`` as ``signature_text`` gives it; False: not read here.

    Only padded standard base64 (what the API sends) is read here; any other
    spelling is left to google-genai's decoder.
    """
    if not isinstance(value, str):
        return False
    if not value:
        return None
    if len(value) % 4:
        return False
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:
        return False
    return signature_text(raw)


def _usage_json(meta: Any) -> Usage | None:
    if meta is None:
        return Usage(requests=1)
    if not isinstance(meta, dict):
        return None
    modalities = _enum("MediaModality")
    for key, value in meta.items():
        if key in _COUNT_KEYS:
            if type(value) is not int:
                return None
        elif key in _DETAIL_KEYS:
            if not isinstance(value, list):
                return None
            for item in value:
                if not isinstance(item, dict) or not {"modality", "tokenCount"}.issuperset(item):
                    return None
                if item.get("modality", "TEXT") not in modalities:
                    return None
                if type(item.get("tokenCount", 0)) is not int:
                    return None
        elif key != "trafficType" or value not in _enum("TrafficType"):
            return None
    thoughts = meta.get("thoughtsTokenCount") or 0
    return Usage(
        input_tokens=(meta.get("promptTokenCount") or 0)
        + (meta.get("toolUsePromptTokenCount") or 0),
        output_tokens=(meta.get("candidatesTokenCount") or 0) + thoughts,
        cache_read_tokens=meta.get("cachedContentTokenCount") or 0,
        reasoning_tokens=thoughts,
        requests=1,
    )


def _parts_json(turn: Turn, parts: list[Any]) -> list[Item] | None:
    """``Turn.feed`` over JSON parts of the kinds read here (None: some other kind)."""
    out: list[Item] = []
    for part in parts:
        if not isinstance(part, dict) or not _PART_KEYS.issuperset(part):
            return None
        text = part.get("text")
        thought = part.get("thought")
        if (text is not None and not isinstance(text, str)) or (
            thought is not None and type(thought) is not bool
        ):
            return None
        signature: str | None = None
        if "thoughtSignature" in part and part["thoughtSignature"] is not None:
            sig = _sig_json(part["thoughtSignature"])
            if not isinstance(sig, str | None):
                return None
            signature = sig or None
        call = part.get("functionCall")
        if call is not None:
            if not isinstance(call, dict) or not _CALL_KEYS.issuperset(call):
                return None
            if any(
                call.get(k) is not None and not isinstance(call[k], str) for k in ("id", "name")
            ):
                return None
            if call.get("args") is not None and not isinstance(call["args"], dict):
                return None
        if thought:
            if not turn.in_thought:
                turn.in_thought = True
                turn.keys += 1
            out.append(ThinkingDelta(text or "", turn.keys, signature, None, VENDOR))
            continue
        turn.in_thought = False
        if text is None and call is not None:
            out.append(turn.call_json(call, signature))
            continue
        if signature:
            turn.keys += 1
            out.append(ThinkingDelta("", turn.keys, signature, None, VENDOR, dict(_CARRIER)))
        if text:
            out.append(TextDelta(text, turn.keys))
    return out


def response_json(data: Any, model: str) -> Response | None:
    """A whole answer's JSON as :func:`response` reads it, or None (see above)."""
    if not isinstance(data, dict) or not _TOP_KEYS.issuperset(data):
        return None
    candidates = data.get("candidates")
    if not isinstance(candidates, list) or len(candidates) != 1:
        return None
    candidate = candidates[0]
    if not isinstance(candidate, dict) or not _CANDIDATE_KEYS.issuperset(candidate):
        return None
    finish = candidate.get("finishReason")
    if finish is not None and (not isinstance(finish, str) or finish not in _enum("FinishReason")):
        return None
    if type(candidate.get("index", 0)) is not int or not isinstance(
        candidate.get("finishMessage", ""), str
    ):
        return None
    content = candidate.get("content")
    parts: Any = []
    if content is not None:
        if not isinstance(content, dict) or not {"parts", "role"}.issuperset(content):
            return None
        if not isinstance(content.get("role", ""), str):
            return None
        parts = content.get("parts") or []
        if not isinstance(parts, list):
            return None
    version, ident = data.get("modelVersion"), data.get("responseId")
    if not isinstance(version, (str, type(None))) or not isinstance(ident, (str, type(None))):
        return None
    used = _usage_json(data.get("usageMetadata"))
    if used is None:
        return None
    turn = Turn(model)
    turn.model = version or model
    turn.id = ident
    items = _parts_json(turn, parts)
    if items is None:
        return None
    if finish is not None:
        turn.finish = finish
    return _whole(turn, iter(items), used)


def _chunk_json(turn: Turn, data: Any) -> tuple[list[Item], Usage | None] | None:
    """``Turn.feed`` over one stream chunk's JSON, and its usage; None: not read here.

    Reads what :func:`response_json` reads (a chunk may also have no
    candidate); on None, ``turn`` is as it was, so the chunk can be fed as
    google-genai's object instead.
    """
    if not isinstance(data, dict) or not _TOP_KEYS.issuperset(data):
        return None
    version, ident = data.get("modelVersion"), data.get("responseId")
    if not isinstance(version, (str, type(None))) or not isinstance(ident, (str, type(None))):
        return None
    used: Usage | None = None
    if data.get("usageMetadata") is not None:
        used = _usage_json(data["usageMetadata"])
        if used is None:
            return None
    candidates = data.get("candidates")
    candidate: Any = None
    parts: Any = []
    if candidates is not None:
        if not isinstance(candidates, list) or len(candidates) > 1:
            return None
        candidate = candidates[0] if candidates else None
    if candidate is not None:
        if not isinstance(candidate, dict) or not _CANDIDATE_KEYS.issuperset(candidate):
            return None
        finish = candidate.get("finishReason")
        if finish is not None and (
            not isinstance(finish, str) or finish not in _enum("FinishReason")
        ):
            return None
        if type(candidate.get("index", 0)) is not int or not isinstance(
            candidate.get("finishMessage", ""), str
        ):
            return None
        content = candidate.get("content")
        if content is not None:
            if not isinstance(content, dict) or not {"parts", "role"}.issuperset(content):
                return None
            if not isinstance(content.get("role", ""), str):
                return None
            parts = content.get("parts") or []
            if not isinstance(parts, list):
                return None
    saved = (turn.model, turn.id, turn.in_thought, turn.keys, len(turn.calls))
    turn.model = version or turn.model or turn.asked
    turn.id = ident or turn.id  # before the parts: it names calls that come without an id
    items = _parts_json(turn, parts)
    if items is None:  # undo what was read so far
        turn.model, turn.id, turn.in_thought, turn.keys = saved[:4]
        del turn.calls[saved[4] :]
        return None
    if candidate is not None and candidate.get("finishReason") is not None:
        turn.finish = candidate["finishReason"]
    return items, used


def hands_over(data: Any) -> bool:
    """Whether a stream chunk may continue in another request (google-genai follows those)."""
    candidates = data.get("candidates") if isinstance(data, dict) else None
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    return isinstance(first, dict) and (
        bool(first.get("continuationToken")) or first.get("finishReason") == "CONTINUATION"
    )


def continues(data: Any) -> bool:
    """Whether a whole answer carries a continuation token (google-genai follows it)."""
    candidates = data.get("candidates") if isinstance(data, dict) else None
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    return isinstance(first, dict) and bool(first.get("continuationToken"))


def sdk_response(data: Any, response_json_schema: Any) -> Any:
    """A whole answer's JSON as google-genai's ``GenerateContentResponse`` (as it builds it)."""
    config = {
        "response_schema": None,
        "response_json_schema": response_json_schema,
        "include_all_fields": None,
    }
    return sdk_internals.response_object(data, config)


def _attach(blocks: list[Block], found: list[Citation]) -> None:
    """Put each citation on the text block holding its start, offsets made relative to it."""
    if not found:
        return
    spans: list[tuple[int, int, int]] = []  # (block index, start, end) in the whole text
    at = 0
    for i, block in enumerate(blocks):
        if isinstance(block, TextBlock):
            spans.append((i, at, at + len(block.text)))
            at += len(block.text)
    if not spans:
        return
    per_block: dict[int, list[Citation]] = {}
    for c in found:
        start = c.start or 0
        i, begin, _ = next((s for s in spans if s[1] <= start < s[2]), spans[-1])
        per_block.setdefault(i, []).append(_shift(c, begin))
    for i, items in per_block.items():
        block = blocks[i]
        assert isinstance(block, TextBlock)
        blocks[i] = TextBlock(block.text, citations=(*block.citations, *items), cache=block.cache)


def _shift(c: Citation, by: int) -> Citation:
    if not by:
        return c
    return Citation(
        c.kind,
        c.url,
        c.title,
        c.cited_text,
        c.document_index,
        c.file_id,
        None if c.start is None else c.start - by,
        None if c.end is None else c.end - by,
        c.vendor,
        c.extra,
    )


class StreamState(ChunkReader):
    """Turns stream chunks into provider events, one chunk at a time.

    The stop event comes only once a chunk carried a ``finishReason``: a
    stream cut short before that never looks like a finished answer.
    Grounding arrives with the last chunks; its citations are sent at the end,
    just before the stop event, with offsets into the last run of text.
    """

    __slots__ = ("run_start", "stopped", "text", "turn")

    def __init__(self, model: str) -> None:
        self.turn = Turn(model)
        self.stopped = False
        self.text: list[str] = []
        self.run_start = 0  # where the current run of text began (characters)

    def feed(self, chunk: Any) -> Iterator[ProviderEvent]:
        """The events of one chunk, a google-genai ``GenerateContentResponse``."""
        yield from self._events(self.turn.feed(chunk))
        meta = getattr(chunk, "usage_metadata", None)
        if meta is not None:
            yield UsageEvent(usage(meta))

    def feed_json(self, data: Any, response_json_schema: Any) -> Iterator[ProviderEvent]:
        """The events of one chunk's JSON: the same as :meth:`feed` gives for its object.

        Read straight from the JSON when it holds only what whole answers are
        read from (text, thoughts, signatures, function calls, usage); any
        other chunk (grounding, code execution, ...) is built as google-genai's
        object first (:func:`sdk_response`).
        """
        read = _chunk_json(self.turn, data)
        if read is None:
            yield from self.feed(sdk_response(data, response_json_schema))
            return
        items, used = read
        yield from self._events(iter(items))
        if used is not None:
            yield UsageEvent(used)

    def _events(self, items: Iterator[Item]) -> Iterator[ProviderEvent]:
        for item in items:
            if isinstance(item, TextDelta):
                self.text.append(item.text)
                yield item
            elif isinstance(item, ToolCall):
                yield ToolCallDelta(
                    key=item.id,
                    arguments=item.raw_arguments,
                    id=item.id,
                    name=item.name,
                    extra=dict(item.extra),
                )
            else:  # thinking, a code execution part, an image (whole, in one chunk)
                if self.text:
                    self.run_start = sum(map(len, self.text))
                yield item

    def end(self) -> Iterator[ProviderEvent]:
        turn = self.turn
        if turn.finish is None or self.stopped:
            return
        self.stopped = True
        if turn.grounding is not None:
            for c in citations(turn.grounding, "".join(self.text), None):
                yield CitationEvent(_shift(c, self.run_start))
        yield StopEvent(
            stop_reason(turn.finish, bool(turn.calls)),
            turn.finish,
            turn.model,
            turn.id,
            dict(turn.extra),
        )
