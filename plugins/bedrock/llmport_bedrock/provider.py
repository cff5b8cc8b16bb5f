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
  API (default 16; also the size of botocore's connection pool).

The contract (:mod:`llmport.provider`): :meth:`BedrockProvider.prepare` runs
once per model request and does every check and the whole conversion
(:func:`llmport_bedrock.convert_in.build`), without I/O and without importing
boto3; ``send`` / ``asend`` / ``send_stream`` / ``asend_stream`` only send the
prepared payload (every attempt the same one) and convert the answer back.

boto3 has no async client, so the async methods run the blocking calls in a
per-provider :class:`~concurrent.futures.ThreadPoolExecutor` of
``max_workers`` threads and await them: the event loop never blocks, and at
most ``max_workers`` Bedrock requests run at once per provider (more wait
their turn). A stream takes a worker only while it waits for its next event.

Clients: botocore has no per-request read timeout, so there is one client
per distinct read timeout (the setting, or a call's ``timeout=``), each in
its own :class:`~llmport.clients.ClientCache`, all from one boto3 session
(so credentials are resolved once). They are created on first use, with
botocore retries off (``total_max_attempts=1``: llmport is the one retry
layer); boto3 is imported then, never at plugin import.

Errors: every boto3 call and every stream read runs inside
:class:`llmport.translate.translating` with :func:`llmport_bedrock.errors.translate`;
the credentials (configured, and those the session resolved from the chain)
are masked literally in messages and registered for log redaction.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from llmport.clients import ClientCache
from llmport.errors import ConfigError, UnsupportedFeatureError
from llmport.provider import Prepared, Provider, ProviderInfo
from llmport.redaction import register_secret
from llmport.translate import translating
from llmport.types import ModelCapabilities, ProviderEvent, Request, Response

from . import convert_in, convert_out
from .convert_in import ConversePrepared
from .errors import call, config_error, input_error, translate
from .models import Family, base_model_id, family_for

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


class BedrockProvider(Provider):
    """``bedrock:<model id>``: any Converse model (ids, inference profiles, ARNs)."""

    name = "bedrock"
    options = convert_in.KNOWN_OPTIONS

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
        self._pool: ThreadPoolExecutor | None = None
        self._families: dict[str, Family] = {}

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

    # -- model facts ---------------------------------------------------------------

    def family(self, model: str) -> Family:
        """The model's :class:`~llmport_bedrock.models.Family`, looked up once (fnmatch is slow)."""
        found = self._families.get(model)
        if found is None:
            found = self._families[model] = family_for(model)
        return found

    def capabilities(self, model: str) -> ModelCapabilities:
        if self.info is None:  # created directly, not through the registration
            return self.family(model).caps
        return super().capabilities(model)

    # -- prepare: once per model request, no I/O -------------------------------------

    def prepare(self, request: Request) -> ConversePrepared:
        """Check and convert ``request`` once; typed input errors, nothing sent."""
        caps = self.check(request)
        return convert_in.build(
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

    def _boto_session(self) -> Any:
        """Our own boto3 session (never boto3's module-level one), made once."""
        with self._session_lock:
            if self._session is None:
                import boto3  # type: ignore[import-untyped]

                s = self.settings
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

    def _new_client(self, read_timeout: float) -> Any:
        from botocore.config import Config  # type: ignore[import-untyped]

        session = self._boto_session()
        config = Config(
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

    def _remember_credentials(self) -> None:
        """Mask the credentials the session resolved (chain, files, roles) as configured ones.

        Called when a client is made and before every attempt: refreshable
        credentials (roles, SSO) change, and their new values must be masked too.
        """
        credentials = self._credentials
        if credentials is None:
            return
        frozen = credentials.get_frozen_credentials()  # refreshes if due, as signing would
        known = self._secrets
        new = [v for v in (frozen.access_key, frozen.secret_key, frozen.token) if v]
        new = [v for v in new if v not in known]
        if not new:
            return
        for value in new:
            register_secret(value)
        with self._lock:
            self._secrets = tuple(dict.fromkeys((*self._secrets, *new)))

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
        from .batch import BedrockBatch

        with self._lock:
            if getattr(self, "_batch", None) is None:
                self._batch = BedrockBatch(self)
            return self._batch

    def close(self) -> None:
        """Close every client and shut the pool down (without waiting; usable again after)."""
        batch = getattr(self, "_batch", None)
        if batch is not None:  # batch: its bedrock and s3 clients
            batch.close()
        with self._lock:
            caches = list(self._clients.values())
            self._clients.clear()
            pool, self._pool = self._pool, None
        for cache in caches:
            cache.close()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    async def aclose(self) -> None:
        """:meth:`close` from async code: it neither blocks nor waits for running workers."""
        self.close()

    async def _in_pool(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the pool, awaited (contextvars carried, like asyncio.to_thread)."""
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        job = functools.partial(context.run, fn, *args)
        return await loop.run_in_executor(self.executor(), job)

    # -- blocking calls (run directly, or on the pool) --------------------------------------

    def _converse(self, prepared: ConversePrepared) -> Any:
        client = self.client(prepared.read_timeout)
        with translating(self.name, translate, self.secrets()):
            self._remember_credentials()
            return call(input_error, client.converse, **prepared.payload)

    def _open_stream(self, prepared: ConversePrepared) -> tuple[Any, str | None]:
        client = self.client(prepared.read_timeout)
        with translating(self.name, translate, self.secrets()):
            self._remember_credentials()
            answer = call(input_error, client.converse_stream, **prepared.payload)
        meta = answer.get("ResponseMetadata") or {}
        return answer["stream"], meta.get("RequestId")

    def _count(self, arguments: dict[str, Any]) -> int:
        client = self.client()
        with translating(self.name, translate, self.secrets()):
            self._remember_credentials()
            answer = call(input_error, client.count_tokens, **arguments)
        return int(answer["inputTokens"])

    def _next_event(self, events: Iterator[Any]) -> Any:
        with translating(self.name, translate, self.secrets()):
            return next(events, _END)

    # -- token counting -------------------------------------------------------------

    def count_arguments(self, request: Request) -> dict[str, Any]:
        """The ``count_tokens`` keyword arguments for ``request`` (checked and converted, no I/O).

        CountTokens takes the base model id (``anthropic.claude-...``, without
        the ``us.`` inference-profile prefix) and the Converse request's
        ``messages``, ``system``, ``toolConfig`` and ``additionalModelRequestFields``.
        """
        if not self.capabilities(request.model).count_tokens:
            raise UnsupportedFeatureError(
                self.name,
                request.model,
                "token counting",
                "Bedrock's CountTokens supports Anthropic Claude models only",
            )
        payload = self.prepare(request).payload
        converse = {
            key: payload[key]
            for key in ("messages", "system", "toolConfig", "additionalModelRequestFields")
            if key in payload
        }
        return {"modelId": base_model_id(request.model), "input": {"converse": converse}}

    def count_tokens(self, request: Request) -> int:
        """Input tokens of ``request`` from Bedrock's CountTokens (``/model/{id}/count-tokens``)."""
        return self._count(self.count_arguments(request))

    async def acount_tokens(self, request: Request) -> int:
        """:meth:`count_tokens` on the pool, awaited."""
        return await self._in_pool(self._count, self.count_arguments(request))

    # -- I/O ---------------------------------------------------------------------------

    def send(self, prepared: Prepared) -> Response:
        """One ``converse`` call with the prepared payload; the answer converted back."""
        own = self._own(prepared)
        return convert_out.response(self._converse(own), own)

    async def asend(self, prepared: Prepared) -> Response:
        """:meth:`send` on the pool, awaited."""
        own = self._own(prepared)
        return convert_out.response(await self._in_pool(self._converse, own), own)

    def send_stream(self, prepared: Prepared) -> Iterator[ProviderEvent]:
        """One ``converse_stream`` call; its events as provider events (StopEvent last)."""
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

    async def asend_stream(self, prepared: Prepared) -> AsyncIterator[ProviderEvent]:
        """:meth:`send_stream` with every blocking read on the pool."""
        own = self._own(prepared)
        stream, request_id = await self._in_pool(self._open_stream, own)
        state = convert_out.StreamState(own, request_id)
        events = iter(stream)
        try:
            # One pool hop per event: a worker is held only while a frame is awaited.
            while (event := await self._in_pool(self._next_event, events)) is not _END:
                for out in state.feed(event):
                    yield out
        finally:
            stream.close()
        for out in state.end():
            yield out
