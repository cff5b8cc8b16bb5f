"""The provider contract every vendor plugin implements.

A provider works in two steps, as pydantic-ai's models do:

1. :meth:`Provider.prepare` runs **once per model request**: every check
   (capabilities, options, content), every conversion to the vendor's
   format and every capability lookup. It raises typed input errors and
   sends nothing. It returns a :class:`Prepared`.
2. :meth:`Provider.send` / :meth:`~Provider.asend` /
   :meth:`~Provider.send_stream` / :meth:`~Provider.asend_stream` do the
   I/O and convert the answer back to a :class:`~llmport.messages.types.Response`
   (or :data:`~llmport.messages.types.ProviderEvent` objects). A retry resends the
   same :class:`Prepared`: nothing is converted twice.

Providers raise llmport's typed :class:`~llmport.errors.ProviderError`
subclasses and never retry on their own: llmport is the one retry layer.
Every method that reaches the vendor is decorated with
:func:`llmport.provider.translate.vendor_boundary`, which translates through
the provider's :meth:`Provider.translating` (SPEC §20 I1).

The ``_call`` contract is complete too: a provider that only
implements ``_call(request)`` and ``_async_call(request)`` (optionally
``_stream`` / ``_astream``) gets them called by the default ``prepare``
(which only checks) and ``send*`` methods; it converts on every attempt.

Plugins register a :class:`ProviderInfo` through the ``llmport_providers``
hook; the provider class itself is created lazily (on first use), so no
vendor SDK is imported by ``import llmport``.
"""

from __future__ import annotations

import contextlib
import json
import threading
import warnings
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..controls.options import SERVER_STATE_OPTIONS, STANDARD_OPTIONS, unknown_option_error
from ..errors import UnknownModelWarning, UnsupportedContentError, UnsupportedFeatureError
from ..messages.check import check_file_refs
from ..messages.order import in_order, settle_positions
from ..messages.types import (
    Block,
    Citation,
    CitationEvent,
    FileRef,
    MediaBlock,
    ModelCapabilities,
    ProviderEvent,
    Request,
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
from ..observe.redaction import redact_settings, register_settings, secret_values
from . import translate

__all__ = [
    "FILES",
    "STANDARD_OPTIONS",
    "TOKEN_COUNTING",
    "Prepared",
    "Provider",
    "ProviderInfo",
    "StreamAssembler",
    "assemble",
    "check_block",
    "check_server_state",
    "parse_arguments",
    "response_events",
    "warn_if_unknown",
]


#: The feature of the :class:`UnsupportedFeatureError` a provider without a files API raises.
FILES = "files (upload, delete, list)"

#: The feature of the :class:`UnsupportedFeatureError` a provider raises when it cannot
#: count tokens for a model (``count_tokens`` then estimates instead).
TOKEN_COUNTING = "token counting"


@dataclass(slots=True)
class Prepared:
    """A request converted once for its vendor; every attempt resends it.

    ``payload`` is what the plugin sends (the SDK's keyword arguments or the
    JSON body); plugins subclass this to keep what converting the answer
    back needs.
    """

    request: Request
    payload: Any = None


class Provider:
    """Base class of vendor providers.

    Subclasses set ``name`` and ``options`` (the option names they model
    beyond :data:`STANDARD_OPTIONS`), and override either :meth:`prepare`
    (calling :meth:`check` first) and the four ``send`` methods, or just
    ``_call`` and ``_async_call`` (and optionally ``_stream`` / ``_astream``). ``settings`` are the
    provider's own settings (``api_key``, ``base_url``, ...) from
    configuration and the runtime; their secret values are registered for
    redaction (:mod:`llmport.observe.redaction`).
    """

    name: str = "provider"
    #: Option names this provider models; any other option is an error before a request.
    options: frozenset[str] = STANDARD_OPTIONS
    #: True when the vendor keeps conversations on its server (OpenAI Responses): the
    #: provider takes ``previous_response_id=`` / ``conversation=`` and its answers' ids
    #: are ``RunResult.response_id``. Everywhere else those options are refused typed.
    server_state: bool = False
    #: True once :meth:`prepare` has converted a request: a first conversion may load the
    #: vendor SDK (seconds, cold), so the engine runs it off the event loop, under the
    #: run's deadline (:mod:`llmport.provider.deadline`).
    converted: bool = False

    def __init__(self, settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None):
        self.settings: dict[str, Any] = dict(settings or {})
        self.info = info
        if info is not None and info.base:
            self.name = info.prefix  # a named instance answers to its own name
        self._caps: dict[str, ModelCapabilities] = {}
        self._caps_lock = threading.Lock()
        register_settings(self.settings)

    def __repr__(self) -> str:
        # Settings may hold the API key: never print it.
        settings = redact_settings(self.settings)
        return f"{type(self).__name__}(name={self.name!r}, settings={settings!r})"

    @property
    def price_name(self) -> str:
        """The provider whose prices apply: a named instance is priced as the one it came from."""
        info = self.info
        return info.base if info is not None and info.base else self.name

    def secrets(self) -> tuple[str, ...]:
        """The configured secret values, masked literally in this provider's errors."""
        return secret_values(self.settings)

    def translating(self) -> translate.translating:
        """This provider's vendor boundary: how its SDK's errors become llmport's.

        Plugins override it to give their ``translate`` function (their
        vendor's codes) and every secret they know (keys found in the
        environment included); :func:`~llmport.provider.translate.vendor_boundary`
        applies it to the provider's methods and to its batch backend's.
        """
        return translate.translating(self.name, None, self.secrets())

    # -- capabilities and checks -------------------------------------------

    def capabilities(self, model: str) -> ModelCapabilities:
        """The capabilities of ``model`` (from the registration, else defaults); cached.

        A model the registration does not know is allowed: it gets
        its family rule's or the permissive default capabilities, and the
        first lookup on this instance (one per Runtime) warns with
        :class:`~llmport.errors.UnknownModelWarning`.
        """
        caps = self._caps.get(model)
        if caps is None:
            info = self.info
            caps = info.capabilities_for(model) if info is not None else ModelCapabilities()
            with self._caps_lock:  # two threads asking first: one warning
                first = model not in self._caps
                self._caps[model] = caps
            if first and info is not None:
                self.warn_if_unknown(info, model)
        return caps

    def warn_if_unknown(self, info: ProviderInfo, model: str) -> None:
        """Warn once that ``model`` is not in the tables (a plugin may add a hint)."""
        warn_if_unknown(info, model)

    def check(self, request: Request) -> ModelCapabilities:
        """Raise input errors for what the model cannot take; return its capabilities.

        The default checks option names, media blocks, tools, streaming and
        ``tool_choice="none"`` against the model's capabilities.
        """
        check_server_state(self, request.model, request.options)
        unknown = set(request.options) - self.options - SERVER_STATE_OPTIONS
        if unknown:
            raise unknown_option_error(unknown, self.options, f"{self.name} option")
        caps = self.capabilities(request.model)
        check_file_refs(request.messages, self.files_vendor, request.model)
        cached = False
        for t in request.tools:
            cached = cached or t.cache is not None
        for b in request.system_blocks:
            cached = cached or b.cache is not None
        for message in request.messages:
            for block in message.blocks:
                if isinstance(block, MediaBlock):
                    check_block(self.name, request.model, caps, block)
                    cached = cached or block.cache is not None
                elif isinstance(block, TextBlock):
                    cached = cached or block.cache is not None
        # Source: the capability table (ModelCapabilities.caching); each plugin's models.py names
        #   the vendor document behind it (docs/capabilities.md, "Refusals").
        if cached and not caps.caching:
            raise UnsupportedFeatureError(self.name, request.model, "prompt caching")
        # Source: the capability table (reasoning): the vendor's list of models with thinking /
        #   reasoning effort.
        if request.reasoning is not None and not caps.reasoning:
            raise UnsupportedFeatureError(self.name, request.model, "reasoning")
        for native in request.native_tools:
            # Source: the capability table (native_tool_kinds): the vendor's server-tool
            #   documentation per model.
            if native.kind not in caps.native_tool_kinds:
                raise UnsupportedFeatureError(
                    self.name, request.model, f"native tool {native.kind!r}"
                )
        # Source: the capability table (native_tools): the vendor's list of models with tool use.
        if request.tools and not caps.native_tools:
            raise UnsupportedFeatureError(self.name, request.model, "tools")
        # Source: the capability table (streaming); no shipped table sets it off.
        if request.stream and not caps.streaming:
            raise UnsupportedFeatureError(self.name, request.model, "streaming")
        # Source: the capability table (tool_choice_none); no shipped table sets it off.
        if request.tool_choice == "none" and request.tools and not caps.tool_choice_none:
            raise UnsupportedFeatureError(self.name, request.model, 'tool_choice="none"')
        return caps

    def prepare(self, request: Request) -> Prepared:
        """Check and convert ``request`` once (no I/O); the default only checks."""
        self.check(request)
        return Prepared(request)

    def count_tokens(self, request: Request) -> int:
        """Input tokens of ``request`` from the vendor's counting endpoint.

        Plugins whose capabilities say ``count_tokens=True`` implement it;
        :meth:`llmport.Runtime.count_tokens` estimates locally otherwise.
        """
        raise UnsupportedFeatureError(self.name, request.model, TOKEN_COUNTING)

    async def acount_tokens(self, request: Request) -> int:
        """Async :meth:`count_tokens`; the default runs it in a thread."""
        import asyncio

        return await asyncio.to_thread(self.count_tokens, request)

    def batch_backend(self) -> Any:
        """This provider's ``BatchBackend`` (engine.batch), or None: no batch API (batch).

        ``rt.batch`` raises :class:`~llmport.errors.UnsupportedFeatureError`
        before any request for a provider that returns None.
        """
        return None

    # -- files by reference (rt.upload, rt.delete_file, rt.files) -------------------------

    @property
    def files_vendor(self) -> str:
        """The files account this provider reads :class:`FileRef` s from (default: its name).

        Two providers of one vendor share it (``openai`` and ``openai-responses``).
        """
        return self.name

    def upload(self, block: MediaBlock, purpose: str | None = None) -> FileRef:
        """Upload ``block``'s bytes to the vendor's files API; the reference to send instead.

        ``purpose`` is the vendor's own (OpenAI ``"user_data"``, ``"assistants"``);
        None lets the plugin choose. The default (no files API) raises
        :class:`~llmport.errors.UnsupportedFeatureError` before any request.
        """
        raise UnsupportedFeatureError(self.name, "", FILES)

    async def aupload(self, block: MediaBlock, purpose: str | None = None) -> FileRef:
        """Async :meth:`upload`; the default runs it in a thread."""
        import asyncio

        return await asyncio.to_thread(self.upload, block, purpose)

    def delete_file(self, ref: FileRef) -> None:
        """Delete an uploaded file from the vendor's files API."""
        raise UnsupportedFeatureError(self.name, "", FILES)

    async def adelete_file(self, ref: FileRef) -> None:
        """Async :meth:`delete_file`; the default runs it in a thread."""
        import asyncio

        await asyncio.to_thread(self.delete_file, ref)

    def list_files(self) -> list[FileRef]:
        """The files uploaded to the vendor's files API (this key's account)."""
        raise UnsupportedFeatureError(self.name, "", FILES)

    async def alist_files(self) -> list[FileRef]:
        """Async :meth:`list_files`; the default runs it in a thread."""
        import asyncio

        return await asyncio.to_thread(self.list_files)

    def vendor_fields(self, request: Request) -> dict[str, Any]:
        """The fields ``exec(vendor={...})`` gave for this provider (merged into the body)."""
        return request.vendor.get(self.name, {})

    # -- I/O -------------------------------------------------------------------

    def send(self, prepared: Prepared) -> Response:
        """Send a prepared request and return the converted answer."""
        return self._call(prepared.request)

    async def asend(self, prepared: Prepared) -> Response:
        """Async :meth:`send`."""
        return await self._async_call(prepared.request)

    def send_stream(self, prepared: Prepared) -> Iterator[ProviderEvent]:
        """Send a prepared request and yield its events; the last is a ``StopEvent``."""
        return self._stream(prepared.request)

    def asend_stream(self, prepared: Prepared) -> AsyncIterator[ProviderEvent]:
        """Async :meth:`send_stream`."""
        return self._astream(prepared.request)

    # -- the first contract (still honoured) ------------------------------------

    def _call(self, request: Request) -> Response:
        raise NotImplementedError(f"{type(self).__name__} does not implement send or _call")

    async def _async_call(self, request: Request) -> Response:
        # Default: run the sync send in a thread, never blocking the loop.
        import asyncio

        if type(self).send is not Provider.send:
            return await asyncio.to_thread(self.send, self.prepare(request))
        return await asyncio.to_thread(self._call, request)

    def _stream(self, request: Request) -> Iterator[ProviderEvent]:
        # Default: one non-streamed call replayed as events.
        yield from response_events(self._call(request))

    async def _astream(self, request: Request) -> AsyncIterator[ProviderEvent]:
        # Default: the plugin's sync _stream, pulled in a worker thread (so an async
        # stream streams too), else one non-streamed async call replayed as events.
        if type(self)._stream is Provider._stream:
            for event in response_events(await self._async_call(request)):
                yield event
            return
        import asyncio

        events = self._stream(request)

        def pull() -> ProviderEvent | None:
            return next(events, None)

        try:
            while (pulled := await asyncio.to_thread(pull)) is not None:
                yield pulled
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                await asyncio.to_thread(_close_quietly, close)

    def close(self) -> None:
        """Release clients (optional)."""

    async def aclose(self) -> None:
        """Release the running event loop's clients (optional); default :meth:`close`."""
        self.close()


def _close_quietly(close: Callable[[], Any]) -> None:
    # A cancelled pull may still be running in its thread: the generator is then
    # closed when it is collected instead.
    with contextlib.suppress(ValueError):
        close()


def warn_if_unknown(info: ProviderInfo, model: str, hint: str = "") -> None:
    """Warn (:class:`~llmport.errors.UnknownModelWarning`) if ``info`` does not know ``model``."""
    if not info.knows(model):
        warnings.warn(UnknownModelWarning(info.prefix, model, hint), stacklevel=4)


def check_block(vendor: str, model: str, caps: ModelCapabilities, block: MediaBlock) -> None:
    """Raise UnsupportedContentError if ``caps`` rules ``block`` out.

    Text-like files are not rejected here: plugins inline them by the
    documented rule (:func:`llmport.messages.content.inline_text_file`).
    """
    if block.citations and not caps.citations:
        reason: str | None = "model returns no document citations"
    else:
        if block.type == "file" and block.media_type.startswith("image/"):
            block = _as_kind(block, "image")  # an image sent as a file is checked as an image
        reason = _refusal(caps, block)
    if reason is not None:
        raise UnsupportedContentError(vendor, model, block.describe(), reason)


def _refusal(caps: ModelCapabilities, block: MediaBlock) -> str | None:
    """Why ``caps`` rule ``block`` out (None: accepted), by the kind of content it carries."""
    if block.type == "image":
        return _image_refusal(caps, block)
    if block.type == "audio" or (block.type == "file" and block.media_type.startswith("audio/")):
        return _audio_refusal(caps, block)
    return _file_refusal(caps, block)


def _image_refusal(caps: ModelCapabilities, block: MediaBlock) -> str | None:
    mt = block.media_type
    # Source: the capability table (input_modalities, image_types, image_urls, max_image_bytes): the
    #   vendor's vision page for each model (Anthropic "Vision", OpenAI "Images and vision", Gemini
    #   "Image understanding", Bedrock "ImageBlock").
    if "image" not in caps.input_modalities:
        return "model takes no images"
    if mt != "image/*" and mt not in caps.image_types:
        return f"image type {mt} not accepted (accepted: {', '.join(sorted(caps.image_types))})"
    if block.url is not None and not caps.image_urls:
        return "image URLs not accepted"
    if caps.max_image_bytes is not None and block.size > caps.max_image_bytes:
        return f"image is {block.size} bytes, over the vendor limit of {caps.max_image_bytes}"
    return None


def _audio_refusal(caps: ModelCapabilities, block: MediaBlock) -> str | None:
    mt = block.media_type
    # Source: the capability table (audio_types): OpenAI "Audio" (input_audio wav/mp3 on audio
    #   models), Gemini "Audio understanding"; Anthropic and Converse take no audio.
    if "audio" not in caps.input_modalities:
        return "model takes no audio input"
    if mt not in caps.audio_types:
        return (
            f"audio type {mt} not accepted "
            f"(accepted: {', '.join(sorted(caps.audio_types)) or 'none'})"
        )
    return None


def _file_refusal(caps: ModelCapabilities, block: MediaBlock) -> str | None:
    from ..messages.content import is_text_like

    mt = block.media_type
    # Source: the capability table (file_types, native_text_files): Anthropic "PDF support", OpenAI
    #   "File inputs", Gemini "Document understanding", Converse "DocumentBlock" formats.
    if mt in caps.file_types:
        return None
    if is_text_like(mt):
        if block.send == "native" and mt not in caps.native_text_files:
            return (
                f'send="native": {mt} has no native document part here '
                f"(native: {', '.join(sorted(caps.native_text_files)) or 'none'})"
            )
        return None  # inlined as text by the plugin, or its native document part
    return (
        f"files of type {mt} are not accepted "
        f"(native: {', '.join(sorted(caps.file_types)) or 'none'}; "
        "text-like files are inlined)"
    )


def _as_kind(block: MediaBlock, kind: Literal["image", "audio", "file"]) -> MediaBlock:
    return replace(block, type=kind)


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class ProviderInfo:
    """How a plugin registers a provider.

    ``factory`` is called lazily with the provider's settings; importing the
    vendor SDK belongs inside it (or inside the provider), never at plugin
    import. ``models`` maps model names (or ``fnmatch`` patterns like
    ``"gpt-4o*"``) to capabilities; the first match wins, else ``default``.
    """

    prefix: str
    factory: Callable[..., Provider]
    description: str = ""
    aliases: dict[str, str] = field(default_factory=dict)
    models: dict[str, ModelCapabilities] = field(default_factory=dict)
    default: ModelCapabilities = field(default_factory=ModelCapabilities)
    plugin: str = ""
    #: Patterns of ``models`` that are family rules for ids the tables do not list
    #: (``"*anthropic.claude-*"``): a model matched only by one of them, or by none,
    #: is unknown (:meth:`knows`), and warned about once per provider instance.
    fallbacks: frozenset[str] = frozenset()
    #: For a named instance: the prefix of the provider it was made from.
    base: str = ""

    def knows(self, model: str) -> bool:
        """True if a pattern other than a fallback family rule matches ``model``.

        A registration with no model table (scripted and echo providers, most
        third-party plugins) has no table to miss: it knows every model.
        """
        from fnmatch import fnmatchcase

        if not self.models:
            return True
        if model in self.models:
            return model not in self.fallbacks
        for pattern in self.models:
            if fnmatchcase(model, pattern):
                return pattern not in self.fallbacks
        return False

    def capabilities_for(self, model: str) -> ModelCapabilities:
        from fnmatch import fnmatchcase

        if model in self.models:
            return self.models[model]
        for pattern, caps in self.models.items():
            if fnmatchcase(model, pattern):
                return caps
        return self.default

    def create(self, settings: Mapping[str, Any]) -> Provider:
        provider = self.factory(settings=dict(settings), info=self)
        return provider


# ---------------------------------------------------------------------------
# Stream assembly: one implementation for every vendor
# ---------------------------------------------------------------------------


class StreamAssembler:
    """Builds a :class:`Response` from provider events.

    Content blocks keep their stream order: consecutive text deltas of one
    ``key`` form one text block (citations attach to the current one; a new
    key, or a tool call between them, starts a new block, as the vendor's whole
    answer has), thinking deltas are joined per ``key``, server-tool events are
    whole blocks. Tool-call fragments are joined per ``key`` (vendor index or
    id) in the order calls first appeared; each call keeps its place among the
    blocks (``ToolCall.position``).
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
            if slot is None:  # its position: the content blocks begun before it (SPEC §21)
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

    def _feed_rich(self, event: ThinkingDelta | CitationEvent | ServerToolEvent) -> None:
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
    """Parse tool-call arguments; invalid JSON yields ``{}`` (raw text is kept)."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
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


def check_server_state(provider: Provider, model: str, options: Mapping[str, Any]) -> None:
    """Refuse ``previous_response_id=`` / ``conversation=`` where the vendor keeps no state."""
    stated = sorted(k for k in SERVER_STATE_OPTIONS & set(options) if options[k] is not None)
    if stated and not provider.server_state:
        raise UnsupportedFeatureError(
            provider.name,
            model,
            f"server-side conversation state ({', '.join(stated)}=)",
            "only OpenAI Responses (openai-responses:) keeps conversations on its server",
        )
