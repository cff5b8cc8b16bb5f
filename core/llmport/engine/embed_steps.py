"""The step machine of one embed part, and its two drivers.

:func:`part_steps` is one part's attempts as a generator of effects: wait
for rate-limit capacity (:class:`~llmport.controls.limits.Acquire`), send
(:class:`SendEmbed`: given up at the runtime's ``timeout=`` or the call's
``deadline=``, whichever comes first), pause before a retry (:class:`Pause`); each attempt is
admitted by the runtime's budget and charged with its priced usage (the
answer's size is held to the request where it is joined:
:mod:`.embed_join`). :func:`run_part` performs the effects with blocking calls,
:func:`arun_part` with awaits: the same machine for ``rt.embed`` and
``rt.aembed``.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, cast

from ..controls.limits import Acquire, aacquire, acquire, rate_info_of_error  # limits
from ..controls.retry import Attempts, Backoff, after_failure
from ..errors import AttemptFailure, ProviderTimeoutError, RunTimeout
from ..messages.embeddings import EmbedResponse
from ..provider.deadline import aembed_within, embed_within
from ..provider.embedding import PreparedEmbed
from ..provider.translate import detach
from ..slotted import dataclass
from .embed_plan import EmbedPlan, Part, priced_usage

if TYPE_CHECKING:
    from ..provider.contract import Provider

__all__ = ["EmbedEffect", "Pause", "SendEmbed", "arun_part", "part_steps", "run_part"]


@dataclass(slots=True, frozen=True)
class SendEmbed:
    """Send one prepared part; the answer is its :class:`EmbedResponse`.

    ``cut_at`` (``time.monotonic()``) is when the send is given up (None: never).
    """

    provider: Provider
    prepared: PreparedEmbed
    cut_at: float | None = None


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
            return (yield from _attempt(plan, part))
        except Exception as exc:
            delay = _after_failure(plan, attempts, number, exc)
        _check_time(plan, delay)
        yield Pause(delay, plan.backoff)


def _after_failure(plan: EmbedPlan, attempts: Attempts, number: int, exc: Exception) -> float:
    """The pause before the next attempt; raise if there is none.

    A send given up at the call's deadline ends the call with its
    :class:`RunTimeout` (the deadline, not the vendor, ended it).
    """
    if isinstance(exc, ProviderTimeoutError) and _past_deadline(plan):
        attempts.failures.append(AttemptFailure(number, exc, 0.0, plan.qualified))
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


def _attempt(plan: EmbedPlan, part: Part) -> Generator[EmbedEffect, Any, EmbedResponse]:
    """One attempt: admitted by the budget, under the rate limits when any apply."""
    ledger = plan.ledger
    tokens = part.tokens
    if ledger is not None:
        ledger.admit(tokens)  # TokenLimitExceeded / BudgetExceeded before the request
    try:
        answer = _of_contract((yield from _limited(plan, part, tokens)), plan)
    except BaseException:
        if ledger is not None:
            ledger.release(tokens)
        raise
    if ledger is not None:
        ledger.charge(tokens, priced_usage(plan, answer))
    return answer


def _limited(
    plan: EmbedPlan, part: Part, tokens: int
) -> Generator[EmbedEffect, Any, EmbedResponse]:
    """Send, holding rate-limit capacity for the attempt when limits apply."""
    if plan.gate is None:
        answer: EmbedResponse = yield _send(plan, part)
        return answer
    permit = yield Acquire(plan.gate, tokens, plan.backoff, plan.deadline)
    try:
        answer = yield _send(plan, part)
    except BaseException as exc:
        permit.release(None, rate_info_of_error(exc))
        raise
    permit.release(answer.usage.input_tokens or tokens, None)
    return answer


def _send(plan: EmbedPlan, part: Part) -> SendEmbed:
    """The send of one attempt, cut at its timeout or the call's deadline (the earlier)."""
    cut_at = plan.deadline
    if plan.timeout is not None:
        ends = time.monotonic() + plan.timeout
        cut_at = ends if cut_at is None else min(cut_at, ends)
    return SendEmbed(plan.provider, part.prepared, cut_at)


def _of_contract(answer: Any, plan: EmbedPlan) -> EmbedResponse:
    """``answer`` if it is what the contract says a plugin returns (a plugin bug otherwise)."""
    if not isinstance(answer, EmbedResponse):
        raise TypeError(
            f"{type(plan.provider).__name__} returned {type(answer).__name__}, not EmbedResponse"
        )
    return answer


def _past_deadline(plan: EmbedPlan) -> bool:
    return plan.deadline is not None and time.monotonic() >= plan.deadline


def _check_time(plan: EmbedPlan, delay: float) -> None:
    if plan.deadline is not None and time.monotonic() + delay >= plan.deadline:
        raise RunTimeout(plan.deadline_seconds or 0.0)


# ---------------------------------------------------------------------------
# The drivers
# ---------------------------------------------------------------------------


def run_part(plan: EmbedPlan, part: Part) -> EmbedResponse:
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
        return embed_within(effect.provider, effect.prepared, effect.cut_at)
    if isinstance(effect, Pause):
        return effect.backoff.sleep(effect.seconds)
    return acquire(effect)


async def arun_part(plan: EmbedPlan, part: Part) -> EmbedResponse:
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
        return await aembed_within(effect.provider, effect.prepared, effect.cut_at)
    if isinstance(effect, Pause):
        return await effect.backoff.async_sleep(effect.seconds)
    return await aacquire(effect)
