"""The step machine of one non-chat request (an embed part, an image request), and its drivers.

:func:`part_steps` is one request's attempts as a generator of effects: wait
for rate-limit capacity (:class:`~llmport.controls.limits.Acquire`), send
(:class:`Send`: given up at the runtime's ``timeout=`` or the call's
``deadline=``, whichever comes first), pause before a retry (:class:`Pause`); each attempt is
admitted by the runtime's budget and charged with its priced usage. The
plan (:class:`StepPlan`: an :class:`~.embed_plan.EmbedPlan` or an
:class:`~.image_plan.ImagePlan`) says how its request is sent and checked.
:func:`run_part` performs the effects with blocking calls, :func:`arun_part`
with awaits: the same machine for ``rt.embed`` / ``rt.aembed`` and
``rt.generate_image`` / ``rt.agenerate_image``.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Protocol

from ..controls.limits import Acquire, Gate, aacquire, acquire, rate_info_of_error  # limits
from ..controls.retry import Attempts, Backoff, after_failure
from ..errors import AttemptFailure, ProviderTimeoutError, RunTimeout
from ..messages.types import Usage
from ..provider.translate import detach
from ..slotted import dataclass

if TYPE_CHECKING:
    from ..controls.budget import Ledger

__all__ = [
    "Pause",
    "Send",
    "StepEffect",
    "StepPart",
    "StepPlan",
    "arun_part",
    "part_steps",
    "run_part",
]


class StepPart(Protocol):
    """One request of a call: what it sends and its estimated input tokens."""

    @property
    def prepared(self) -> Any: ...

    @property
    def tokens(self) -> int: ...


class StepPlan(Protocol):
    """What the machine reads of a call's plan, and how the plan sends and checks."""

    qualified: str
    max_attempts: int
    backoff: Backoff
    gate: Gate | None
    deadline: float | None
    deadline_seconds: float | None
    timeout: float | None
    attempts: list[Attempts]
    ledger: Ledger | None

    def send(self, prepared: Any, cut_at: float | None) -> Any:
        """Send ``prepared`` with blocking I/O, given up at ``cut_at``."""

    async def asend(self, prepared: Any, cut_at: float | None) -> Any:
        """Await the send of ``prepared``, cancelled at ``cut_at``."""

    def checked(self, answer: Any) -> Any:
        """``answer`` if it is what the contract says; raise otherwise."""

    def priced(self, answer: Any) -> Usage:
        """The answer's usage, priced as the plan's model."""


@dataclass(slots=True, frozen=True)
class Send:
    """Send one prepared request; the answer is the plugin's response.

    ``cut_at`` (``time.monotonic()``) is when the send is given up (None: never).
    """

    plan: StepPlan
    prepared: Any
    cut_at: float | None = None


@dataclass(slots=True, frozen=True)
class Pause:
    """Wait ``seconds`` before the next attempt (``backoff.sleep`` / ``async_sleep``)."""

    seconds: float
    backoff: Backoff


StepEffect = Send | Pause | Acquire


def part_steps(plan: StepPlan, part: StepPart) -> Generator[StepEffect, Any, Any]:
    """One part's attempts as effects: capacity, send, check; a pause before each retry."""
    attempts = Attempts()
    plan.attempts.append(attempts)
    number = 0
    while True:
        number += 1
        attempts.count = number
        try:
            return (yield from _attempt(plan, part))
        except Exception as exc:
            delay = _after_failure(plan, attempts, number, exc)
        _check_time(plan, delay)
        yield Pause(delay, plan.backoff)


def _after_failure(plan: StepPlan, attempts: Attempts, number: int, exc: Exception) -> float:
    """The pause before the next attempt; raise if there is none.

    A send given up at the call's deadline ends the call with its
    :class:`RunTimeout` (the deadline, not the vendor, ended it).
    """
    if isinstance(exc, ProviderTimeoutError) and _past_deadline(plan):
        attempts.note(AttemptFailure(number, exc, 0.0, plan.qualified))
        raise RunTimeout(plan.deadline_seconds or 0.0)
    return after_failure(
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


def _attempt(plan: StepPlan, part: StepPart) -> Generator[StepEffect, Any, Any]:
    """One attempt: admitted by the budget, under the rate limits when any apply."""
    ledger = plan.ledger
    tokens = part.tokens
    if ledger is not None:
        ledger.admit(tokens)  # TokenLimitExceeded / BudgetExceeded before the request
    try:
        answer = plan.checked((yield from _limited(plan, part, tokens)))
    except BaseException:
        if ledger is not None:
            ledger.release(tokens)
        raise
    if ledger is not None:
        ledger.charge(tokens, plan.priced(answer))
    return answer


def _limited(plan: StepPlan, part: StepPart, tokens: int) -> Generator[StepEffect, Any, Any]:
    """Send, holding rate-limit capacity for the attempt when limits apply."""
    if plan.gate is None:
        answer = yield _send(plan, part)
        return answer
    permit = yield Acquire(plan.gate, tokens, plan.backoff, plan.deadline)
    try:
        answer = yield _send(plan, part)
    except BaseException as exc:
        permit.release(None, rate_info_of_error(exc))
        raise
    permit.release(answer.usage.input_tokens or tokens, None)
    return answer


def _send(plan: StepPlan, part: StepPart) -> Send:
    """The send of one attempt, cut at its timeout or the call's deadline (the earlier)."""
    cut_at = plan.deadline
    if plan.timeout is not None:
        ends = time.monotonic() + plan.timeout
        cut_at = ends if cut_at is None else min(cut_at, ends)
    return Send(plan, part.prepared, cut_at)


def _past_deadline(plan: StepPlan) -> bool:
    return plan.deadline is not None and time.monotonic() >= plan.deadline


def _check_time(plan: StepPlan, delay: float) -> None:
    if plan.deadline is not None and time.monotonic() + delay >= plan.deadline:
        raise RunTimeout(plan.deadline_seconds or 0.0)


# ---------------------------------------------------------------------------
# The drivers
# ---------------------------------------------------------------------------


def run_part(plan: StepPlan, part: StepPart) -> Any:
    """Drive one request's machine with blocking I/O."""
    machine = part_steps(plan, part)
    answer: Any = None
    failure: BaseException | None = None
    while True:
        try:
            effect = machine.throw(failure) if failure is not None else machine.send(answer)
        except StopIteration as done:
            return done.value
        answer, failure = None, None
        try:
            answer = _perform(effect)
        except Exception as exc:
            failure = detach(exc)


def _perform(effect: StepEffect) -> Any:
    if isinstance(effect, Send):
        return effect.plan.send(effect.prepared, effect.cut_at)
    if isinstance(effect, Pause):
        return effect.backoff.sleep(effect.seconds)
    return acquire(effect)


async def arun_part(plan: StepPlan, part: StepPart) -> Any:
    """Drive one request's machine with awaits."""
    machine = part_steps(plan, part)
    answer: Any = None
    failure: BaseException | None = None
    while True:
        try:
            effect = machine.throw(failure) if failure is not None else machine.send(answer)
        except StopIteration as done:
            return done.value
        answer, failure = None, None
        try:
            answer = await _aperform(effect)
        except Exception as exc:
            failure = detach(exc)


async def _aperform(effect: StepEffect) -> Any:
    if isinstance(effect, Send):
        return await effect.plan.asend(effect.prepared, effect.cut_at)
    if isinstance(effect, Pause):
        return await effect.backoff.async_sleep(effect.seconds)
    return await aacquire(effect)
