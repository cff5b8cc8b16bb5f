"""The Gemini provider: ``generate_content`` calls through ``google-genai``.

Settings (``Runtime(providers={"gemini": {...}})`` or ``[providers.gemini]``):

* ``api_key``: default ``GEMINI_API_KEY``, else ``GOOGLE_API_KEY`` (needed for
  the Gemini Developer API; optional on Vertex AI, which can use ADC);
* ``base_url``: another endpoint (a proxy, a loopback server), passed through
  ``http_options``;
* ``api_version``: default :data:`DEFAULT_API_VERSION` (``v1beta``) on the
  Developer API, where ``thinkingConfig.includeThoughts``, ``urlContext``,
  ``fileSearch``, the Files and Batch APIs live (every recorded wire sample is
  ``v1beta``); ``"v1"`` for the stable surface only. On Vertex AI, the SDK's;
  ``GOOGLE_GENAI_API_VERSION`` in the environment is honoured when unset;
* ``timeout``: seconds per request (an option ``timeout=`` on a call overrides it);
* ``default_headers``: extra HTTP headers on every request;
* ``vertexai`` (default ``GOOGLE_GENAI_USE_VERTEXAI``), ``project``,
  ``location``: use Vertex AI instead of the Developer API (or the
  ``gemini-vertex:`` provider, :mod:`llmport_gemini.vertex`); ``credentials``:
  a ``google.auth`` credentials object for Vertex AI (default: ADC);
* ``async_transport``: ``"aiohttp"`` (the default when aiohttp is installed,
  as it is with this plugin) or ``"httpx"``: what the async client runs on.
  The sync client always uses httpx2.

:meth:`GeminiProvider.prepare` checks and converts a request once
(:func:`.convert_in.build_request`); the ``send`` methods only call the SDK and
convert the answer (:mod:`.convert_out`); each is a
:func:`llmport.provider.translate.vendor_boundary` translating with :func:`.errors.translate`.

Clients come from a :class:`llmport.provider.clients.ClientCache`, created on first use
with the SDK's retries off (``HttpRetryOptions(attempts=1)``): llmport is the
one retry layer. The async client of each event loop runs on a transport we
create in that loop and pass in ``http_options``: an ``aiohttp.ClientSession``
(``aiohttp_client``; faster than httpx2 per call and at hundreds of concurrent
calls) or an ``httpx2.AsyncClient`` (``httpx_async_client``). That client, its
transport and the SDK's own sync pool are closed in their loop when it shuts
down, or by ``close()`` / ``aclose()``.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from llmport.errors import ConfigError, MessageError
from llmport.messages.embeddings import EmbedRequest, EmbedResponse
from llmport.messages.images import ImageRequest, ImageResponse
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
from llmport.provider.contract import Prepared, PreparedEmbed, Provider, ProviderInfo
from llmport.provider.embedding import check_embed
from llmport.provider.files import Listing
from llmport.provider.imaging import PreparedImage, check_image
from llmport.provider.translate import answer_field, malformed, translating, vendor_boundary
from llmport.provider.wire import loads

from . import convert_in, convert_out, embeddings, files, images, sdk_internals
from .batch import GeminiBatch
from .errors import translate
from .models import VERTEX_EMBEDDING_MODELS, Family, family_for

KNOWN_SETTINGS = frozenset(
    {
        "api_key",
        "base_url",
        "api_version",
        "timeout",
        "default_headers",
        "vertexai",
        "project",
        "location",
        "credentials",
        "async_transport",
    }
)
_TRUE = {"1", "true", "yes", "on"}
#: The Developer API version requests go to unless ``api_version`` says otherwise:
#: Google's "API versions explained" puts includeThoughts, urlContext and fileSearch
#: in v1beta only (google-genai 3.x alone would send v1).
DEFAULT_API_VERSION = "v1beta"


def api_version(settings: Mapping[str, Any], vertex: bool) -> str | None:
    """The ``api_version`` to send (None: the SDK's own choice).

    The setting wins; else, on the Developer API and with no
    ``GOOGLE_GENAI_API_VERSION`` for the SDK to read, :data:`DEFAULT_API_VERSION`.
    Vertex AI keeps the SDK's default (``v1beta1``).
    """
    given = settings.get("api_version")
    if given:
        return str(given)
    if vertex or os.environ.get("GOOGLE_GENAI_API_VERSION"):
        return None
    return DEFAULT_API_VERSION


@dataclass(slots=True, frozen=True)
class AsyncClient:
    """One event loop's ``genai.Client`` and the transport it runs on.

    ``transport`` is an ``aiohttp.ClientSession`` or an ``httpx2.AsyncClient``.
    """

    client: Any
    transport: Any


async def _close_async(held: AsyncClient) -> None:
    """Close one loop's client inside that loop: SDK resources, its sync pool, our transport."""
    try:
        await held.client.aio.aclose()
    finally:
        try:
            held.client.close()  # every genai.Client also opens a sync pool
        finally:
            transport = held.transport
            # aiohttp sessions close with close(), httpx clients with aclose()
            await (transport.aclose() if hasattr(transport, "aclose") else transport.close())


_WHOLE = ":generateContent"
_STREAM = ":streamGenerateContent?alt=sse"


def _request(api: Any, payload: dict[str, Any], method: str = _WHOLE) -> Any:
    """google-genai's ``HttpRequest`` for ``method``, carrying the body as bytes.

    ``_build_request`` makes the URL, headers (API key included) and timeout
    exactly as ``api.request`` would; given ``bytes`` instead of a dict, its
    senders post them as they are, so the body is serialized once
    (:func:`.convert_in.wire_body`) rather than ``json.dumps``-ed per send.
    """
    request = sdk_internals.build_request(api, payload["path"] + method, payload["http_options"])
    request.data = convert_in.wire_body(payload).bytes()
    return request


def _post(api: Any, payload: dict[str, Any]) -> str:
    """POST the JSON payload through the SDK's sync machinery (its retries, its errors)."""
    answer = sdk_internals.send(api, _request(api, payload), payload["http_options"], stream=False)
    return answer.response_stream[0] if answer.response_stream else ""


async def _apost(api: Any, payload: dict[str, Any]) -> str:
    """Async :func:`_post` (on the event loop's aiohttp or httpx2 transport)."""
    request = _request(api, payload)
    answer = await sdk_internals.asend(api, request, payload["http_options"], stream=False)
    return answer.response_stream[0] if answer.response_stream else ""


def _require_contents(payload: dict[str, Any]) -> None:
    """A request with no contents is refused before sending, as google-genai refuses it."""
    if payload["empty"]:
        raise MessageError("gemini: a request needs contents (at least one message), got none")


def _stream_error(data: Any, response: Any) -> None:
    """An error sent as a stream event, raised as ``request_streamed`` raises it."""
    if isinstance(data, dict) and next(iter(data), None) == "error":
        from google.genai import errors

        errors.APIError.raise_error(data.get("error", {}).get("code"), data, response)


async def _astream_error(data: Any, response: Any) -> None:
    """Async :func:`_stream_error` (as ``async_request_streamed`` raises it)."""
    if isinstance(data, dict) and next(iter(data), None) == "error":
        from google.genai import errors

        await errors.APIError.raise_error_async(data.get("error", {}).get("code"), data, response)


def _close(response: Any) -> None:
    """Let go of a sync stream's HTTP response (an httpx2 response) when left early."""
    close = getattr(response.response_stream, "close", None)
    if close is not None:
        close()


async def _aclose(response: Any) -> None:
    """Let go of an async stream's HTTP response: httpx2 ``aclose()``, aiohttp ``release()``."""
    stream = response.response_stream
    if hasattr(stream, "aclose"):
        await stream.aclose()
    elif hasattr(stream, "release"):
        stream.release()


class GeminiProvider(Provider):
    """``gemini:<model>``: Gemini through ``google-genai``."""

    name = "gemini"
    options = convert_in.KNOWN_OPTIONS

    def __init__(self, settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None):
        super().__init__(settings, info)
        unknown = sorted(set(self.settings) - KNOWN_SETTINGS)
        if unknown:
            raise ConfigError(
                f"gemini: unknown setting(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(KNOWN_SETTINGS))}"
            )
        timeout = self.settings.get("timeout")
        if timeout is not None and (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise ConfigError("gemini: timeout must be a positive number of seconds")
        setting = self.settings.get("vertexai")
        #: Whether requests go to Vertex AI rather than the Gemini Developer API.
        self.vertex = (
            os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in _TRUE
            if setting is None
            else bool(setting)
        )
        self._key = self.api_key()
        # Masked literally in every error of this provider, whatever the key's format.
        self._secrets = (*self.secrets(), self._key) if self._key else self.secrets()
        # "aiohttp" or "httpx", checked here so a bad value fails at construction.
        self._transport = async_transport(self.settings)
        self._families: dict[str, Family] = {}
        self._clients: ClientCache[Any, AsyncClient] = ClientCache(
            self._make_sync, self._make_async, close_async=_close_async, warm_async=self._warm_async
        )

    def __repr__(self) -> str:
        where = self.settings.get("base_url") or ("vertex" if self.vertex else "default")
        key = "set" if self.settings.get("api_key") else "from environment"
        return f"GeminiProvider(endpoint={where!r}, api_key=<{key}>)"

    # -- clients --------------------------------------------------------------

    def api_key(self) -> str | None:
        """The key in use: the setting, else ``GEMINI_API_KEY``, else ``GOOGLE_API_KEY``.

        An instance with a base_url of its own reads neither variable
        (:meth:`~llmport.provider.contract.Provider.environment_key`).
        """
        return self.settings.get("api_key") or self.environment_key(
            "GEMINI_API_KEY", "GOOGLE_API_KEY"
        )

    def client_kwargs(self) -> dict[str, Any]:
        """``genai.Client`` arguments (raises ConfigError; sends nothing)."""
        from google.genai import types

        s = self.settings
        key = self._key
        kwargs: dict[str, Any] = {}
        if self.vertex:
            kwargs["vertexai"] = True
            for name in ("project", "location", "credentials"):
                if s.get(name):
                    kwargs[name] = s[name]
            if key and not (s.get("project") or s.get("location") or s.get("credentials")):
                kwargs["api_key"] = key  # Vertex AI express mode
            elif self.own_endpoint and not s.get("credentials"):
                # The SDK would take GOOGLE_API_KEY or Application Default Credentials.
                raise ConfigError(
                    f"{self.name}: an instance with a base_url of its own is sent only the "
                    "api_key or credentials its settings give, never the environment's"
                )
        else:
            if not key:
                where = (
                    "the api_key setting (or api_key_env): an instance with a base_url of its "
                    "own never reads GEMINI_API_KEY"
                    if self.own_endpoint
                    else "GEMINI_API_KEY (or GOOGLE_API_KEY) or the api_key setting"
                )
                raise ConfigError(f"no Gemini API key: set {where}")
            kwargs["vertexai"] = False
            kwargs["api_key"] = key
        register_secret(key)  # logs mask it too
        http: dict[str, Any] = {"retry_options": types.HttpRetryOptions(attempts=1)}
        if s.get("base_url"):
            http["base_url"] = s["base_url"]
        version = api_version(s, self.vertex)
        if version:
            http["api_version"] = version
        if s.get("timeout") is not None:
            http["timeout"] = max(1, math.ceil(s["timeout"] * 1000))  # the SDK wants milliseconds
        if s.get("default_headers"):
            http["headers"] = dict(s["default_headers"])
        kwargs["http_options"] = types.HttpOptions(**http)
        return kwargs

    def _make_sync(self) -> Any:
        from google import genai

        return genai.Client(**self.client_kwargs())

    def _warm_async(self) -> None:
        """Import what :meth:`_make_async` needs (seconds when cold; run in a worker thread).

        The client itself is made on the loop: its aiohttp session belongs there.
        """
        from google import genai  # noqa: F401
        from google.genai import types  # noqa: F401

        if self._transport == "aiohttp":
            from . import aio  # noqa: F401
        else:
            import httpx2  # noqa: F401

    def _make_async(self) -> AsyncClient:
        from google import genai

        kwargs = self.client_kwargs()  # a ConfigError comes before any transport is opened
        transport: Any
        if self._transport == "aiohttp":
            from . import aio

            transport = aio.session()
            update = {"aiohttp_client": transport}
        else:
            import httpx2

            transport = httpx2.AsyncClient(timeout=None, follow_redirects=True)
            update = {"httpx_async_client": transport}
        kwargs["http_options"] = kwargs["http_options"].model_copy(update=update)
        try:
            return AsyncClient(genai.Client(**kwargs), transport)
        except BaseException:
            # The SDK refused its arguments (Vertex AI without a project, ...): nothing
            # was sent, so an aiohttp session only needs to let go of its empty pool,
            # or it warns "Unclosed client session" when collected.
            if hasattr(transport, "detach"):
                transport.detach()
            raise

    def client(self) -> Any:
        """The sync ``genai.Client`` (created once, on first use)."""
        return self._clients.sync()

    async def async_client(self) -> Any:
        """The ``genai.Client`` of the running event loop, on our aiohttp or httpx2 transport.

        A cold one imports the SDK in a worker thread first (seconds), so the
        loop runs on and a ``deadline=`` can fire meanwhile.
        """
        return (await self._clients.aclient()).client

    def close(self) -> None:
        """Close the sync client and ask every open event loop to close its async client."""
        self._clients.close()

    async def aclose(self) -> None:
        """Close the running event loop's async client now."""
        await self._clients.aclose()

    # -- prepare: every check and conversion, once per model request -------------

    def capabilities(self, model: str) -> ModelCapabilities:
        """``models/NAME`` is ``NAME`` (the API's resource name): one row, one warning.

        On Vertex AI an embedding model has Vertex AI's limits (``:predict``: one
        input per request for gemini-embedding-001), whichever prefix registered it.
        """
        name = model.removeprefix("models/")
        if self.vertex and name in VERTEX_EMBEDDING_MODELS:
            return VERTEX_EMBEDDING_MODELS[name]
        return super().capabilities(name)

    def family(self, model: str) -> Family:
        """The model's :class:`~.models.Family` (looked up once per model)."""
        found = self._families.get(model)
        if found is None:
            found = self._families[model] = family_for(model)
        return found

    def prepare(self, request: Request) -> Prepared:
        """Check and convert ``request`` for ``generate_content`` (typed input errors, no I/O)."""
        caps = self.check(request)
        return convert_in.build_request(
            request,
            caps,
            self.family(request.model),
            vertex=self.vertex,
            vendor=self.vendor_fields(request),
        )

    # -- token counting ------------------------------------------------------------

    def build_count_request(self, request: Request) -> dict[str, Any]:
        """``models.count_tokens`` arguments for the request ``prepare`` would send."""
        payload = convert_in.sdk_payload(self.prepare(request), self.family(request.model))
        return convert_in.build_count_request(payload, request.model, vertex=self.vertex)

    @vendor_boundary
    def count_tokens(self, request: Request) -> int:
        """Input tokens of ``request`` from ``models.countTokens`` (``totalTokens``)."""
        args = self.build_count_request(request)
        answer = self.client().models.count_tokens(**args)
        return answer_field(answer, "total_tokens", int, self.name)

    @vendor_boundary
    async def acount_tokens(self, request: Request) -> int:
        """Async :meth:`count_tokens` on the event loop's client."""
        args = self.build_count_request(request)
        answer = await (await self.async_client()).aio.models.count_tokens(**args)
        return answer_field(answer, "total_tokens", int, self.name)

    # -- send: I/O and the answer back ------------------------------------------------

    def translating(self) -> translating:
        """google-genai's errors as llmport's; the key in use masked, whatever its format."""
        return translating(self.name, translate, self._secrets)

    # -- files by reference (llmport_gemini.files) ------------------------------------

    @property
    def files_vendor(self) -> str:
        """Vertex AI reads no Files API file (only gs:// URIs): no reference is its."""
        return f"{self.name} on Vertex AI" if self.vertex else self.name

    def _upload_args(self, block: MediaBlock) -> dict[str, Any]:
        if self.vertex:
            raise files.not_on_vertex("uploading files")
        return files.upload_args(block, self.name)

    def _uploaded(self, answer: Any) -> FileRef:
        if answer is None:
            raise malformed(self.name, "the resumable upload gave no upload URL or did not end")
        return files.file_ref(answer, self.name)

    @vendor_boundary
    def upload(self, block: MediaBlock, purpose: str | None = None) -> FileRef:
        args = self._upload_args(block)
        try:  # google-genai checks the answers itself: a KeyError or ValueError, raised after
            answer = self.client().files.upload(**args)
        except (KeyError, ValueError):
            answer = None
        return self._uploaded(answer)

    @vendor_boundary
    async def aupload(self, block: MediaBlock, purpose: str | None = None) -> FileRef:
        args = self._upload_args(block)
        client = await self.async_client()
        try:  # google-genai checks the answers itself: a KeyError or ValueError, raised after
            answer = await client.aio.files.upload(**args)
        except (KeyError, ValueError):
            answer = None
        return self._uploaded(answer)

    @vendor_boundary
    def delete_file(self, ref: FileRef) -> None:
        if self.vertex:
            raise files.not_on_vertex("deleting files")
        self.client().files.delete(name=files.file_name(ref))

    @vendor_boundary
    async def adelete_file(self, ref: FileRef) -> None:
        if self.vertex:
            raise files.not_on_vertex("deleting files")
        await (await self.async_client()).aio.files.delete(name=files.file_name(ref))

    @vendor_boundary
    def list_files(self) -> list[FileRef]:
        if self.vertex:
            raise files.not_on_vertex("listing files")
        pager = self.client().files.list()
        listing = Listing(self.name)  # bounded: a peer may say "more" forever
        listing.add(files.file_ref(f, self.name) for f in pager.page)
        while pager.config.get("page_token"):
            listing.add(files.file_ref(f, self.name) for f in pager.next_page())
        return listing.found

    @vendor_boundary
    async def alist_files(self) -> list[FileRef]:
        if self.vertex:
            raise files.not_on_vertex("listing files")
        pager = await (await self.async_client()).aio.files.list()
        listing = Listing(self.name)
        listing.add(files.file_ref(f, self.name) for f in pager.page)
        while pager.config.get("page_token"):
            listing.add(files.file_ref(f, self.name) for f in await pager.next_page())
        return listing.found

    # -- embeddings (llmport_gemini.embeddings) -------------------------------------

    def prepare_embed(self, request: EmbedRequest) -> PreparedEmbed:
        """Check ``request`` and build its ``batchEmbedContents`` / ``:predict`` body once."""
        checked = check_embed(self, request)
        body = embeddings.payload(checked, vertex=self.vertex, provider=self.name)
        return PreparedEmbed(checked, body, self.capabilities(checked.model))

    @vendor_boundary
    def send_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        """One embedding request through the SDK's API client (its auth, URL and errors).

        The client's public ``request`` serializes the body per send: on Vertex AI
        with credentials the SDK takes only a dict, and an embedding body is small.
        """
        payload = prepared.payload
        api = sdk_internals.api_client(self.client())
        sent = api.request("post", payload["path"] + payload["method"], payload["body"])
        data = loads(sent.body) if sent.body else {}
        return embeddings.answer(data, prepared.request, payload["method"], self.name)

    @vendor_boundary
    async def asend_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        """Async :meth:`send_embed` on the event loop's client."""
        payload = prepared.payload
        api = sdk_internals.api_client(await self.async_client())
        path = payload["path"] + payload["method"]
        sent = await api.async_request("post", path, payload["body"])
        data = loads(sent.body) if sent.body else {}
        return embeddings.answer(data, prepared.request, payload["method"], self.name)

    # -- Imagen (llmport_gemini.images) --------------------------------------------------

    images_hint = (
        "the Gemini Developer API has no Imagen endpoint (google-genai's generate_images is "
        "Vertex AI only): use gemini-vertex:imagen-4.0-generate-001, or a Gemini image model "
        "in a call (output_modalities=)"
    )

    def prepare_image(self, request: ImageRequest) -> PreparedImage:
        """Check ``request`` and build its ``:predict`` body once."""
        checked = check_image(self, request)
        payload = images.image_payload(checked, vertex=self.vertex)
        return PreparedImage(checked, payload, self.capabilities(checked.model).images)

    @vendor_boundary
    def send_image(self, prepared: PreparedImage) -> ImageResponse:
        """One ``:predict`` request through the SDK's API client (its auth, URL and errors)."""
        payload = prepared.payload
        api = sdk_internals.api_client(self.client())
        sent = api.request("post", payload["path"], payload["body"])
        data = loads(sent.body) if sent.body else {}
        return images.image_answer(data, prepared.request, self.name)

    @vendor_boundary
    async def asend_image(self, prepared: PreparedImage) -> ImageResponse:
        """Async :meth:`send_image` on the event loop's client."""
        payload = prepared.payload
        api = sdk_internals.api_client(await self.async_client())
        sent = await api.async_request("post", payload["path"], payload["body"])
        data = loads(sent.body) if sent.body else {}
        return images.image_answer(data, prepared.request, self.name)

    def batch_backend(self) -> Any:
        """Gemini batch mode (:mod:`llmport_gemini.batch`)."""
        return GeminiBatch(self, self.client, self.async_client, vertex=self.vertex)

    @vendor_boundary
    def send(self, prepared: Prepared) -> Response:
        payload = prepared.payload
        model = prepared.request.model
        if "body" not in payload:
            answer = self.client().models.generate_content(**payload)
            return convert_out.response(convert_out.check_answer(answer), model)
        _require_contents(payload)
        text = _post(sdk_internals.api_client(self.client()), payload)
        data = convert_out.check_answer(loads(text) if text else {})
        done = convert_out.response_json(data, model)
        if done is None:
            answer = convert_out.sdk_response(data, payload["response_json_schema"])
            if convert_out.continues(data):
                answer = self._continued(prepared, answer)
        return done if done is not None else convert_out.response(answer, model)

    @vendor_boundary
    async def asend(self, prepared: Prepared) -> Response:
        payload = prepared.payload
        model = prepared.request.model
        if "body" not in payload:
            answer = await (await self.async_client()).aio.models.generate_content(**payload)
            return convert_out.response(convert_out.check_answer(answer), model)
        _require_contents(payload)
        text = await _apost(sdk_internals.api_client(await self.async_client()), payload)
        data = convert_out.check_answer(loads(text) if text else {})
        done = convert_out.response_json(data, model)
        if done is None:
            answer = convert_out.sdk_response(data, payload["response_json_schema"])
            if convert_out.continues(data):
                answer = await self._acontinued(prepared, answer)
        return done if done is not None else convert_out.response(answer, model)

    def _stream_args(self, prepared: Prepared) -> dict[str, Any]:
        """``generate_content_stream`` arguments as the SDK's objects (its path; continuations)."""
        return convert_in.sdk_payload(prepared, self.family(prepared.request.model))

    def _continued(self, prepared: Prepared, first: Any) -> Any:
        """A whole answer that carries a continuation token, completed as google-genai does.

        ``generate_content`` follows ``continuationToken`` until the finish
        reason is no longer resumable and merges the answers; so does this,
        with the SDK's own helpers and requests.
        """
        args = convert_in.sdk_payload(prepared, self.family(prepared.request.model))
        responses = [first]
        token = sdk_internals.continuation_token(first)
        models = self.client().models
        while token:
            config = sdk_internals.continuation_config(args["config"], token)
            answer = sdk_internals.generate_once(
                models, model=args["model"], contents=args["contents"], config=config
            )
            responses.append(answer)
            token = sdk_internals.continuation_token(answer)
        return sdk_internals.merge_continued(responses, config=args["config"])

    async def _acontinued(self, prepared: Prepared, first: Any) -> Any:
        """Async :meth:`_continued`."""
        args = convert_in.sdk_payload(prepared, self.family(prepared.request.model))
        responses = [first]
        token = sdk_internals.continuation_token(first)
        models = (await self.async_client()).aio.models
        while token:
            config = sdk_internals.continuation_config(args["config"], token)
            answer = await sdk_internals.generate_once(
                models, model=args["model"], contents=args["contents"], config=config
            )
            responses.append(answer)
            token = sdk_internals.continuation_token(answer)
        return sdk_internals.merge_continued(responses, config=args["config"])

    @vendor_boundary
    def send_stream(self, prepared: Prepared) -> Iterator[ProviderEvent]:
        payload = prepared.payload
        state = convert_out.StreamState(prepared.request.model)
        if "body" not in payload:
            yield from self._sdk_stream(prepared, state)
            return
        schema = payload["response_json_schema"]
        _require_contents(payload)
        api = sdk_internals.api_client(self.client())
        response = sdk_internals.send(
            api, _request(api, payload, _STREAM), payload["http_options"], stream=True
        )
        seen: list[Any] = []  # this request's chunks, for a hand-over (see _handover)
        handover: Any = None
        error: Exception | None = None
        segments = response.segments()
        try:
            for data in segments:
                _stream_error(data, response)
                if handover is None and convert_out.hands_over(data):
                    handover = self._handover(prepared, seen)
                if handover is None:
                    seen.append(data)
                    yield from state.feed_json(data, schema)
                else:
                    chunk = handover.observe(convert_out.sdk_response(data, schema))
                    yield from state.feed(chunk)
        except Exception as exc:
            if handover is None:
                raise
            error = exc  # the continuation decides, as in google-genai
        finally:
            segments.close()
            _close(response)
        if handover is not None:
            yield from self._hops(prepared, state, handover, error)
        yield from state.end()

    def _sdk_stream(
        self, prepared: Prepared, state: convert_out.StreamState
    ) -> Iterator[ProviderEvent]:
        """A stream the SDK sends (Vertex AI, safety settings, ...): its chunks' events."""
        chunks = self.client().models.generate_content_stream(**self._stream_args(prepared))
        try:
            for chunk in chunks:
                yield from state.feed(chunk)
        finally:
            chunks.close()
        yield from state.end()

    def _hops(
        self,
        prepared: Prepared,
        state: convert_out.StreamState,
        handover: Any,
        error: Exception | None,
    ) -> Iterator[ProviderEvent]:
        """The further requests of a continued answer, as ``generate_content_stream`` makes them."""
        models = self.client().models
        args = self._stream_args(prepared)
        while handover.end_hop(error):
            error = None
            try:
                for chunk in sdk_internals.generate_stream_once(
                    models,
                    model=args["model"],
                    contents=args["contents"],
                    config=handover.start_hop(),
                ):
                    yield from state.feed(handover.observe(chunk))
            except Exception as exc:
                error = exc  # the continuation decides, as in google-genai

    @vendor_boundary
    async def asend_stream(self, prepared: Prepared) -> AsyncIterator[ProviderEvent]:
        payload = prepared.payload
        state = convert_out.StreamState(prepared.request.model)
        if "body" not in payload:
            # aclosing: leaving early must close the SDK's stream now, not when collected.
            async with contextlib.aclosing(self._asdk_stream(prepared, state)) as whole:
                async for event in whole:
                    yield event
            return
        schema = payload["response_json_schema"]
        _require_contents(payload)
        api = sdk_internals.api_client(await self.async_client())
        response = await sdk_internals.asend(
            api, _request(api, payload, _STREAM), payload["http_options"], stream=True
        )
        seen: list[Any] = []
        handover: Any = None
        error: Exception | None = None
        segments = response.async_segments()
        try:
            async for data in segments:
                await _astream_error(data, response)
                if handover is None and convert_out.hands_over(data):
                    handover = self._handover(prepared, seen)
                if handover is None:
                    seen.append(data)
                    events = state.feed_json(data, schema)
                else:
                    chunk = handover.observe(convert_out.sdk_response(data, schema))
                    events = state.feed(chunk)
                for event in events:
                    yield event
        except Exception as exc:
            if handover is None:
                raise
            error = exc
        finally:
            await segments.aclose()
            await _aclose(response)
        if handover is not None:
            async with contextlib.aclosing(self._ahops(prepared, state, handover, error)) as hops:
                async for event in hops:
                    yield event
        for event in state.end():
            yield event

    async def _asdk_stream(
        self, prepared: Prepared, state: convert_out.StreamState
    ) -> AsyncGenerator[ProviderEvent, None]:
        """Async :meth:`_sdk_stream`."""
        models = (await self.async_client()).aio.models
        chunks = await models.generate_content_stream(**self._stream_args(prepared))
        try:
            async for chunk in chunks:
                for event in state.feed(chunk):
                    yield event
        finally:
            await chunks.aclose()
        for event in state.end():
            yield event

    async def _ahops(
        self,
        prepared: Prepared,
        state: convert_out.StreamState,
        handover: Any,
        error: Exception | None,
    ) -> AsyncGenerator[ProviderEvent, None]:
        """Async :meth:`_hops`."""
        models = (await self.async_client()).aio.models
        args = self._stream_args(prepared)
        while handover.end_hop(error):
            error = None
            try:
                chunks = await sdk_internals.generate_stream_once(
                    models,
                    model=args["model"],
                    contents=args["contents"],
                    config=handover.start_hop(),
                )
                async for chunk in chunks:
                    for event in state.feed(handover.observe(chunk)):
                        yield event
            except Exception as exc:
                error = exc

    def _handover(self, prepared: Prepared, seen: list[Any]) -> Any:
        """google-genai's continuation state, as if it had read this stream from the start.

        A chunk with a continuation token (or an intermediate ``CONTINUATION``
        finish) means the answer may go on in further requests, which
        ``generate_content_stream`` follows. From that chunk on the stream is
        read as the SDK's objects through its own ``StreamContinuation``,
        which first observes the chunks already read (their events are
        unchanged by it), then the SDK makes any further request.
        """
        schema = prepared.payload["response_json_schema"]
        handover = sdk_internals.stream_continuation(self._stream_args(prepared)["config"])
        handover.start_hop()
        for data in seen:
            handover.observe(convert_out.sdk_response(data, schema))
        return handover
