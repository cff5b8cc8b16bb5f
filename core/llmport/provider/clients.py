"""SDK clients, cached once for every plugin.

:class:`ClientCache` holds one lazily created sync client, and one async
client **per event loop**: an async HTTP pool belongs to the loop it was
opened in, so a client shared across loops fails ("Event loop is closed")
the second time ``asyncio.run`` is called. Each async client is closed
inside its own loop when that loop shuts down (``asyncio.run`` cancels the
keeper task, which closes the client), and every client is closed by
:meth:`ClientCache.close` (``rt.close()`` / ``with Runtime(...)``).
"""

from __future__ import annotations

import asyncio
import contextlib
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


class ClientCache(Generic[S, A]):
    """A sync client made on first use, and one async client per running event loop.

    ``make_sync()`` / ``make_async()`` build the SDK clients (importing the
    SDK there, lazily). ``close_async(client)`` closes an async client inside
    its loop (default: ``await client.aclose()`` or ``await client.close()``).
    Thread-safe; nothing is shared between caches.
    """

    def __init__(
        self,
        make_sync: Callable[[], S],
        make_async: Callable[[], A] | None = None,
        *,
        close_async: Callable[[A], Any] | None = None,
    ) -> None:
        self._make_sync = make_sync
        self._make_async = make_async
        self._close_async = close_async or _close_async
        self._lock = threading.Lock()
        self._sync: S | None = None
        self._async: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[A, _Closer[A], asyncio.Task[None]]
        ] = weakref.WeakKeyDictionary()

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
        if self._make_async is None:
            raise TypeError("this ClientCache has no async client factory")
        with self._lock:
            entry = self._async.get(loop)
            if entry is None:
                client = self._make_async()
                closer = _Closer(client, self._close_async)
                entry = self._async[loop] = (client, closer, loop.create_task(_keep(closer)))
            return entry[0]

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
