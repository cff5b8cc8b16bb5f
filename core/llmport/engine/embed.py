"""``rt.embed`` / ``rt.aembed``: plan, send the parts, join.

The call is planned once (:mod:`.embed_plan`: the model routed, every input
checked, the cache looked up, the rest split by the model's limits and each
part prepared, so a bad input fails typed before any request). Each part
runs the step machine of :mod:`.request_steps` (capacity, send, retry pause,
budget): :func:`embed` in worker threads, :func:`aembed` as tasks, at most
:data:`~.embed_plan.PARTS_IN_FLIGHT` at once (fewer when a ``Limit`` says
so). :mod:`.embed_join` writes each answer into one float32 buffer at its
inputs' rows as it arrives. A part that fails fails the call with its own
typed error, naming the inputs it carried; ``deadline=`` bounds the whole and
``Runtime(timeout=)`` each request (:mod:`.request_steps`).

Every call is reported (:class:`Observed`): the runtime's usage, the observe
hooks (``embed_start`` / ``embed_end``: OpenTelemetry's ``embeddings`` span)
and, inside an ``@agentic_function``, an ``embed`` node in the session DAG
(:func:`~llmport.sessions.agentic.record_embed`).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any

from ..errors import LlmportError, RunTimeout
from ..messages.embeddings import Embeddings
from ..messages.types import Usage
from .embed_join import Joiner
from .embed_plan import PARTS_IN_FLIGHT, EmbedPlan, EmbedSettings, Part, plan_embed, split_inputs
from .observed import ObservedCall
from .request_steps import arun_part, part_steps, run_part

__all__ = [
    "PARTS_IN_FLIGHT",
    "Observed",
    "aembed",
    "embed",
    "part_steps",
    "plan_embed",
    "split_inputs",
]


def _failed(part: Part, total: int, exc: BaseException) -> BaseException:
    """``exc`` naming the inputs its part carried (the same typed error)."""
    if isinstance(exc, LlmportError) and exc.args:
        where = part.describe(total)
        exc.args = (f"embedding {where}: {exc.args[0]}", *exc.args[1:])
        exc.embed_inputs = part.rows  # type: ignore[attr-defined]
    return exc


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------


def embed(settings: EmbedSettings, inputs: Any, **params: Any) -> Embeddings:
    """Plan, send the parts in worker threads, join (see the module docstring)."""
    plan = plan_embed(settings, inputs, **params)
    call = Observed(settings, plan)
    joiner = Joiner(plan)
    try:
        if len(plan.parts) == 1 and plan.deadline is None:  # no thread for one request
            part = plan.parts[0]
            _deliver(plan, part, lambda: _sent_and_joined(plan, joiner, threading.Lock())(part))
        elif plan.parts:
            _embed_parts(plan, joiner)
        result = joiner.result()
    except BaseException as exc:
        call.failed(exc, joiner.usage)
        raise
    call.done(result)
    return result


def _sent_and_joined(
    plan: EmbedPlan, joiner: Joiner, lock: threading.Lock
) -> Callable[[Part], None]:
    """Send a part and join its answer, in the thread that sent it: the answer is let go
    there and then, never held in a future until the caller's thread gets to it."""

    def run(part: Part) -> None:
        answer = run_part(plan, part)
        with lock:  # the joiner's buffer, usage and cache writes, one part at a time
            joiner.add(part, answer)

    return run


def _deliver(plan: EmbedPlan, part: Part, run: Callable[[], object]) -> None:
    """``run()`` (``part`` sent and joined); its error, the send's or the join's, naming
    the part's inputs."""
    try:
        run()
    except LlmportError as exc:
        error = _failed(part, plan.count, exc)
    else:
        return
    raise error from None


def _embed_parts(plan: EmbedPlan, joiner: Joiner) -> None:
    """The parts in a thread pool, each answer joined (and let go) by the thread that
    received it: only the parts in flight are held beside the buffer."""
    workers = min(len(plan.parts), PARTS_IN_FLIGHT)
    pool = ThreadPoolExecutor(workers, thread_name_prefix="llmport-embed")
    run = _sent_and_joined(plan, joiner, threading.Lock())
    try:
        futures = {pool.submit(run, part): part for part in plan.parts}
        pending = set(futures)
        while pending:
            timeout = None if plan.deadline is None else max(0.0, plan.deadline - time.monotonic())
            done, pending = wait(pending, timeout, FIRST_COMPLETED)
            if not done:
                raise RunTimeout(plan.deadline_seconds or 0.0)
            for future in done:
                _deliver(plan, futures.pop(future), future.result)
            del done
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


async def aembed(settings: EmbedSettings, inputs: Any, **params: Any) -> Embeddings:
    """Async :func:`embed`: the parts as tasks, at most :data:`PARTS_IN_FLIGHT` at once."""
    plan = await _aplan(settings, inputs, params)
    call = Observed(settings, plan)
    joiner = Joiner(plan)
    slots = asyncio.Semaphore(PARTS_IN_FLIGHT)

    async def one(part: Part) -> None:
        async with slots:
            answer = await arun_part(plan, part)
        joiner.add(part, answer)

    async def every_part() -> None:
        async with asyncio.TaskGroup() as group:
            for part in plan.parts:
                group.create_task(_named(plan, part, one))

    error = await _settle(every_part(), plan)
    if error is None:
        try:
            result = joiner.result()
        except BaseException as exc:
            error = exc
    if error is not None:
        call.failed(error, joiner.usage)
        raise error
    call.done(result)
    return result


async def _aplan(settings: EmbedSettings, inputs: Any, params: dict[str, Any]) -> EmbedPlan:
    """:func:`plan_embed` off the event loop when a cache store is read (blocking I/O)."""
    if settings.embed_cache is None:
        return plan_embed(settings, inputs, **params)
    return await asyncio.to_thread(plan_embed, settings, inputs, **params)


async def _settle(work: Any, plan: EmbedPlan) -> BaseException | None:
    """Await ``work`` within the deadline; the error to raise (outside any ``except``)."""
    remaining = None if plan.deadline is None else max(0.0, plan.deadline - time.monotonic())
    try:
        await asyncio.wait_for(work, remaining)
    except TimeoutError:
        return RunTimeout(plan.deadline_seconds or 0.0)
    except BaseExceptionGroup as group:
        return _first_error(group)
    return None


async def _named(plan: EmbedPlan, part: Part, one: Callable[[Part], Any]) -> None:
    try:
        await one(part)
    except LlmportError as exc:
        error = _failed(part, plan.count, exc)
    else:
        return
    raise error from None


def _first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            return _first_error(exc)
        return exc
    return group


# ---------------------------------------------------------------------------
# What every call reports: the observe hooks, the runtime's usage, the DAG node
# ---------------------------------------------------------------------------


class Observed(ObservedCall):
    """One embed call as the observers, the runtime's usage and the session DAG see it."""

    __slots__ = ()
    kind = "embed"
    plan: EmbedPlan

    def _payload(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "model": plan.model,
            "inputs": plan.count,
            "cached": len(plan.cached),
            "requests": len(plan.parts),
        }

    def done(self, result: Embeddings) -> None:
        self._finish(result.usage, result.dimensions, None)

    def failed(self, error: BaseException, usage: Usage) -> None:
        self._finish(usage, 0, error)

    def _finish(self, usage: Usage, dimensions: int, error: BaseException | None) -> None:
        from ..sessions.agentic import record_embed

        plan = self.plan
        node = record_embed(
            model=plan.qualified,
            hashes=plan.hashes,
            usage=usage,
            dimensions=dimensions,
            duration=time.monotonic() - plan.started,
            error=error,
        )
        self._report(usage, node, {"dimensions": dimensions}, error)
