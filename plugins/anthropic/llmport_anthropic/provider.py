"""The Anthropic provider: Messages API calls through the official SDK.

Settings (``Runtime(providers={"anthropic": {...}})`` or ``[providers.anthropic]``):

* ``api_key``: default ``ANTHROPIC_API_KEY``; or ``auth_token`` (default
  ``ANTHROPIC_AUTH_TOKEN``), a bearer token; else the SDK's own credential
  chain (profiles, workload identity). With none of them, the first call
  raises :class:`~llmport.errors.ConfigError` before any request;
* ``base_url``: default ``ANTHROPIC_BASE_URL``, else the SDK default;
* ``timeout``: seconds per request for the client (an option ``timeout=``
  on a call overrides it);
* ``default_headers``: extra headers on every request.

:meth:`AnthropicProvider.prepare` checks and converts a request once; the
``send`` methods only do I/O and convert the answer back. The body is
serialized once, to bytes, by :mod:`llmport.provider.wire` (media spliced in as the
blocks' cached base64 bytes) and posted with the client's low-level ``post``,
as ``messages.create`` would (same headers, timeout, errors) without the
SDK's own copy of the body; a non-streamed answer comes back as the raw HTTP
response, its JSON parsed once into neutral types (no SDK ``Message`` is
built). An async one on a plain client over the SDK's aiohttp transport goes
further down (:mod:`llmport_anthropic.direct`): the request the SDK builds is
kept per client and request options, and each call posts its body through the
SDK's own aiohttp session, with the SDK's errors. A stream's events come
from the SDK's SSE decoder as their parsed JSON (no SDK event model
either), its errors raised as before. Clients are
created on first use with ``max_retries=0`` (llmport is the one retry
layer): one sync client, and one async client per event loop
(:class:`~llmport.provider.clients.ClientCache`). The SDK is imported here only, on
first use, never at plugin import.
"""

from __future__ import annotations

import functools
import math
import os
import re
import warnings
from collections.abc import AsyncIterator, Callable, Container, Iterator, Mapping
from dataclasses import replace
from typing import Any

from llmport.errors import ConfigError
from llmport.messages.types import (
    FileRef,
    MediaBlock,
    ModelCapabilities,
    ProviderEvent,
    Request,
    Response,
)
from llmport.observe.redaction import register_secret
from llmport.provider.clients import ClientCache, async_transport
from llmport.provider.contract import Prepared, Provider, ProviderInfo
from llmport.provider.files import aall_pages, all_pages
from llmport.provider.translate import answer_field, translating, vendor_boundary
from llmport.provider.wire import Body, loads
from llmport.provider.wire import encode as encode_body

from . import convert_in, convert_out, direct, files, sdk_internals
from .batch import AnthropicBatch
from .convert_in import AnthropicPrepared
from .errors import translate
from .models import family_for

_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_SECRET_HEADER = re.compile(r"(?i)auth|key|token|secret|cookie")
_SETTINGS = frozenset(
    {"api_key", "base_url", "timeout", "auth_token", "default_headers", "async_transport"}
)


class AnthropicProvider(Provider):
    """``anthropic:<model>``: Claude through the Messages API."""

    name = "anthropic"
    #: Anthropic has no embeddings endpoint; its "Embeddings" guide points to Voyage AI.
    embeddings_hint = (
        "Anthropic has no embeddings endpoint; its documentation points to Voyage AI: "
        'use rt.embed(..., model="voyage:voyage-3.5") (pip install llmport-voyage, '
        "VOYAGE_API_KEY)"
    )
    #: Claude reads images but makes none: Anthropic's API has no image generation endpoint.
    images_hint = "Anthropic has no image generation endpoint (Claude reads images, makes none)"
    options = convert_in.KNOWN_OPTIONS

    def __init__(self, settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None):
        super().__init__(settings, info)
        header_secrets = _check_settings(self.settings)
        for value in header_secrets:
            register_secret(value)
        self._secrets: tuple[str, ...] = (*self.secrets(), *header_secrets)
        #: The SDK clients: one sync, one async per event loop.
        self.clients: ClientCache[Any, Any] = ClientCache(self._make_sync, self._make_async)
        #: Each async client's routes for unstreamed calls posted directly.
        self.routes = direct.Routes()

    def __repr__(self) -> str:
        # Settings may hold a key: show only where requests go.
        return f"AnthropicProvider(base_url={self._base_url()!r})"

    # -- clients --------------------------------------------------------------

    def _base_url(self) -> str | None:
        return self.settings.get("base_url") or os.environ.get("ANTHROPIC_BASE_URL") or None

    def client_kwargs(self) -> dict[str, Any]:
        """The SDK client's arguments; a key found in the environment is registered as a secret."""
        kwargs: dict[str, Any] = {"max_retries": 0}
        api_key = self.settings.get("api_key") or self.environment_key("ANTHROPIC_API_KEY")
        auth_token = self.settings.get("auth_token") or self.environment_key("ANTHROPIC_AUTH_TOKEN")
        if api_key:
            kwargs["api_key"] = api_key
        elif auth_token:
            kwargs["auth_token"] = auth_token
        credential = kwargs.get("api_key") or kwargs.get("auth_token")
        if credential and credential not in self._secrets:
            register_secret(credential)
            self._secrets = (*self._secrets, credential)
        base_url = self._base_url()
        if not credential and self.own_endpoint:
            # The SDK, given no key, would read ANTHROPIC_API_KEY itself and send it there.
            raise ConfigError(
                f"{self.name}: no credentials: an instance with a base_url of its own is "
                "sent only its api_key / auth_token setting (or api_key_env), never "
                "ANTHROPIC_API_KEY"
            )
        if not credential:
            _require_sdk_credentials(base_url)
        if base_url:
            kwargs["base_url"] = base_url
        if self.settings.get("timeout") is not None:
            kwargs["timeout"] = self.settings["timeout"]
        if self.settings.get("default_headers"):
            kwargs["default_headers"] = dict(self.settings["default_headers"])
        return kwargs

    def sdk_clients(self) -> tuple[Any, Any]:
        """The SDK's client classes, sync and async (Vertex AI has its own)."""
        import anthropic

        return anthropic.Anthropic, anthropic.AsyncAnthropic

    def _make_sync(self) -> Any:
        sync_client, _ = self.sdk_clients()
        return sync_client(**self.client_kwargs())

    def _make_async(self) -> Any:
        import anthropic

        _, async_client = self.sdk_clients()
        kwargs = self.client_kwargs()
        if async_transport(self.settings) == "aiohttp":
            # Measured 3-4x faster than the default httpx pool at 500 concurrent calls.
            kwargs["http_client"] = anthropic.DefaultAioHttpClient()
        return async_client(**kwargs)

    def close(self) -> None:
        self.clients.close()

    async def aclose(self) -> None:
        await self.clients.aclose()

    def translating(self) -> translating:
        """Anthropic's error types, and every key or token this provider has used, masked."""
        return translating(self.name, translate, self._secrets)

    def batch_backend(self) -> Any:
        """Anthropic message batches (:mod:`llmport_anthropic.batch`)."""
        return AnthropicBatch(self, self.clients)

    # -- files by reference (llmport_anthropic.files) ------------------------------------

    @vendor_boundary
    def upload(self, block: MediaBlock, purpose: str | None = None) -> FileRef:
        answer = self.clients.sync().beta.files.upload(**files.upload_args(block, self.name))
        return files.file_ref(answer, self.name)

    @vendor_boundary
    async def aupload(self, block: MediaBlock, purpose: str | None = None) -> FileRef:
        client = await self.clients.aclient()
        answer = await client.beta.files.upload(**files.upload_args(block, self.name))
        return files.file_ref(answer, self.name)

    @vendor_boundary
    def delete_file(self, ref: FileRef) -> None:
        answer = self.clients.sync().beta.files.delete(ref.id, betas=[files.FILES_BETA])
        files.deleted(answer, self.name)

    @vendor_boundary
    async def adelete_file(self, ref: FileRef) -> None:
        client = await self.clients.aclient()
        files.deleted(await client.beta.files.delete(ref.id, betas=[files.FILES_BETA]), self.name)

    @vendor_boundary
    def list_files(self) -> list[FileRef]:
        page = self.clients.sync().beta.files.list(betas=[files.FILES_BETA])
        return all_pages(page, functools.partial(files.file_refs, vendor=self.name), self.name)

    @vendor_boundary
    async def alist_files(self) -> list[FileRef]:
        page = await (await self.clients.aclient()).beta.files.list(betas=[files.FILES_BETA])
        return await aall_pages(
            page, functools.partial(files.file_refs, vendor=self.name), self.name
        )

    def capabilities(self, model: str) -> ModelCapabilities:
        """The registered capabilities, else (a provider made directly) the family table's."""
        if self.info is None:
            return family_for(model).caps
        return super().capabilities(model)

    # -- prepare: every check and conversion, once per model request ------------

    def prepare(self, request: Request) -> AnthropicPrepared:
        """Check ``request`` (typed input errors, no I/O) and convert it once."""
        caps = self.check(request)
        return convert_in.build_request(
            request, caps, family_for(request.model), self.vendor_fields(request)
        )

    # -- token counting ------------------------------------------------------------

    @vendor_boundary
    def count_tokens(self, request: Request) -> int:
        """Input tokens of ``request`` from ``POST /v1/messages/count_tokens`` (exact).

        The body is what a generation request would send (model, messages,
        system, tools, tool choice, thinking, output config) without the
        generation-only fields; errors are translated as for ``send``.
        """
        params = self.build_count_request(request)
        counted = self.clients.sync().messages.count_tokens(**params)
        return answer_field(counted, "input_tokens", int, self.name)

    @vendor_boundary
    async def acount_tokens(self, request: Request) -> int:
        """Async :meth:`count_tokens` (the event loop's own client)."""
        params = self.build_count_request(request)
        counted = await (await self.clients.aclient()).messages.count_tokens(**params)
        return answer_field(counted, "input_tokens", int, self.name)

    def build_count_request(self, request: Request) -> dict[str, Any]:
        """The ``messages.count_tokens`` arguments for ``request`` (what ``exec`` would send)."""
        # Counted as if streamed: the non-streaming max_tokens limit is no concern here.
        prepared = self.prepare(replace(request, stream=True))
        return convert_in.build_count_request(prepared)

    # -- send: I/O and the answer, every attempt -----------------------------------

    @vendor_boundary
    def send(self, prepared: Prepared) -> Response:
        own = _own(prepared)
        client = self.clients.sync()
        path, body, options = self.route(own, client, stream=False)
        http = client.post(path, cast_to=_http_response(), content=body.bytes(), options=options)
        # A body that is not JSON raises JSONDecodeError: a MalformedResponseError.
        message = loads(http.content)
        return convert_out.response(message, own)

    @vendor_boundary
    async def asend(self, prepared: Prepared) -> Response:
        own = _own(prepared)
        client = await self.clients.aclient()
        path, body, options = self.route(own, client, stream=False)
        if direct.usable(client):  # what client.post would send, built once (see .direct)
            route = self.routes.find(client, path, options)
            if route is None:
                route = await self.routes.learn(client, path, options)
            content = await direct.post(client, route, body.bytes())
        else:
            http = await client.post(
                path, cast_to=_http_response(), content=body.bytes(), options=options
            )
            content = http.content
        return convert_out.response(loads(content), own)

    @vendor_boundary
    def send_stream(self, prepared: Prepared) -> Iterator[ProviderEvent]:
        own = _own(prepared)
        client = self.clients.sync()
        state = convert_out.StreamState(own)
        path, body, options = self.route(own, client, stream=True)
        with client.post(path, **_stream_args(body, options, is_async=False)) as stream:
            for event in stream:
                yield from state.feed(event)

    @vendor_boundary
    async def asend_stream(self, prepared: Prepared) -> AsyncIterator[ProviderEvent]:
        own = _own(prepared)
        client = await self.clients.aclient()
        state = convert_out.StreamState(own)
        path, body, options = self.route(own, client, stream=True)
        args = _stream_args(body, options, is_async=True)
        async with await client.post(path, **args) as stream:
            async for event in stream:
                for out in state.feed(event):
                    yield out

    def route(
        self, own: AnthropicPrepared, client: Any, *, stream: bool
    ) -> tuple[str, Body, dict[str, Any]]:
        """Where one Messages call goes, its body and its request options.

        ``POST /v1/messages`` here; Claude on Vertex AI posts elsewhere
        (:class:`llmport_anthropic.vertex.AnthropicVertexProvider`).
        """
        return ("/v1/messages", *wire_body(own, client, stream=stream))


#: The body fields in the order ``messages.create`` puts them (then ``extra_body``'s).
_BODY_ORDER = (
    "max_tokens",
    "messages",
    "model",
    "cache_control",
    "container",
    "diagnostics",
    "inference_geo",
    "metadata",
    "output_config",
    "service_tier",
    "speed",
    "stop_sequences",
    "stream",
    "system",
    "thinking",
    "tool_choice",
    "tools",
)
_CALL = frozenset({"timeout", "extra_body", "extra_headers", "extra_query"})


def wire_body(
    own: AnthropicPrepared,
    client: Any,
    *,
    stream: bool,
    reshape: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> tuple[Body, dict[str, Any]]:
    """The body serialized once (cached on ``own``) and the request options.

    Exactly what ``messages.create(**params)`` sent: the same body (its field
    order, ``extra_body`` merged over it) and options (extra headers and
    query, the timeout it would compute for a long non-streamed request,
    its deprecation warnings). ``reshape`` turns that body into another
    platform's (Vertex AI's) before it is serialized.
    """
    cached = own.stream_wire if stream else own.wire
    if cached is not None:
        return cached
    import anthropic  # not "from anthropic import": that costs Python calls per request

    params = _streaming(own.params) if stream else own.params
    # create() lists every field (unset ones as omitted) and merges extra_body over
    # them: an extra field the SDK knows takes its place in that order.
    slots: dict[str, Any] = {k: params.get(k, NOT_GIVEN) for k in _BODY_ORDER}
    slots.update((k, v) for k, v in params.items() if k not in slots and k not in _CALL)
    slots.update(params.get("extra_body") or {})
    body = {k: v for k, v in slots.items() if v is not NOT_GIVEN}
    if reshape is not None:
        body = reshape(body)
    model, thinking = params["model"], params.get("thinking")
    timeout = params.get("timeout", NOT_GIVEN)
    if (
        not params.get("stream")
        and timeout is NOT_GIVEN
        and client.timeout == anthropic.DEFAULT_TIMEOUT
    ):
        # Raises ValueError for a request too long to send unstreamed, as create() does.
        timeout = sdk_internals.nonstreaming_timeout(
            client, params["max_tokens"], sdk_internals.model_nonstreaming_tokens(model)
        )
    _sdk_warnings(model, thinking)
    call: dict[str, Any] = {"extra_headers": dict(params.get("extra_headers") or {})}
    if params.get("extra_query") is not None:
        call["extra_query"] = params["extra_query"]
    if timeout is not NOT_GIVEN:
        call["timeout"] = timeout
    wired = (encode_body(body), sdk_internals.request_options(call))
    if stream:
        own.stream_wire = wired
    else:
        own.wire = wired
    return wired


@functools.cache
def _sdk_warning_tables() -> tuple[Mapping[str, str], Container[str]]:
    """The SDK's tables of deprecated models and of models warned about with thinking.

    Looked up once: a ``from ... import`` in :func:`_sdk_warnings` cost every request
    the import system's checks.
    """
    from anthropic.resources.messages.messages import (
        DEPRECATED_MODELS,
        MODELS_TO_WARN_WITH_THINKING_ENABLED,
    )

    return DEPRECATED_MODELS, MODELS_TO_WARN_WITH_THINKING_ENABLED


def _sdk_warnings(model: str, thinking: Any) -> None:
    """The deprecation warnings ``messages.create`` gives for this model and thinking."""
    deprecated, warned_with_thinking = _sdk_warning_tables()
    if model in deprecated:
        warnings.warn(
            f"The model '{model}' is deprecated and will reach end-of-life on "
            f"{deprecated[model]}.\nPlease migrate to a newer model. Visit "
            "https://docs.anthropic.com/en/docs/resources/model-deprecations for more "
            "information.",
            DeprecationWarning,
            stacklevel=7,  # wire_body, route, send and its boundary wrapper are below the caller
        )
    if model in warned_with_thinking and thinking and thinking["type"] == "enabled":
        warnings.warn(
            f"Using Claude with {model} and 'thinking.type=enabled' is deprecated. Use "
            "'thinking.type=adaptive' instead which results in better model performance in our "
            "testing: https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking",
            UserWarning,
            stacklevel=7,  # wire_body, route, send and its boundary wrapper are below the caller
        )


def _stream_args(body: Body, options: dict[str, Any], *, is_async: bool) -> dict[str, Any]:
    """``client.post`` arguments of a stream (sync or async client): body, options, types."""
    cast_to, stream_cls = _sdk_types(is_async=is_async)
    return {
        "cast_to": cast_to,
        "content": body.bytes(),
        "options": options,
        "stream": True,
        "stream_cls": stream_cls,
    }


#: A field or ``timeout`` not given (``None`` is a given value: JSON null, no time limit).
NOT_GIVEN: Any = object()


@functools.cache
def _http_response() -> Any:
    """The SDK's HTTP response class: ``cast_to`` it and the SDK returns the response as is."""
    import httpx2

    return httpx2.Response


@functools.cache
def _sdk_types(is_async: bool) -> tuple[Any, Any]:
    """``(cast_to, stream_cls)`` of a stream: the SDK's own SSE decoding, events as JSON.

    ``object`` makes the SDK hand each event's parsed JSON over as is (it still
    raises its errors for ``error`` events and statuses), instead of building
    a pydantic model per event that the converter would only read.
    """
    from anthropic import AsyncStream, Stream

    return object, (AsyncStream if is_async else Stream)[object]


def _check_settings(settings: Mapping[str, Any]) -> tuple[str, ...]:
    """Reject bad settings (ConfigError); return the header values to mask as secrets.

    A bad timeout or header would otherwise fail every request as a
    (retried) transport error. A gateway key may come as a header
    (``x-gateway-key``): it is masked as literally as ``api_key``.
    """
    unknown = sorted(set(settings) - _SETTINGS)
    if unknown:
        raise ConfigError(
            f"anthropic: unknown setting(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(_SETTINGS))}"
        )
    timeout = settings.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ConfigError(f"anthropic: the timeout setting must be > 0 seconds, got {timeout!r}")
    headers = settings.get("default_headers")
    if headers is None:
        return ()
    if not isinstance(headers, Mapping):
        raise ConfigError("anthropic: the default_headers setting must be a dict")
    for name, value in headers.items():
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
            raise ConfigError(f"anthropic: default_headers: bad header name {name!r}")
        if not isinstance(value, str) or "\r" in value or "\n" in value:
            raise ConfigError(f"anthropic: default_headers[{name!r}] must be a one-line string")
    return tuple(v for k, v in headers.items() if _SECRET_HEADER.search(k) and len(v) >= 8)


def _own(prepared: Prepared) -> AnthropicPrepared:
    if not isinstance(prepared, AnthropicPrepared):
        raise TypeError(
            f"AnthropicProvider sends what its prepare() returned, got {type(prepared).__name__}"
        )
    return prepared


def _streaming(params: dict[str, Any]) -> dict[str, Any]:
    return params if params.get("stream") is True else {**params, "stream": True}


def _require_sdk_credentials(base_url: str | None) -> None:
    """Without a key or token, the SDK's own chain (profiles, workload identity) must find one.

    Else a :class:`ConfigError` now, before any request: the SDK would raise a
    bare ``TypeError`` on the first request.
    """
    from anthropic.lib.credentials import default_credentials

    if default_credentials(base_url=base_url or "https://api.anthropic.com") is None:
        raise ConfigError(
            "anthropic: no credentials: set ANTHROPIC_API_KEY (or the api_key setting), "
            "or an auth_token setting / ANTHROPIC_AUTH_TOKEN"
        )
