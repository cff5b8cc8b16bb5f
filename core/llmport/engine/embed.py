"""``rt.embed`` / ``rt.aembed``: one step machine, two drivers (SPEC §27).

The call is planned once (:func:`plan_embed`): the model routed, every input
checked, the list split into parts by the model's limits
(:func:`split_inputs`) and every part prepared by its provider, so a bad
input fails typed before any request. Each part then runs
:func:`part_steps`, a generator of effects (wait for rate-limit capacity,
send, sleep before a retry) that both drivers perform: :func:`embed` in
worker threads, :func:`aembed` as tasks, at most :data:`PARTS_IN_FLIGHT` at
once (and fewer when a ``Limit`` says so). The answers are written straight
into one float32 buffer at their inputs' offsets and their usage summed
into one :class:`~llmport.messages.types.Usage`. A part that fails fails the
call with its own typed error, naming the inputs it carried.
"""

from __future__ import annotations

import asyncio
import math
import time
from array import array
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ..controls.limits import Acquire, Gate, aacquire, acquire, rate_info_of_error  # limits
from ..controls.retry import Attempts, Backoff, after_failure
from ..errors import LlmportError, OptionError, RunTimeout, UnsupportedFeatureError
from ..messages.embeddings import (
    Embeddings,
    EmbedRequest,
    EmbedResponse,
    InputType,
    Truncate,
    float32_rows,
)
from ..messages.estimate import text_tokens
from ..messages.types import ModelCapabilities, Usage
from ..provider.embedding import EMBEDDINGS, PreparedEmbed, check_embed_inputs, no_embeddings
from ..provider.translate import detach

if TYPE_CHECKING:
    from ..provider.contract import Provider
    from .settings import RunSettings

__all__ = [
    "PARTS_IN_FLIGHT",
    "EmbedPlan",
    "Part",
    "aembed",
    "embed",
    "part_steps",
    "plan_embed",
    "split_inputs",
]

#: Parts of one call sent at once when no ``Limit`` bounds it (the OpenAI SDK's
#: own connection pool keeps as many open).
PARTS_IN_FLIGHT = 8

_INPUT_TYPES = ("query", "document")
_TRUNCATES = ("start", "end")


@dataclass(slots=True, frozen=True)
class Part:
    """Inputs ``start`` to ``stop - 1`` of the call, sent as one request."""

    start: int
    stop: int
    prepared: PreparedEmbed

    def describe(self, total: int) -> str:
        """Which inputs, as a user counts them (0-based, like their list)."""
        if self.stop - self.start == 1:
            return f"input {self.start} of {total}"
        return f"inputs {self.start}-{self.stop - 1} of {total}"


@dataclass(slots=True)
class EmbedPlan:
    """Everything decided before the first request of one embed call."""

    provider: Provider
    model: str
    qualified: str
    caps: ModelCapabilities
    count: int
    parts: list[Part]
    max_attempts: int
    backoff: Backoff
    gate: Gate | None = None
    deadline: float | None = None
    deadline_seconds: float | None = None
    normalize: bool = False
    attempts: list[Attempts] = field(default_factory=list)


# ---------------------------------------------------------------------------
# Planning: every check before the first request
# ---------------------------------------------------------------------------


def plan_embed(
    settings: RunSettings,
    inputs: Any,
    *,
    model: str | None = None,
    input_type: InputType | None = None,
    dimensions: int | None = None,
    truncate: Truncate | None = None,
    vendor: Mapping[str, Mapping[str, Any]] | None = None,
    normalize: bool = False,
    deadline: float | None = None,
) -> EmbedPlan:
    """Route, check and split one embed call; prepare every part (no I/O)."""
    started = time.monotonic()
    texts = check_embed_inputs(inputs)
    seconds = _check_options(input_type, dimensions, truncate, normalize, deadline)
    provider, name, qualified, _, plain = settings.route(model)
    if plain:
        raise UnsupportedFeatureError(
            "call", name, EMBEDDINGS, "a call= function only chats; name an embedding model"
        )
    base = EmbedRequest(
        name, (), input_type, dimensions, truncate, dict((vendor or {}).get(provider.name, {}))
    )
    caps = provider.capabilities(name)
    if not caps.embeddings and not provider.implements_embed:
        raise no_embeddings(provider, name)
    parts = [
        Part(start, stop, provider.prepare_embed(_with_inputs(base, texts[start:stop])))
        for start, stop in split_inputs(texts, caps)
    ]
    return EmbedPlan(
        provider=provider,
        model=name,
        qualified=qualified,
        caps=caps,
        count=len(texts),
        parts=parts,
        max_attempts=settings.max_retries,
        backoff=settings.backoff,
        gate=settings.gate(qualified),
        deadline=None if seconds is None else started + seconds,
        deadline_seconds=seconds,
        normalize=normalize,
    )


def _with_inputs(base: EmbedRequest, inputs: tuple[str, ...]) -> EmbedRequest:
    return EmbedRequest(
        base.model, inputs, base.input_type, base.dimensions, base.truncate, base.options
    )


def _check_options(
    input_type: Any, dimensions: Any, truncate: Any, normalize: Any, deadline: Any
) -> float | None:
    """Typed errors for bad option values; the deadline in seconds (or None)."""
    if input_type is not None and input_type not in _INPUT_TYPES:
        raise OptionError(f"input_type must be 'query' or 'document', got {input_type!r}")
    if truncate is not None and truncate not in _TRUNCATES:
        raise OptionError(f"truncate must be 'start', 'end' or None, got {truncate!r}")
    if dimensions is not None and (type(dimensions) is not int or dimensions < 1):
        raise OptionError(f"dimensions must be a whole number >= 1, got {dimensions!r}")
    if not isinstance(normalize, bool):
        raise OptionError(f"normalize must be True or False, got {normalize!r}")
    if deadline is None:
        return None
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float)) or not deadline > 0:
        raise OptionError(f"deadline must be a number of seconds > 0, got {deadline!r}")
    return float(deadline)


def split_inputs(texts: Sequence[str], caps: ModelCapabilities) -> list[tuple[int, int]]:
    """``(start, stop)`` ranges in order, each within the model's inputs and tokens per request.

    Tokens are estimated (:func:`~llmport.messages.estimate.text_tokens`);
    an input alone over the request's token limit gets a part of its own
    (the per-input check, not the split, refuses it).
    """
    most = caps.max_embed_inputs or len(texts)
    budget = caps.max_embed_request_tokens
    if budget is None:
        return [(start, min(start + most, len(texts))) for start in range(0, len(texts), most)]
    ranges: list[tuple[int, int]] = []
    start, tokens = 0, 0
    for index, text in enumerate(texts):
        cost = text_tokens(text)
        if index > start and (index - start >= most or tokens + cost > budget):
            ranges.append((start, index))
            start, tokens = index, 0
        tokens += cost
    ranges.append((start, len(texts)))
    return ranges


# ---------------------------------------------------------------------------
# The step machine: one part, its retries
# ---------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class SendEmbed:
    """Send one prepared part; the answer is its :class:`EmbedResponse`."""

    provider: Provider
    prepared: PreparedEmbed


@dataclass(slots=True, frozen=True)
class Pause:
    """Wait ``seconds`` before the next attempt (``backoff.sleep`` / ``async_sleep``)."""

    seconds: float
    backoff: Backoff


EmbedEffect = SendEmbed | Pause | Acquire


def part_steps(plan: EmbedPlan, part: Part) -> Generator[EmbedEffect, Any, EmbedResponse]:
    """One part's attempts as effects: capacity, send, check; a pause before each retry."""
    attempts = Attempts()
    plan.attempts.append(attempts)
    expected = part.stop - part.start
    number = 0
    while True:
        number += 1
        attempts.count = number
        try:
            answer = yield from _attempt(plan, part)
            return _checked(answer, expected, plan)
        except Exception as exc:
            delay = after_failure(
                exc,
                number,
                max_attempts=plan.max_attempts,
                backoff=plan.backoff,
                plain_callable=False,
                function_name=None,
                attempts=attempts,
                on_failure=None,
                model=plan.qualified,
            )
        _check_time(plan, delay)
        yield Pause(delay, plan.backoff)


def _attempt(plan: EmbedPlan, part: Part) -> Generator[EmbedEffect, Any, EmbedResponse]:
    """One attempt, under the rate limits when any apply (capacity held for the attempt)."""
    if plan.gate is None:
        answer: EmbedResponse = yield SendEmbed(plan.provider, part.prepared)
        return answer
    tokens = sum(text_tokens(text) for text in part.prepared.request.inputs)
    permit = yield Acquire(plan.gate, tokens, plan.backoff, plan.deadline)
    try:
        answer = yield SendEmbed(plan.provider, part.prepared)
    except BaseException as exc:
        permit.release(None, rate_info_of_error(exc))
        raise
    permit.release(answer.usage.input_tokens or tokens, None)
    return answer


def _checked(answer: Any, expected: int, plan: EmbedPlan) -> EmbedResponse:
    """The plugin's answer, held to the request: one vector per input."""
    from ..errors import MalformedResponseError

    if not isinstance(answer, EmbedResponse):
        raise TypeError(
            f"{type(plan.provider).__name__} returned {type(answer).__name__}, not EmbedResponse"
        )
    if answer.count != expected or len(answer.data) != answer.count * answer.dimensions * 4:
        raise MalformedResponseError(
            f"embedding answer: {answer.count} vectors for {expected} inputs",
            provider=plan.provider.name,
            retryable=False,
        )
    return answer


def _check_time(plan: EmbedPlan, delay: float) -> None:
    if plan.deadline is not None and time.monotonic() + delay >= plan.deadline:
        raise RunTimeout(plan.deadline_seconds or 0.0)


# ---------------------------------------------------------------------------
# The drivers
# ---------------------------------------------------------------------------


def _run_part(plan: EmbedPlan, part: Part) -> EmbedResponse:
    """Drive one part's machine with blocking I/O (in a worker thread)."""
    machine = part_steps(plan, part)
    answer: Any = None
    failure: BaseException | None = None
    while True:
        try:
            effect = machine.throw(failure) if failure is not None else machine.send(answer)
        except StopIteration as done:
            return cast(EmbedResponse, done.value)
        answer, failure = None, None
        try:
            answer = _perform(effect)
        except Exception as exc:
            failure = detach(exc)


def _perform(effect: EmbedEffect) -> Any:
    if isinstance(effect, SendEmbed):
        return effect.provider.send_embed(effect.prepared)
    if isinstance(effect, Pause):
        return effect.backoff.sleep(effect.seconds)
    return acquire(effect)


async def _arun_part(plan: EmbedPlan, part: Part) -> EmbedResponse:
    """Drive one part's machine with awaits."""
    machine = part_steps(plan, part)
    answer: Any = None
    failure: BaseException | None = None
    while True:
        try:
            effect = machine.throw(failure) if failure is not None else machine.send(answer)
        except StopIteration as done:
            return cast(EmbedResponse, done.value)
        answer, failure = None, None
        try:
            answer = await _aperform(effect)
        except Exception as exc:
            failure = detach(exc)


async def _aperform(effect: EmbedEffect) -> Any:
    if isinstance(effect, SendEmbed):
        return await effect.provider.asend_embed(effect.prepared)
    if isinstance(effect, Pause):
        return await effect.backoff.async_sleep(effect.seconds)
    return await aacquire(effect)


# ---------------------------------------------------------------------------
# Joining: one buffer, input order, one usage
# ---------------------------------------------------------------------------


class Joiner:
    """Writes each part's vectors at its inputs' offset in one buffer; sums the usage."""

    __slots__ = ("buffer", "count", "dimensions", "model", "provider", "usage")

    def __init__(self, plan: EmbedPlan) -> None:
        self.count = plan.count
        self.buffer: bytearray | None = None
        self.dimensions = 0
        self.model = plan.model
        self.usage = Usage()
        self.provider = plan.provider.price_name

    def add(self, part: Part, answer: EmbedResponse) -> None:
        """Place ``answer`` (the vectors of ``part``) in the buffer."""
        from ..errors import MalformedResponseError

        if self.buffer is None:
            self.dimensions = answer.dimensions
            self.buffer = bytearray(self.count * answer.dimensions * 4)
            self.model = answer.model or self.model
        elif answer.dimensions != self.dimensions:
            raise MalformedResponseError(
                f"embedding answer: {part.describe(self.count)} came back with "
                f"{answer.dimensions} dimensions, the others with {self.dimensions}",
                provider=self.provider,
                retryable=False,
            )
        row = self.dimensions * 4
        self.buffer[part.start * row : part.stop * row] = answer.data
        usage = answer.usage.copy()
        usage.requests = usage.requests or 1
        self.usage.add(usage.priced_as(self.provider, answer.model or self.model))

    def result(self, normalize: bool) -> Embeddings:
        assert self.buffer is not None  # every call has at least one part
        if normalize:
            normalize_rows(self.buffer, self.dimensions)
        return Embeddings(self.buffer, self.count, self.dimensions, self.model, self.usage)


def normalize_rows(buffer: bytearray, dimensions: int) -> None:
    """Scale every float32 row of ``buffer`` to unit length (L2), in place."""
    values = float32_rows(buffer)
    for start in range(0, len(values), dimensions):
        row = values[start : start + dimensions]
        norm = math.hypot(*row)
        if norm > 0:
            scaled = array("f", [v / norm for v in row]).tobytes()
            buffer[start * 4 : (start + dimensions) * 4] = scaled


def _failed(part: Part, total: int, exc: BaseException) -> BaseException:
    """``exc`` naming the inputs its part carried (the same typed error)."""
    if isinstance(exc, LlmportError) and exc.args:
        where = part.describe(total)
        exc.args = (f"embedding {where}: {exc.args[0]}", *exc.args[1:])
        exc.embed_inputs = range(part.start, part.stop)  # type: ignore[attr-defined]
    return exc


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------


def embed(settings: RunSettings, inputs: Any, **params: Any) -> Embeddings:
    """Plan, send the parts in worker threads, join (see the module docstring)."""
    plan = plan_embed(settings, inputs, **params)
    joiner = Joiner(plan)
    if len(plan.parts) == 1:
        part = plan.parts[0]
        _deliver(plan, joiner, part, lambda: _run_part(plan, part))
    else:
        _embed_parts(plan, joiner)
    settings.add_usage(joiner.usage)
    return joiner.result(plan.normalize)


def _deliver(plan: EmbedPlan, joiner: Joiner, part: Part, run: Callable[[], EmbedResponse]) -> None:
    try:
        answer = run()
    except LlmportError as exc:
        error = _failed(part, plan.count, exc)
    else:
        joiner.add(part, answer)
        return
    raise error from None


def _embed_parts(plan: EmbedPlan, joiner: Joiner) -> None:
    workers = min(len(plan.parts), PARTS_IN_FLIGHT)
    pool = ThreadPoolExecutor(workers, thread_name_prefix="llmport-embed")
    try:
        futures = {pool.submit(_run_part, plan, part): part for part in plan.parts}
        pending = set(futures)
        while pending:
            timeout = None if plan.deadline is None else max(0.0, plan.deadline - time.monotonic())
            done, pending = wait(pending, timeout, FIRST_EXCEPTION)
            if not done:
                raise RunTimeout(plan.deadline_seconds or 0.0)
            for future in done:
                part = futures[future]
                _deliver(plan, joiner, part, future.result)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


async def aembed(settings: RunSettings, inputs: Any, **params: Any) -> Embeddings:
    """Async :func:`embed`: the parts as tasks, at most :data:`PARTS_IN_FLIGHT` at once."""
    plan = plan_embed(settings, inputs, **params)
    joiner = Joiner(plan)
    slots = asyncio.Semaphore(PARTS_IN_FLIGHT)

    async def one(part: Part) -> None:
        async with slots:
            answer = await _arun_part(plan, part)
        joiner.add(part, answer)

    async def every_part() -> None:
        async with asyncio.TaskGroup() as group:
            for part in plan.parts:
                group.create_task(_named(plan, part, one))

    error = await _settle(every_part(), plan)
    if error is not None:
        raise error
    settings.add_usage(joiner.usage)
    return joiner.result(plan.normalize)


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
