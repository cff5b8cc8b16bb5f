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

boto3 has no async client, so ``_async_call`` / ``_astream`` run the
blocking calls in a per-provider :class:`~concurrent.futures.ThreadPoolExecutor`
of ``max_workers`` threads and await them: the event loop never blocks, and
at most ``max_workers`` Bedrock requests run at once per provider (more
wait their turn). A stream takes a worker only while it waits for its next
event.

Clients are created on first use with botocore retries off
(``total_max_attempts=1``): llmport is the one retry layer. boto3 is
imported then, never at plugin import.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NoReturn, TypeVar

from llmport.errors import ConfigError
from llmport.provider import Provider, ProviderInfo
from llmport.types import ModelCapabilities, ProviderEvent, Request, Response

from . import convert_in, convert_out
from .errors import translate
from .plugin import Family, family_for

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
    }
)
DEFAULT_READ_TIMEOUT = 300.0
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_MAX_WORKERS = 16

_END = object()  # end of an event stream, as returned from a worker thread


class BedrockProvider(Provider):
    """``bedrock:<model id>``: any Converse model (ids, inference profiles, ARNs)."""

    name = "bedrock"

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
        self.read_timeout = float(self.settings.get("timeout") or DEFAULT_READ_TIMEOUT)
        self.connect_timeout = float(
            self.settings.get("connect_timeout") or DEFAULT_CONNECT_TIMEOUT
        )
        self._lock = threading.Lock()
        self._session: Any = None
        self._clients: dict[float, Any] = {}  # one client per read timeout
        self._pool: ThreadPoolExecutor | None = None
        self._facts: dict[str, tuple[ModelCapabilities, Family]] = {}

    def __repr__(self) -> str:
        # Settings may hold credentials: show only where requests go.
        return (
            f"BedrockProvider(region={self.settings.get('region')!r}, "
            f"endpoint_url={self.settings.get('endpoint_url')!r}, "
            f"profile={self.settings.get('profile')!r})"
        )

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
            found = self._clients.get(timeout)
            if found is None:
                found = self._clients[timeout] = self._new_client(timeout)
            return found

    def _new_client(self, read_timeout: float) -> Any:
        import boto3  # type: ignore[import-untyped]
        from botocore.config import Config  # type: ignore[import-untyped]
        from botocore.exceptions import BotoCoreError  # type: ignore[import-untyped]

        s = self.settings
        try:
            if self._session is None:
                # A session of our own: never boto3's module-level default session.
                self._session = boto3.session.Session(
                    profile_name=s.get("profile"),
                    region_name=self.region(),
                    aws_access_key_id=s.get("aws_access_key_id"),
                    aws_secret_access_key=s.get("aws_secret_access_key"),
                    aws_session_token=s.get("aws_session_token"),
                )
            if not self._session.region_name:
                raise ConfigError(
                    "bedrock: no AWS region: set the region setting, AWS_REGION or "
                    "AWS_DEFAULT_REGION"
                )
            config = Config(
                # total_max_attempts=1: one attempt, no botocore retries (its
                # ``max_attempts`` counts retries, so 1 there would mean 2 attempts).
                retries={"total_max_attempts": 1, "mode": "standard"},
                read_timeout=read_timeout,
                connect_timeout=self.connect_timeout,
                max_pool_connections=self.max_workers,
                user_agent_extra="llmport",
            )
            return self._session.client(
                "bedrock-runtime", endpoint_url=s.get("endpoint_url"), config=config
            )
        except BotoCoreError as exc:  # ProfileNotFound, bad endpoint, ...
            raise ConfigError(f"bedrock: cannot create the client: {exc}") from exc

    def executor(self) -> ThreadPoolExecutor:
        """The bounded pool that runs boto3 for the async API (``max_workers`` threads)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    self.max_workers, thread_name_prefix="llmport-bedrock"
                )
            return self._pool

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    async def _in_pool(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the pool, awaited (contextvars carried, like asyncio.to_thread)."""
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        call = functools.partial(context.run, fn, *args)
        return await loop.run_in_executor(self.executor(), call)

    # -- checks ----------------------------------------------------------------------

    def prepare(self, request: Request) -> None:
        """Reject before any request what this model cannot take (typed input errors)."""
        super().prepare(request)
        self._prepared(request)

    def _prepared(self, request: Request) -> convert_in.Prepared:
        caps, family = self._model_facts(request.model)
        return convert_in.build(request, caps, family)

    def _model_facts(self, model: str) -> tuple[ModelCapabilities, Family]:
        """Capabilities and family of ``model``, looked up once per provider (fnmatch is slow)."""
        found = self._facts.get(model)
        if found is None:
            found = self._facts[model] = (self.capabilities(model), family_for(model))
        return found

    # -- blocking calls (run directly, or on the pool) --------------------------------------

    def _converse(self, prepared: convert_in.Prepared, timeout: float | None) -> Any:
        try:
            return self.client(timeout).converse(**prepared.kwargs)
        except Exception as exc:
            _reraise(exc)

    def _open_stream(
        self, prepared: convert_in.Prepared, timeout: float | None
    ) -> tuple[Any, str | None]:
        try:
            answer = self.client(timeout).converse_stream(**prepared.kwargs)
        except Exception as exc:
            _reraise(exc)
        meta = answer.get("ResponseMetadata") or {}
        return answer["stream"], meta.get("RequestId")

    @staticmethod
    def _next_event(events: Iterator[Any]) -> Any:
        try:
            return next(events, _END)
        except Exception as exc:
            _reraise(exc)

    # -- calls ---------------------------------------------------------------------

    def _call(self, request: Request) -> Response:
        prepared = self._prepared(request)
        raw = self._converse(prepared, request.options.get("timeout"))
        return convert_out.response(raw, prepared)

    async def _async_call(self, request: Request) -> Response:
        prepared = self._prepared(request)
        raw = await self._in_pool(self._converse, prepared, request.options.get("timeout"))
        return convert_out.response(raw, prepared)

    def _stream(self, request: Request) -> Iterator[ProviderEvent]:
        prepared = self._prepared(request)
        stream, request_id = self._open_stream(prepared, request.options.get("timeout"))
        state = convert_out.StreamState(prepared, request_id)
        events = iter(stream)
        try:
            while (event := self._next_event(events)) is not _END:
                yield from state.feed(event)
        finally:
            stream.close()
        yield from state.end()

    async def _astream(self, request: Request) -> AsyncIterator[ProviderEvent]:
        prepared = self._prepared(request)
        stream, request_id = await self._in_pool(
            self._open_stream, prepared, request.options.get("timeout")
        )
        state = convert_out.StreamState(prepared, request_id)
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


def _reraise(exc: Exception) -> NoReturn:
    """Raise the llmport error for ``exc`` (chained), or ``exc`` itself if it is not botocore's."""
    error = translate(exc)
    if error is None or error is exc:
        raise exc
    raise error from exc
