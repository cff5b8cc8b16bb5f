"""Attempts and fallbacks: one model request, from budget checks to its answer.

:func:`model_request` is every model request of a run: the input budget,
the context window (trimmed or summarized), the request hooks, rate limits,
the deadline, then attempts with backoff and, with a model list, fallbacks
to the next model. The request is converted once per model (:func:`prepare`).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Generator
from dataclasses import replace
from typing import Any

from ..controls.limits import Acquire, Gate, LimitWaitTimeout, rate_info_of_error  # limits
from ..controls.retry import Attempts, after_failure
from ..controls.window import (
    SUMMARY_PROMPT,
    conversation_key,
    current_turn_start,
    split_turns,
    summary_message,
)
from ..errors import (
    AttemptFailure,
    ContextWindowExceeded,
    ExecFailed,
    InputError,
    ProviderTimeoutError,
    RunTimeout,
    StreamInterrupted,
    TokenLimitExceeded,
)
from ..messages.estimate import estimate_tokens
from ..messages.types import (
    Message,
    Request,
    Response,
    StreamRestarted,
    TextBlock,
    Usage,
    UsageEvent,
)
from ..observe.logs import log_fallback, log_retry, log_usage  # logging
from ..output.streaming import OutputStream
from ..provider.contract import Prepared, Provider
from ..provider.translate import check_usage
from .conversation import portable
from .effects import Effect, Emit, Prepare, Send, Sleep, Stream, StreamReader
from .plan import RunPlan
from .result import RunResult
from .state import note_answer

__all__ = [
    "interrupted",
    "model_request",
    "prepare",
]


# --- one model request: prepare once, then attempts -------------------------------------


def model_request(
    plan: RunPlan, run: RunResult[Any], request: Request, output: OutputStream | None = None
) -> Generator[Effect, Any, Response]:
    """One model request (budget, window, hooks, limits, fallbacks, attempts); its answer.

    ``output``: the streamed run's structured output, read as it arrives.
    """
    _check_budget(plan, request)
    if plan.window_limit is not None:
        request = yield from _fit_window(plan, run, request)
    info = plan.call_info(run.iterations)
    request = plan.hooks.before_request(request, info)
    estimated = _admit(plan, request) if plan.ledgers else 0
    if plan.deadline is not None:
        _cap_timeout(plan, run, request)
    observed = plan.hooks.observed
    try:
        if plan.candidates:  # a model list: fall back on failure
            response, attempts = yield from _with_fallbacks(plan, run, request, info, output)
        else:
            prepared = yield from prepare(plan, run, plan.provider, request)
            if observed:
                payload = {"model": plan.qualified, "request": request}
                plan.hooks.observe("model_start", payload, info)
            attempts = Attempts()
            reader = StreamReader(output) if plan.stream else None
            response = yield from _attempts(
                plan, run, plan.provider, prepared, attempts, info, plan.gate, reader
            )
    except BaseException:
        for ledger in plan.ledgers:
            ledger.release(estimated)
        raise
    response = plan.hooks.after_response(request, response, info)
    note_answer(plan, run, response)  # server-side state: the id the next turn names
    usage = response.usage if response.usage.requests else _one_request(response.usage)
    usage.priced_as(plan.provider.price_name, plan.model)
    run.usage.add(usage)
    plan.add_usage(usage)
    log_usage(plan.qualified, usage)  # logging (DEBUG)
    if response.blocks:
        run.thinking += response.thinking
    run.attempts += attempts.count
    if attempts.failures:  # the run's list is made on first read: only for a failure
        run.failures.extend(attempts.failures)
    if observed:
        payload = {"model": plan.qualified, "response": response, "attempts": attempts.count}
        plan.hooks.observe("model_end", payload, info)
    if plan.stream:
        yield Emit(UsageEvent(response.usage))
    for ledger in plan.ledgers:
        ledger.charge(estimated, usage)  # the output side: raises after the answer is recorded
    return response


def _with_fallbacks(
    plan: RunPlan, run: RunResult[Any], request: Request, info: Any, output: OutputStream | None
) -> Generator[Effect, Any, tuple[Response, Attempts]]:
    """Try the run's models in order; the one that answers stays for the run.

    A candidate that cannot take the request (content, tools, options) is
    skipped before anything is sent to it; one whose attempts end in a
    transient error, or a permanent one in ``fallback_on``, hands over to the
    next. Each candidate converts the request once (one ``prepare``).
    """
    failures: list[AttemptFailure] = []
    last: BaseException | None = None
    # One reader for every candidate: it knows whether the caller already has text.
    reader = StreamReader(output) if plan.stream else None
    for index in range(plan.index, len(plan.candidates)):
        if index != plan.index:
            previous = plan.qualified
            plan.use(index)
            log_fallback(previous, plan.qualified, last)
            if plan.hooks.observed:
                payload = {"model": plan.qualified, "previous": previous, "error": last}
                plan.hooks.observe("fallback", payload, info)
        messages, dropped = portable(request.messages, plan.provider.name)
        run.dropped.extend(d for d in dropped if d not in run.dropped)
        candidate = replace(request, model=plan.model, messages=list(messages))
        try:
            prepared = yield from prepare(plan, run, plan.provider, candidate)
        except InputError as exc:  # this model cannot take the request: never sent to it
            plan.state.skip(plan.qualified, str(exc))
            last = exc
            continue
        if plan.hooks.observed:
            plan.hooks.observe("model_start", {"model": plan.qualified, "request": candidate}, info)
        gate = plan.gate if index == 0 else None
        attempts = Attempts()
        try:
            response = yield from _attempts(
                plan, run, plan.provider, prepared, attempts, info, gate, reader
            )
        except (RunTimeout, StreamInterrupted):
            raise
        except Exception as exc:
            failures.extend(attempts.failures or [AttemptFailure(1, exc, 0.0, plan.qualified)])
            if not isinstance(exc, (ExecFailed, *plan.fallback_on)):
                raise  # a permanent error no other model would fix (a bad key, a bad request)
            if reader is not None and reader.delivered:
                # Only a restart the caller was told of may hand over to another model.
                yield Emit(StreamRestarted(attempts.count + 1))
                reader.restart()
            last = exc
            continue
        run.model = plan.qualified
        return response, attempts
    error = ExecFailed(failures, plan.info.function, plan.skipped)
    error.run = run  # type: ignore[attr-defined]
    raise error from last


def _attempts(
    plan: RunPlan,
    run: RunResult[Any],
    provider: Provider,
    prepared: Prepared,
    attempts: Attempts,
    info: Any,
    gate: Gate | None = None,
    reader: StreamReader | None = None,
) -> Generator[Effect, Any, Response]:
    """Send ``prepared`` until an attempt succeeds, backing off between failures.

    With rate limits (``gate``), each attempt first waits for capacity.
    """
    if reader is None and plan.stream:
        reader = StreamReader()
    deadline = plan.deadline
    while True:
        attempts.count += 1
        if deadline is not None and time.monotonic() >= deadline:
            raise _timeout(plan, run, attempts)
        try:
            if gate is not None:  # limits: wait for capacity, hold it for this attempt
                response = yield from _limited(plan, gate, provider, prepared, reader)
            elif reader is not None:
                response = yield Stream(provider, prepared, reader.start(), deadline)
            else:
                response = yield Send(provider, prepared, deadline)
            check_usage(response.usage, provider.name)  # NaN tokens: a malformed answer
        except Exception as exc:
            waited_out = isinstance(exc, LimitWaitTimeout)  # capacity only after the deadline
            if deadline is not None and (waited_out or time.monotonic() >= deadline - 0.001):
                attempts.note(AttemptFailure(attempts.count, exc))
                raise _timeout(plan, run, attempts) from None
            if reader is not None and reader.delivered:
                delay = yield from _restart_or_interrupt(plan, run, attempts, reader, exc, info)
            else:
                delay = _failed(plan, run, attempts, exc, info)
        else:
            if deadline is not None and time.monotonic() > deadline:
                # A sync call (a call= function, a scripted reply) cannot be cut short:
                # its answer after the deadline is kept on the RunTimeout, never returned.
                raise _timeout(plan, run, attempts, late=response)
            return response
        if deadline is not None:
            delay = min(delay, max(0.0, deadline - time.monotonic()))
        if delay > 0:
            yield Sleep(plan.backoff, delay)


def prepare(
    plan: RunPlan, run: RunResult[Any], provider: Provider, request: Request
) -> Generator[Effect, Any, Prepared]:
    """``provider.prepare(request)``: inline once the provider is warm, else a :class:`Prepare`."""
    if provider.converted:
        return provider.prepare(request) or Prepared(request)  # None: the first contract
    try:
        prepared: Prepared = yield Prepare(provider, request, plan.deadline)
    except ProviderTimeoutError:
        if plan.deadline is None:
            raise
        raise _timeout(plan, run, Attempts()) from None
    return prepared


def _restart_or_interrupt(
    plan: RunPlan,
    run: RunResult[Any],
    attempts: Attempts,
    reader: StreamReader,
    exc: Exception,
    info: Any,
) -> Generator[Effect, Any, float]:
    """A stream failed after the caller was handed part of it.

    Another answer must never continue what the caller already has: without
    ``stream_retry="restart"`` the run ends in :class:`StreamInterrupted`;
    with it, a retry first tells the caller to discard what it was shown.
    """
    if not plan.stream_restart:
        attempts.note(AttemptFailure(attempts.count, exc))
        raise interrupted(plan, run, attempts, reader, exc) from exc
    try:
        delay = _failed(plan, run, attempts, exc, info)
    except Exception as final:
        if plan.candidates and isinstance(final, (ExecFailed, *plan.fallback_on)):
            raise  # the next model restarts the stream (_with_fallbacks)
        attempts.count, attempts.failures = 0, ()  # counted on the run by _failed
        raise interrupted(plan, run, attempts, reader, final) from final
    yield Emit(StreamRestarted(attempts.count + 1))
    reader.restart()
    return delay


def interrupted(
    plan: RunPlan, run: RunResult[Any], attempts: Attempts, reader: StreamReader, exc: Exception
) -> StreamInterrupted:
    """The :class:`StreamInterrupted` of ``exc``, carrying the partial run (the text shown)."""
    run.attempts += attempts.count
    run.failures.extend(attempts.failures)
    attempts.count = 0
    attempts.failures = ()
    partial = copy.copy(run)
    partial.text = "".join(reader.shown)
    partial.model = plan.qualified
    return StreamInterrupted(exc, partial, provider=plan.provider.name)


def _timeout(
    plan: RunPlan, run: RunResult[Any], attempts: Attempts, late: Response | None = None
) -> RunTimeout:
    run.attempts += attempts.count
    run.failures.extend(attempts.failures)
    attempts.count = 0
    attempts.failures = ()
    assert plan.deadline_seconds is not None
    return RunTimeout(plan.deadline_seconds, run, late)


def _cap_timeout(plan: RunPlan, run: RunResult[Any], request: Request) -> None:
    """The request's HTTP timeout never outlives the run's deadline."""
    assert plan.deadline is not None
    remaining = plan.deadline - time.monotonic()
    if remaining <= 0:
        raise _timeout(plan, run, Attempts())
    if plan.plain_callable:
        return  # a call= function takes only the options it declares
    timeout = request.options.get("timeout")
    if timeout is None or timeout > remaining:
        request.options["timeout"] = remaining


def _admit(plan: RunPlan, request: Request) -> int:
    """Reserve this request in every budget (input side); raise before it is sent."""
    estimated = estimate_tokens(request)
    admitted = []
    try:
        for ledger in plan.ledgers:
            ledger.admit(estimated)
            admitted.append(ledger)
    except BaseException:
        for ledger in admitted:
            ledger.release(estimated)
        raise
    return estimated


def _fit_window(
    plan: RunPlan, run: RunResult[Any], request: Request
) -> Generator[Effect, Any, Request]:
    """Trim or summarize the oldest turns until the request fits.

    A request that asks the vendor to edit its context is sent whole: the
    vendor clears old tool results and thinking itself (``"vendor"``).
    """
    limit = plan.window_limit
    assert limit is not None
    if request.context_editing is not None:
        return request
    tokens = estimate_tokens(request)
    if tokens <= limit:
        return request
    policy = plan.context_policy
    messages = request.messages
    if policy is None or policy.strategy == "error":
        raise ContextWindowExceeded(tokens, limit, plan.qualified)
    current = current_turn_start(messages)
    turns = [t for t in split_turns(messages) if t[1] <= current]
    droppable = turns[: max(0, len(turns) - policy.keep_last)]
    bare = replace(request, messages=[], system=None, system_blocks=(), tools=[])
    sizes = [estimate_tokens(replace(bare, messages=messages[a:b])) for a, b in droppable]
    total = tokens
    cut = 0  # drop droppable[:cut]
    while total > limit and cut < len(droppable):
        total -= sizes[cut]
        cut += 1
    # A conversation must not start with the model's turn: drop up to the next user turn.
    end = droppable[cut - 1][1] if cut else 0
    while end < current and messages[end].role != "user":
        end += 1
    kept = messages[end:]
    if policy.strategy == "summarize" and end:
        summary = summary_message((yield from _summary(plan, run, messages[:end])))
        first = kept[0] if kept else None
        if first is not None and first.role == "user" and not first.tool_results:
            kept = [replace(first, blocks=(*summary.blocks, *first.blocks)), *kept[1:]]
        else:
            kept = [summary, *kept]
    fitted = replace(request, messages=list(kept))
    tokens = estimate_tokens(fitted)
    if tokens > limit or end == 0:
        raise ContextWindowExceeded(tokens, limit, plan.qualified)
    return fitted


def _summary(
    plan: RunPlan, run: RunResult[Any], dropped: list[Message]
) -> Generator[Effect, Any, str]:
    """A summary of ``dropped`` written once by a model call, then reused."""
    key = conversation_key(dropped)
    known = plan.summaries.get(key)
    if known is not None:
        return known
    policy = plan.context_policy
    assert policy is not None
    provider, model = plan.provider, plan.model
    if policy.summary_model is not None:
        provider, model = plan.resolve_model(policy.summary_model)
    request = Request(
        model=model,
        messages=[*dropped, Message("user", (TextBlock(SUMMARY_PROMPT),))],
        options={"timeout": plan.options["timeout"]} if "timeout" in plan.options else {},
    )
    prepared = yield from prepare(plan, run, provider, request)
    attempts = Attempts()
    streaming, plan.state.stream = (
        plan.stream,
        False,
    )  # the summary is not part of the caller's stream
    try:
        response = yield from _attempts(
            plan, run, provider, prepared, attempts, plan.call_info(run.iterations)
        )
    finally:
        plan.state.stream = streaming
    usage = response.usage if response.usage.requests else _one_request(response.usage)
    usage.priced_as(provider.price_name, model)
    run.usage.add(usage)
    plan.add_usage(usage)
    run.attempts += attempts.count
    plan.summaries[key] = response.text
    if plan.frame is not None:
        plan.frame_summary(response.text, usage, f"{provider.name}:{model}", len(dropped))
    return response.text


def _failed(
    plan: RunPlan, run: RunResult[Any], attempts: Attempts, exc: Exception, info: Any
) -> float:
    """Record a failed attempt; raise if it was the last, else return the delay."""

    def on_failure(failure: AttemptFailure) -> None:
        if plan.hooks.observed:
            payload = {"model": plan.qualified, "error": failure.error, "attempt": failure.number}
            payload["delay"] = failure.delay  # tracing: the backoff before the next attempt
            plan.hooks.observe("model_error", payload, info)

    try:
        delay = after_failure(
            exc,
            attempts.count,
            max_attempts=plan.max_attempts,
            backoff=plan.backoff,
            plain_callable=plan.plain_callable,
            function_name=plan.info.function,
            attempts=attempts,
            on_failure=on_failure,
            model=plan.qualified if plan.candidates else "",
        )
    except BaseException:
        run.attempts += attempts.count
        run.failures.extend(attempts.failures)
        raise
    log_retry(plan.qualified, attempts.count, plan.max_attempts, delay, exc)  # logging
    return delay


def _limited(
    plan: RunPlan,
    gate: Gate,
    provider: Provider,
    prepared: Prepared,
    reader: StreamReader | None,
) -> Generator[Effect, Any, Response]:
    """One attempt under the rate limits (controls.limits): capacity first, released after."""
    tokens = estimate_tokens(prepared.request)
    permit = yield Acquire(gate, tokens, plan.backoff, plan.deadline)
    response: Response
    try:
        if reader is not None:
            response = yield Stream(provider, prepared, reader.start(), plan.deadline)
        else:
            response = yield Send(provider, prepared, plan.deadline)
    except BaseException as exc:  # an error, or a stream abandoned by its caller
        permit.release(None, rate_info_of_error(exc))
        raise
    usage = response.usage
    permit.release(usage.input_tokens + usage.output_tokens or None, None)
    return response


def _check_budget(plan: RunPlan, request: Request) -> None:
    if plan.input_token_budget is None:
        return
    estimated = estimate_tokens(request)
    if estimated > plan.input_token_budget:
        raise TokenLimitExceeded(estimated, plan.input_token_budget)


def _one_request(usage: Usage) -> Usage:
    return Usage(
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.reasoning_tokens,
        1,
    )
