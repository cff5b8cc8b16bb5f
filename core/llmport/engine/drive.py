"""The two drivers: they perform the step machine's effects, and nothing else.

Both run :func:`~llmport.engine.steps.machine` the same way: send it the
answer of each effect, or throw it the exception the effect raised (after
:func:`~llmport.provider.translate.detach` drops the vendor exception a translated
error replaced), and hand every emitted event to the caller. Only the I/O
differs: blocking calls and ``time.sleep`` here, awaits there.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator
from typing import Any

from ..controls.limits import Acquire, HeldBefore, Permit, aacquire, acquire  # limits
from ..messages.types import Response, StreamEvent, ToolCall
from ..provider.deadline import aprepare_within, prepare_within, send_within, stream_within
from ..provider.translate import detach
from ..sessions.durable import astep, current_recorder, step
from ..tools.context import RunContext
from ..tools.policy import aask_approval, ask_approval
from ..tools.tool import ToolOutcome, run_coroutine_blocking
from .effects import (
    Approve,
    Effect,
    Emit,
    Invoke,
    LiveEvents,
    Prepare,
    RunTools,
    Send,
    Sleep,
    Steps,
    Stream,
)
from .tool_offer import tool_scope

__all__ = ["adrive", "drive"]


def _perform(effect: Effect) -> Any:
    kind = type(effect)
    if kind is Send:  # cut short at the run's deadline (client creation included)
        assert isinstance(effect, Send)
        return step(
            "model",
            _model_of(effect),
            lambda: send_within(effect.provider, effect.prepared, effect.deadline),
        )
    if kind is Prepare:  # a cold provider's first conversion: cut short at the deadline
        return prepare_within(effect.provider, effect.request, effect.deadline)  # type: ignore[union-attr]
    if kind is Sleep:
        return effect.backoff.sleep(effect.seconds)  # type: ignore[union-attr]
    if kind is RunTools:
        assert isinstance(effect, RunTools)
        token = tool_scope.set(effect.scope)
        try:
            if current_recorder() is not None:
                return [step("tool", c.name, _one_call(effect, c, x)) for c, x in _pairs(effect)]
            return effect.box.run(
                effect.calls, effect.contexts, effect.parallel, effect.timeout, effect.deadline
            )
        finally:
            tool_scope.reset(token)
    if kind is Approve:  # a durable run records the decision: its approver is asked once
        assert isinstance(effect, Approve)
        approve = effect
        return step(
            "approval",
            approve.check.tool_name,
            lambda: ask_approval(approve.approver, approve.check),
        )
    if kind is Acquire:  # limits: sleeps here, between the limiter's answers
        assert isinstance(effect, Acquire)
        return _capacity(effect)
    assert isinstance(effect, Invoke)
    result = effect.fn(**effect.kwargs)
    return run_coroutine_blocking(result) if inspect.isawaitable(result) else result


def _capacity(effect: Acquire) -> Permit:
    """Capacity for one request; in a durable run the wait is a step of its own, so a
    resumed run does not take capacity again for a request an earlier attempt took it for
    (its permit holds nothing: :class:`~llmport.controls.limits.HeldBefore`)."""
    if current_recorder() is None:
        return acquire(effect)
    held: list[Permit] = []

    def take() -> str:
        held.append(acquire(effect))
        return "acquired"  # what the record keeps: the permit itself is this process's

    step("limit", effect.gate.target, take)
    return held[0] if held else HeldBefore()


async def _acapacity(effect: Acquire) -> Permit:
    """Async :func:`_capacity`."""
    if current_recorder() is None:
        return await aacquire(effect)
    held: list[Permit] = []

    async def take() -> str:
        held.append(await aacquire(effect))
        return "acquired"

    await astep("limit", effect.gate.target, take)
    return held[0] if held else HeldBefore()


def _model_of(effect: Send | Stream) -> str:
    """The model a request goes to (names its durable step)."""
    return str(getattr(effect.prepared.request, "model", "") or type(effect.provider).__name__)


def _pairs(effect: RunTools) -> list[tuple[ToolCall, RunContext[Any]]]:
    return list(zip(effect.calls, effect.contexts, strict=True))


def _one_call(effect: RunTools, call: ToolCall, ctx: RunContext[Any]) -> Callable[[], ToolOutcome]:
    """One call of a turn on its own: in a durable run each tool call is a step of its own
    (so a turn's calls run one after another there, whatever ``parallel`` says)."""
    return lambda: effect.box.run([call], [ctx], False, effect.timeout, effect.deadline)[0]


def _aone_call(
    effect: RunTools, call: ToolCall, ctx: RunContext[Any]
) -> Callable[[], Awaitable[list[ToolOutcome]]]:
    return lambda: effect.box.arun([call], [ctx], False, effect.timeout, effect.deadline)


def _stream_deltas(effect: Stream) -> Generator[StreamEvent, None, Response]:
    """Read a stream to its end, yielding the caller's deltas; return the assembled answer."""
    reader = effect.reader
    deadline = effect.deadline
    events = stream_within(effect.provider, effect.prepared, deadline)
    try:
        for event in events:
            if (delta := reader.feed(event)) is not None:
                yield delta
                if reader.more:  # a structured output's delta and value
                    yield from reader.take_more()
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError("the run's deadline passed mid-stream")
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
    return reader.response()


def _drained(effect: Stream) -> Callable[[], Response]:
    """A durable run's stream: one step, read to its end (its text arrives at once)."""

    def work() -> Response:
        deltas = _stream_deltas(effect)
        while True:
            try:
                next(deltas)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]

    return work


_DONE = object()


def _tools_live(
    effect: RunTools | Invoke, live: LiveEvents
) -> Generator[StreamEvent, None, Any]:
    """Run the tools (or a handoff) in a worker thread; yield what they write; return the answer."""
    outcome: list[Any] = [None, None]

    def work() -> None:
        try:
            outcome[0] = _perform(effect)
        except BaseException as exc:  # handed to the driver's thread
            outcome[1] = exc
        finally:
            live.queue.put(_DONE)

    worker = threading.Thread(
        target=contextvars.copy_context().run, args=(work,), name="llmport-tools", daemon=True
    )
    worker.start()
    while (item := live.queue.get()) is not _DONE:
        yield item
    worker.join()
    if outcome[1] is not None:
        raise outcome[1]
    return outcome[0]


def drive(steps: Steps) -> Iterator[StreamEvent]:
    """Run ``steps`` synchronously; yield the events it emits."""
    value: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                effect = steps.throw(error) if error is not None else steps.send(value)
            except StopIteration:
                return
            value = error = None
            if type(effect) is Emit:
                yield effect.event
                continue
            try:
                if type(effect) is Stream and current_recorder() is not None:
                    value = step("model", _model_of(effect), _drained(effect))
                elif type(effect) is Stream:  # the caller gets text as it arrives
                    value = yield from _stream_deltas(effect)
                elif isinstance(effect, (RunTools, Invoke)) and effect.events is not None:
                    value = yield from _tools_live(effect, effect.events)
                else:
                    value = _perform(effect)
            except Exception as exc:
                error = detach(exc)
    finally:
        steps.close()


async def _atools_live(effect: RunTools | Invoke, live: LiveEvents) -> AsyncIterator[Any]:
    """Run the tools (or a handoff) as a task; yield what they write, then ``(_DONE, answer)``."""
    events: asyncio.Queue[Any] = asyncio.Queue()
    live.bind(asyncio.get_running_loop(), events)
    task = asyncio.ensure_future(_aperform(effect))
    try:
        while not task.done():
            getter = asyncio.ensure_future(events.get())
            await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                yield getter.result()
            else:
                getter.cancel()
        await asyncio.sleep(0)  # writes scheduled by worker threads before they returned
        while not events.empty():
            yield events.get_nowait()
        yield (_DONE, task.result())
    finally:
        if not task.done():  # the caller abandoned the stream
            task.cancel()


def _asend(effect: Send) -> Awaitable[Response]:
    """The awaitable of one model request: the provider's own coroutine outside a
    durable run (no wrapper coroutine or closure held for each call in flight), else
    a step of the run."""
    send = effect.provider.asend
    if current_recorder() is None:
        return send(effect.prepared)
    return astep("model", _model_of(effect), lambda: send(effect.prepared))


async def _aperform(effect: Effect) -> Any:
    kind = type(effect)
    if kind is Send:
        assert isinstance(effect, Send)
        return await _asend(effect)
    if kind is Prepare:  # a cold provider's first conversion, off the event loop
        return await aprepare_within(effect.provider, effect.request, effect.deadline)  # type: ignore[union-attr]
    if kind is Sleep:
        return await effect.backoff.async_sleep(effect.seconds)  # type: ignore[union-attr]
    if kind is RunTools:
        assert isinstance(effect, RunTools)
        token = tool_scope.set(effect.scope)
        try:
            if current_recorder() is not None:
                return [
                    (await astep("tool", c.name, _aone_call(effect, c, x)))[0]
                    for c, x in _pairs(effect)
                ]
            return await effect.box.arun(
                effect.calls, effect.contexts, effect.parallel, effect.timeout, effect.deadline
            )
        finally:
            tool_scope.reset(token)
    if kind is Approve:  # a durable run records the decision: its approver is asked once
        assert isinstance(effect, Approve)
        approve = effect
        return await astep(
            "approval",
            approve.check.tool_name,
            lambda: aask_approval(approve.approver, approve.check),
        )
    if kind is Acquire:  # limits: awaits here, never blocking the loop
        assert isinstance(effect, Acquire)
        return await _acapacity(effect)
    assert isinstance(effect, Invoke)
    result = effect.fn(**effect.kwargs)
    return await result if inspect.isawaitable(result) else result


async def _astream_deltas(effect: Stream) -> AsyncIterator[StreamEvent]:
    """Read a stream to its end (the reader assembles the answer), yielding the deltas."""
    reader, deadline = effect.reader, effect.deadline
    events = effect.provider.asend_stream(effect.prepared).__aiter__()
    try:
        while True:
            try:
                if deadline is None:
                    event = await events.__anext__()
                else:
                    async with asyncio.timeout_at(deadline):
                        event = await events.__anext__()
            except StopAsyncIteration:
                break
            if (delta := reader.feed(event)) is not None:
                yield delta
                if reader.more:  # a structured output's delta and value
                    for more in reader.take_more():
                        yield more
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()


def _adrained(effect: Stream) -> Callable[[], Awaitable[Response]]:
    """Async :func:`_drained`."""

    async def work() -> Response:
        async for _ in _astream_deltas(effect):
            pass
        return effect.reader.response()

    return work


async def adrive(steps: Steps) -> AsyncIterator[StreamEvent]:
    """Run ``steps`` on the event loop; yield the events it emits."""
    value: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                effect = steps.throw(error) if error is not None else steps.send(value)
            except StopIteration:
                return
            value = error = None
            if type(effect) is Emit:
                yield effect.event
                continue
            try:
                # The loop's clock is time.monotonic(), the deadline's clock.
                deadline = getattr(effect, "deadline", None)
                if type(effect) is Stream and current_recorder() is not None:
                    value = await astep("model", _model_of(effect), _adrained(effect))
                elif type(effect) is Stream:  # the caller gets text as it arrives
                    async for delta in _astream_deltas(effect):
                        yield delta
                    value = effect.reader.response()
                elif isinstance(effect, (RunTools, Invoke)) and effect.events is not None:
                    async for item in _atools_live(effect, effect.events):
                        if type(item) is tuple and item and item[0] is _DONE:
                            value = item[1]
                        else:
                            yield item
                elif type(effect) is Send:
                    if deadline is None:
                        value = await _asend(effect)
                    else:
                        async with asyncio.timeout_at(deadline):
                            value = await _asend(effect)
                else:
                    value = await _aperform(effect)
            except Exception as exc:
                error = detach(exc)
    finally:
        steps.close()
