"""A sync model request bounded by the run's ``deadline=`` (a late answer is a RunTimeout).

A plugin's sync ``send`` (or the first event of ``send_stream``) may spend
its first call importing the vendor SDK and creating the client (seconds,
cold) before the HTTP request even starts, with an HTTP timeout computed
before all that. :func:`send_within` runs the send in a worker thread and
gives up on it at the deadline (:func:`stream_within` waits for each event
until then), so the run's ``RunTimeout`` comes within milliseconds of the
deadline whatever the send was doing. The abandoned send finishes on its
own (the client it was making is kept for the next call; its answer is
dropped).

Providers that run the caller's own code (a ``call=`` function, a
:class:`~llmport.testing.Script`) say ``cut_at_deadline = False``: their
code stays in the caller's thread (it may hold thread-bound resources), and
an answer that comes after the deadline raises ``RunTimeout`` with the late
answer on it (see the engine's attempts).
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ..errors import ProviderTimeoutError
from ..messages.types import ProviderEvent, Request, Response
from .clients import off_loop
from .contract import Prepared, Provider

__all__ = ["aprepare_within", "prepare_within", "send_within", "stream_within"]

T = TypeVar("T")


def send_within(provider: Provider, prepared: Prepared, deadline: float | None) -> Response:
    """``provider.send(prepared)``, given up at ``deadline`` (``time.monotonic()``)."""
    if deadline is None or not getattr(provider, "cut_at_deadline", True):
        return provider.send(prepared)
    return _within(
        lambda: provider.send(prepared),
        deadline,
        provider.name,
        "no answer by the run's deadline (the request was given up)",
    )


def prepare_within(provider: Provider, request: Request, deadline: float | None) -> Prepared:
    """``provider.prepare(request)``; the first time, given up at ``deadline``.

    A provider's first conversion may import its vendor SDK (seconds, cold);
    later ones are plain CPU work on the caller's thread.
    """
    if provider.converted or deadline is None or not getattr(provider, "cut_at_deadline", True):
        return _converted(provider, request)
    return _within(
        lambda: _converted(provider, request),
        deadline,
        provider.name,
        "the run's deadline passed while the request was converted (the SDK was loading)",
    )


async def aprepare_within(
    provider: Provider, request: Request, deadline: float | None
) -> Prepared:
    """:func:`prepare_within` for the event loop: a cold first conversion never blocks it."""
    if provider.converted or not getattr(provider, "cut_at_deadline", True):
        return _converted(provider, request)
    converting = off_loop(lambda: _converted(provider, request))
    if deadline is None:
        return await converting
    try:
        return await asyncio.wait_for(converting, max(0.0, deadline - time.monotonic()))
    except TimeoutError:
        raise ProviderTimeoutError(
            "the run's deadline passed while the request was converted (the SDK was loading)",
            provider=provider.name,
        ) from None


def _converted(provider: Provider, request: Request) -> Prepared:
    prepared = provider.prepare(request) or Prepared(request)  # None: the first contract
    provider.converted = True
    return prepared


def _within(fn: Callable[[], T], deadline: float, name: str, late: str) -> T:
    """``fn()`` in a worker thread, given up at ``deadline`` (it finishes on its own)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise ProviderTimeoutError("the run's deadline passed before the request", provider=name)
    outcome: list[Any] = []
    done = threading.Event()
    context = contextvars.copy_context()  # the run's tracing, redaction and scopes

    def work() -> None:
        try:
            outcome.append((True, context.run(fn)))
        except BaseException as exc:  # handed to the caller's thread below
            outcome.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=work, name="llmport-send", daemon=True).start()
    if not done.wait(remaining):
        raise ProviderTimeoutError(late, provider=name)
    ok, value = outcome[0]
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


def stream_within(
    provider: Provider, prepared: Prepared, deadline: float | None
) -> Iterator[ProviderEvent]:
    """``provider.send_stream(prepared)``; waiting for an event ends at ``deadline``."""
    if deadline is None or not getattr(provider, "cut_at_deadline", True):
        return provider.send_stream(prepared)
    return _pulled(provider, prepared, deadline)


def _pulled(provider: Provider, prepared: Prepared, deadline: float) -> Iterator[ProviderEvent]:
    """The stream's events, pulled by a worker thread and handed over through a queue."""
    handed: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    stop = threading.Event()
    context = contextvars.copy_context()

    def work() -> None:
        events: Any = None
        try:
            events = context.run(provider.send_stream, prepared)
            pending = iter(events)
            while not stop.is_set():
                try:
                    event = context.run(next, pending)
                except StopIteration:
                    break
                handed.put(("event", event))
            handed.put(("end", None))
        except BaseException as exc:  # handed to the caller's thread
            handed.put(("error", exc))
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                context.run(close)

    threading.Thread(target=work, name="llmport-stream", daemon=True).start()
    try:
        while True:
            try:
                kind, value = handed.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise ProviderTimeoutError(
                    "no event by the run's deadline (the stream was given up)",
                    provider=provider.name,
                ) from None
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()  # the worker closes the vendor stream at its next event
