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
the provider's :meth:`Provider.translating`: only typed llmport errors
leave it, with no vendor exception chained.

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
import threading
import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import field, replace
from typing import Any, ClassVar

from ..controls.options import SERVER_STATE_OPTIONS, STANDARD_OPTIONS, unknown_option_error
from ..errors import UnknownModelWarning, UnsupportedFeatureError
from ..messages.check import check_file_refs
from ..messages.embeddings import EmbedRequest, EmbedResponse
from ..messages.images import ImageRequest, ImageResponse
from ..messages.types import (
    FileRef,
    MediaBlock,
    ModelCapabilities,
    ProviderEvent,
    Request,
    Response,
    TextBlock,
)
from ..observe.redaction import redact_settings, register_settings, secret_values
from ..slotted import dataclass
from . import embedding, imaging, translate
from .assembly import response_events
from .chunks import ChunkReader
from .embedding import PreparedEmbed
from .imaging import PreparedImage
from .keys import environment_key, reads_environment_keys
from .media import check_block

__all__ = [
    "FILES",
    "STANDARD_OPTIONS",
    "TOKEN_COUNTING",
    "Prepared",
    "PreparedEmbed",
    "Provider",
    "ProviderInfo",
    "check_server_state",
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


class Provider(ChunkReader):
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
    #: The methods that read a vendor's stream (guarded as every reader's: ChunkReader).
    reads: ClassVar[tuple[str, ...]] = ("_read_stream", "_aread_stream")
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
    #: Why this vendor has no embeddings and where its documentation points instead
    #: (the reason of the :class:`UnsupportedFeatureError` ``rt.embed`` raises).
    embeddings_hint: str = ""
    #: Why this vendor has no image endpoint and where to go instead (the reason of the
    #: :class:`UnsupportedFeatureError` ``rt.generate_image`` raises).
    images_hint: str = ""

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

    @property
    def own_endpoint(self) -> bool:
        """True for a named instance whose requests go to an endpoint of its own.

        Such an instance never reads its vendor's key variables (:mod:`.keys`).
        """
        instance_of = self.info.base if self.info is not None else ""
        return not reads_environment_keys(instance_of, self.settings)

    def environment_key(self, *variables: str) -> str | None:
        """The first of ``variables`` set in the environment, unless :attr:`own_endpoint`.

        How a plugin reads its vendor's key variables: the vendor's key goes
        only to the host the vendor documents (:mod:`llmport.provider.keys`).
        """
        instance_of = self.info.base if self.info is not None else ""
        return environment_key(instance_of, self.settings, *variables)

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
        cached = request.cache is not None  # cache=True / "auto" / a dict asks for caching
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
            # A tool's media reach the model inside its result or in a following user turn
            # (provider/tool_media.py): either way the model must take that medium.
            for result in message.tool_results:
                for block in result.blocks:
                    if isinstance(block, MediaBlock):
                        check_block(self.name, request.model, caps, block)
        # Source: each vendor's prompt caching page (supported models): the capability table's
        #   caching column (docs/capabilities.md, "Refusals").
        if cached and not caps.caching:
            raise UnsupportedFeatureError(self.name, request.model, "prompt caching")
        # Source: each vendor's list of thinking / reasoning models (the capability table's
        #   reasoning column).
        if request.reasoning is not None and not caps.reasoning:
            raise UnsupportedFeatureError(self.name, request.model, "reasoning")
        for native in request.native_tools:
            # Source: each vendor's server-tool pages: the models each server tool takes (the
            #   capability table's native_tool_kinds).
            if native.kind not in caps.native_tool_kinds:
                raise UnsupportedFeatureError(
                    self.name, request.model, f"native tool {native.kind!r}"
                )
        # Source: each vendor's list of models with tool use (the capability table's native_tools).
        if request.tools and not caps.native_tools:
            raise UnsupportedFeatureError(self.name, request.model, "tools")
        # Source: Gemini API, "Image generation": the models that answer with images (the
        #   capability table's output_modalities); every other model answers with text.
        beyond = [m for m in request.output_modalities if m not in caps.output_modalities]
        if beyond:
            raise UnsupportedFeatureError(
                self.name,
                request.model,
                f"output_modalities {beyond}",
                f"this model answers with {', '.join(sorted(caps.output_modalities))} only",
            )
        # llmport's own: a plugin's table may set streaming off (no shipped table does).
        if request.stream and not caps.streaming:
            raise UnsupportedFeatureError(self.name, request.model, "streaming")
        # llmport's own: a plugin's table may set tool_choice_none off (no shipped table does).
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
        """This provider's ``BatchBackend`` (engine.jobs.batch), or None: no batch API (batch).

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

    def with_tool_fields_of(self, request: Request, api: str) -> Request:
        """``request`` with each tool's ``vendor={self.name: ...}`` fields read as ``api``'s.

        A provider serving another's API (``anthropic-vertex``: the Messages API) takes
        ``Tool(vendor={"anthropic": ...})`` and, over them, its own name's, as it takes
        ``exec(vendor=...)``.
        """
        if not any(self.name in spec.vendor for spec in request.tools):
            return request
        tools = [
            replace(spec, vendor={**spec.vendor, api: {**spec.vendor.get(api, {}), **own}})
            if (own := spec.vendor.get(self.name)) is not None
            else spec
            for spec in request.tools
        ]
        return replace(request, tools=tools)

    # -- I/O -------------------------------------------------------------------

    def send(self, prepared: Prepared) -> Response:
        """Send a prepared request and return the converted answer."""
        return self._call(prepared.request)

    async def asend(self, prepared: Prepared) -> Response:
        """Async :meth:`send`."""
        return await self._async_call(prepared.request)

    def send_stream(self, prepared: Prepared) -> Iterator[ProviderEvent]:
        """Send a prepared request and yield its events; the last is a ``StopEvent``."""
        return self._read_stream(prepared.request)

    def asend_stream(self, prepared: Prepared) -> AsyncIterator[ProviderEvent]:
        """Async :meth:`send_stream`."""
        return self._aread_stream(prepared.request)

    # A plugin written against _stream / _astream reads its vendor's chunks itself: what it
    # yields is checked here (events of the wrong types, shape errors while it reads are a
    # MalformedResponseError), as every stream reader's are (these two are in ``reads``).
    def _read_stream(self, request: Request) -> Iterator[ProviderEvent]:
        yield from self._stream(request)

    async def _aread_stream(self, request: Request) -> AsyncIterator[ProviderEvent]:
        async for event in self._astream(request):
            yield event

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

    # -- embeddings (llmport.provider.embedding owns the logic) ---------------------

    def prepare_embed(self, request: EmbedRequest) -> PreparedEmbed:
        """Check one embed request and build the vendor body once (no I/O).

        The default only checks (:func:`~llmport.provider.embedding.check_embed`):
        the plain style's ``_embed`` converts on every attempt.
        """
        checked = embedding.check_embed(self, request)
        return PreparedEmbed(checked, caps=self.capabilities(request.model))

    @translate.vendor_boundary
    def send_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        """Send a prepared embed request; the vectors in request order."""
        return self._embed(prepared.request)

    @translate.vendor_boundary
    async def asend_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        """Async :meth:`send_embed`; the default runs a sync-only ``send_embed`` in a thread."""
        if type(self).send_embed is not Provider.send_embed:
            import asyncio

            return await asyncio.to_thread(self.send_embed, prepared)
        return await self._async_embed(prepared.request)

    @property
    def implements_embed(self) -> bool:
        """True if this class embeds in either style (overrides ``_embed`` or ``send_embed``)."""
        cls = type(self)
        return cls._embed is not Provider._embed or cls.send_embed is not Provider.send_embed

    def _embed(self, request: EmbedRequest) -> EmbedResponse:
        raise embedding.no_embeddings(self, request.model)

    async def _async_embed(self, request: EmbedRequest) -> EmbedResponse:
        # Default: the sync path in a worker thread, never blocking the loop.
        import asyncio

        return await asyncio.to_thread(self._embed, request)

    # -- image generation (llmport.provider.imaging owns the logic) -----------------

    def prepare_image(self, request: ImageRequest) -> PreparedImage:
        """Check one image request and build the vendor body once (no I/O).

        The default only checks (:func:`~llmport.provider.imaging.check_image`):
        the plain style's ``_generate_image`` converts on every attempt.
        """
        checked = imaging.check_image(self, request)
        return PreparedImage(checked, limits=self.capabilities(request.model).images)

    @translate.vendor_boundary
    def send_image(self, prepared: PreparedImage) -> ImageResponse:
        """Send a prepared image request; the images, checked by the plugin."""
        return self._generate_image(prepared.request)

    @translate.vendor_boundary
    async def asend_image(self, prepared: PreparedImage) -> ImageResponse:
        """Async :meth:`send_image`; the default runs a sync-only ``send_image`` in a thread."""
        if type(self).send_image is not Provider.send_image:
            import asyncio

            return await asyncio.to_thread(self.send_image, prepared)
        return await self._async_generate_image(prepared.request)

    @property
    def implements_images(self) -> bool:
        """True if this class generates images in either style."""
        cls = type(self)
        plain = cls._generate_image is not Provider._generate_image
        return plain or cls.send_image is not Provider.send_image

    def _generate_image(self, request: ImageRequest) -> ImageResponse:
        raise imaging.no_images(self, request.model)

    async def _async_generate_image(self, request: ImageRequest) -> ImageResponse:
        # Default: the sync path in a worker thread, never blocking the loop.
        import asyncio

        return await asyncio.to_thread(self._generate_image, request)

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
