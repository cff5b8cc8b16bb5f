"""Vendor-neutral types: the only shapes the core and the plugins share.

Plugins convert a :class:`Request` into their vendor's wire format and the
vendor's answer back into a :class:`Response` (or a stream of
:class:`StreamEvent`). Nothing outside a plugin knows a vendor's format.

Every type is a slotted dataclass; blocks and messages are treated as
immutable once built.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias, TypeVar

from ..errors import MessageError
from ..slotted import dataclass, field
from .check import (
    canonical_media_type,
    check_message,
    file_ref_problem,
    media_problem,
    role_problem,
    sniff_media_type,
)

if TYPE_CHECKING:
    from datetime import datetime  # imported where a FileRef is read: keeps the import light
    from decimal import Decimal  # imported where a cost is made: keeps `import llmport` light
    from pathlib import Path

Role = Literal["system", "user", "assistant", "tool"]
BlockKind = Literal["text", "image", "audio", "file"]
_URLSAFE = str.maketrans("+/", "-_")
#: How a file block is sent: the vendor's own document part, inlined text, or auto.
SendMode = Literal["auto", "native", "text"]
#: Reasoning effort levels, lowest to highest (``"none"``: off where a model allows it).
EFFORTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh", "max")

# ---------------------------------------------------------------------------
# Block annotations: cache breakpoints and citations
# ---------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class CacheControl:
    """A prompt-cache breakpoint: everything up to and including this block is cached.

    ``ttl`` is the vendor's lifetime string (``"5m"``, ``"1h"``) or ``None`` for
    the vendor's default. Vendors that cache implicitly (OpenAI, Gemini) accept
    the mark and cache on their own.
    """

    ttl: str | None = None


@dataclass(slots=True, frozen=True)
class Citation:
    """Where a piece of an answer comes from.

    ``kind`` is ``"url"`` (web pages: search results, grounding chunks,
    annotations), ``"document"`` (a document the caller sent; ``document_index``
    is its position among the request's documents) or ``"file"`` (a
    vendor-hosted file, e.g. file search). ``start``/``end`` are character
    offsets into the answer's text block the citation is attached to (OpenAI
    annotations, Gemini grounding supports); ``source_start``/``source_end``
    the cited range in the source document (Anthropic character or page
    locations, Bedrock document locations), when the vendor gives them.
    ``extra`` keeps vendor data that must be echoed back verbatim (e.g.
    Anthropic ``encrypted_index``).
    """

    kind: str
    url: str | None = None
    title: str | None = None
    cited_text: str | None = None
    document_index: int | None = None
    file_id: str | None = None
    start: int | None = None
    end: int | None = None
    vendor: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    source_start: int | None = None
    source_end: int | None = None


# ---------------------------------------------------------------------------
# Content blocks
# ---------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class TextBlock:
    """Plain text, with the citations a model attached to it and an optional cache mark."""

    text: str
    type: Literal["text"] = "text"
    citations: tuple[Citation, ...] = ()
    cache: CacheControl | None = None


@dataclass(slots=True, frozen=True, eq=False)
class MediaBlock:
    """An image, audio clip or file, already loaded and type-checked.

    Exactly one of ``data`` (the raw bytes) or ``url`` (a remote reference
    passed through to vendors that accept URLs) is set. ``media_type`` is
    always known. The base64 form is computed once and cached so a tool loop
    that resends the block does not encode it again.

    A block whose bytes llmport read itself (a ``path`` source) drops them
    once their base64 is cached (:meth:`base64_bytes` or
    :meth:`urlsafe_base64_bytes`): ``data`` then decodes them again on each
    read, and :attr:`size` stays known. Blocks made from the caller's own
    bytes keep them. ``dataclasses.replace`` copies share
    every cache.

    An image a model answers with is also a stream event (``kind == "media"``),
    in stream order, once it is complete (previews before it are
    :class:`MediaDelta` events).
    """

    type: Literal["image", "audio", "file"]
    media_type: str
    data: bytes | None = None
    url: str | None = None
    filename: str | None = None
    index: int = 0  # position in the caller's content list, for error messages
    cache: CacheControl | None = None
    #: Ask the vendor to cite passages of this document (Anthropic, Bedrock).
    citations: bool = False
    #: For text-like files: the vendor's own document part, inline text, or auto.
    send: SendMode = "auto"
    _b64: list[str] = field(default_factory=list, repr=False, compare=False)
    _url: list[str] = field(default_factory=list, repr=False, compare=False)
    _b64url: list[str] = field(default_factory=list, repr=False, compare=False)
    _b64b: list[bytes] = field(default_factory=list, repr=False, compare=False)
    _b64urlb: list[bytes] = field(default_factory=list, repr=False, compare=False)
    #: ``[size, bytes]`` when llmport read the bytes itself: the bytes live here, shared
    #: by every copy, and are dropped (``[size]``) once the base64 is cached.
    _own: list[Any] = field(default_factory=list, repr=False, compare=False)
    _sha1: list[str] = field(default_factory=list, repr=False, compare=False)
    _sha256: list[str] = field(default_factory=list, repr=False, compare=False)
    #: As a stream event (an image the model answered with, complete): its kind.
    kind: ClassVar[Literal["media"]] = "media"

    def __post_init__(self) -> None:
        # Owned bytes live in the shared _own list, so that releasing them there releases
        # them for every replace() copy too (a copy gets them through data, maybe decoded).
        if self._own and _DATA_SLOT.__get__(self, MediaBlock) is not None:
            _DATA_SLOT.__set__(self, _SHARED)

    def _raw(self) -> bytes | None:
        """The bytes held, without decoding (``None`` when released or a URL reference)."""
        value = _DATA_SLOT.__get__(self, MediaBlock)
        if value is _SHARED:
            return self._own[1] if len(self._own) > 1 else None
        return value  # type: ignore[no-any-return]

    @property
    def inline(self) -> bool:
        """Whether the block carries its bytes (rather than a URL); never decodes."""
        return _DATA_SLOT.__get__(self, MediaBlock) is not None

    def base64_bytes(self) -> bytes:
        """Standard base64 of ``data`` as ASCII bytes: encoded once, cached, shared by copies.

        What request bodies splice in (:mod:`llmport.provider.wire`). Once it is
        cached, a block whose bytes llmport read itself releases them.
        """
        if not self._b64b:
            if self._b64:
                encoded = self._b64[0].encode("ascii")
            elif self._url:
                url = self._url[0]
                encoded = url[url.index(",") + 1 :].encode("ascii")
            elif self._b64urlb:
                encoded = self._b64urlb[0].translate(_STANDARD_BYTES)
            else:
                raw = self._raw()
                if raw is None:
                    raise ValueError("block has no inline data (it is a URL reference)")
                encoded = base64.b64encode(raw)
                del raw
            self._b64b.append(encoded)
            del self._own[1:]  # llmport's own bytes: released, for every copy at once
        return self._b64b[0]

    def urlsafe_base64_bytes(self) -> bytes:
        """URL-safe base64 of ``data`` as ASCII bytes (Gemini's wire form).

        Like :meth:`base64_bytes`: encoded once (or translated from a cached
        form), cached, shared by copies; a block whose bytes llmport read
        itself releases them once it is cached. The standard form made on the
        way is not kept beside it.
        """
        if not self._b64urlb:
            if self._b64url:
                encoded = self._b64url[0].encode("ascii")
            elif self._b64b:
                encoded = self._b64b[0].translate(_URLSAFE_BYTES)
            elif self._b64:
                encoded = self._b64[0].translate(_URLSAFE).encode("ascii")
            elif self._url:
                url = self._url[0]
                encoded = url[url.index(",") + 1 :].encode("ascii").translate(_URLSAFE_BYTES)
            else:
                raw = self._raw()
                if raw is None:
                    raise ValueError("block has no inline data (it is a URL reference)")
                standard = base64.b64encode(raw)
                del raw
                # llmport's own bytes go before the translated copy is made (the peak
                # stays at two encoded copies); the block keeps a readable form meanwhile.
                self._b64b.append(standard)
                del self._own[1:]
                encoded = standard.translate(_URLSAFE_BYTES)
                del self._b64b[:], standard
            self._b64urlb.append(encoded)
            del self._own[1:]  # llmport's own bytes: released, for every copy at once
        return self._b64urlb[0]

    def urlsafe_base64(self) -> str:
        """URL-safe base64 of ``data`` (Gemini's wire form), cached like :meth:`base64`."""
        if not self._b64url:
            if self._b64urlb:
                self._b64url.append(self._b64urlb[0].decode("ascii"))
            elif self._b64:
                self._b64url.append(self._b64[0].translate(_URLSAFE))
            elif self._b64b:
                self._b64url.append(self._b64b[0].translate(_URLSAFE_BYTES).decode("ascii"))
            else:
                raw = self._raw()
                if raw is None:
                    raise ValueError("block has no inline data (it is a URL reference)")
                self._b64url.append(base64.urlsafe_b64encode(raw).decode("ascii"))
        return self._b64url[0]

    def base64(self) -> str:
        """Standard base64 of ``data`` as a ``str`` (cached; from a cached form if there is one)."""
        if not self._b64:
            if self._b64b:
                self._b64.append(self._b64b[0].decode("ascii"))
            elif self._url:
                url = self._url[0]
                self._b64.append(url[url.index(",") + 1 :])
            elif self._b64urlb:
                self._b64.append(self._b64urlb[0].translate(_STANDARD_BYTES).decode("ascii"))
            else:
                raw = self._raw()
                if raw is None:
                    raise ValueError("block has no inline data (it is a URL reference)")
                self._b64.append(base64.b64encode(raw).decode("ascii"))
        return self._b64[0]

    def data_url(self) -> str:
        """``data:<media_type>;base64,...``, built once and cached.

        Every turn of a tool loop sends the same string. Built straight from
        the bytes when no base64 form is cached yet, so a plugin that needs
        only the data URL never holds a second base64 copy.
        """
        if not self._url:
            head = f"data:{self.media_type};base64,"
            if self._b64:
                self._url.append(head + self._b64[0])
            elif self._b64b:
                self._url.append((head.encode("ascii") + self._b64b[0]).decode("ascii"))
            elif self._b64urlb:
                standard = self._b64urlb[0].translate(_STANDARD_BYTES)
                self._url.append((head.encode("ascii") + standard).decode("ascii"))
            else:
                raw = self._raw()
                if raw is None:
                    raise ValueError("block has no inline data (it is a URL reference)")
                self._url.append((head.encode("ascii") + base64.b64encode(raw)).decode("ascii"))
        return self._url[0]

    def sha1(self) -> str:
        """The SHA-1 (hex) of the bytes, or of the URL: computed once, cached, shared by copies.

        Read while the bytes are held it costs no copy; a tool loop that names
        the block on every turn (``llmport.provider.tool_media``) never decodes
        its base64 again.
        """
        if not self._sha1:
            raw = self._raw()
            if raw is None:
                raw = self.url.encode() if self.url is not None else (self.data or b"")
            import hashlib  # on first use: a script that never hashes media never loads it

            self._sha1.append(hashlib.sha1(raw, usedforsecurity=False).hexdigest())
        return self._sha1[0]

    def sha256(self) -> str:
        """The SHA-256 (hex) of the bytes: computed once, cached, shared by copies.

        The key a stored session keeps the bytes under (its attachments): a
        block resent on every turn is hashed once. A URL reference has no
        bytes: a ``ValueError``.
        """
        if not self._sha256:
            raw = self._raw()
            if raw is None:
                raw = self.data  # released for their base64: decoded once, here
            if raw is None:
                raise ValueError("block has no inline data (it is a URL reference)")
            import hashlib  # on first use: a script that never hashes media never loads it

            self._sha256.append(hashlib.sha256(raw).hexdigest())
        return self._sha256[0]

    def head(self, n: int = 1024) -> bytes:
        """The first ``n`` bytes (``b""`` for a URL reference), without decoding the rest.

        Enough to tell the type by its magic bytes
        (:func:`~llmport.messages.check.sniff_media_type`) of a block whose
        bytes were released for their base64.
        """
        raw = self._raw()
        if raw is not None:
            return raw[:n]
        chars = -(-n // 3) * 4  # base64 characters that hold the first n bytes
        if self._b64b:
            return base64.b64decode(self._b64b[0][:chars])[:n]
        if self._b64urlb:
            return base64.urlsafe_b64decode(self._b64urlb[0][:chars])[:n]
        return b""

    @property
    def size(self) -> int:
        """The size of the raw bytes (0 for a URL reference); never decodes."""
        if self._own:
            return int(self._own[0])
        raw = self._raw()
        return len(raw) if raw is not None else 0

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the bytes to ``path`` (e.g. an image the model answered with); the path written.

        A URL reference has no bytes here to write: a :class:`~llmport.errors.MessageError`.
        """
        data = self.data
        if data is None:
            raise MessageError(f"{self.describe()} is a URL reference: there are no bytes to save")
        from pathlib import Path  # at the first use, not at import (start-up)

        target = Path(path)
        target.write_bytes(data)
        return target

    def describe(self) -> str:
        """Short human description used in errors and logs (never the bytes).

        A URL is shown masked: a signed or keyed URL (``?X-Goog-Signature=``,
        ``user:password@``) never reaches an error message or a log.
        """
        from ..observe.redaction import redact  # on first description: keeps the import light

        where = self.filename or (redact(self.url) if self.url else f"{self.size} bytes")
        return f"{self.type} block #{self.index} ({self.media_type}, {where})"


class _ReleasableData:
    """``MediaBlock.data``: the slot's value, or the bytes decoded again once released."""

    __slots__ = ("slot",)

    def __init__(self, slot: Any) -> None:
        self.slot = slot

    def __get__(self, obj: MediaBlock | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = self.slot.__get__(obj, owner)
        if value is _SHARED:
            own = obj._own
            # Decoded again when released, not cached: the point was to drop them.
            if len(own) > 1:
                return own[1]
            if obj._b64b:
                return base64.b64decode(obj._b64b[0])
            return base64.urlsafe_b64decode(obj._b64urlb[0])
        return value

    def __set__(self, obj: MediaBlock, value: Any) -> None:
        self.slot.__set__(obj, value)

    def __delete__(self, obj: MediaBlock) -> None:
        self.slot.__delete__(obj)


#: In ``MediaBlock.data``'s slot when the bytes are llmport's own, kept in ``_own``.
_SHARED: Any = object()
_URLSAFE_BYTES = bytes.maketrans(b"+/", b"-_")
_STANDARD_BYTES = bytes.maketrans(b"-_", b"+/")
_DATA_SLOT: Any = MediaBlock.__dict__["data"]
setattr(MediaBlock, "data", _ReleasableData(_DATA_SLOT))  # noqa: B010


@dataclass(slots=True, frozen=True)
class ThinkingBlock:
    """A model's reasoning, kept so it can be echoed back verbatim.

    ``text`` is the readable thinking (or its summary); ``signature`` the
    vendor's proof that it is unaltered (Anthropic/Bedrock ``signature``,
    Gemini ``thoughtSignature``); ``redacted`` opaque data that replaces or
    accompanies the text (Anthropic ``redacted_thinking``, OpenAI
    ``encrypted_content``). ``vendor`` is the provider prefix that produced it:
    it is sent back to that vendor only. ``extra`` keeps vendor fields needed
    for the echo (e.g. an OpenAI reasoning item id).
    """

    text: str = ""
    signature: str | None = None
    redacted: str | None = None
    vendor: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    type: Literal["thinking"] = "thinking"


@dataclass(slots=True, frozen=True)
class ServerToolCall:
    """A provider-native tool the vendor ran on its side (web search, code execution...).

    ``raw`` is the vendor's own block or item, echoed back verbatim to the same vendor.
    """

    id: str
    name: str
    input: dict[str, Any] = field(default_factory=dict)
    vendor: str = ""
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    type: Literal["server_tool_call"] = "server_tool_call"


@dataclass(slots=True, frozen=True)
class ServerToolResult:
    """The outcome of a :class:`ServerToolCall` (JSON ``content`` as the vendor gave it)."""

    call_id: str
    name: str
    content: Any = None
    vendor: str = ""
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    type: Literal["server_tool_result"] = "server_tool_result"


@dataclass(slots=True, frozen=True)
class FileRef:
    """A file uploaded to a vendor's files API (``rt.upload``), sent by reference.

    Only the vendor that holds it can read it: ``provider`` names that
    vendor's files account (``"openai"``, ``"anthropic"``, ``"gemini"``,
    ``"bedrock"``), ``id`` is its own id (OpenAI ``file-...``, Anthropic
    ``file_...``, the Gemini file's URI, an ``s3://`` URI on Bedrock). A
    conversation keeps the reference, never the bytes again; a reference given
    to another vendor is an :class:`~llmport.errors.InputError` before any
    request. ``expires_at`` is when the vendor deletes it (UTC), if it does.
    """

    provider: str
    id: str
    media_type: str
    size: int | None = None
    expires_at: datetime | None = None
    filename: str | None = None
    type: Literal["file_ref"] = "file_ref"

    def __post_init__(self) -> None:
        # The one constructor every reference passes (rt.upload, from_dict, a content
        # dict): a forged one (an id with a newline, size -5) is refused before any request.
        problem = file_ref_problem(
            self.provider, self.id, self.media_type, self.size, self.filename
        )
        if problem is not None:
            raise MessageError(f"file_ref block: {problem}")

    def describe(self) -> str:
        """The reference for error messages."""
        return f"file_ref {self.id!r} ({self.media_type}, {self.provider})"


Block: TypeAlias = (
    TextBlock | MediaBlock | ThinkingBlock | ServerToolCall | ServerToolResult | FileRef
)
#: Blocks only a vendor can produce; sent back only to the vendor named in ``vendor``.
VendorBlock: TypeAlias = ThinkingBlock | ServerToolCall | ServerToolResult


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
    #: A prompt-cache breakpoint after this tool's definition.
    cache: CacheControl | None = None
    #: Loaded only when the vendor's tool search finds it (OpenAI Responses, Anthropic).
    defer_loading: bool = False


@dataclass(slots=True, frozen=True)
class NativeTool:
    """A tool the vendor runs itself: ``NativeTool("web_search", max_uses=3)``.

    ``kind`` is ``"web_search"``, ``"code_execution"``, ``"url_context"``,
    ``"file_search"``, ``"tool_search"`` or ``"image_generation"``; ``options``
    are mapped per vendor (each plugin's capability table says which kinds and
    options it takes).
    """

    kind: str
    options: dict[str, Any] = field(default_factory=dict)

    def __init__(self, kind: str, /, **options: Any) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "options", options)


NATIVE_TOOL_KINDS: frozenset[str] = frozenset(
    {
        "web_search",
        "code_execution",
        "url_context",
        "file_search",
        "tool_search",
        "image_generation",
    }
)


@dataclass(slots=True, frozen=True)
class ToolCall:
    """A model's request to run a tool.

    ``arguments`` is the parsed JSON object; ``raw_arguments`` keeps the exact
    text the vendor sent (it may be invalid JSON, which the tool loop reports
    back to the model). ``extra`` carries opaque vendor data that must be
    echoed back (e.g. Gemini ``thoughtSignature``). ``position`` is where the
    call sits among its message's blocks (how many come before it) when the
    model put it before some of them (OpenAI Responses items interleave
    reasoning and calls); ``None``: after every block.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    position: int | None = field(default=None, compare=False)


@dataclass(slots=True, frozen=True)
class ToolResult:
    """The outcome of a tool call, sent back to the model."""

    call_id: str
    name: str
    content: str
    is_error: bool = False
    #: Media (or documents) the tool returned beside its text (vendors that take them).
    blocks: tuple[Block, ...] = ()


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

    @property
    def thinking(self) -> str:
        """The concatenated readable thinking."""
        return "".join(b.text for b in self.blocks if isinstance(b, ThinkingBlock))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (bytes as base64); :meth:`from_dict` turns it back exactly."""
        return message_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        """The message :meth:`to_dict` described; raises ``MessageError`` on a malformed dict."""
        return message_from_dict(data)


@dataclass(slots=True, frozen=True)
class ResponseFormat:
    """A JSON schema the reply must satisfy."""

    schema: dict[str, Any]
    name: str = "response"
    strict: bool = True
    description: str | None = None


@dataclass(slots=True)
class Usage:
    """Token counts and cost. Unknown counts stay 0.

    ``input_tokens`` counts every input token, cached ones included;
    ``cache_read_tokens`` and ``cache_write_tokens`` say how many of them were
    read from or written to the vendor's prompt cache.

    :attr:`cost` is in USD (a ``Decimal``), from the ``genai-prices`` data
    (``pip install "llmport[prices]"``) with cached prices applied; ``None``
    when any part of the usage has no known price. It is computed when first
    read, so a call that never looks at it pays nothing for it.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0
    _cost: Decimal | None = field(default=None, repr=False, compare=False)
    # (provider, model, input, output, cache read, cache write[, batch]) not yet priced. One
    # call's usage keeps a tuple (it allocates no container); a total that other usages are
    # added to owns a list it extends, so each add costs the entries added, not all so far.
    _unpriced: tuple[tuple[Any, ...], ...] | list[tuple[Any, ...]] = field(
        default=(), repr=False, compare=False
    )
    _unknown: bool = field(default=False, repr=False, compare=False)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def cost(self) -> Decimal | None:
        """USD cost, or ``None`` when unknown (no price data, or a model without a price)."""
        if self._unpriced:
            from ..observe.prices import price

            for provider, model, inp, out, read, write, *batch in self._unpriced:
                amount = price(provider, model, inp, out, read, write, batch=bool(batch))
                if amount is None:
                    self._unknown = True
                else:
                    self._cost = amount if self._cost is None else self._cost + amount
            self._unpriced = ()
        return None if self._unknown else self._cost

    @cost.setter
    def cost(self, value: Decimal | None) -> None:
        self._unpriced = ()
        self._cost = value
        self._unknown = False

    def priced_as(self, provider: str, model: str, *, batch: bool = False) -> Usage:
        """Mark these counts as one request to ``provider:model`` (priced when cost is read).

        ``batch=True``: sent through the vendor's batch API (batch prices, see
        :func:`llmport.observe.prices.price`).
        """
        counts = (
            provider,
            model,
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
        )
        self._unpriced = (*self._unpriced, (*counts, True) if batch else counts)
        return self

    def add(self, other: Usage) -> None:
        """Accumulate ``other`` into this object."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.requests += other.requests
        if other._unpriced:
            if isinstance(self._unpriced, list):
                self._unpriced.extend(other._unpriced)
            else:
                self._unpriced = [*self._unpriced, *other._unpriced]
        if other._cost is not None:
            self._cost = other._cost if self._cost is None else self._cost + other._cost
        if other._unknown:
            self._unknown = True

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "requests": self.requests,
        }
        # The cost only when already known: pricing is paid for by readers of .cost.
        if not self._unpriced and not self._unknown and self._cost is not None:
            out["cost"] = str(self._cost)
        return out

    def copy(self) -> Usage:
        """An independent copy (pending prices included)."""
        return Usage(
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            self.reasoning_tokens,
            self.requests,
            self._cost,
            tuple(self._unpriced),  # a snapshot: the total's list keeps growing
            self._unknown,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        usage = cls(
            input_tokens=int(data.get("input_tokens", 0)),
            output_tokens=int(data.get("output_tokens", 0)),
            cache_read_tokens=int(data.get("cache_read_tokens", 0)),
            cache_write_tokens=int(data.get("cache_write_tokens", 0)),
            reasoning_tokens=int(data.get("reasoning_tokens", 0)),
            requests=int(data.get("requests", 0)),
        )
        if data.get("cost") is not None:
            from decimal import Decimal

            usage.cost = Decimal(data["cost"])
        return usage


@dataclass(slots=True, frozen=True)
class Reasoning:
    """How much a model should think: ``Reasoning(effort="high")``.

    ``effort`` is one of :data:`EFFORTS`; ``budget_tokens`` a thinking-token
    budget (vendors that take only one of the two get it converted per model
    family); ``summary`` asks for readable thought summaries (``"auto"``,
    ``"concise"``, ``"detailed"``; ``True`` means ``"auto"``).
    """

    effort: str | None = None
    budget_tokens: int | None = None
    summary: str | bool | None = None


@dataclass(slots=True, frozen=True)
class CacheSettings:
    """The run's ``cache=`` option, normalised.

    ``auto`` places breakpoints on the tools, the system prompt and the last
    user turn; ``ttl`` is the lifetime for those breakpoints; ``key`` and
    ``retention`` are OpenAI's ``prompt_cache_key`` / ``prompt_cache_retention``.
    """

    auto: bool = False
    ttl: str | None = None
    key: str | None = None
    retention: str | None = None


@dataclass(slots=True, frozen=True)
class ContextEditing:
    """Server-side context editing, from ``ContextPolicy(strategy="vendor")``.

    Once the input passes ``trigger_tokens`` (``None``: the vendor's default)
    the vendor clears old tool results, and old thinking when thinking is on,
    keeping the ``keep`` most recent tool uses and thinking turns. The
    conversation llmport holds stays whole: only what the model reads changes.
    """

    trigger_tokens: int | None = None
    keep: int = 2


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
    #: The system prompt as blocks (cache marks kept); ``system`` is their text.
    system_blocks: tuple[TextBlock, ...] = ()
    #: Provider-native tools offered beside ``tools``.
    native_tools: list[NativeTool] = field(default_factory=list)
    #: Normalised ``reasoning=`` / ``reasoning_effort=`` (``None``: the model's default).
    reasoning: Reasoning | None = None
    #: Normalised ``cache=`` (``None``: only the breakpoints marked on blocks and tools).
    cache: CacheSettings | None = None
    #: Server-side context editing to ask for (models with ``context_editing``).
    context_editing: ContextEditing | None = None
    #: What the answer may hold (``output_modalities=``: ``("text", "image")``); empty: the
    #: model's default. A modality the model cannot answer with is refused before any request.
    output_modalities: tuple[str, ...] = ()


@dataclass(slots=True)
class Response:
    """A provider's answer to one request.

    ``blocks`` is the answer's content in order (thinking, text with
    citations, server-side tool calls and results); a plugin whose answer is
    plain text may leave it empty and set ``text`` only. ``text`` is always
    the concatenated answer text.
    """

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "end_turn"
    model: str = ""
    id: str | None = None
    raw_stop_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)

    @property
    def thinking(self) -> str:
        """The concatenated readable thinking of this answer."""
        return "".join(b.text for b in self.blocks if isinstance(b, ThinkingBlock))

    def content_blocks(self) -> tuple[Block, ...]:
        """The answer as blocks (``blocks``, else one text block)."""
        if self.blocks:
            return tuple(self.blocks)
        return (TextBlock(self.text),) if self.text else ()

    def as_message(self) -> Message:
        """The assistant message to append to the conversation."""
        if self.blocks:
            blocks: tuple[Block, ...] = tuple(self.blocks)
        else:
            blocks = (TextBlock(self.text),) if self.text else ()
        return Message("assistant", blocks, tuple(self.tool_calls), extra=dict(self.extra))


# ---------------------------------------------------------------------------
# Stream events
# ---------------------------------------------------------------------------
# Providers yield TextDelta / ToolCallDelta / UsageEvent / StopEvent (and
# thinking, citations, server tools, media); the core assembles them (one
# assembler for every vendor) and re-emits TextDelta, MediaDelta / MediaBlock,
# ToolCallStarted, ToolResultEvent, UsageEvent and FinalEvent to the caller.


@dataclass(slots=True, frozen=True)
class TextDelta:
    """A piece of streamed answer text.

    ``key`` identifies its text block within one response (Anthropic's
    content block index, Responses' ``output_index:content_index``, Gemini's
    part, Bedrock's ``contentBlockIndex``; Chat Completions has one: 0):
    the assembled answer has one :class:`TextBlock` per key, as the whole
    (non-streamed) answer has.
    """

    text: str
    key: str | int = 0
    kind: Literal["text_delta"] = "text_delta"


@dataclass(slots=True, frozen=True)
class OutputDelta:
    """A piece of a streamed structured output's raw JSON text, as it arrives.

    The answer's text in the native and prompted modes, the output tool's
    argument fragments with ``output_mode="tool"`` (for a non-object schema
    those wrap the value as ``{"value": ...}``).
    """

    text: str
    kind: Literal["output_delta"] = "output_delta"


@dataclass(slots=True, frozen=True)
class PartialOutput:
    """The structured output parsed so far, sent when it changed.

    Each value is a prefix of the final one (strings cut short, lists and
    objects with their leading members; numbers and literals only once
    complete); the validated value is on the :class:`FinalEvent`'s result.
    A repair round streams a new output from its start.
    """

    value: Any
    kind: Literal["partial_output"] = "partial_output"


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
class ThinkingDelta:
    """A piece of streamed thinking.

    ``key`` identifies the thinking block within one response (vendor index);
    ``text`` extends it, ``signature`` / ``redacted`` (when set) complete it,
    ``extra`` is merged into the assembled :class:`ThinkingBlock`. The caller
    sees every delta; the assembled block is in the final result.
    """

    text: str = ""
    key: str | int = 0
    signature: str | None = None
    redacted: str | None = None
    vendor: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    kind: Literal["thinking_delta"] = "thinking_delta"


@dataclass(slots=True, frozen=True)
class MediaDelta:
    """A preview of an image the model is still making (OpenAI ``partial_images``).

    ``block`` is the whole preview image (each partial is a complete,
    lower-quality picture, not a piece of bytes); ``index`` counts the
    previews of one image from 0; ``key`` identifies that image within the
    response. Previews are not part of the answer: the finished image comes
    as a :class:`MediaBlock` event and is in the final result.
    """

    block: MediaBlock
    key: str | int = 0
    index: int = 0
    kind: Literal["media_delta"] = "media_delta"


@dataclass(slots=True, frozen=True)
class CitationEvent:
    """A citation for the text streamed so far (attached to the current text block)."""

    citation: Citation
    kind: Literal["citation"] = "citation"


@dataclass(slots=True, frozen=True)
class ServerToolEvent:
    """A complete server-side tool call or result, in stream order."""

    block: ServerToolCall | ServerToolResult
    kind: Literal["server_tool"] = "server_tool"


@dataclass(slots=True, frozen=True)
class UsageEvent:
    """The usage of one model request, once its answer is in."""

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
    """A tool call's result, and how long the call ran (seconds)."""

    result: ToolResult
    duration: float
    kind: Literal["tool_result"] = "tool_result"


@dataclass(slots=True, frozen=True)
class CustomEvent:
    """What a tool wrote with ``ctx.stream_writer(payload)``, in the order written.

    ``tool_call_id`` / ``tool_name`` say which call wrote it (empty for a
    chosen callable of a decision).
    """

    payload: Any
    tool_call_id: str = ""
    tool_name: str = ""
    kind: Literal["custom"] = "custom"


@dataclass(slots=True, frozen=True)
class StreamRestarted:
    """The stream failed after the caller was shown part of an answer and is retried.

    Only with ``stream_retry="restart"``: discard what this model call has
    shown so far (its text, thinking and citations); attempt ``attempt``
    streams the whole new answer from its start.
    """

    attempt: int
    kind: Literal["stream_restarted"] = "stream_restarted"


@dataclass(slots=True, frozen=True)
class FinalEvent:
    """The end of a run; ``result`` is the :class:`~llmport.runtime.RunResult`."""

    result: Any
    kind: Literal["final"] = "final"


ProviderEvent: TypeAlias = (
    TextDelta
    | ThinkingDelta
    | CitationEvent
    | ServerToolEvent
    | MediaDelta
    | MediaBlock
    | ToolCallDelta
    | UsageEvent
    | StopEvent
)
StreamEvent: TypeAlias = (
    TextDelta
    | ThinkingDelta
    | CitationEvent
    | ServerToolEvent
    | MediaDelta
    | MediaBlock
    | OutputDelta
    | PartialOutput
    | ToolCallStarted
    | ToolResultEvent
    | UsageEvent
    | CustomEvent
    | StreamRestarted
    | FinalEvent
)


# ---------------------------------------------------------------------------
# Capabilities
# ---------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class ImagePrice:
    """USD per generated image up to ``max_pixels`` (width x height) of one ``quality``.

    ``usd`` is a decimal string (it round-trips through JSON exactly);
    ``quality`` is the neutral ``quality=`` value the row prices (``None``:
    every quality). Rows come from the vendor's pricing page.
    """

    usd: str
    max_pixels: int
    quality: str | None = None


@dataclass(slots=True, frozen=True)
class ImagePricing:
    """An image model billed per image, not per token (``ImageGeneration.per_image``).

    A call is priced by the smallest row whose ``max_pixels`` holds its size and
    whose quality is its quality; a call naming no size or quality is priced at
    what the vendor makes then (``default_size``, ``default_quality``). A size
    or quality no row prices leaves the cost unknown (``None``).
    """

    rows: tuple[ImagePrice, ...]
    default_size: str = "1024x1024"
    default_quality: str | None = None


@dataclass(slots=True, frozen=True)
class ImageGeneration:
    """What an image model's endpoint takes (``rt.generate_image``), from its vendor's reference.

    ``sizes`` lists the ``"WIDTHxHEIGHT"`` sizes it makes; ``None`` means any
    size within ``min_side``..``max_side`` pixels a side, each a multiple of
    ``side_step``, at most ``max_pixels`` in all and ``max_ratio`` long side
    to short (Nova Canvas). ``qualities`` are the neutral ``quality=`` values
    it maps (``"low"`` / ``"medium"`` / ``"high"``), ``formats`` the
    ``output_format=`` values (``"png"`` / ``"jpeg"`` / ``"webp"``).
    """

    max_images: int = 1
    sizes: frozenset[str] | None = None
    min_side: int = 0
    max_side: int = 0
    side_step: int = 1
    max_pixels: int | None = None
    max_ratio: float | None = None
    qualities: frozenset[str] = frozenset()
    formats: frozenset[str] = frozenset({"png"})
    #: Takes ``seed=`` (the largest seed it takes).
    max_seed: int | None = None
    #: Longest prompt in characters (``None``: no documented limit).
    max_prompt_chars: int | None = None
    #: USD per image where the vendor bills images, not tokens (``None``: priced by tokens).
    per_image: ImagePricing | None = None


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
    #: Context window and output limit in tokens (``None``: unknown).
    context_window: int | None = None
    max_output_tokens: int | None = None
    #: Takes ``reasoning=`` (effort and/or budget).
    reasoning: bool = False
    #: Honours cache breakpoints (explicitly, or by caching implicitly).
    caching: bool = False
    #: Most cache breakpoints one request may carry (``None``: no limit).
    max_cache_breakpoints: int | None = None
    #: Returns citations (annotations, grounding, document citations).
    citations: bool = False
    #: Provider-native tool kinds it runs (see :class:`NativeTool`).
    native_tool_kinds: frozenset[str] = frozenset()
    #: Media types of text-like files it takes as its own document/file part.
    native_text_files: frozenset[str] = frozenset()
    #: Has a token-counting endpoint.
    count_tokens: bool = False
    #: Clears old tool results and thinking itself (``ContextPolicy(strategy="vendor")``).
    context_editing: bool = False
    #: What it can answer with (``output_modalities=``): text, and images on image models.
    output_modalities: frozenset[str] = frozenset({"text"})
    # -- embeddings (llmport.provider.embedding checks them) -----------------
    #: An embedding model (``rt.embed``); chat models leave it False.
    embeddings: bool = False
    #: Its default vector size.
    embedding_dimensions: int | None = None
    #: The sizes ``dimensions=`` may ask for (``None``: any up to the default when
    #: ``flexible_dimensions``).
    embedding_dimension_choices: frozenset[int] | None = None
    #: Takes ``dimensions=`` (OpenAI text-embedding-3, Gemini, Titan v2, Cohere v4).
    flexible_dimensions: bool = False
    #: Inputs one request may carry (``None``: no documented limit).
    max_embed_inputs: int | None = None
    #: Tokens one request may carry, all inputs together.
    max_embed_request_tokens: int | None = None
    #: Tokens one input may have.
    max_embed_input_tokens: int | None = None
    #: Takes a neutral ``input_type=`` (mapped to the vendor's own; else dropped).
    embed_input_types: bool = False
    #: The vendor cuts an over-long input itself when asked (``truncate=``).
    embed_truncation: bool = False
    #: An image model with an image endpoint (``rt.generate_image``), and what it takes.
    images: ImageGeneration | None = None
    #: Media one embedding request may carry, all inputs together (``None``: no limit of
    #: its own); an embedding model embeds media when ``input_modalities`` holds "image".
    max_embed_media: int | None = None
    #: Blocks one media input may fuse into one vector (1: an image or a text alone).
    max_embed_blocks: int | None = 1


# ---------------------------------------------------------------------------
# JSON form: Message.to_dict / Message.from_dict
# ---------------------------------------------------------------------------
# Exact: message_to_dict(message_from_dict(d)) == d for every dict written
# here; bytes travel as standard base64 and vendor data (signatures,
# encrypted reasoning, raw server-tool blocks) verbatim, so a stored
# conversation resumes byte-identically. Fields at their default are left out.

_ROLES = ("system", "user", "assistant", "tool")


def _put(out: dict[str, Any], key: str, value: Any, default: Any = None) -> None:
    if value != default:
        out[key] = value


def _cache_to(cache: CacheControl | None) -> dict[str, Any] | None:
    if cache is None:
        return None
    return {"ttl": cache.ttl} if cache.ttl else {}


def _cache_from(data: Any) -> CacheControl | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise MessageError(f"'cache' must be an object, got {type(data).__name__}")
    return CacheControl(ttl=data.get("ttl"))


def citation_to_dict(c: Citation) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": c.kind}
    for key in (
        "url",
        "title",
        "cited_text",
        "document_index",
        "file_id",
        "start",
        "end",
        "source_start",
        "source_end",
    ):
        _put(out, key, getattr(c, key))
    _put(out, "vendor", c.vendor, "")
    _put(out, "extra", c.extra, {})
    return out


def citation_from_dict(d: dict[str, Any]) -> Citation:
    if not isinstance(d, dict):
        raise MessageError(f"a citation must be an object, got {type(d).__name__}")
    return Citation(
        kind=d["kind"],
        url=d.get("url"),
        title=d.get("title"),
        cited_text=d.get("cited_text"),
        document_index=d.get("document_index"),
        file_id=d.get("file_id"),
        start=d.get("start"),
        end=d.get("end"),
        vendor=d.get("vendor", ""),
        extra=_obj(d, "extra"),
        source_start=d.get("source_start"),
        source_end=d.get("source_end"),
    )


def block_to_dict(block: Block) -> dict[str, Any]:
    """One content block as a JSON-safe dict."""
    out: dict[str, Any] = {"type": block.type}
    if isinstance(block, TextBlock):
        out["text"] = block.text
        if block.citations:
            out["citations"] = [citation_to_dict(c) for c in block.citations]
        _put(out, "cache", _cache_to(block.cache))
    elif isinstance(block, MediaBlock):
        out["media_type"] = block.media_type
        if block.inline:
            out["data"] = block.base64()
        _put(out, "url", block.url)
        _put(out, "filename", block.filename)
        _put(out, "index", block.index, 0)
        _put(out, "cache", _cache_to(block.cache))
        _put(out, "citations", block.citations, False)
        _put(out, "send", block.send, "auto")
    elif isinstance(block, FileRef):
        out.update(provider=block.provider, id=block.id, media_type=block.media_type)
        _put(out, "size", block.size)
        _put(out, "expires_at", None if block.expires_at is None else block.expires_at.isoformat())
        _put(out, "filename", block.filename)
    elif isinstance(block, ThinkingBlock):
        _put(out, "text", block.text, "")
        _put(out, "signature", block.signature)
        _put(out, "redacted", block.redacted)
        _put(out, "vendor", block.vendor, "")
        _put(out, "extra", block.extra, {})
    elif isinstance(block, ServerToolCall):
        out["id"] = block.id
        out["name"] = block.name
        _put(out, "input", block.input, {})
        _put(out, "vendor", block.vendor, "")
        _put(out, "raw", block.raw, {})
    else:
        out["call_id"] = block.call_id
        out["name"] = block.name
        _put(out, "content", block.content)
        _put(out, "vendor", block.vendor, "")
        _put(out, "raw", block.raw, {})
    return out


def _list(d: dict[str, Any], key: str) -> list[Any]:
    """``d[key]`` (default: empty), which must be a list."""
    value = d.get(key, [])
    if not isinstance(value, (list, tuple)):
        raise MessageError(f"{key!r} must be a list, got {type(value).__name__}")
    return list(value)


def _obj(d: dict[str, Any], key: str) -> dict[str, Any]:
    """``d[key]`` (default: empty), which must be an object."""
    value = d.get(key, {})
    if not isinstance(value, dict):
        raise MessageError(f"{key!r} must be an object, got {type(value).__name__}")
    return dict(value)


def _text(d: dict[str, Any]) -> Block:
    return TextBlock(
        d["text"],
        citations=tuple(citation_from_dict(c) for c in _list(d, "citations")),
        cache=_cache_from(d.get("cache")),
    )


def _media(d: dict[str, Any]) -> Block:
    data = d.get("data")
    raw: bytes | None = None
    if data is not None:
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError, TypeError):
            raise MessageError(f"{d['type']} block: 'data' is not valid base64") from None
    if (raw is None) == (d.get("url") is None):
        raise MessageError(f"{d['type']} block needs exactly one of 'data' or 'url'")
    media_type = d["media_type"]
    if not isinstance(media_type, str) or not media_type:
        raise MessageError(f"{d['type']} block: 'media_type' must be a non-empty string")
    if raw is not None:
        problem = media_problem(canonical_media_type(media_type), raw, sniff_media_type(raw))
        if problem:
            raise MessageError(f"{d['type']} block: declared media type {media_type} but {problem}")
    if d.get("send", "auto") not in ("auto", "native", "text"):
        raise MessageError(f"{d['type']} block: 'send' must be 'auto', 'native' or 'text'")
    block = MediaBlock(
        type=d["type"],
        media_type=media_type,
        data=raw,
        url=d.get("url"),
        filename=d.get("filename"),
        index=d.get("index", 0),
        cache=_cache_from(d.get("cache")),
        citations=bool(d.get("citations", False)),
        send=d.get("send", "auto"),
    )
    if data is not None:
        block._b64.append(data)  # the caller's encoding is the block's encoding
    return block


def _thinking(d: dict[str, Any]) -> Block:
    return ThinkingBlock(
        text=d.get("text", ""),
        signature=d.get("signature"),
        redacted=d.get("redacted"),
        vendor=d.get("vendor", ""),
        extra=_obj(d, "extra"),
    )


def _server_call(d: dict[str, Any]) -> Block:
    return ServerToolCall(
        id=d["id"],
        name=d["name"],
        input=_obj(d, "input"),
        vendor=d.get("vendor", ""),
        raw=_obj(d, "raw"),
    )


def _server_result(d: dict[str, Any]) -> Block:
    return ServerToolResult(
        call_id=d["call_id"],
        name=d["name"],
        content=d.get("content"),
        vendor=d.get("vendor", ""),
        raw=_obj(d, "raw"),
    )


def _file_ref(d: dict[str, Any]) -> Block:
    for key in ("provider", "id", "media_type"):
        if not isinstance(d[key], str) or not d[key]:
            raise MessageError(f"file_ref block: {key!r} must be a non-empty string")
    size, expires = d.get("size"), d.get("expires_at")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int)):
        raise MessageError("file_ref block: 'size' must be an integer")
    try:
        from datetime import datetime

        when = None if expires is None else datetime.fromisoformat(expires)
    except (TypeError, ValueError):
        raise MessageError("file_ref block: 'expires_at' must be an ISO 8601 time") from None
    return FileRef(d["provider"], d["id"], d["media_type"], size, when, d.get("filename"))


_READERS: dict[str, Callable[[dict[str, Any]], Block]] = {
    "text": _text,
    "image": _media,
    "audio": _media,
    "file": _media,
    "thinking": _thinking,
    "server_tool_call": _server_call,
    "server_tool_result": _server_result,
    "file_ref": _file_ref,
}


def block_from_dict(d: dict[str, Any]) -> Block:
    """The block :func:`block_to_dict` described."""
    if not isinstance(d, dict):
        raise MessageError(f"a block must be an object, got {type(d).__name__}")
    kind = d.get("type")
    reader = _READERS.get(kind) if isinstance(kind, str) else None
    if reader is None or not isinstance(kind, str):
        raise MessageError(
            f"unknown block type {d.get('type')!r}; expected one of {sorted(_READERS)}"
        )
    _only(d, _BLOCK_KEYS[kind], f"{kind} block")
    try:
        return reader(d)
    except KeyError as exc:
        raise MessageError(f"{d['type']} block is missing {exc.args[0]!r}") from None


def message_to_dict(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role}
    if message.blocks:
        out["blocks"] = [block_to_dict(b) for b in message.blocks]
    if message.tool_calls:
        out["tool_calls"] = [_call_to(c) for c in message.tool_calls]
    if message.tool_results:
        out["tool_results"] = [_result_to(r) for r in message.tool_results]
    _put(out, "extra", message.extra, {})
    return out


def message_from_dict(data: dict[str, Any]) -> Message:
    """The message ``data`` (:func:`message_to_dict`'s form) describes; strict.

    A key the form does not have is refused, not ignored: a vendor's own
    message dict (``{"role": "user", "content": "hi"}``) would otherwise
    become an empty turn. The error names the key's path.
    """
    if not isinstance(data, dict):
        raise MessageError(f"a message must be an object, got {type(data).__name__}")
    _only(data, _MESSAGE_KEYS, "message")
    role = data.get("role")
    if role not in _ROLES:
        raise MessageError(f"message role must be one of {list(_ROLES)}, got {role!r}")
    try:
        message = Message(
            role,
            tuple(
                _at("blocks", i, block_from_dict, b) for i, b in enumerate(_list(data, "blocks"))
            ),
            tuple(
                _at("tool_calls", i, _call_from, c) for i, c in enumerate(_list(data, "tool_calls"))
            ),
            tuple(
                _at("tool_results", i, _result_from, r)
                for i, r in enumerate(_list(data, "tool_results"))
            ),
            extra=_obj(data, "extra"),
        )
    except KeyError as exc:
        raise MessageError(
            f"{role} message: a tool call or result is missing {exc.args[0]!r}"
        ) from None
    check_message(message)  # the field types, as for a Message built by hand
    problem = role_problem(message)
    if problem is not None:
        raise MessageError(f"message: {problem}")
    return message


_T = TypeVar("_T")

#: The keys of each dict form (what the ``*_to_dict`` functions write); no other is read.
_MESSAGE_KEYS = frozenset({"role", "blocks", "tool_calls", "tool_results", "extra"})
_CALL_KEYS = frozenset({"id", "name", "arguments", "raw_arguments", "extra", "position"})
_RESULT_KEYS = frozenset({"call_id", "name", "content", "is_error", "blocks"})
_MEDIA_KEYS = frozenset(
    {"type", "media_type", "data", "url", "filename", "index", "cache", "citations", "send"}
)
_BLOCK_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text", "citations", "cache"}),
    "image": _MEDIA_KEYS,
    "audio": _MEDIA_KEYS,
    "file": _MEDIA_KEYS,
    "thinking": frozenset({"type", "text", "signature", "redacted", "vendor", "extra"}),
    "server_tool_call": frozenset({"type", "id", "name", "input", "vendor", "raw"}),
    "server_tool_result": frozenset({"type", "call_id", "name", "content", "vendor", "raw"}),
    "file_ref": frozenset(
        {"type", "provider", "id", "media_type", "size", "expires_at", "filename"}
    ),
}


def _only(d: dict[str, Any], keys: frozenset[str], what: str) -> None:
    """Raise :class:`MessageError` naming the first key of ``d`` not in ``keys``."""
    unknown = [k for k in d if k not in keys]
    if unknown:
        raise MessageError(
            f"{what}: unknown key {unknown[0]!r} (the keys are {', '.join(sorted(keys))})"
        )


def _at(part: str, index: int, read: Callable[[Any], _T], item: Any) -> _T:
    """``read(item)``, its :class:`MessageError` prefixed with the item's path (``blocks[2]``)."""
    try:
        return read(item)
    except MessageError as exc:
        raise MessageError(f"{part}[{index}]: {exc}") from None


def _call_to(c: ToolCall) -> dict[str, Any]:
    out: dict[str, Any] = {"id": c.id, "name": c.name, "arguments": c.arguments}
    _put(out, "raw_arguments", c.raw_arguments, "")
    _put(out, "extra", c.extra, {})
    _put(out, "position", c.position)
    return out


def _call_from(d: dict[str, Any]) -> ToolCall:
    if not isinstance(d, dict):
        raise MessageError(f"a tool call must be an object, got {type(d).__name__}")
    _only(d, _CALL_KEYS, "tool call")
    return ToolCall(
        id=d["id"],
        name=d["name"],
        arguments=_obj(d, "arguments"),
        raw_arguments=d.get("raw_arguments", ""),
        extra=_obj(d, "extra"),
        position=d.get("position"),
    )


def _result_to(r: ToolResult) -> dict[str, Any]:
    out: dict[str, Any] = {"call_id": r.call_id, "name": r.name, "content": r.content}
    _put(out, "is_error", r.is_error, False)
    if r.blocks:
        out["blocks"] = [block_to_dict(b) for b in r.blocks]
    return out


def _result_from(d: dict[str, Any]) -> ToolResult:
    if not isinstance(d, dict):
        raise MessageError(f"a tool result must be an object, got {type(d).__name__}")
    _only(d, _RESULT_KEYS, "tool result")
    return ToolResult(
        call_id=d["call_id"],
        name=d["name"],
        content=d["content"],
        is_error=d.get("is_error", False),
        blocks=tuple(block_from_dict(b) for b in _list(d, "blocks")),
    )
