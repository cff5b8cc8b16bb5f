"""Everything a plugin author needs, in one import.

Users import from :mod:`llmport`; plugin authors from here; the error tree
is drawn in :mod:`llmport.errors`. A provider plugin is a module with a
``@hookimpl`` of ``llmport_providers`` that registers a :class:`ProviderInfo`
whose factory builds a :class:`Provider` subclass on first use::

    from llmport.plugin_api import Prepared, Provider, ProviderInfo, Response, Usage, hookimpl

    class EchoProvider(Provider):
        name = "echo"

        def prepare(self, request):          # once per model request: check, convert
            self.check(request)
            return Prepared(request, payload=request.messages[-1].text)

        def send(self, prepared):            # I/O and the answer, per attempt
            return Response(text=prepared.payload, usage=Usage(requests=1))

    @hookimpl
    def llmport_providers(register):
        register(ProviderInfo(prefix="echo", factory=EchoProvider))

Decorate every method that reaches the vendor with :func:`vendor_boundary`
(it translates through the provider's ``translating()``: typed errors, no
vendor exception chained, configured keys masked), read 2xx answers with
:func:`answer_field`, keep clients in a :class:`ClientCache`
(one async client per event loop), classify HTTP statuses with
:func:`status_error`.
"""

from __future__ import annotations

from .controls.options import STANDARD_OPTIONS
from .controls.retry import retry_after_from_details, retry_after_from_headers
from .engine.jobs.background import BackgroundBackend, Polled
from .engine.jobs.batch import (
    BatchBackend,
    BatchError,
    BatchItem,
    BatchOutcome,
    BatchState,
    BatchStatus,
)
from .engine.jobs.job import JobState, JobStatus
from .errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    MalformedResponseError,
    NotFoundError,
    OptionError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    SchemaError,
    UnsupportedContentError,
    UnsupportedFeatureError,
)
from .messages.content import inline_text_file, is_text_like
from .messages.embeddings import EmbedRequest, EmbedResponse
from .messages.images import ImageRequest, ImageResponse
from .messages.types import (
    Block,
    ImageGeneration,
    ImagePrice,
    ImagePricing,
    MediaBlock,
    MediaDelta,
    Message,
    ModelCapabilities,
    ProviderEvent,
    Request,
    Response,
    ResponseFormat,
    StopEvent,
    StopReason,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolResult,
    ToolSpec,
    Usage,
    UsageEvent,
)
from .observe.redaction import redact, register_secret
from .output.structured import drop_keywords, inline_refs, make_output_tool, schema_tool
from .plugins.hookspecs import hookimpl
from .provider.assembly import StreamAssembler, assemble, parse_arguments, response_events
from .provider.chunks import ChunkReader, reads_chunks
from .provider.clients import ClientCache
from .provider.contract import Prepared, PreparedEmbed, Provider, ProviderInfo
from .provider.imaging import PreparedImage, answered_image, aspect_ratio, check_image
from .provider.media import answered_media, check_block
from .provider.recorded import CassetteReader, RecordedExchange, ShownExchange, recorded_bytes
from .provider.tool_media import file_label, move_answer_media, move_tool_media
from .provider.translate import (
    answer_field,
    malformed,
    status_error,
    translating,
    transport_error,
    vendor_boundary,
)
from .schema.transform import JsonSchemaTransformer, SchemaSubsetError

__all__ = [
    "STANDARD_OPTIONS",
    "AuthenticationError",
    "BackgroundBackend",
    "BadRequestError",
    "BatchBackend",
    "BatchError",
    "BatchItem",
    "BatchOutcome",
    "BatchState",
    "BatchStatus",
    "Block",
    "CassetteReader",
    "ChunkReader",
    "ClientCache",
    "ConfigError",
    "EmbedRequest",
    "EmbedResponse",
    "ImageGeneration",
    "ImagePrice",
    "ImagePricing",
    "ImageRequest",
    "ImageResponse",
    "JobState",
    "JobStatus",
    "JsonSchemaTransformer",
    "MalformedResponseError",
    "MediaBlock",
    "MediaDelta",
    "Message",
    "ModelCapabilities",
    "NotFoundError",
    "OptionError",
    "OverloadedError",
    "PermissionDeniedError",
    "Polled",
    "Prepared",
    "PreparedEmbed",
    "PreparedImage",
    "Provider",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderEvent",
    "ProviderInfo",
    "ProviderTimeoutError",
    "RateLimitError",
    "RecordedExchange",
    "Request",
    "Response",
    "ResponseFormat",
    "SchemaError",
    "SchemaSubsetError",
    "ShownExchange",
    "StopEvent",
    "StopReason",
    "StreamAssembler",
    "TextBlock",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "ToolResult",
    "ToolSpec",
    "UnsupportedContentError",
    "UnsupportedFeatureError",
    "Usage",
    "UsageEvent",
    "answer_field",
    "answered_image",
    "answered_media",
    "aspect_ratio",
    "assemble",
    "check_block",
    "check_image",
    "drop_keywords",
    "file_label",
    "hookimpl",
    "inline_refs",
    "inline_text_file",
    "is_text_like",
    "make_output_tool",
    "malformed",
    "move_answer_media",
    "move_tool_media",
    "parse_arguments",
    "reads_chunks",
    "recorded_bytes",
    "redact",
    "register_secret",
    "response_events",
    "retry_after_from_details",
    "retry_after_from_headers",
    "schema_tool",
    "status_error",
    "translating",
    "transport_error",
    "vendor_boundary",
]
