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

Around the parts, what every call gets: the cache (:mod:`.embed_cache`: only
the inputs it does not hold are sent), the runtime's budget (each attempt
admitted with its estimated tokens, charged with the real ones), the
observe hooks (``embed_start`` / ``embed_end``: OpenTelemetry's
``embeddings`` span) and, inside an ``@agentic_function``, an ``embed`` node
in the session DAG (:func:`~llmport.sessions.agentic.record_embed`).
"""

from __future__ import annotations

import asyncio
import math
import time
from array import array
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

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
from ..sessions.dag import current_frame
from ..tools.policy import CallInfo
from .embed_cache import EmbedCache, input_hash
from .hooks import RunHooks
from .settings import RunSettings

if TYPE_CHECKING:
    from ..controls.budget import Ledger
    from ..provider.contract import Provider


class EmbedSettings(RunSettings, Protocol):
    """What an embed call reads of its runtime: the run settings and the cache."""

    @property
    def embed_cache(self) -> EmbedCache | None: ...


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
    """The inputs at ``rows`` (their indexes in the call, in order), sent as one request.

    ``rows`` is a ``range`` unless the cache already held some inputs.
    """

    rows: Sequence[int]
    prepared: PreparedEmbed

    @property
    def tokens(self) -> int:
        """The part's estimated input tokens (rate limits and budgets)."""
        return sum(text_tokens(text) for text in self.prepared.request.inputs)

    def describe(self, total: int) -> str:
        """Which inputs, as a user counts them (0-based, like their list)."""
        first, last = self.rows[0], self.rows[-1]
        if len(self.rows) == 1:
            return f"input {first} of {total}"
        if last - first + 1 == len(self.rows):
            return f"inputs {first}-{last} of {total}"
        return f"{len(self.rows)} inputs from {first} to {last} of {total}"


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
    #: The input hashes (cache keys, DAG node), one per input.
    hashes: list[str] = field(default_factory=list)
    #: Vectors the cache held, by input index; and where the new ones are kept.
    cached: dict[int, bytes] = field(default_factory=dict)
    cache: EmbedCache | None = None
    namespace: tuple[str, ...] = ()
    ledger: Ledger | None = None
    started: float = 0.0


# ---------------------------------------------------------------------------
# Planning: every check before the first request
# ---------------------------------------------------------------------------


def plan_embed(
    settings: EmbedSettings,
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
    """Route, check, look up the cache and split one embed call; prepare every part (no I/O)."""
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
    plan = EmbedPlan(
        provider=provider,
        model=name,
        qualified=qualified,
        caps=caps,
        count=len(texts),
        parts=[],
        max_attempts=settings.max_retries,
        backoff=settings.backoff,
        gate=settings.gate(qualified),
        deadline=None if seconds is None else started + seconds,
        deadline_seconds=seconds,
        normalize=normalize,
        hashes=[input_hash(text) for text in texts],
        cache=settings.embed_cache,
        ledger=settings.ledger,
        started=started,
    )
    if plan.cache is not None:
        plan.namespace = plan.cache.namespace(provider.price_name, name, dimensions, input_type)
        plan.cached = plan.cache.lookup(plan.namespace, plan.hashes)
    rows = [i for i in range(len(texts)) if i not in plan.cached]
    wanted = [texts[i] for i in rows] if plan.cached else texts
    for start, stop in split_inputs(wanted, caps):
        part_rows = rows[start:stop] if plan.cached else range(start, stop)
        request = _with_inputs(base, tuple(wanted[start:stop]))
        plan.parts.append(Part(part_rows, provider.prepare_embed(request)))
    return plan


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
    if not texts:
        return []
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
    number = 0
    while True:
        number += 1
        attempts.count = number
        try:
            answer = yield from _attempt(plan, part)
            return _checked(answer, part, plan)
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
    """One attempt: admitted by the budget, under the rate limits when any apply."""
    ledger = plan.ledger
    tokens = part.tokens
    if ledger is not None:
        ledger.admit(tokens)  # TokenLimitExceeded / BudgetExceeded before the request
    try:
        answer = yield from _limited(plan, part, tokens)
    except BaseException:
        if ledger is not None:
            ledger.release(tokens)
        raise
    if ledger is not None:
        ledger.charge(tokens, _priced(plan, answer))
    return answer


def _limited(
    plan: EmbedPlan, part: Part, tokens: int
) -> Generator[EmbedEffect, Any, EmbedResponse]:
    """Send, holding rate-limit capacity for the attempt when limits apply."""
    if plan.gate is None:
        answer: EmbedResponse = yield SendEmbed(plan.provider, part.prepared)
        return answer
    permit = yield Acquire(plan.gate, tokens, plan.backoff, plan.deadline)
    try:
        answer = yield SendEmbed(plan.provider, part.prepared)
    except BaseException as exc:
        permit.release(None, rate_info_of_error(exc))
        raise
    permit.release(answer.usage.input_tokens or tokens, None)
    return answer


def _priced(plan: EmbedPlan, answer: EmbedResponse) -> Usage:
    """One part's usage, priced as its model (cost read from the price table on demand)."""
    usage = answer.usage.copy()
    usage.requests = usage.requests or 1
    return usage.priced_as(plan.provider.price_name, answer.model or plan.model)


def _checked(answer: Any, part: Part, plan: EmbedPlan) -> EmbedResponse:
    """The plugin's answer, held to the request: one vector per input, of the size asked."""
    from ..errors import MalformedResponseError

    if not isinstance(answer, EmbedResponse):
        raise TypeError(
            f"{type(plan.provider).__name__} returned {type(answer).__name__}, not EmbedResponse"
        )
    expected = len(part.rows)
    asked = part.prepared.request.dimensions
    problem = None
    if answer.count != expected or len(answer.data) != answer.count * answer.dimensions * 4:
        problem = f"{answer.count} vectors for {expected} inputs"
    elif asked is not None and answer.dimensions != asked:
        problem = f"vectors of {answer.dimensions} values for dimensions={asked}"
    if problem is not None:  # not retried: the same request gets the same answer
        raise MalformedResponseError(
            f"embedding answer: {problem}", provider=plan.provider.name, retryable=False
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
    """Writes each part's vectors at its inputs' rows in one buffer; sums the usage."""

    __slots__ = ("buffer", "count", "dimensions", "model", "plan", "usage")

    def __init__(self, plan: EmbedPlan) -> None:
        self.plan = plan
        self.count = plan.count
        self.buffer: bytearray | None = None
        self.dimensions = 0
        self.model = plan.model
        self.usage = Usage()
        if plan.cached:
            first = next(iter(plan.cached.values()))
            self._allocate(len(first) // 4)
            for index, vector in plan.cached.items():
                self._place(index, vector)

    def _allocate(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.buffer = bytearray(self.count * dimensions * 4)

    def _place(self, index: int, vector: bytes | memoryview) -> None:
        from ..errors import MalformedResponseError

        row = self.dimensions * 4
        if len(vector) != row:
            raise MalformedResponseError(
                f"embedding answer: input {index} came back with {len(vector) // 4} "
                f"dimensions, the others with {self.dimensions}",
                provider=self.plan.provider.name,
                retryable=False,
            )
        assert self.buffer is not None
        self.buffer[index * row : (index + 1) * row] = vector

    def add(self, part: Part, answer: EmbedResponse) -> None:
        """Place ``answer`` (the vectors of ``part``) in the buffer; keep them in the cache."""
        from ..errors import MalformedResponseError

        if self.buffer is None:
            self._allocate(answer.dimensions)
            self.model = answer.model or self.model
        if answer.dimensions != self.dimensions:
            raise MalformedResponseError(
                f"embedding answer: {part.describe(self.count)} came back with "
                f"{answer.dimensions} dimensions, the others with {self.dimensions}",
                provider=self.plan.provider.name,
                retryable=False,
            )
        assert self.buffer is not None
        row = self.dimensions * 4
        rows = part.rows
        if isinstance(rows, range) and rows.step == 1:
            self.buffer[rows.start * row : rows.stop * row] = answer.data
        else:
            data = memoryview(answer.data)
            for k, index in enumerate(rows):
                self._place(index, data[k * row : (k + 1) * row])
        self.usage.add(_priced(self.plan, answer))
        self._keep(part, answer.data, row)

    def _keep(self, part: Part, data: bytes, row: int) -> None:
        plan = self.plan
        if plan.cache is None:
            return
        keys = (plan.hashes[index] for index in part.rows)
        plan.cache.keep(
            plan.namespace, ((key, data[k * row : (k + 1) * row]) for k, key in enumerate(keys))
        )

    def result(self) -> Embeddings:
        assert self.buffer is not None  # every call has at least one input
        if self.plan.normalize:
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
            _deliver(plan, joiner, part, lambda: _run_part(plan, part))
        elif plan.parts:
            _embed_parts(plan, joiner)
        result = joiner.result()
    except BaseException as exc:
        call.failed(exc, joiner.usage)
        raise
    call.done(result)
    return result


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
    """The parts in a thread pool, each answer joined (and let go) as soon as it arrives:
    only the parts in flight are held beside the buffer, never every answer at once."""
    workers = min(len(plan.parts), PARTS_IN_FLIGHT)
    pool = ThreadPoolExecutor(workers, thread_name_prefix="llmport-embed")
    try:
        futures = {pool.submit(_run_part, plan, part): part for part in plan.parts}
        pending = set(futures)
        while pending:
            timeout = None if plan.deadline is None else max(0.0, plan.deadline - time.monotonic())
            done, pending = wait(pending, timeout, FIRST_COMPLETED)
            if not done:
                raise RunTimeout(plan.deadline_seconds or 0.0)
            for future in done:
                part = futures.pop(future)
                _deliver(plan, joiner, part, future.result)
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
            answer = await _arun_part(plan, part)
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


class Observed:
    """One embed call as the observers, the runtime's usage and the session DAG see it."""

    __slots__ = ("hooks", "info", "plan", "settings")

    def __init__(self, settings: EmbedSettings, plan: EmbedPlan) -> None:
        self.settings = settings
        self.plan = plan
        hooks = RunHooks(settings.plugins)
        self.hooks = hooks if hooks.observed else None
        frame = current_frame()  # inside an @agentic_function: its name and node
        self.info = CallInfo(
            model=plan.qualified,
            provider=plan.provider.name,
            function=frame.name if frame is not None else None,
            node_id=frame.node_id if frame is not None else None,
        )
        if self.hooks is not None:
            self.hooks.observe("embed_start", self._payload(), self.info)

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
        self.settings.add_usage(usage)
        duration = time.monotonic() - plan.started
        node = record_embed(
            model=plan.qualified,
            hashes=plan.hashes,
            usage=usage,
            dimensions=dimensions,
            duration=duration,
            error=error,
        )
        if self.hooks is not None:
            payload = {**self._payload(), "usage": usage, "dimensions": dimensions, "node": node}
            if error is not None:
                payload["error"] = error
            self.hooks.observe("embed_end", payload, self.info)
