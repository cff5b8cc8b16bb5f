"""The provider contract every vendor plugin implements.

A provider converts a neutral :class:`~llmport.types.Request` to its
vendor's format, sends it, and converts the answer back to a
:class:`~llmport.types.Response`. It raises llmport's typed
:class:`~llmport.errors.ProviderError` subclasses (classified transient or
permanent, with ``retry_after`` when the vendor said one) and never retries
on its own: llmport is the one retry layer.

Plugins register a :class:`ProviderInfo` through the ``llmport_providers``
hook; the provider class itself is created lazily (on first use), so no
vendor SDK is imported by ``import llmport``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import UnsupportedContentError, UnsupportedFeatureError, redact_settings
from .types import (
    MediaBlock,
    ModelCapabilities,
    ProviderEvent,
    Request,
    Response,
    StopEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    UsageEvent,
)

#: Options every plugin must honour or reject explicitly.
STANDARD_OPTIONS = frozenset(
    {"temperature", "max_tokens", "timeout", "stop", "seed", "reasoning_effort", "top_p"}
)


class Provider:
    """Base class of vendor providers.

    Subclasses set ``name`` and implement ``_call`` / ``_async_call`` and,
    for streaming, ``_stream`` / ``_astream`` (which yield
    :data:`~llmport.types.ProviderEvent` objects; the core assembles them).
    ``settings`` are the provider's own settings (``api_key``, ``base_url``,
    ...) from configuration and the runtime.
    """

    name: str = "provider"

    def __init__(self, settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None):
        self.settings: dict[str, Any] = dict(settings or {})
        self.info = info

    def __repr__(self) -> str:
        # Settings may hold the API key: never print it.
        settings = redact_settings(self.settings)
        return f"{type(self).__name__}(name={self.name!r}, settings={settings!r})"

    # -- capabilities and checks -------------------------------------------

    def capabilities(self, model: str) -> ModelCapabilities:
        """The capabilities of ``model`` (from the registration, else defaults)."""
        if self.info is not None:
            return self.info.capabilities_for(model)
        return ModelCapabilities()

    def prepare(self, request: Request) -> None:
        """Check a request before it is sent; raise input errors here.

        The default checks media blocks against the model's capabilities.
        Plugins extend it (``super().prepare(request)``) with vendor rules.
        """
        caps = self.capabilities(request.model)
        for message in request.messages:
            for block in message.blocks:
                if isinstance(block, MediaBlock):
                    check_block(self.name, request.model, caps, block)
        if request.tools and not caps.native_tools:
            raise UnsupportedFeatureError(self.name, request.model, "tools")
        if request.stream and not caps.streaming:
            raise UnsupportedFeatureError(self.name, request.model, "streaming")
        if request.tool_choice == "none" and request.tools and not caps.tool_choice_none:
            raise UnsupportedFeatureError(self.name, request.model, 'tool_choice="none"')

    # -- calls ---------------------------------------------------------------

    def _call(self, request: Request) -> Response:
        raise NotImplementedError(f"{type(self).__name__} does not implement _call")

    async def _async_call(self, request: Request) -> Response:
        # Default: run the sync call in a thread, never blocking the loop.
        import asyncio

        return await asyncio.to_thread(self._call, request)

    def _stream(self, request: Request) -> Iterator[ProviderEvent]:
        # Default: one non-streamed call replayed as events.
        yield from response_events(self._call(request))

    async def _astream(self, request: Request) -> AsyncIterator[ProviderEvent]:
        for event in response_events(await self._async_call(request)):
            yield event

    def close(self) -> None:
        """Release clients (optional)."""


def check_block(vendor: str, model: str, caps: ModelCapabilities, block: MediaBlock) -> None:
    """Raise UnsupportedContentError if ``caps`` rules ``block`` out.

    Text-like files are not rejected here: plugins inline them by the
    documented rule (:func:`llmport.content.inline_text_file`).
    """
    from .content import is_text_like

    mt = block.media_type
    if block.type == "image":
        if "image" not in caps.input_modalities:
            raise UnsupportedContentError(vendor, model, block.describe(), "model takes no images")
        if mt != "image/*" and mt not in caps.image_types:
            raise UnsupportedContentError(
                vendor,
                model,
                block.describe(),
                f"image type {mt} not accepted (accepted: {', '.join(sorted(caps.image_types))})",
            )
        if block.url is not None and not caps.image_urls:
            raise UnsupportedContentError(
                vendor, model, block.describe(), "image URLs not accepted"
            )
        if caps.max_image_bytes is not None and block.size > caps.max_image_bytes:
            raise UnsupportedContentError(
                vendor,
                model,
                block.describe(),
                f"image is {block.size} bytes, over the vendor limit of {caps.max_image_bytes}",
            )
    elif block.type == "audio" or (block.type == "file" and mt.startswith("audio/")):
        if "audio" not in caps.input_modalities:
            raise UnsupportedContentError(
                vendor, model, block.describe(), "model takes no audio input"
            )
        if mt not in caps.audio_types:
            raise UnsupportedContentError(
                vendor,
                model,
                block.describe(),
                f"audio type {mt} not accepted "
                f"(accepted: {', '.join(sorted(caps.audio_types)) or 'none'})",
            )
    else:
        if mt.startswith("image/"):
            return check_block(vendor, model, caps, _as_kind(block, "image"))
        if mt in caps.file_types:
            return
        if is_text_like(mt):
            return  # inlined as text by the plugin
        raise UnsupportedContentError(
            vendor,
            model,
            block.describe(),
            f"files of type {mt} are not accepted "
            f"(native: {', '.join(sorted(caps.file_types)) or 'none'}; "
            "text-like files are inlined)",
        )


def _as_kind(block: MediaBlock, kind: str) -> MediaBlock:
    return MediaBlock(kind, block.media_type, block.data, block.url, block.filename, block.index)  # type: ignore[arg-type]


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

    Tool-call fragments are joined per ``key`` (vendor index or id) in the
    order calls first appeared.
    """

    def __init__(self) -> None:
        self.text_parts: list[str] = []
        self.calls: dict[str | int, dict[str, Any]] = {}
        self.usage = Usage()
        self.stop: StopEvent | None = None
        self._usage_seen = False

    def feed(self, event: ProviderEvent) -> None:
        if isinstance(event, TextDelta):
            self.text_parts.append(event.text)
        elif isinstance(event, ToolCallDelta):
            slot = self.calls.setdefault(
                event.key, {"id": None, "name": None, "args": [], "extra": {}}
            )
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

    def tool_call(self, key: str | int) -> ToolCall:
        slot = self.calls[key]
        raw = "".join(slot["args"])
        return ToolCall(
            id=slot["id"] or f"call_{key}",
            name=slot["name"] or "",
            arguments=parse_arguments(raw),
            raw_arguments=raw,
            extra=slot["extra"],
        )

    def response(self) -> Response:
        from .errors import MalformedResponseError

        if self.stop is None:
            raise MalformedResponseError(
                "stream ended before the response was complete", retryable=True
            )
        calls = [self.tool_call(k) for k in self.calls]
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
    """A non-streamed response as a sequence of provider events."""
    if response.text:
        yield TextDelta(response.text)
    for i, call in enumerate(response.tool_calls):
        yield ToolCallDelta(
            key=i,
            id=call.id,
            name=call.name,
            arguments=call.raw_arguments or json.dumps(call.arguments),
            extra=call.extra,
        )
    yield UsageEvent(response.usage)
    yield StopEvent(
        response.stop_reason,
        response.raw_stop_reason,
        response.model,
        response.id,
        dict(response.extra),
    )


def assemble(events: Iterable[ProviderEvent]) -> Response:
    """Assemble a complete list of provider events into a Response."""
    asm = StreamAssembler()
    for event in events:
        asm.feed(event)
    return asm.response()
