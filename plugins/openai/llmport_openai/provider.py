"""The OpenAI providers: Chat Completions (``openai:``) and Responses (``openai-responses:``).

Settings (``Runtime(providers={"openai": {...}})``, ``[providers.openai]`` in
``llmport.toml``, or the environment):

* ``api_key`` — default ``OPENAI_API_KEY`` (Azure: ``AZURE_OPENAI_API_KEY``);
  optional when ``base_url`` points at a local server that needs none.
* ``base_url`` — default ``OPENAI_BASE_URL``; any OpenAI-compatible server
  (Ollama ``http://localhost:11434/v1``, vLLM ``http://host:8000/v1``).
* ``organization``, ``project``, ``timeout`` (seconds), ``default_headers``.
* Azure OpenAI: ``azure_endpoint`` (or ``azure=True`` with
  ``AZURE_OPENAI_ENDPOINT``), ``api_version`` (or ``OPENAI_API_VERSION``),
  ``azure_deployment``, ``azure_ad_token``.
* ``max_tokens_field`` — the body field ``max_tokens`` becomes in Chat
  Completions: ``"max_completion_tokens"`` (default, what OpenAI wants) or
  ``"max_tokens"`` for older OpenAI-compatible servers.

:meth:`prepare` checks and converts a request once (:mod:`.convert_in`);
the ``send`` methods only call the SDK and convert the answer back
(:mod:`.convert_out`), so a retry resends the same :class:`OpenAIPrepared`.
The request body is serialized once, to bytes, by :mod:`llmport.provider.wire` (media
spliced in as the blocks' cached base64 bytes) and posted with the client's
low-level ``post``: the SDK's request-argument machinery (``maybe_transform``,
its own ``json.dumps``) is skipped, while its headers, auth, URL (Azure
deployments included), timeouts and errors stay the SDK's. A non-streamed
answer comes back as the raw HTTP response, its JSON parsed once into neutral
types (no SDK response model is built); a stream's events come from the
SDK's SSE decoder as their parsed JSON (no event models either).
Clients come from a :class:`~llmport.provider.clients.ClientCache` (one async client
per event loop), created on first use with ``max_retries=0``: llmport is the
one retry layer. The ``openai`` SDK is imported then, never before. Keys
never appear in ``repr()``, error messages or tracebacks.
"""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from llmport.controls.options import SERVER_STATE_OPTIONS
from llmport.errors import ConfigError, ProviderError
from llmport.messages.embeddings import EmbedRequest, EmbedResponse
from llmport.messages.images import ImageRequest, ImageResponse
from llmport.messages.types import (
    FileRef,
    MediaBlock,
    Message,
    ModelCapabilities,
    ProviderEvent,
    Request,
    Response,
)
from llmport.observe.redaction import register_secret
from llmport.provider.clients import ClientCache, async_transport
from llmport.provider.contract import Prepared, PreparedEmbed, Provider, ProviderInfo
from llmport.provider.files import aall_pages, all_pages
from llmport.provider.imaging import PreparedImage
from llmport.provider.translate import answer_field, translating, vendor_boundary
from llmport.provider.wire import Body, loads
from llmport.provider.wire import encode as encode_body

from . import convert_in, convert_out, files, sdk_internals
from .batch import OpenAIBatch
from .embed import embed_answer, embed_body
from .errors import translate
from .images import image_answer, image_body
from .state import Conversations, split_state

KNOWN_SETTINGS = frozenset(
    {
        "api_key",
        "base_url",
        "organization",
        "project",
        "timeout",
        "default_headers",
        "azure",
        "azure_endpoint",
        "api_version",
        "azure_deployment",
        "azure_ad_token",
        "max_tokens_field",
        "async_transport",
    }
)
_PLACEHOLDER_KEY = (
    "unused"  # local OpenAI-compatible servers ignore the key, the SDK insists on one
)


@dataclass(slots=True)
class OpenAIPrepared(Prepared):
    """A request converted once: ``payload`` (the SDK arguments), and the same streamed.

    ``restore`` is the caller's schema when strict mode's added nulls must be
    removed from the reply (:func:`convert_in.restore_schema`).
    """

    stream_payload: dict[str, Any] = field(default_factory=dict)
    restore: dict[str, Any] | None = None
    #: The JSON body serialized on the first send and its request options, of ``payload``
    #: (``wire``) and ``stream_payload`` (``stream_wire``): every attempt posts the same
    #: bytes. Set by the provider, never by prepare; no dict held per request.
    wire: tuple[Body, dict[str, Any]] | None = field(default=None, repr=False, compare=False)
    stream_wire: tuple[Body, dict[str, Any]] | None = field(default=None, repr=False, compare=False)


class _EventConverter(Protocol):
    def feed(self, item: Any) -> Iterator[ProviderEvent]: ...
    def end(self) -> Iterator[ProviderEvent]: ...


class _OpenAIProvider(Provider):
    """Settings, clients and the four ``send`` methods, shared by both APIs."""

    name = "openai"
    options = convert_in.KNOWN_OPTIONS
    #: ``vendor={...}`` keys whose fields apply to this provider, merged in this order.
    vendor_keys: tuple[str, ...] = ("openai",)
    #: The body field holding the conversation.
    conversation = "messages"
    #: ``stream_options`` a streamed request carries (vendor fields merge over them).
    stream_options: dict[str, Any] | None = None

    def __init__(
        self, settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None
    ) -> None:
        super().__init__(settings, info)
        unknown = set(self.settings) - KNOWN_SETTINGS
        if unknown:
            raise ConfigError(
                f"unknown {self.name} setting(s): {', '.join(sorted(unknown))} "
                f"(known: {', '.join(sorted(KNOWN_SETTINGS))})"
            )
        max_field = self.settings.get("max_tokens_field", "max_completion_tokens")
        if max_field not in ("max_completion_tokens", "max_tokens"):
            raise ConfigError("max_tokens_field must be 'max_completion_tokens' or 'max_tokens'")
        self.max_tokens_field: str = max_field
        if self.name not in self.vendor_keys:  # a named instance: vendor={"groq": ...}
            self.vendor_keys = (*self.vendor_keys, self.name)
        self._secrets: tuple[str, ...] = self.secrets()
        self.clients: ClientCache[Any, Any] = ClientCache(
            functools.partial(self._make_client, False), functools.partial(self._make_client, True)
        )

    def __repr__(self) -> str:
        where = self.settings.get("azure_endpoint") or self.settings.get("base_url") or "default"
        key = "set" if self.settings.get("api_key") else "from environment"
        return f"{type(self).__name__}(endpoint={where!r}, api_key=<{key}>)"

    def vendor_fields(self, request: Request) -> dict[str, Any]:
        """``exec(vendor=...)`` fields for this provider: each of :attr:`vendor_keys`, merged."""
        return convert_in.vendor_fields(request.vendor, self.vendor_keys)

    # -- clients -------------------------------------------------------------------

    @property
    def is_azure(self) -> bool:
        s = self.settings
        return bool(s.get("azure") or s.get("azure_endpoint") or s.get("azure_deployment"))

    def client_options(self) -> dict[str, Any]:
        """Constructor arguments for the SDK client (shared by sync and async)."""
        s = self.settings
        options: dict[str, Any] = {"max_retries": 0}
        for name in ("organization", "project", "timeout", "default_headers"):
            if s.get(name) is not None:
                options[name] = s[name]
        if self.is_azure:
            endpoint = s.get("azure_endpoint") or os.environ.get("AZURE_OPENAI_ENDPOINT")
            version = s.get("api_version") or os.environ.get("OPENAI_API_VERSION")
            if not endpoint:
                raise ConfigError("Azure OpenAI needs azure_endpoint (or AZURE_OPENAI_ENDPOINT)")
            if not version:
                raise ConfigError("Azure OpenAI needs api_version (or OPENAI_API_VERSION)")
            options.update(azure_endpoint=endpoint, api_version=version)
            if s.get("azure_deployment"):
                options["azure_deployment"] = s["azure_deployment"]
            if s.get("azure_ad_token"):
                options["azure_ad_token"] = s["azure_ad_token"]
                return options
            azure_key = s.get("api_key") or os.environ.get("AZURE_OPENAI_API_KEY")
            if not azure_key:
                raise ConfigError(
                    "no Azure OpenAI key: set AZURE_OPENAI_API_KEY, or api_key / azure_ad_token"
                )
            options["api_key"] = azure_key
            return options
        base_url, key = self.endpoint()
        if base_url:
            options["base_url"] = base_url
        options["api_key"] = key
        return options

    def endpoint(self) -> tuple[str | None, str]:
        """``(base URL or None for OpenAI's, the key)``.

        A named instance never reads ``OPENAI_API_KEY`` or
        ``OPENAI_BASE_URL``: OpenAI's key must not go to another service.
        """
        s = self.settings
        own = self.info is None or not self.info.base
        base_url = s.get("base_url") or (os.environ.get("OPENAI_BASE_URL") if own else None)
        key = s.get("api_key") or (os.environ.get("OPENAI_API_KEY") if own else None)
        if key:
            return base_url, key
        if not base_url:
            where = "OPENAI_API_KEY or the api_key setting" if own else "api_key_env or api_key"
            raise ConfigError(
                f"no {self.name} API key: set {where} (a local server given as base_url needs none)"
            )
        return base_url, _PLACEHOLDER_KEY

    def _make_client(self, is_async: bool) -> Any:
        import openai

        options = self.client_options()
        key = options.get("api_key")
        if key and key != _PLACEHOLDER_KEY and key not in self._secrets:
            # Masked literally in this provider's errors, and in every log record.
            register_secret(key)
            self._secrets = (*self._secrets, key)
        if is_async and async_transport(self.settings) == "aiohttp":
            # Measured 3-4x faster than the default httpx pool at 500 concurrent calls.
            options["http_client"] = openai.DefaultAioHttpClient()
        if self.is_azure:
            return (openai.AsyncAzureOpenAI if is_async else openai.AzureOpenAI)(**options)
        return (openai.AsyncOpenAI if is_async else openai.OpenAI)(**options)

    def translating(self) -> translating:
        """OpenAI's error codes, and every key this provider has used, masked."""
        return translating(self.name, self.translate_error, self._secrets)

    def translate_error(self, exc: BaseException) -> ProviderError | None:
        """The llmport error for an SDK exception (:mod:`.errors`), else None."""
        return translate(exc, self.name)

    def batch_backend(self) -> Any:
        """OpenAI batches (:mod:`llmport_openai.batch`)."""
        url = "/v1/responses" if self.conversation == "input" else "/v1/chat/completions"
        return OpenAIBatch(self, self.clients, url)

    # -- files by reference (llmport_openai.files) ---------------------------------------

    @property
    def files_vendor(self) -> str:
        """Both OpenAI APIs read the same files; a named OpenAI-compatible service its own."""
        return "openai" if self.name in ("openai", "openai-responses") else self.name

    @vendor_boundary
    def upload(self, block: MediaBlock, purpose: str | None = None) -> FileRef:
        args = files.upload_args(block, purpose, self.name)
        answer = self.clients.sync().files.create(**args)
        return files.file_ref(answer, self.files_vendor, block.media_type)

    @vendor_boundary
    async def aupload(self, block: MediaBlock, purpose: str | None = None) -> FileRef:
        args = files.upload_args(block, purpose, self.name)
        answer = await (await self.clients.aclient()).files.create(**args)
        return files.file_ref(answer, self.files_vendor, block.media_type)

    @vendor_boundary
    def delete_file(self, ref: FileRef) -> None:
        files.deleted(self.clients.sync().files.delete(ref.id), self.name)

    @vendor_boundary
    async def adelete_file(self, ref: FileRef) -> None:
        files.deleted(await (await self.clients.aclient()).files.delete(ref.id), self.name)

    @vendor_boundary
    def list_files(self) -> list[FileRef]:
        page = self.clients.sync().files.list()
        refs = functools.partial(files.file_refs, vendor=self.files_vendor)
        return all_pages(page, refs, self.name)

    @vendor_boundary
    async def alist_files(self) -> list[FileRef]:
        page = await (await self.clients.aclient()).files.list()
        refs = functools.partial(files.file_refs, vendor=self.files_vendor)
        return await aall_pages(page, refs, self.name)

    def close(self) -> None:
        self.clients.close()

    async def aclose(self) -> None:
        await self.clients.aclose()

    # -- prepare (once per model request) -----------------------------------------------

    def prepare(self, request: Request) -> OpenAIPrepared:
        """Check and convert ``request`` once; raise typed input errors, send nothing."""
        caps = self.check(request)
        body, call = self.body(request, caps)
        # Only the form the run will send: a streamed request sends stream_payload.
        if request.stream:
            payload: dict[str, Any] = {}
            streamed = convert_in.sdk_kwargs(
                body,
                call,
                conversation=self.conversation,
                stream=True,
                stream_options=self.stream_options,
            )
        else:
            payload = convert_in.sdk_kwargs(body, call, conversation=self.conversation)
            streamed = {}
        return OpenAIPrepared(request, payload, streamed, convert_in.restore_schema(request))

    def body(
        self, request: Request, caps: ModelCapabilities
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(JSON body, SDK call arguments)`` for ``request`` (the API's converter)."""
        raise NotImplementedError

    # -- I/O ---------------------------------------------------------------------

    def response(self, answer: Any, prepared: OpenAIPrepared) -> Response:
        """The answer's parsed JSON body as a Response."""
        raise NotImplementedError

    def converter(self, prepared: OpenAIPrepared) -> _EventConverter:
        raise NotImplementedError

    #: The API's path, relative to the client's base URL.
    path = "/chat/completions"

    def sdk_types(self, is_async: bool) -> tuple[Any, Any]:
        """``(cast_to, stream_cls)`` of a stream: the SDK's own SSE decoding, events as JSON.

        ``object`` makes the SDK hand each event's parsed JSON over as is (it
        still raises its errors for error events and statuses), instead of
        building a pydantic model the converter would only read.
        """
        from openai import AsyncStream, Stream

        return object, (AsyncStream if is_async else Stream)[object]

    def wire(self, p: OpenAIPrepared, stream: bool) -> tuple[Body, dict[str, Any]]:
        """The body serialized once (cached on ``p``) and the SDK request options.

        The body is what ``create(**payload)`` put on the wire: ``model``,
        ``stream`` when streaming, the conversation, then the ``extra_body``
        fields; the options carry ``extra_headers``, ``extra_query`` and
        ``timeout`` as ``create`` did.
        """
        cached = p.stream_wire if stream else p.wire
        if cached is None:
            kwargs = p.stream_payload if stream else p.payload
            body: dict[str, Any] = {"model": kwargs["model"]}
            if kwargs.get("stream"):
                body["stream"] = True
            body[self.conversation] = kwargs[self.conversation]
            body.update(kwargs.get("extra_body") or {})
            call = {k: kwargs[k] for k in _CALL_ARGS if k in kwargs}
            cached = (encode_body(body), sdk_internals.request_options(call))
            if stream:
                p.stream_wire = cached
            else:
                p.wire = cached
        return cached

    def url_path(self, client: Any, p: OpenAIPrepared) -> str:
        """The path to post to: on Azure without a deployment, the model's deployment path."""
        # What AzureOpenAI._build_request does for a dict body (ours is bytes).
        if (
            self.is_azure
            and self.path == "/chat/completions"
            and "/deployments" not in str(client.base_url.path)
        ):
            model = (p.payload or p.stream_payload)["model"]
            return sdk_internals.deployment_path(model) + self.path
        return self.path

    def post_args(self, p: OpenAIPrepared, *, stream: bool, is_async: bool) -> dict[str, Any]:
        """``client.post`` arguments after the path: the body's bytes, options, a stream's types.

        One for the sync and the async client (the caller awaits ``post`` or not).
        """
        body, options = self.wire(p, stream=stream)
        args: dict[str, Any] = {
            "cast_to": _http_response(),
            "content": body.bytes(),
            "options": options,
        }
        if stream:
            args["cast_to"], args["stream_cls"] = self.sdk_types(is_async=is_async)
            args["stream"] = True
        return args

    def prepared_of(self, prepared: Prepared, stream: bool) -> OpenAIPrepared:
        """``prepared`` in the form to send (prepared again if made for the other form)."""
        return _as(prepared, self, stream=stream)

    def raw_response_type(self) -> Any:
        """The SDK's HTTP response class (``cast_to`` it: the raw response, no model built)."""
        return _http_response()

    @vendor_boundary
    def send(self, prepared: Prepared) -> Response:
        p = _as(prepared, self, stream=False)
        client = self.clients.sync()
        args = self.post_args(p, stream=False, is_async=False)
        http = client.post(self.url_path(client, p), **args)
        # A body that is not JSON raises JSONDecodeError: a MalformedResponseError.
        return self.response(loads(http.content), p)

    @vendor_boundary
    async def asend(self, prepared: Prepared) -> Response:
        p = _as(prepared, self, stream=False)
        client = await self.clients.aclient()
        args = self.post_args(p, stream=False, is_async=True)
        http = await client.post(self.url_path(client, p), **args)
        return self.response(loads(http.content), p)

    @vendor_boundary
    def send_stream(self, prepared: Prepared) -> Iterator[ProviderEvent]:
        p = _as(prepared, self, stream=True)
        client = self.clients.sync()
        converter = self.converter(p)
        args = self.post_args(p, stream=True, is_async=False)
        stream = client.post(self.url_path(client, p), **args)
        try:
            for item in stream:
                yield from converter.feed(item)
        finally:
            stream.close()
        yield from converter.end()

    @vendor_boundary
    async def asend_stream(self, prepared: Prepared) -> AsyncIterator[ProviderEvent]:
        p = _as(prepared, self, stream=True)
        client = await self.clients.aclient()
        converter = self.converter(p)
        args = self.post_args(p, stream=True, is_async=True)
        stream = await client.post(self.url_path(client, p), **args)
        try:
            async for item in stream:
                for event in converter.feed(item):
                    yield event
        finally:
            await stream.close()
        for event in converter.end():
            yield event

    # -- embeddings (POST /embeddings; llmport_openai.embed converts) ---------------------

    #: Ask for base64 float32 vectors (OpenAI; compatible servers documented to take it).
    embed_base64 = True
    #: The body field of ``dimensions=`` (Mistral calls it ``output_dimension``).
    embed_dimensions_field = "dimensions"

    def prepare_embed(self, request: EmbedRequest) -> PreparedEmbed:
        """Check (the core's rules, this model's capabilities) and serialize the body once."""
        prepared = super().prepare_embed(request)
        body = embed_body(
            prepared.request,
            base64=self.embed_base64,
            dimensions_field=self.embed_dimensions_field,
        )
        prepared.payload = encode_body(body).bytes()
        return prepared

    def embed_path(self, client: Any, model: str) -> str:
        """``/embeddings``; on Azure without a deployment, under the model's deployment."""
        return self.endpoint_path(client, model, "/embeddings")

    def endpoint_path(self, client: Any, model: str, path: str) -> str:
        """``path``; on Azure without a deployment, under the model's deployment."""
        if self.is_azure and "/deployments" not in str(client.base_url.path):
            return sdk_internals.deployment_path(model) + path
        return path

    def embed_post_args(self, prepared: PreparedEmbed | PreparedImage) -> dict[str, Any]:
        """The SDK's ``post`` arguments of a prepared JSON body (the raw response back)."""
        return {
            "cast_to": _http_response(),
            "content": prepared.payload,
            "options": sdk_internals.request_options({}),
        }

    @vendor_boundary
    def send_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        client = self.clients.sync()
        path = self.embed_path(client, prepared.request.model)
        data = loads(client.post(path, **self.embed_post_args(prepared)).content)
        return embed_answer(data, prepared.request, self.name)  # the body let go: parsed

    @vendor_boundary
    async def asend_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        client = await self.clients.aclient()
        path = self.embed_path(client, prepared.request.model)
        data = loads((await client.post(path, **self.embed_post_args(prepared))).content)
        return embed_answer(data, prepared.request, self.name)  # the body let go: parsed

    # -- images (POST /images/generations; llmport_openai.images converts) ----------------

    images_hint = "not an image model: use openai:gpt-image-1 (or dall-e-3, dall-e-2)"
    #: Body fields every image request carries (a compatible service's own, e.g. xAI's).
    image_fields: dict[str, Any] = {}

    def prepare_image(self, request: ImageRequest) -> PreparedImage:
        """Check (the core's rules, this model's image table) and serialize the body once."""
        prepared = super().prepare_image(request)
        body = {**image_body(prepared.request), **self.image_fields}
        if prepared.request.options:  # the caller's vendor fields win over the service's
            body.update(prepared.request.options)
        prepared.payload = encode_body(body).bytes()
        return prepared

    @vendor_boundary
    def send_image(self, prepared: PreparedImage) -> ImageResponse:
        client = self.clients.sync()
        path = self.endpoint_path(client, prepared.request.model, "/images/generations")
        data = loads(client.post(path, **self.embed_post_args(prepared)).content)
        return image_answer(data, prepared.request, self.name)

    @vendor_boundary
    async def asend_image(self, prepared: PreparedImage) -> ImageResponse:
        client = await self.clients.aclient()
        path = self.endpoint_path(client, prepared.request.model, "/images/generations")
        data = loads((await client.post(path, **self.embed_post_args(prepared))).content)
        return image_answer(data, prepared.request, self.name)


#: ``create`` arguments that are request options, not body fields.
_CALL_ARGS = ("extra_headers", "extra_query", "timeout")


@functools.cache
def _http_response() -> Any:
    """The SDK's HTTP response class: ``cast_to`` it and the SDK returns the response as is."""
    import httpx2

    return httpx2.Response


def _as(prepared: Prepared, provider: _OpenAIProvider, *, stream: bool) -> OpenAIPrepared:
    """``prepared`` in the form to send (prepared again if it was made for the other form)."""
    p = _own(prepared)
    if p.stream_payload if stream else p.payload:
        return p
    return provider.prepare(replace(p.request, stream=stream))


def _own(prepared: Prepared) -> OpenAIPrepared:
    if not isinstance(prepared, OpenAIPrepared):
        raise TypeError(f"expected what an OpenAI provider's prepare() returned, got {prepared!r}")
    return prepared


class OpenAIChatProvider(_OpenAIProvider):
    """``openai:MODEL`` — the Chat Completions API."""

    name = "openai"
    vendor_keys: tuple[str, ...] = ("openai",)
    conversation = "messages"
    #: Usage arrives in the last chunk.
    stream_options: dict[str, Any] | None = {"include_usage": True}

    def body(
        self, request: Request, caps: ModelCapabilities
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        return convert_in.build_chat_request(
            request,
            self.name,
            caps,
            fields=self.vendor_fields(request),
            keys=self.vendor_keys,
            max_tokens_field=self.max_tokens_field,
            assistant=self.assistant,
            acknowledge_media=self.acknowledge_tool_media,
        )

    #: Whether an assistant "OK" goes between a tool turn and the user turn carrying its media.
    acknowledge_tool_media = False

    def assistant(self, message: Message, vendor: str, model: str) -> dict[str, Any]:
        """One assistant turn of the conversation (a compatible service adds its reasoning)."""
        return convert_in.chat_assistant(message, vendor, model)

    def response(self, answer: Any, prepared: OpenAIPrepared) -> Response:
        return convert_out.chat_response(answer, prepared.restore, self.name)

    def converter(self, prepared: OpenAIPrepared) -> _EventConverter:
        return convert_out.ChatStream(prepared.restore, self.name)


class OpenAIResponsesProvider(_OpenAIProvider):
    """``openai-responses:MODEL`` — the Responses API.

    Takes ``vendor={"openai": {...}}`` fields too (fields both APIs share,
    such as ``user``), then ``vendor={"openai-responses": {...}}`` over them.
    """

    name = "openai-responses"
    vendor_keys: tuple[str, ...] = ("openai", "openai-responses")
    embeddings_hint = "the Responses API has no embeddings: use openai:text-embedding-3-small"
    images_hint = (
        "the Responses API makes images in a call with NativeTool('image_generation'); "
        "the Images API is openai:gpt-image-1"
    )
    conversation = "input"
    options = convert_in.KNOWN_OPTIONS | SERVER_STATE_OPTIONS
    server_state = True  # previous_response_id= / conversation= (:mod:`.state`)

    def body(
        self, request: Request, caps: ModelCapabilities
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        sent, state_fields = split_state(request)
        body, call = convert_in.build_responses_request(
            sent, self.name, caps, fields=self.vendor_fields(request), keys=self.vendor_keys
        )
        body.update(state_fields)
        return body, call

    path = "/responses"

    def response(self, answer: Any, prepared: OpenAIPrepared) -> Response:
        return convert_out.responses_response(answer, prepared.restore, self.name)

    def conversations(self) -> Conversations:
        """OpenAI's Conversations API (:mod:`llmport_openai.state`)."""
        return Conversations(self)

    def background_backend(self) -> Any:
        """Background runs (:mod:`llmport_openai.background`)."""
        from .background import ResponsesBackground

        return ResponsesBackground(self)

    def converter(self, prepared: OpenAIPrepared) -> _EventConverter:
        return convert_out.ResponsesStream(prepared.restore, self.name)

    # -- token counting (POST /v1/responses/input_tokens) -----------------------------

    def build_count_request(self, request: Request) -> dict[str, Any]:
        """The SDK arguments of ``responses.input_tokens.count`` for ``request`` (checked first)."""
        caps = self.check(request)
        body, call = self.body(replace(request, stream=False), caps)
        return convert_in.build_count_request(body, call)

    @vendor_boundary
    def count_tokens(self, request: Request) -> int:
        """Input tokens of ``request``, counted by OpenAI (tools, instructions, files included)."""
        kwargs = self.build_count_request(request)
        answer = self.clients.sync().responses.input_tokens.count(**kwargs)
        return answer_field(answer, "input_tokens", int, self.name)

    @vendor_boundary
    async def acount_tokens(self, request: Request) -> int:
        kwargs = self.build_count_request(request)
        answer = await (await self.clients.aclient()).responses.input_tokens.count(**kwargs)
        return answer_field(answer, "input_tokens", int, self.name)
