"""SDK clients, cached once for every plugin.

:class:`ClientCache` holds one lazily created sync client, and one async
client **per event loop**: an async HTTP pool belongs to the loop it was
opened in, so a client shared across loops fails ("Event loop is closed")
the second time ``asyncio.run`` is called. Each async client is closed
inside its own loop when that loop shuts down (``asyncio.run`` cancels the
keeper task, which closes the client), and every client is closed by
:meth:`ClientCache.close` (``rt.close()`` / ``with Runtime(...)``).

Async paths get their client with ``await cache.aclient()``: a cold client
is made in a worker thread (importing a vendor SDK and building its client
takes seconds on a loaded machine), so the event loop keeps running and a
caller's ``deadline=`` can fire meanwhile (it bounds client creation too).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import importlib.util
import inspect
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

__all__ = ["ClientCache", "async_transport"]

S = TypeVar("S")
A = TypeVar("A")
T = TypeVar("T")


def async_transport(settings: Mapping[str, Any]) -> str:
    """The async HTTP transport a plugin's SDK client should use: ``"aiohttp"`` or ``"httpx"``.

    The ``async_transport`` setting when given; else ``"aiohttp"`` when
    aiohttp is installed (the OpenAI and Anthropic plugins depend on it: at
    500 concurrent calls it is 3-4x faster than the SDKs' default httpx
    pool, see docs/performance.md), else ``"httpx"``. Sync clients always
    stay on httpx.
    """
    chosen = settings.get("async_transport")
    if chosen is not None:
        if chosen not in ("aiohttp", "httpx"):
            from ..errors import ConfigError

            raise ConfigError(f"async_transport must be 'aiohttp' or 'httpx', not {chosen!r}")
        return str(chosen)
    return "aiohttp" if _has_aiohttp() else "httpx"


@functools.cache
def _has_aiohttp() -> bool:
    return importlib.util.find_spec("aiohttp") is not None


def _close_sync(client: Any) -> None:
    close = getattr(client, "close", None)
    if callable(close):
        result = close()
        if inspect.isawaitable(result):  # an async client closed from sync code: best effort
            with contextlib.suppress(Exception):
                result.close()  # type: ignore[attr-defined]


async def _close_async(client: Any) -> None:
    for name in ("aclose", "close"):
        close = getattr(client, name, None)
        if callable(close):
            result = close()
            if inspect.isawaitable(result):
                await result
            return


#: How long a keeper sleeps: long enough to outlive any loop; the loop's timer
#: heap holds the sleep strongly, so the keeper is never garbage collected.
_FOREVER = 365 * 24 * 3600.0


class _Closer(Generic[A]):
    """Closes one async client once, whoever asks first (the keeper or ``aclose``)."""

    __slots__ = ("client", "close", "done")

    def __init__(self, client: A, close: Callable[[A], Any]) -> None:
        self.client = client
        self.close = close
        self.done = False

    async def __call__(self) -> None:
        if self.done:
            return
        self.done = True
        with contextlib.suppress(Exception):
            result = self.close(self.client)
            if inspect.isawaitable(result):
                await result


async def _keep(closer: _Closer[Any]) -> None:
    """Sleep until cancelled (loop shutdown or ``close()``), then close the client here."""
    try:
        await asyncio.sleep(_FOREVER)
    finally:
        await closer()


async def off_loop(fn: Callable[[], T]) -> T:
    """``fn()`` in a daemon thread of its own, awaited.

    Not ``asyncio.to_thread``: ``asyncio.run`` waits for the default
    executor's threads when it ends, so a run given up at its deadline would
    still keep ``asyncio.run`` until the SDK's import finished (seconds).
    Context variables are carried, as ``to_thread`` does.
    """
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            result = context.run(fn)
        except BaseException as exc:
            with contextlib.suppress(concurrent.futures.InvalidStateError):  # awaiter gone
                future.set_exception(exc)
        else:
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                future.set_result(result)

    threading.Thread(target=work, name="llmport-client-build", daemon=True).start()
    return await asyncio.wrap_future(future)


def _retrieved(task: asyncio.Task[Any]) -> None:
    """Mark a build's failure as seen: its callers may all have been cancelled meanwhile."""
    if not task.cancelled():
        task.exception()


class ClientCache(Generic[S, A]):
    """A sync client made on first use, and one async client per running event loop.

    ``make_sync()`` / ``make_async()`` build the SDK clients (importing the
    SDK there, lazily). ``close_async(client)`` closes an async client inside
    its loop (default: ``await client.aclose()`` or ``await client.close()``).
    Thread-safe; nothing is shared between caches.

    :meth:`aclient` runs ``make_async`` in a worker thread (a daemon thread of
    its own: ``asyncio.run`` does not wait for it when it ends). A client with a
    part bound to the running loop (an ``aiohttp.ClientSession`` must be made
    inside it) gives ``warm_async`` instead: it runs in the worker thread
    (importing the SDK: the slow part) and ``make_async`` then runs on the loop.
    """

    def __init__(
        self,
        make_sync: Callable[[], S],
        make_async: Callable[[], A] | None = None,
        *,
        close_async: Callable[[A], Any] | None = None,
        warm_async: Callable[[], object] | None = None,
    ) -> None:
        self._make_sync = make_sync
        self._make_async = make_async
        self._close_async = close_async or _close_async
        self._warm_async = warm_async
        self._lock = threading.Lock()
        self._sync: S | None = None
        self._async: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[A, _Closer[A], asyncio.Task[None]]
        ] = weakref.WeakKeyDictionary()
        # The running build of a loop's client (aclient), shared by concurrent first calls.
        self._building: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[A]] = (
            weakref.WeakKeyDictionary()
        )

    def sync(self) -> S:
        """The sync client (created once, on first use)."""
        client = self._sync
        if client is not None:
            return client
        with self._lock:
            if self._sync is None:
                self._sync = self._make_sync()
            return self._sync

    def for_loop(self) -> A:
        """The async client of the running event loop (created on first use in that loop)."""
        loop = asyncio.get_running_loop()
        entry = self._async.get(loop)
        if entry is not None:
            return entry[0]
        make = self._factory()
        with self._lock:
            entry = self._async.get(loop) or self._keep_for(loop, make())
            return entry[0]

    async def aclient(self) -> A:
        """The running loop's async client; a cold one is made without blocking the loop.

        The build runs in a worker thread (see the class docstring) as a task
        of its own: a caller cancelled meanwhile (its deadline fired) leaves
        it to finish, and the client it makes is cached for the next call
        and closed with the loop like any other. Concurrent first calls share
        one build.
        """
        loop = asyncio.get_running_loop()
        entry = self._async.get(loop)
        if entry is not None:
            return entry[0]
        self._factory()  # a cache without an async factory fails here, not in the task
        building = self._building.get(loop)
        if building is None:
            building = self._building[loop] = loop.create_task(self._build(loop))
            building.add_done_callback(_retrieved)
        return await asyncio.shield(building)

    async def _build(self, loop: asyncio.AbstractEventLoop) -> A:
        make = self._factory()
        try:
            if self._warm_async is None:
                client = await off_loop(make)
            else:
                await off_loop(self._warm_async)
                return self.for_loop()
            with self._lock:  # for_loop() may have made one meanwhile: the first one stays
                entry = self._async.get(loop) or self._keep_for(loop, client)
            if entry[0] is not client:
                await _Closer(client, self._close_async)()
            return entry[0]
        finally:
            self._building.pop(loop, None)

    def _keep_for(
        self, loop: asyncio.AbstractEventLoop, client: A
    ) -> tuple[A, _Closer[A], asyncio.Task[None]]:
        """Cache ``client`` as ``loop``'s, closed when the loop shuts down (lock held)."""
        closer = _Closer(client, self._close_async)
        entry = self._async[loop] = (client, closer, loop.create_task(_keep(closer)))
        return entry

    def _factory(self) -> Callable[[], A]:
        if self._make_async is None:
            raise TypeError("this ClientCache has no async client factory")
        return self._make_async

    @property
    def open_loops(self) -> int:
        """How many event loops have a live async client (for tests and diagnostics)."""
        return len(self._async)

    async def aclose(self) -> None:
        """Close the running loop's async client now (and forget it)."""
        with self._lock:
            entry = self._async.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            _, closer, keeper = entry
            await closer()  # also when the keeper never got to run
            keeper.cancel()

    def close(self) -> None:
        """Close the sync client and ask every open loop to close its async client."""
        with self._lock:
            sync, self._sync = self._sync, None
            entries = list(self._async.items())
            self._async.clear()
        if sync is not None:
            _close_sync(sync)
        for loop, (_, _, keeper) in entries:
            if loop.is_closed():
                continue
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                keeper.cancel()
            else:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(keeper.cancel)
