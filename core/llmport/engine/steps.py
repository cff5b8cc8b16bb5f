"""The run as one generator of effects, shared by the sync and async drivers.

:func:`machine` is the whole of a run: the tool loop, structured output
with its repair round, decisions, every model request with its retries and
backoff sleeps, approvals, policy verdicts, guardrails, observers and DAG
recording. It never does I/O itself: it yields an *effect* (send this
prepared request or stream it, sleep, ask the approver, run
these tools, call the chosen function, emit this event) and a driver
(:mod:`.drive`) performs it and sends back the result, or throws the
exception it raised. Events are emitted only when streaming, so ``run()``
builds none.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from .. import structured
from ..decisions import Choice, InvalidPick, resolve_call
from ..errors import (
    AttemptFailure,
    MaxIterationsExceeded,
    ModelBehaviorError,
    TokenLimitExceeded,
    ToolApprovalRequired,
)
from ..estimate import estimate_tokens
from ..limits import Acquire, rate_info_of_error  # limits
from ..logs import log_retry, log_usage  # logging
from ..policy import ToolCheck
from ..provider import Prepared, Provider, StreamAssembler
from ..retry import Attempts, Backoff, after_failure
from ..tools import RunContext, ToolBox, ToolOutcome, refusal
from ..types import (
    FinalEvent,
    Message,
    ProviderEvent,
    Request,
    Response,
    ResponseFormat,
    StreamEvent,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    ToolChoice,
    ToolResult,
    ToolResultEvent,
    Usage,
    UsageEvent,
)
from .plan import Plan
from .result import RunResult, ToolCallRecord

__all__ = [
    "Approve",
    "Effect",
    "Emit",
    "Invoke",
    "RunTools",
    "Send",
    "Sleep",
    "Stream",
    "StreamReader",
    "estimate_tokens",
    "machine",
]

# --- effects: what the machine asks a driver to do -----------------------------------


@dataclass(slots=True, frozen=True)
class Emit:
    """Hand ``event`` to the caller (streaming only)."""

    event: StreamEvent


@dataclass(slots=True, frozen=True)
class Send:
    """Send a prepared request; the answer is the :class:`Response`."""

    provider: Provider
    prepared: Prepared


@dataclass(slots=True, frozen=True)
class Stream:
    """Send a prepared request as a stream; the answer is the assembled :class:`Response`.

    The driver feeds every provider event to ``reader`` and hands the caller
    what it returns (new text), one loop per stream: no round trip through the
    machine per event.
    """

    provider: Provider
    prepared: Prepared
    reader: StreamReader


class StreamReader:
    """Assembles one attempt's events; lets through only text the caller has not seen.

    The same reader serves every attempt of a request (:class:`_TextGate`), so a
    retried stream never repeats text the caller already received.
    """

    __slots__ = ("assembler", "gate")

    def __init__(self) -> None:
        self.gate = _TextGate()
        self.assembler = StreamAssembler()

    def start(self) -> StreamReader:
        """Begin an attempt (fresh assembly, same caller-facing text)."""
        self.gate.new_attempt()
        self.assembler = StreamAssembler()
        return self

    def feed(self, event: ProviderEvent) -> TextDelta | None:
        """Take one provider event; return the text delta to emit, if any."""
        self.assembler.feed(event)
        if type(event) is TextDelta and (piece := self.gate.admit(event.text)):
            return TextDelta(piece)
        return None

    def response(self) -> Response:
        return self.assembler.response()


@dataclass(slots=True, frozen=True)
class Sleep:
    """Wait between attempts (``time.sleep`` or ``await asyncio.sleep``, as the backoff says)."""

    backoff: Backoff
    seconds: float


@dataclass(slots=True, frozen=True)
class Approve:
    """Ask the approver (sync or async) whether a call may run; the answer is a bool."""

    approver: Callable[..., Any]
    check: ToolCheck


@dataclass(slots=True, frozen=True)
class RunTools:
    """Run tool calls (threads for sync tools, tasks for async ones); the answer is outcomes."""

    box: ToolBox
    calls: list[ToolCall]
    contexts: list[RunContext[Any]]
    parallel: bool
    timeout: float | None
    scope: frozenset[str]


@dataclass(slots=True, frozen=True)
class Invoke:
    """Call the chosen callable of a decision (awaited if async); the answer is its result."""

    fn: Callable[..., Any]
    kwargs: dict[str, Any]


Effect = Emit | Send | Stream | Sleep | Approve | RunTools | Invoke | Acquire
Steps = Generator[Effect, Any, Any]


# --- the run ----------------------------------------------------------------------


def machine(plan: Plan, run: RunResult[Any]) -> Steps:
    """The whole run; records it (DAG, runtime usage) whether it succeeds or fails."""
    started = time.perf_counter()
    if plan.hooks.observed:  # tracing: a span per run
        plan.hooks.observe("run_start", {"run": run, "trace": plan.trace}, plan.info)
    try:
        output = yield from _loop(plan, run)
    except BaseException as exc:
        run.latency = time.perf_counter() - started
        plan.add_usage(run.usage)
        if plan.hooks.observed:  # tracing
            payload = {"run": run, "trace": plan.trace, "error": exc}
            plan.hooks.observe("run_end", payload, plan.info)
        if plan.record is not None:
            plan.record.fail(exc, attempts=run.attempts)
        raise
    run.output = output
    run.latency = time.perf_counter() - started
    plan.add_usage(run.usage)
    if plan.hooks.observed:  # tracing
        plan.hooks.observe("run_end", {"run": run, "trace": plan.trace, "error": None}, plan.info)
    if plan.record is not None:
        plan.record.finish(
            reply=run.text,
            usage=run.usage,
            tool_calls=[r.call for r in run.tool_calls],
            stop_reason=run.stop_reason,
            output=output,
            attempts=run.attempts,
        )
    if plan.stream:
        yield Emit(FinalEvent(run))


def _request(
    plan: Plan,
    messages: list[Message],
    *,
    tools: bool,
    tool_choice: ToolChoice,
    response_format: ResponseFormat | None,
) -> Request:
    specs = plan.toolbox.specs if (tools and plan.toolbox) else []
    return Request(
        model=plan.model,
        messages=list(messages),
        system=plan.system,
        tools=specs,
        tool_choice=tool_choice if specs else "auto",
        parallel_tool_calls=plan.parallel_tool_calls,
        response_format=response_format,
        options=dict(plan.options),
        stream=plan.stream,
        vendor=plan.vendor,
    )


def _loop(plan: Plan, run: RunResult[Any]) -> Steps:
    messages = list(plan.messages)
    tool_choice = plan.tool_choice
    response: Response | None = None
    failed_turns = 0
    for iteration in range(1, plan.max_iterations + 1):
        run.iterations = iteration
        request = _request(
            plan,
            messages,
            tools=True,
            tool_choice=tool_choice,
            response_format=plan.response_format,
        )
        response = yield from _model(plan, run, request)
        messages.append(response.as_message())
        if not response.tool_calls:
            break
        if iteration == plan.max_iterations:
            break  # these calls' results could never be sent back: do not run them
        outcomes = yield from _tools(plan, run, list(response.tool_calls), iteration)
        messages.append(Message("tool", tool_results=tuple(o.result for o in outcomes)))
        # A forced choice ("required" or a name) applies to the first turn only:
        # forced on every turn, the model could never answer and the loop never ends.
        if tool_choice != "none":
            tool_choice = "auto"
        failed_turns = failed_turns + 1 if all(o.result.is_error for o in outcomes) else 0
        if failed_turns >= plan.tool_settings.max_tool_errors:
            run.messages = messages
            error = ModelBehaviorError(
                f"every tool call failed on {failed_turns} turns in a row "
                f"(max_tool_errors={plan.tool_settings.max_tool_errors}); "
                f"last: {outcomes[-1].error}"
            )
            error.run = run  # type: ignore[attr-defined]
            raise error
    assert response is not None
    if response.tool_calls:
        run.messages = messages
        raise MaxIterationsExceeded(plan.max_iterations, run)
    run.text = response.text
    run.stop_reason = response.stop_reason
    output: Any = response.text
    run.value = response.text

    if plan.response_format is not None:
        value, errors = _structured(plan, response.text)
        if errors:
            messages.append(Message("user", (TextBlock(structured.repair_prompt(errors)),)))
            request = _request(
                plan,
                messages,
                tools=False,
                tool_choice="auto",
                response_format=plan.response_format,
            )
            response = yield from _model(plan, run, request)
            messages.append(response.as_message())
            value, errors = _structured(plan, response.text)
            if errors:
                run.messages = messages
                raise structured.fail(errors, response.text)
        run.text = response.text
        run.stop_reason = response.stop_reason
        output = structured.strip_fences(response.text)
        run.value = value

    if plan.decision is not None:
        output = yield from _decide(plan, run, messages)
        run.value = output
    run.messages = messages
    return output


def _structured(plan: Plan, text: str) -> tuple[Any, list[str]]:
    """(value, errors) of a structured reply; building the output class may reject it too."""
    assert plan.response_format is not None
    value, errors = structured.parse_reply(plan.response_format, text)
    if errors:
        return value, errors
    try:
        return structured.to_output(value, plan.output_type), []
    except Exception as exc:  # e.g. a pydantic validator stricter than the schema
        return value, [f"<root>: {type(exc).__name__}: {exc}"]


# --- one model request: prepare once, then attempts -------------------------------------


def _model(plan: Plan, run: RunResult[Any], request: Request) -> Generator[Effect, Any, Response]:
    _check_budget(plan, request)
    info = plan.call_info(run.iterations)
    request = plan.hooks.before_request(request, info)
    prepared = plan.provider.prepare(request) or Prepared(request)  # None: the first contract
    observed = plan.hooks.observed
    if observed:
        plan.hooks.observe("model_start", {"model": plan.qualified, "request": request}, info)
    attempts = Attempts()
    reader = StreamReader() if plan.stream else None
    while True:
        attempts.count += 1
        try:
            if plan.gate is not None:  # limits: wait for capacity, hold it for this attempt
                response = yield from _limited(plan, request, prepared, reader)
            elif reader is not None:
                response = yield Stream(plan.provider, prepared, reader.start())
            else:
                response = yield Send(plan.provider, prepared)
            break
        except Exception as exc:
            delay = _failed(plan, run, attempts, exc, info)
        if delay > 0:
            yield Sleep(plan.backoff, delay)
    response = plan.hooks.after_response(request, response, info)
    run.usage.add(response.usage if response.usage.requests else _one_request(response.usage))
    log_usage(plan.qualified, response.usage)  # logging (DEBUG)
    run.attempts += attempts.count
    run.failures.extend(attempts.failures)
    if observed:
        payload = {"model": plan.qualified, "response": response, "attempts": attempts.count}
        plan.hooks.observe("model_end", payload, info)
    if plan.stream:
        yield Emit(UsageEvent(response.usage))
    return response


def _failed(
    plan: Plan, run: RunResult[Any], attempts: Attempts, exc: Exception, info: Any
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
        )
    except BaseException:
        run.attempts += attempts.count
        run.failures.extend(attempts.failures)
        raise
    log_retry(plan.qualified, attempts.count, plan.max_attempts, delay, exc)  # logging
    return delay


def _limited(
    plan: Plan, request: Request, prepared: Prepared, reader: StreamReader | None
) -> Generator[Effect, Any, Response]:
    """One attempt under the rate limits (llmport.limits): capacity first, released after."""
    assert plan.gate is not None
    tokens = estimate_tokens(request)
    permit = yield Acquire(plan.gate, tokens, plan.backoff, getattr(plan, "deadline", None))
    response: Response
    try:
        if reader is not None:
            response = yield Stream(plan.provider, prepared, reader.start())
        else:
            response = yield Send(plan.provider, prepared)
    except BaseException as exc:  # an error, or a stream abandoned by its caller
        permit.release(None, rate_info_of_error(exc))
        raise
    usage = response.usage
    permit.release(usage.input_tokens + usage.output_tokens or None, None)
    return response


def _check_budget(plan: Plan, request: Request) -> None:
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


class _TextGate:
    """Keeps a retried stream from repeating text the caller already received.

    Deltas are counted per attempt; only text past what was already sent is
    let through. If a retried reply differs from the failed one, the
    caller's text is the failed prefix plus the new remainder; the
    FinalEvent's ``result.text`` is always the complete reply that succeeded.
    """

    __slots__ = ("seen", "sent")

    def __init__(self) -> None:
        self.sent = 0
        self.seen = 0

    def new_attempt(self) -> None:
        self.seen = 0

    def admit(self, text: str) -> str:
        start = self.seen
        self.seen += len(text)
        if self.seen <= self.sent:
            return ""
        piece = text[max(0, self.sent - start) :]
        self.sent = self.seen
        return piece


# --- one turn of tool calls ---------------------------------------------------------------


def _tools(
    plan: Plan, run: RunResult[Any], calls: list[ToolCall], iteration: int
) -> Generator[Effect, Any, list[ToolOutcome]]:
    info = plan.call_info(iteration)
    for call in calls:
        if plan.stream:
            yield Emit(ToolCallStarted(call))
        if plan.hooks.observed:
            plan.hooks.observe("tool_start", {"call": call}, info)
    refused, pending = _gate(plan, calls, info)
    for call, check in pending:
        granted = yield Approve(plan.tool_settings.approver, check)  # type: ignore[arg-type]
        if not granted:
            refused[call.id] = refusal(
                call, f"running {call.name!r} was not approved.", "not_approved"
            )
    allowed = [c for c in calls if c.id not in refused]
    ran: list[ToolOutcome] = []
    if allowed:
        box = plan.toolbox or ToolBox([])
        ran = yield RunTools(
            box,
            allowed,
            _contexts(plan, allowed, iteration),
            plan.parallel_tool_calls,
            plan.tool_settings.tool_timeout,
            # Nested execs inside these tools may only use tools offered here.
            frozenset(box.tools),
        )
    by_id = {o.call.id: o for o in ran}
    outcomes = [refused.get(c.id) or by_id[c.id] for c in calls]
    for outcome in outcomes:
        _record_tool(plan, run, outcome, iteration, info)
        if plan.stream:
            yield Emit(ToolResultEvent(outcome.result, outcome.duration))
    return outcomes


def _gate(
    plan: Plan, calls: list[ToolCall], info: Any
) -> tuple[dict[str, ToolOutcome], list[tuple[ToolCall, ToolCheck]]]:
    """(refused outcomes by call id, calls awaiting approval).

    Run-stage policy first (deny wins), then the repeated-call rule; a tool
    marked "approve" when offered still needs approval for each call.
    """
    refused: dict[str, ToolOutcome] = {}
    pending: list[tuple[ToolCall, ToolCheck]] = []
    toolbox = plan.toolbox
    for call in calls:
        verdict = plan.hooks.tool_verdict(ToolCheck(call.name, "run", info, call))
        if verdict == "allow" and toolbox is not None and call.name in toolbox.needs_approval:
            verdict = "approve"
        if verdict == "deny":
            refused[call.id] = refusal(call, f"tool {call.name!r} was denied by policy.", "denied")
            continue
        repeated = plan.tool_settings.history.check(call)
        if repeated is not None:
            refused[call.id] = repeated
        elif verdict == "approve":
            if plan.tool_settings.approver is None:
                raise ToolApprovalRequired(
                    f"policy requires approval to run {call.name!r} but no approver was given "
                    "(exec(..., approver=fn) or Runtime(..., approver=fn))"
                )
            tool = toolbox.tools.get(call.name) if toolbox is not None else None
            description = tool.description if tool is not None else ""
            pending.append((call, ToolCheck(call.name, "run", info, call, description)))
    return refused, pending


def _contexts(plan: Plan, calls: list[ToolCall], iteration: int) -> list[RunContext[Any]]:
    node_id = plan.record.node_id if plan.record is not None else None
    return [
        RunContext(
            deps=plan.deps,
            model=plan.qualified,
            node_id=node_id,
            iteration=iteration,
            tool_call_id=c.id,
            tool_name=c.name,
            function=plan.info.function,
        )
        for c in calls
    ]


def _record_tool(
    plan: Plan, run: RunResult[Any], outcome: ToolOutcome, iteration: int, info: Any
) -> None:
    node_id = None
    if plan.frame is not None and plan.record is not None:
        node_id = plan.frame.record_tool(
            llm_node_id=plan.record.node_id,
            call=outcome.call,
            result=outcome.result,
            duration=outcome.duration,
            error=outcome.error,
            iteration=iteration,
        )
    run.tool_calls.append(
        ToolCallRecord(
            outcome.call,
            outcome.result,
            outcome.duration,
            iteration,
            outcome.error,
            node_id,
            outcome.status,
        )
    )
    if plan.hooks.observed:
        payload = {
            "call": outcome.call,
            "result": outcome.result,
            "duration": outcome.duration,
            "error": outcome.error,
        }
        plan.hooks.observe("tool_end", payload, info)


# --- decisions ---------------------------------------------------------------------------


def _decide(plan: Plan, run: RunResult[Any], messages: list[Message]) -> Steps:
    decision = plan.decision
    assert decision is not None
    via_tools = plan.caps.native_tools
    messages.append(Message("user", (TextBlock(decision.prompt(via_tools)),)))
    errors: list[str] = []
    for _ in range(2):  # one pick and one re-pick
        if via_tools:
            specs = decision.tool_specs()
            choice: ToolChoice = {"name": specs[0].name} if len(specs) == 1 else "required"
            request = Request(
                model=plan.model,
                messages=list(messages),
                system=plan.system,
                tools=specs,
                tool_choice=choice,
                parallel_tool_calls=False,
                options=dict(plan.options),
                stream=plan.stream,
                vendor=plan.vendor,
            )
        else:
            request = _request(
                plan,
                messages,
                tools=False,
                tool_choice="auto",
                response_format=decision.response_format(),
            )
        response = yield from _model(plan, run, request)
        messages.append(response.as_message())
        try:
            picked, args = decision.parse(response, via_tools)
        except InvalidPick as bad:
            errors = bad.errors
            why = "; ".join(errors)
            if response.tool_calls:
                results = tuple(
                    ToolResult(c.id, c.name, "invalid pick: " + why, True)
                    for c in response.tool_calls
                )
                messages.append(Message("tool", tool_results=results))
            retry = f"That was not a valid choice: {why}. {decision.prompt(via_tools)}"
            messages.append(Message("user", (TextBlock(retry),)))
            continue
        return (yield from _resolve_choice(plan, run, picked, args))
    raise decision.fail(errors)


def _resolve_choice(plan: Plan, run: RunResult[Any], picked: Choice, args: dict[str, Any]) -> Steps:
    run.choice = picked.name
    ctx = RunContext(
        deps=plan.deps,
        model=plan.qualified,
        node_id=plan.record.node_id if plan.record is not None else None,
        iteration=run.iterations,
        tool_name=picked.name,
        function=plan.info.function,
    )
    fn, kwargs = resolve_call(picked, args, ctx)
    if fn is None:
        return picked.target
    return (yield Invoke(fn, kwargs))
