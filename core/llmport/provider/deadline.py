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

Before any of that, a cold run loads the plugins and makes its provider
(entry points imported, a vendor plugin's modules loaded: seconds, the
first time in a process). :func:`setup_within` runs that setup in a worker
thread too when the call has a deadline, and gives it up at the deadline
with :class:`~llmport.errors.RunTimeout` (I7: the deadline bounds
everything inside the run, client creation included).

An embedding request is bounded the same way (:func:`embed_within`,
:func:`aembed_within`), at the earlier of the runtime's ``timeout=`` (seconds
per request) and the call's ``deadline=``, whatever the plugin's HTTP client
does: a stalled vendor is a :class:`~llmport.errors.ProviderTimeoutError`
(retried like any timeout) in bounded time on every embedding vendor,
third-party plugins included. An image request is bounded the same way
(:func:`image_within`, :func:`aimage_within`).

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
from collections.abc import Callable, Coroutine, Iterator, Mapping
from typing import Any, TypeVar

from ..errors import ProviderTimeoutError, RunTimeout
from ..messages.embeddings import EmbedResponse
from ..messages.images import ImageResponse
from ..messages.types import ProviderEvent, Request, Response
from .clients import off_loop
from .contract import Prepared, Provider
from .embedding import PreparedEmbed
from .imaging import PreparedImage

__all__ = [
    "aembed_within",
    "aimage_within",
    "aprepare_within",
    "early_deadline",
    "embed_within",
    "image_within",
    "prepare_within",
    "send_within",
    "setup_within",
    "stream_within",
]

T = TypeVar("T")


def send_within(provider: Provider, prepared: Prepared, deadline: float | None) -> Response:
    """``provider.send(prepared)``, given up at ``deadline`` (``time.monotonic()``)."""
    if deadline is None or not getattr(provider, "cut_at_deadline", True):
        return provider.send(prepared)
    return _within(
        lambda: provider.send(prepared),
        deadline,
        _given_up(provider.name, "no answer by the run's deadline (the request was given up)"),
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
        _given_up(
            provider.name,
            "the run's deadline passed while the request was converted (the SDK was loading)",
        ),
    )


async def aprepare_within(provider: Provider, request: Request, deadline: float | None) -> Prepared:
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


def early_deadline(call: Mapping[str, Any], runtime: Mapping[str, Any]) -> float | None:
    """The run's ``deadline=`` as known when a call starts: the call's, else the runtime's.

    A value that is not a number of seconds > 0 is None here: the run's plan
    reports it, in its turn among the input errors.
    """
    value = call["deadline"] if "deadline" in call else runtime.get("deadline")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        return None
    return float(value)


def setup_within(setup: Callable[[], T], started: float, seconds: float | None) -> T:
    """``setup()`` (routing: plugins loaded, the provider made), given up ``seconds`` after
    ``started`` (``time.monotonic()``) with :class:`~llmport.errors.RunTimeout`.

    With no deadline it runs here, in the caller's thread.
    """
    if seconds is None:
        return setup()
    return _within(setup, started + seconds, lambda before: RunTimeout(seconds))


#: Why an embedding or image request was given up (the ProviderTimeoutError's message).
_EMBED_GIVEN_UP = "no answer within the runtime's timeout= or the call's deadline= (given up)"


def embed_within(
    provider: Provider, prepared: PreparedEmbed, cut_at: float | None
) -> EmbedResponse:
    """``provider.send_embed(prepared)``, given up at ``cut_at`` (``time.monotonic()``).

    With no ``cut_at`` (no timeout, no deadline) it runs here, in the caller's thread.
    """
    return _request_within(provider, lambda: provider.send_embed(prepared), cut_at)


async def aembed_within(
    provider: Provider, prepared: PreparedEmbed, cut_at: float | None
) -> EmbedResponse:
    """Async :func:`embed_within`: the send is cancelled at ``cut_at``."""
    return await _arequest_within(provider, provider.asend_embed(prepared), cut_at)


def image_within(
    provider: Provider, prepared: PreparedImage, cut_at: float | None
) -> ImageResponse:
    """``provider.send_image(prepared)``, given up at ``cut_at``, as :func:`embed_within`."""
    return _request_within(provider, lambda: provider.send_image(prepared), cut_at)


async def aimage_within(
    provider: Provider, prepared: PreparedImage, cut_at: float | None
) -> ImageResponse:
    """Async :func:`image_within`: the send is cancelled at ``cut_at``."""
    return await _arequest_within(provider, provider.asend_image(prepared), cut_at)


def _request_within(provider: Provider, send: Callable[[], T], cut_at: float | None) -> T:
    """``send()`` (one non-chat request), given up at ``cut_at`` in a worker thread."""
    if cut_at is None or not getattr(provider, "cut_at_deadline", True):
        return send()
    return _within(send, cut_at, _given_up(provider.name, _EMBED_GIVEN_UP))


async def _arequest_within(
    provider: Provider, sending: Coroutine[Any, Any, T], cut_at: float | None
) -> T:
    """Await ``sending`` (one non-chat request), cancelled at ``cut_at``."""
    if cut_at is None or not getattr(provider, "cut_at_deadline", True):
        return await sending
    remaining = cut_at - time.monotonic()
    if remaining <= 0:
        sending.close()  # never started: no "never awaited" warning
        raise _given_up(provider.name, _EMBED_GIVEN_UP)(True)
    try:
        return await asyncio.wait_for(sending, remaining)
    except TimeoutError as exc:
        if isinstance(exc, ProviderTimeoutError):  # the vendor's own timeout, as it said it
            raise
        raise _given_up(provider.name, _EMBED_GIVEN_UP)(False) from None


def _converted(provider: Provider, request: Request) -> Prepared:
    prepared = provider.prepare(request) or Prepared(request)  # None: the first contract
    provider.converted = True
    return prepared


def _given_up(name: str, late: str) -> Callable[[bool], Exception]:
    """The error of a provider call given up at the deadline (``before`` it started, or late)."""

    def error(before: bool) -> Exception:
        reason = "the run's deadline passed before the request" if before else late
        return ProviderTimeoutError(reason, provider=name)

    return error


def _within(fn: Callable[[], T], deadline: float, expired: Callable[[bool], Exception]) -> T:
    """``fn()`` in a worker thread, given up at ``deadline`` (it finishes on its own).

    ``expired(before)`` is the error raised then: ``before`` when the
    deadline had passed before ``fn`` started.
    """
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise expired(True)
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
        raise expired(False)
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
