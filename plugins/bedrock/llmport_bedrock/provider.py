"""The Bedrock provider: Converse / ConverseStream through boto3.

Settings (``Runtime(providers={"bedrock": {...}})`` or ``[providers.bedrock]``):

* ``region``: default ``AWS_REGION``, then ``AWS_DEFAULT_REGION``, then the
  profile's region;
* ``profile``: a named AWS profile (default: the normal credential chain);
* ``endpoint_url``: another endpoint (VPC endpoint, a local test server);
* ``aws_access_key_id`` / ``aws_secret_access_key`` / ``aws_session_token``:
  explicit credentials (default: the AWS credential chain: environment,
  shared files, SSO, container and instance roles);
* ``timeout``: read timeout in seconds (default 300: long generations are
  slow); the per-call option ``timeout=`` overrides it;
* ``connect_timeout``: seconds (default 10);
* ``max_workers``: size of the thread pool that runs boto3 for the async
  API (default 16; also the size of botocore's connection pool and the
  connection limit of the async direct path);
* ``inference_profiles``: ``{ARN or id: model id}``, the model an
  application inference profile (or a provisioned or custom model) runs,
  for its capabilities and CountTokens (``us.``/``eu.``/``global.`` ids and
  ARNs that name their model need none). An ARN that names no known model
  and is not listed gets permissive capabilities and one warning.

The contract (:mod:`llmport.provider.contract`): :meth:`BedrockProvider.prepare` runs
once per model request and does every check and the whole conversion
(:func:`llmport_bedrock.convert_in.build_request`), without I/O and without importing
boto3; ``send`` / ``asend`` / ``send_stream`` / ``asend_stream`` only send the
prepared payload (every attempt the same one) and convert the answer back.

Converse and ConverseStream calls take a direct path (:mod:`llmport_bedrock.direct`):
the body is validated and serialized once per prepared request by botocore's
own serializer, each attempt is SigV4-signed by botocore and sent on the
client's own HTTP session (sync) or on an aiohttp session per event loop
(async, at most ``max_workers`` connections at once); the JSON answer is
read without botocore's shape walk, and a stream's frames are decoded as
they arrive by botocore's event-stream decoder and parser. Errors are
botocore's (``ClientError`` parsed by botocore from the error body,
``EventStreamError`` from an exception frame, its transport exceptions) or
aiohttp's, translated as below. A client that does not sign with plain SigV4
(a Bedrock API key in ``AWS_BEARER_TOKEN_BEDROCK``) uses boto3's
``converse`` / ``converse_stream``.

boto3 has no async client, so the other async methods (token counting, and
both calls when the direct path is off) run the blocking calls in a
per-provider :class:`~concurrent.futures.ThreadPoolExecutor` of
``max_workers`` threads and await them: the event loop never blocks, and at
most ``max_workers`` Bedrock requests run at once per provider (more wait
their turn). A boto3 stream takes a worker only while it waits for its next event.

Clients: botocore has no per-request read timeout, so there is one client
per distinct read timeout (the setting, or a call's ``timeout=``), each in
its own :class:`~llmport.provider.clients.ClientCache`, all from one boto3 session
(so credentials are resolved once). They are created on first use, with
botocore retries off (``total_max_attempts=1``: llmport is the one retry
layer); boto3 is imported then, never at plugin import.

Errors: every method that reaches Bedrock (send, streams, count) is a
:func:`llmport.provider.translate.vendor_boundary` translating with
:func:`llmport_bedrock.errors.translate`;
the credentials (configured, and those the session resolved from the chain)
are masked literally in messages and registered for log redaction.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from llmport.errors import ConfigError, UnsupportedFeatureError
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
from llmport.provider.clients import ClientCache
from llmport.provider.contract import (
    TOKEN_COUNTING,
    Prepared,
    PreparedEmbed,
    Provider,
    ProviderInfo,
    warn_if_unknown,
)
from llmport.provider.embedding import check_embed, no_embeddings
from llmport.provider.imaging import PreparedImage, check_image
from llmport.provider.translate import answer_field, translating, vendor_boundary

from . import convert_in, convert_out, embeddings, files, images, sdk_internals
from .batch import BedrockBatch
from .convert_in import ConversePrepared, materialize
from .direct import AsyncEvents, Wire, usable
from .errors import call, config_error, input_error, translate
from .models import Family, base_model_id, family_for, names_no_model

T = TypeVar("T")

SETTINGS = frozenset(
    {
        "region",
        "profile",
        "endpoint_url",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "timeout",
        "connect_timeout",
        "max_workers",
        "inference_profiles",  # ARN (or id) -> the model id whose capabilities it has
        "control_endpoint_url",  # batch: the bedrock control-plane endpoint
        "s3_endpoint_url",  # batch: the S3 endpoint
    }
)
DEFAULT_READ_TIMEOUT = 300.0
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_MAX_WORKERS = 16

_END = object()  # end of an event stream, as returned from a worker thread


def _seconds(settings: Mapping[str, Any], name: str, default: float) -> float:
    value = settings.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(f"bedrock: {name} must be a positive number of seconds, got {value!r}")
    return float(value)


def _profiles(value: Any) -> dict[str, str]:
    """The ``inference_profiles`` setting checked: a mapping of strings to model ids."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and k and v for k, v in value.items()
    ):
        raise ConfigError(
            "bedrock: inference_profiles must map inference profile ARNs (or ids) to model "
            f"ids, e.g. {{'arn:aws:bedrock:...:application-inference-profile/abc': "
            f"'anthropic.claude-sonnet-4-5-20250929-v1:0'}}, got {value!r}"
        )
    return dict(value)


def _import_aiohttp() -> None:
    """Import aiohttp (and yarl) for the async path; run in a worker thread, off the loop."""
    import aiohttp  # noqa: F401
    import yarl  # noqa: F401


def _no_sync_session() -> Any:
    raise TypeError("the async converse path has no sync session")


class BedrockProvider(Provider):
    """``bedrock:<model id>``: any Converse model (ids, inference profiles, ARNs)."""

    name = "bedrock"
    options = convert_in.KNOWN_OPTIONS
    #: botocore parses each frame by the API's shapes: a wrong one is malformed.
    reads = (*Provider.reads, "_next_event", "_anext_event")

    def __init__(self, settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None):
        super().__init__(settings, info)
        unknown = sorted(set(self.settings) - SETTINGS)
        if unknown:
            raise ConfigError(
                f"bedrock: unknown setting(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(SETTINGS))}"
            )
        workers = self.settings.get("max_workers", DEFAULT_MAX_WORKERS)
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ConfigError("bedrock: max_workers must be an integer >= 1")
        self.max_workers: int = workers
        self.read_timeout = _seconds(self.settings, "timeout", DEFAULT_READ_TIMEOUT)
        self.connect_timeout = _seconds(self.settings, "connect_timeout", DEFAULT_CONNECT_TIMEOUT)
        # The access key id is not a secret to AWS, but it identifies the account: mask it
        # like the others (whatever the core's secret-name rule says about its name).
        key_id = self.settings.get("aws_access_key_id")
        register_secret(key_id)
        configured = (*super().secrets(), *((key_id,) if isinstance(key_id, str) else ()))
        self._secrets: tuple[str, ...] = tuple(dict.fromkeys(s for s in configured if s))
        self._lock = threading.Lock()
        self._session_lock = threading.Lock()
        self._session: Any = None
        self._credentials: Any = None  # what the session resolved (botocore Credentials)
        self._clients: dict[float, ClientCache[Any, Any]] = {}  # read timeout -> its client
        # read timeout -> (its client, the direct path for it or None); see _wire.
        self._wires: dict[float, tuple[Any, Wire | None]] = {}
        # One aiohttp session per event loop for the async converse path.
        self._aio: ClientCache[Any, Any] = ClientCache(
            _no_sync_session, self._new_aio_session, warm_async=_import_aiohttp
        )
        self._pool: ThreadPoolExecutor | None = None
        self._ssl: Any = None  # the async path's TLS context (see _tls)
        self._families: dict[str, Family] = {}
        self.inference_profiles = _profiles(self.settings.get("inference_profiles"))

    def __repr__(self) -> str:
        # Settings may hold credentials: show only where requests go.
        return (
            f"BedrockProvider(region={self.settings.get('region')!r}, "
            f"endpoint_url={self.settings.get('endpoint_url')!r}, "
            f"profile={self.settings.get('profile')!r})"
        )

    def secrets(self) -> tuple[str, ...]:
        """The configured credentials plus those the session resolved (masked literally)."""
        return self._secrets

    def translating(self) -> translating:
        """Bedrock's error codes; every credential configured or resolved, masked."""
        return translating(self.name, translate, self.secrets())

    # -- model facts ---------------------------------------------------------------

    def family(self, model: str) -> Family:
        """The model's :class:`~llmport_bedrock.models.Family`, looked up once (fnmatch is slow).

        An inference profile named in ``inference_profiles`` has its model's family.
        """
        found = self._families.get(model)
        if found is None:
            found = self._families[model] = family_for(self.model_behind(model))
        return found

    def model_behind(self, model: str) -> str:
        """The model id ``model`` runs: its ``inference_profiles`` entry, else ``model`` itself."""
        return self.inference_profiles.get(model, model)

    # -- files by reference: S3 locations (llmport_bedrock.files) ---------------------------

    def upload(self, block: MediaBlock, purpose: str | None = None) -> FileRef:
        """An ``s3://`` object's reference (no request: Bedrock has no files API)."""
        return files.s3_ref(block)

    async def aupload(self, block: MediaBlock, purpose: str | None = None) -> FileRef:
        return files.s3_ref(block)

    def delete_file(self, ref: FileRef) -> None:
        raise files.no_files_api("deleting files")

    async def adelete_file(self, ref: FileRef) -> None:
        raise files.no_files_api("deleting files")

    def list_files(self) -> list[FileRef]:
        raise files.no_files_api("listing files")

    async def alist_files(self) -> list[FileRef]:
        raise files.no_files_api("listing files")

    def capabilities(self, model: str) -> ModelCapabilities:
        """The capabilities of the model behind ``model`` (an ARN with no known model: warned)."""
        if self.info is None:  # created directly, not through the registration
            return self.family(model).caps
        return super().capabilities(self.model_behind(model))

    def warn_if_unknown(self, info: ProviderInfo, model: str) -> None:
        """The core's one warning; for an ARN naming no model, how to name it."""
        hint = ""
        if names_no_model(model):
            hint = "name its model with the inference_profiles setting ({ARN: model id})"
        warn_if_unknown(info, model, hint)

    # -- prepare: once per model request, no I/O -------------------------------------

    def prepare(self, request: Request) -> ConversePrepared:
        """Check and convert ``request`` once; typed input errors, nothing sent."""
        caps = self.check(request)
        return convert_in.build_request(
            request, caps, self.family(request.model), self.vendor_fields(request)
        )

    def _own(self, prepared: Prepared) -> ConversePrepared:
        # A plain Prepared (built by someone else) is converted here, once.
        if isinstance(prepared, ConversePrepared):
            return prepared
        return self.prepare(prepared.request)

    # -- clients and the pool ------------------------------------------------------

    def region(self) -> str | None:
        return (
            self.settings.get("region")
            or os.environ.get("AWS_REGION")
            or os.environ.get("AWS_DEFAULT_REGION")
            or None
        )

    def client(self, read_timeout: float | None = None) -> Any:
        """The ``bedrock-runtime`` client for ``read_timeout`` (created once per value)."""
        timeout = float(read_timeout or self.read_timeout)
        with self._lock:
            cache = self._clients.get(timeout)
            if cache is None:
                make = functools.partial(self._new_client, timeout)
                cache = self._clients[timeout] = ClientCache(make)
        return cache.sync()

    def boto_session(self) -> Any:
        """Our own boto3 session (never boto3's module-level one), made once."""
        with self._session_lock:
            if self._session is None:
                import boto3  # type: ignore[import-untyped]

                s = self.settings
                self._refuse_environment_credentials()
                session = call(
                    config_error,
                    boto3.session.Session,
                    profile_name=s.get("profile"),
                    region_name=self.region(),
                    aws_access_key_id=s.get("aws_access_key_id"),
                    aws_secret_access_key=s.get("aws_secret_access_key"),
                    aws_session_token=s.get("aws_session_token"),
                )
                if not session.region_name:
                    raise ConfigError(
                        "bedrock: no AWS region: set the region setting, AWS_REGION or "
                        "AWS_DEFAULT_REGION"
                    )
                self._session = session
            return self._session

    def _refuse_environment_credentials(self) -> None:
        """An instance with an ``endpoint_url`` of its own must name its credentials.

        boto3's chain would otherwise sign its requests with the environment's AWS
        credentials, meant for AWS only (:mod:`llmport.provider.keys`); its client
        signs with SigV4, never ``AWS_BEARER_TOKEN_BEDROCK``.
        """
        s = self.settings
        if self.own_endpoint and not (s.get("aws_access_key_id") or s.get("profile")):
            raise ConfigError(
                f"{self.name}: an instance with an endpoint_url of its own is sent only the "
                "credentials its settings name (aws_access_key_id / aws_secret_access_key, "
                "or profile), never the environment's"
            )

    def _refuse_api_key_over_plain_http(self) -> None:
        """A Bedrock API key is a bearer token: never sent to a plain-HTTP endpoint.

        botocore signs with ``AWS_BEARER_TOKEN_BEDROCK`` when it is set (not for an
        instance with its own endpoint: SigV4 there) and refuses plain HTTP itself from
        1.44 on; earlier releases send the key in the clear. Refused here, for all.
        """
        url = str(self.settings.get("endpoint_url") or "")
        if (
            url.lower().startswith("http://")
            and not self.own_endpoint
            and os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
        ):
            raise ConfigError(
                f"{self.name}: a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) is sent only "
                "over HTTPS; endpoint_url is plain HTTP"
            )

    def _new_client(self, read_timeout: float) -> Any:
        from botocore.config import Config  # type: ignore[import-untyped]

        self._refuse_api_key_over_plain_http()
        session = self.boto_session()
        # botocore would prefer AWS_BEARER_TOKEN_BEDROCK from the environment (a Bedrock API
        # key, meant for AWS): an instance with its own endpoint signs with its own credentials.
        signing = {"signature_version": "v4"} if self.own_endpoint else {}
        config = Config(
            **signing,
            # total_max_attempts=1: one attempt, no botocore retries (its
            # ``max_attempts`` counts retries, so 1 there would mean 2 attempts).
            retries={"total_max_attempts": 1, "mode": "standard"},
            read_timeout=read_timeout,
            connect_timeout=self.connect_timeout,
            max_pool_connections=self.max_workers,
            user_agent_extra="llmport",
        )
        client = call(
            config_error,
            session.client,
            "bedrock-runtime",
            endpoint_url=self.settings.get("endpoint_url"),
            config=config,
        )
        # Resolved (and cached) by session.client; None: the call raises NoCredentialsError.
        self._credentials = session.get_credentials()
        self._remember_credentials()
        return client

    def _remember_credentials(self) -> Any:
        """Mask the credentials the session resolved (chain, files, roles) as configured ones.

        Called when a client is made and before every attempt: refreshable
        credentials (roles, SSO) change, and their new values must be masked too.
        Returns the frozen credentials (None when the session has none).
        """
        credentials = self._credentials
        if credentials is None:
            return None
        frozen = credentials.get_frozen_credentials()  # refreshes if due, as signing would
        known = self._secrets
        new = [v for v in (frozen.access_key, frozen.secret_key, frozen.token) if v]
        new = [v for v in new if v not in known]
        if not new:
            return frozen
        for value in new:
            register_secret(value)
        with self._lock:
            self._secrets = tuple(dict.fromkeys((*self._secrets, *new)))
        return frozen

    def _signing_credentials(self) -> Any:
        """The frozen credentials to sign an attempt (botocore's NoCredentialsError if none)."""
        frozen = self._remember_credentials()
        if frozen is None or not frozen.access_key or not frozen.secret_key:
            from botocore.exceptions import NoCredentialsError  # type: ignore[import-untyped]

            raise NoCredentialsError()
        return frozen

    async def _async_signing_credentials(self) -> Any:
        """:meth:`_signing_credentials`; a due refresh (a network call) runs on the pool."""
        refresh_needed = getattr(self._credentials, "refresh_needed", None)
        if refresh_needed is not None and refresh_needed():
            return await self._in_pool(self._signing_credentials)
        return self._signing_credentials()

    def _wire(self, read_timeout: float | None) -> tuple[Any, Wire | None]:
        """The client for ``read_timeout`` and its direct path (None: use ``client.converse``)."""
        client = self.client(read_timeout)
        timeout = float(read_timeout or self.read_timeout)
        entry = self._wires.get(timeout)
        if entry is None or entry[0] is not client:  # first use, or the client was remade
            entry = (client, Wire(client) if usable(client) else None)
            with self._lock:
                self._wires[timeout] = entry
        return entry

    def _new_aio_session(self) -> Any:
        """An aiohttp session for the running loop, with the TLS settings botocore uses."""
        import aiohttp

        connector = aiohttp.TCPConnector(limit=self.max_workers, ssl=self._tls())
        return aiohttp.ClientSession(connector=connector)  # proxies: Wire.env_proxy

    def _tls(self) -> Any:
        """The async path's ``ssl`` argument: botocore's CA bundle, loaded once per provider.

        Loading the bundle takes ~20 ms, so the context is shared by every
        loop's session. A plain-HTTP endpoint (a local test server) needs none.
        """
        wire = next((w for _, w in list(self._wires.values()) if w is not None), None)
        if wire is None or wire.endpoint_url.startswith("http://"):
            return True  # aiohttp's own default context, made only if TLS is ever used
        with self._lock:
            if self._ssl is None:
                from botocore.httpsession import get_cert_path  # type: ignore[import-untyped]

                verify = sdk_internals.session_verify(wire.http)  # AWS_CA_BUNDLE, ca_bundle
                if verify is False:
                    self._ssl = False
                else:
                    import ssl

                    self._ssl = ssl.create_default_context(cafile=get_cert_path(verify))
            return self._ssl

    def executor(self) -> ThreadPoolExecutor:
        """The bounded pool that runs boto3 for the async API (``max_workers`` threads)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    self.max_workers, thread_name_prefix="llmport-bedrock"
                )
            return self._pool

    def batch_backend(self) -> Any:
        """Model-invocation jobs (:mod:`llmport_bedrock.batch`); one per provider."""
        with self._lock:
            if getattr(self, "_batch", None) is None:
                self._batch = BedrockBatch(
                    self, self.boto_session, (self.read_timeout, self.connect_timeout)
                )
            return self._batch

    def close(self) -> None:
        """Close every client and shut the pool down (without waiting; usable again after)."""
        batch = getattr(self, "_batch", None)
        if batch is not None:  # batch: its bedrock and s3 clients
            batch.close()
        with self._lock:
            caches = list(self._clients.values())
            self._clients.clear()
            self._wires.clear()
            pool, self._pool = self._pool, None
        for cache in caches:
            cache.close()
        self._aio.close()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    async def aclose(self) -> None:
        """:meth:`close` from async code: it neither blocks nor waits for running workers."""
        await self._aio.aclose()  # this loop's aiohttp session, closed inside its loop
        self.close()

    async def _in_pool(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the pool, awaited (contextvars carried, like asyncio.to_thread)."""
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        job = functools.partial(context.run, fn, *args)
        return await loop.run_in_executor(self.executor(), job)

    # -- blocking calls (run directly, or on the pool) --------------------------------------

    def _converse(self, prepared: ConversePrepared) -> Any:
        client, wire = self._wire(prepared.read_timeout)
        if wire is None:
            self._remember_credentials()
            return call(input_error, client.converse, **materialize(prepared.payload))
        path, body = wire.body(prepared)  # an OptionError here: nothing was sent
        return wire.send(path, body, self._signing_credentials())

    async def _aconverse(self, prepared: ConversePrepared) -> Any:
        timeout = float(prepared.read_timeout or self.read_timeout)
        if timeout in self._wires:
            _, wire = self._wire(prepared.read_timeout)  # made before: no I/O
        else:
            # Making the session and client reads files (and may ask an instance role).
            _, wire = await self._in_pool(self._wire, prepared.read_timeout)
        if wire is None:  # not plain SigV4: boto3's converse, on the pool
            return await self._in_pool(self._converse, prepared)
        path, body = wire.body(prepared)
        request = wire.signed(path, body, await self._async_signing_credentials())
        async with await self._apost(wire, request, body, timeout) as answer:
            content = await answer.read()
        return wire.answer(answer.status, answer.headers, content)

    def _open_stream(self, prepared: ConversePrepared) -> tuple[Any, str | None]:
        client, wire = self._wire(prepared.read_timeout)
        if wire is None:
            self._remember_credentials()
            answer = call(input_error, client.converse_stream, **materialize(prepared.payload))
            meta = answer.get("ResponseMetadata") or {}
            return answer["stream"], meta.get("RequestId")
        path, body = wire.stream_body(prepared)  # an OptionError here: nothing was sent
        return wire.open_stream(path, body, self._signing_credentials())

    async def _aopen_stream(self, prepared: ConversePrepared) -> tuple[Any, str | None]:
        """The stream on aiohttp (an :class:`AsyncEvents`), or boto3's opened on the pool."""
        timeout = float(prepared.read_timeout or self.read_timeout)
        if timeout in self._wires:
            _, wire = self._wire(prepared.read_timeout)
        else:
            _, wire = await self._in_pool(self._wire, prepared.read_timeout)
        if wire is None:
            return await self._in_pool(self._open_stream, prepared)
        path, body = wire.stream_body(prepared)
        request = wire.signed(path, body, await self._async_signing_credentials())
        answer = await self._apost(wire, request, body, timeout)
        try:
            if answer.status >= 300:
                wire.stream_error(answer.status, answer.headers, await answer.read())
        except BaseException:
            answer.close()
            raise
        return AsyncEvents(wire, answer), answer.headers.get("x-amzn-requestid")

    async def _apost(self, wire: Wire, request: Any, body: bytes, read_timeout: float) -> Any:
        """The signed ``request`` POSTed on this loop's aiohttp session; the response unread."""
        session = await self._aio.aclient()  # a cold one imports aiohttp off the loop
        import aiohttp
        from yarl import URL

        limits = aiohttp.ClientTimeout(sock_connect=self.connect_timeout, sock_read=read_timeout)
        proxy, proxy_auth = wire.env_proxy()
        return await session.post(
            URL(request.url, encoded=True),  # keep the signed %-escapes (%3A in model ids)
            data=body,
            headers=dict(request.headers.items()),
            timeout=limits,
            proxy=proxy,
            proxy_auth=proxy_auth,
        )

    def _count(self, arguments: dict[str, Any]) -> int:
        client = self.client()
        self._remember_credentials()
        answer = call(input_error, client.count_tokens, **arguments)
        return answer_field(answer, "inputTokens", int, self.name)

    def _next_event(self, events: Iterator[Any]) -> Any:
        return next(events, _END)

    async def _anext_event(self, events: AsyncEvents) -> Any:
        event = await events.next()
        return _END if event is None else event

    # -- token counting -------------------------------------------------------------

    def build_count_request(self, request: Request) -> dict[str, Any]:
        """The ``count_tokens`` keyword arguments for ``request`` (checked and converted, no I/O).

        CountTokens takes the base model id (``anthropic.claude-...``, without
        the ``us.`` inference-profile prefix; for a listed inference profile
        ARN, its model's) and the Converse request's
        ``messages``, ``system``, ``toolConfig`` and ``additionalModelRequestFields``.
        """
        if not self.capabilities(request.model).count_tokens:
            raise UnsupportedFeatureError(
                self.name,
                request.model,
                TOKEN_COUNTING,
                "Bedrock's CountTokens supports Anthropic Claude models only",
            )
        payload = materialize(self.prepare(request).payload)
        model = base_model_id(self.model_behind(request.model))
        return convert_in.build_count_request(payload, model)

    @vendor_boundary
    def count_tokens(self, request: Request) -> int:
        """Input tokens of ``request`` from Bedrock's CountTokens (``/model/{id}/count-tokens``)."""
        return self._count(self.build_count_request(request))

    @vendor_boundary
    async def acount_tokens(self, request: Request) -> int:
        """:meth:`count_tokens` on the pool, awaited."""
        return await self._in_pool(self._count, self.build_count_request(request))

    # -- embeddings (llmport_bedrock.embeddings) ------------------------------------------

    def prepare_embed(self, request: EmbedRequest) -> PreparedEmbed:
        """Check ``request`` and build its family's InvokeModel body once (no I/O, no boto3)."""
        checked = check_embed(self, request)
        family = embeddings.embed_family(self.model_behind(checked.model))
        if family is None:  # an ARN listed as a model that does not embed
            raise no_embeddings(self, checked.model)
        call_ = embeddings.embed_call(checked, checked.model, family)
        return PreparedEmbed(checked, call_, self.capabilities(checked.model))

    def _invoke(self, prepared: PreparedEmbed) -> EmbedResponse:
        """One blocking InvokeModel call (boto3 percent-encodes the model id in the path)."""
        invocation: embeddings.EmbedCall = prepared.payload
        client = self.client()
        self._remember_credentials()
        answer = call(
            input_error,
            client.invoke_model,
            modelId=invocation.model,
            body=invocation.body,
            contentType="application/json",
            accept="application/json",
        )
        data = json.loads(answer["body"].read())
        headers = (answer.get("ResponseMetadata") or {}).get("HTTPHeaders") or {}
        return embeddings.answer(data, headers, prepared.request, invocation.family, self.name)

    @vendor_boundary
    def send_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        """One InvokeModel call with the prepared body; the vectors checked."""
        return self._invoke(prepared)

    @vendor_boundary
    async def asend_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        """:meth:`send_embed` on the pool, awaited (boto3 has no async client)."""
        return await self._in_pool(self._invoke, prepared)

    # -- image models (llmport_bedrock.images) --------------------------------------------

    images_hint = "not an image model: use bedrock:amazon.nova-canvas-v1:0"

    def prepare_image(self, request: ImageRequest) -> PreparedImage:
        """Check ``request`` and build its InvokeModel body once (no I/O, no boto3)."""
        checked = check_image(self, request)
        return PreparedImage(
            checked, images.image_body(checked), self.capabilities(checked.model).images
        )

    def _invoke_image(self, prepared: PreparedImage) -> ImageResponse:
        """One blocking InvokeModel call with the prepared body."""
        client = self.client()
        self._remember_credentials()
        answer = call(
            input_error,
            client.invoke_model,
            modelId=prepared.request.model,
            body=prepared.payload,
            contentType="application/json",
            accept="application/json",
        )
        data = json.loads(answer["body"].read())
        return images.image_answer(data, prepared.request, self.name)

    @vendor_boundary
    def send_image(self, prepared: PreparedImage) -> ImageResponse:
        """One InvokeModel call; the images checked."""
        return self._invoke_image(prepared)

    @vendor_boundary
    async def asend_image(self, prepared: PreparedImage) -> ImageResponse:
        """:meth:`send_image` on the pool, awaited (boto3 has no async client)."""
        return await self._in_pool(self._invoke_image, prepared)

    # -- I/O ---------------------------------------------------------------------------

    @vendor_boundary
    def send(self, prepared: Prepared) -> Response:
        """One ``converse`` call with the prepared payload; the answer converted back."""
        own = self._own(prepared)
        return convert_out.response(self._converse(own), own)

    @vendor_boundary
    async def asend(self, prepared: Prepared) -> Response:
        """:meth:`send` on aiohttp (the event loop never blocks; signing is done inline)."""
        own = self._own(prepared)
        return convert_out.response(await self._aconverse(own), own)

    @vendor_boundary
    def send_stream(self, prepared: Prepared) -> Iterator[ProviderEvent]:
        """One ConverseStream call; its events as provider events (StopEvent last)."""
        own = self._own(prepared)
        stream, request_id = self._open_stream(own)
        state = convert_out.StreamState(own, request_id)
        events = iter(stream)
        try:
            while (event := self._next_event(events)) is not _END:
                yield from state.feed(event)
        finally:
            stream.close()
        yield from state.end()

    @vendor_boundary
    async def asend_stream(self, prepared: Prepared) -> AsyncIterator[ProviderEvent]:
        """:meth:`send_stream` on aiohttp (boto3's stream on the pool when not plain SigV4)."""
        own = self._own(prepared)
        stream, request_id = await self._aopen_stream(own)
        state = convert_out.StreamState(own, request_id)
        try:
            if isinstance(stream, AsyncEvents):
                while (event := await self._anext_event(stream)) is not _END:
                    for out in state.feed(event):
                        yield out
            else:
                events = iter(stream)
                # One pool hop per event: a worker is held only while a frame is awaited.
                while (event := await self._in_pool(self._next_event, events)) is not _END:
                    for out in state.feed(event):
                        yield out
        finally:
            stream.close()
        for out in state.end():
            yield out
