"""Vendor-neutral types: the only shapes the core and the plugins share.

Plugins convert a :class:`Request` into their vendor's wire format and the
vendor's answer back into a :class:`Response` (or a stream of
:class:`StreamEvent`). Nothing outside a plugin knows a vendor's format.

Every type is a slotted dataclass; blocks and messages are treated as
immutable once built.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Role = Literal["system", "user", "assistant", "tool"]
BlockKind = Literal["text", "image", "audio", "file"]

# ---------------------------------------------------------------------------
# Content blocks
# ---------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class TextBlock:
    """Plain text."""

    text: str
    type: Literal["text"] = "text"


@dataclass(slots=True, frozen=True, eq=False)
class MediaBlock:
    """An image, audio clip or file, already loaded and type-checked.

    Exactly one of ``data`` (the raw bytes) or ``url`` (a remote reference
    passed through to vendors that accept URLs) is set. ``media_type`` is
    always known. The base64 form is computed once and cached so a tool loop
    that resends the block does not encode it again.
    """

    type: Literal["image", "audio", "file"]
    media_type: str
    data: bytes | None = None
    url: str | None = None
    filename: str | None = None
    index: int = 0  # position in the caller's content list, for error messages
    _b64: list[str] = field(default_factory=list, repr=False, compare=False)

    def base64(self) -> str:
        """Standard base64 of ``data`` (cached)."""
        if self.data is None:
            raise ValueError("block has no inline data (it is a URL reference)")
        if not self._b64:
            self._b64.append(base64.b64encode(self.data).decode("ascii"))
        return self._b64[0]

    def data_url(self) -> str:
        """``data:<media_type>;base64,...`` (cached base64)."""
        return f"data:{self.media_type};base64,{self.base64()}"

    @property
    def size(self) -> int:
        return len(self.data) if self.data is not None else 0

    def describe(self) -> str:
        """Short human description used in errors and logs (never the bytes)."""
        where = self.filename or self.url or f"{self.size} bytes"
        return f"{self.type} block #{self.index} ({self.media_type}, {where})"


Block: TypeAlias = TextBlock | MediaBlock


# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class ToolSpec:
    """What a model is told about a tool: name, description, JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool = False
    #: JSON fields merged into one vendor's tool entry: ``{"anthropic": {"defer_loading": True}}``.
    vendor: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False)


@dataclass(slots=True, frozen=True)
class ToolCall:
    """A model's request to run a tool.

    ``arguments`` is the parsed JSON object; ``raw_arguments`` keeps the exact
    text the vendor sent (it may be invalid JSON, which the tool loop reports
    back to the model). ``extra`` carries opaque vendor data that must be
    echoed back (e.g. Gemini ``thoughtSignature``).
    """

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(slots=True, frozen=True)
class ToolResult:
    """The outcome of a tool call, sent back to the model."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


ToolChoice: TypeAlias = Literal["auto", "required", "none"] | dict[str, str]


# ---------------------------------------------------------------------------
# Messages, requests, responses
# ---------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Message:
    """One turn of a conversation.

    ``user`` and ``system`` messages carry blocks; an ``assistant`` message
    carries blocks and/or ``tool_calls``; a ``tool`` message carries
    ``tool_results`` (vendors differ on where results go; plugins decide).
    ``extra`` keeps opaque vendor data to echo (reasoning items, signatures).
    """

    role: Role
    blocks: tuple[Block, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def text(self) -> str:
        """The concatenated text blocks."""
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock))


@dataclass(slots=True, frozen=True)
class ResponseFormat:
    """A JSON schema the reply must satisfy."""

    schema: dict[str, Any]
    name: str = "response"
    strict: bool = True
    description: str | None = None


@dataclass(slots=True)
class Usage:
    """Token counts. Unknown counts stay 0."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        """Accumulate ``other`` into this object."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.requests += other.requests

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "requests": self.requests,
        }


StopReason: TypeAlias = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "content_filter", "refusal", "other"
]


@dataclass(slots=True)
class Request:
    """Everything a provider needs for one model request.

    ``options`` holds the per-call options (``temperature``, ``max_tokens``,
    ``timeout``, ``stop``, ``seed``, ``reasoning_effort`` and vendor extras).
    A plugin must either honour each option or raise
    :class:`~llmport.errors.UnsupportedFeatureError`; it never drops one.
    """

    model: str
    messages: list[Message]
    system: str | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    parallel_tool_calls: bool = True
    response_format: ResponseFormat | None = None
    options: dict[str, Any] = field(default_factory=dict)
    stream: bool = False
    #: JSON fields merged into one vendor's request body: ``{"openai": {"user": "u1"}}``.
    vendor: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(slots=True)
class Response:
    """A provider's answer to one request."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "end_turn"
    model: str = ""
    id: str | None = None
    raw_stop_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_message(self) -> Message:
        """The assistant message to append to the conversation."""
        blocks: tuple[Block, ...] = (TextBlock(self.text),) if self.text else ()
        return Message("assistant", blocks, tuple(self.tool_calls), extra=dict(self.extra))


# ---------------------------------------------------------------------------
# Stream events
# ---------------------------------------------------------------------------
# Providers yield TextDelta / ToolCallDelta / UsageEvent / StopEvent; the core
# assembles them (one assembler for every vendor) and re-emits TextDelta,
# ToolCallStarted, ToolResultEvent, UsageEvent and FinalEvent to the caller.


@dataclass(slots=True, frozen=True)
class TextDelta:
    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass(slots=True, frozen=True)
class ToolCallDelta:
    """A fragment of a streamed tool call.

    ``key`` identifies the call within one response (vendor index or id);
    ``id`` and ``name`` arrive on the first fragment; ``arguments`` is a
    piece of the JSON text (a whole object for vendors that do not
    fragment). ``extra`` is merged into the assembled :class:`ToolCall`.
    """

    key: str | int
    arguments: str = ""
    id: str | None = None
    name: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    kind: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass(slots=True, frozen=True)
class UsageEvent:
    usage: Usage
    kind: Literal["usage"] = "usage"


@dataclass(slots=True, frozen=True)
class StopEvent:
    """The provider's last word on a streamed response."""

    stop_reason: StopReason
    raw_stop_reason: str | None = None
    model: str = ""
    id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    kind: Literal["stop"] = "stop"


@dataclass(slots=True, frozen=True)
class ToolCallStarted:
    """A tool call, with its arguments fully assembled, about to run."""

    call: ToolCall
    kind: Literal["tool_call_started"] = "tool_call_started"


@dataclass(slots=True, frozen=True)
class ToolResultEvent:
    result: ToolResult
    duration: float
    kind: Literal["tool_result"] = "tool_result"


@dataclass(slots=True, frozen=True)
class FinalEvent:
    """The end of a run; ``result`` is the :class:`~llmport.runtime.RunResult`."""

    result: Any
    kind: Literal["final"] = "final"


ProviderEvent: TypeAlias = TextDelta | ToolCallDelta | UsageEvent | StopEvent
StreamEvent: TypeAlias = TextDelta | ToolCallStarted | ToolResultEvent | UsageEvent | FinalEvent


# ---------------------------------------------------------------------------
# Capabilities
# ---------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class ModelCapabilities:
    """What a model accepts. Checked before any request is sent."""

    input_modalities: frozenset[str] = frozenset({"text"})
    file_types: frozenset[str] = frozenset()  # media types taken natively as files
    image_types: frozenset[str] = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
    audio_types: frozenset[str] = frozenset()
    native_tools: bool = True
    native_structured_output: bool = True
    streaming: bool = True
    parallel_tool_calls: bool = True
    tool_choice_none: bool = True
    image_urls: bool = True
    max_image_bytes: int | None = None
    max_request_bytes: int | None = None
