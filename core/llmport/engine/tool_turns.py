"""Tool turns: one turn of tool calls, and handoffs to another agentic function.

:func:`run_tool_turn` screens the calls (policy, repeated calls, the
approver), runs the allowed ones and records every outcome;
:func:`manual_tool_turn` leaves them to the caller
(``tool_execution="manual"``); :func:`handoff_of` and :func:`hand_off` give
the conversation to a handoff tool's target.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Generator
from typing import Any

from ..errors import (
    RunTimeout,
    ToolApprovalRequired,
)
from ..messages.check import check_turns
from ..messages.types import (
    Message,
    Response,
    ToolCall,
    ToolCallStarted,
    ToolResult,
    ToolResultEvent,
)
from ..tools.policy import ToolCheck
from ..tools.tool import RunContext, ToolBox, ToolOutcome, refusal
from .effects import Approve, Effect, Emit, Invoke, LiveEvents, RunTools, Steps, handoff_events
from .plan import RunPlan
from .result import RunResult, ToolCallRecord

__all__ = [
    "hand_off",
    "handoff_of",
    "manual_tool_turn",
    "run_tool_turn",
]


# --- one turn of tool calls ---------------------------------------------------------------


def _screen(
    plan: RunPlan, calls: list[ToolCall], info: Any
) -> Generator[Effect, Any, dict[str, ToolOutcome]]:
    """The refused outcomes by call id: policy, repeated calls, then the approver."""
    refused, pending = _gate(plan, calls, info)
    for call, check in pending:
        granted = yield Approve(plan.tool_settings.approver, check)  # type: ignore[arg-type]
        if not granted:
            refused[call.id] = refusal(
                call, f"running {call.name!r} was not approved.", "not_approved"
            )
    return refused


def manual_tool_turn(
    plan: RunPlan, run: RunResult[Any], calls: list[ToolCall], iteration: int
) -> Generator[Effect, Any, list[ToolOutcome]]:
    """``tool_execution="manual"``: refuse what policy refuses, leave the rest pending.

    The refused calls' outcomes are recorded (and streamed) as in an automatic
    run; the others become ``run.pending_tool_calls`` and the run stops. When
    every call was refused, nothing is pending and the loop goes on.
    """
    info = plan.call_info(iteration)
    if plan.stream:
        for call in calls:
            yield Emit(ToolCallStarted(call))
    refused = yield from _screen(plan, calls, info)
    outcomes = [refused[c.id] for c in calls if c.id in refused]
    for outcome in outcomes:
        if plan.hooks.observed:
            plan.hooks.observe("tool_start", {"call": outcome.call}, info)
        _record_tool(plan, run, outcome, iteration, info)
        if plan.stream:
            yield Emit(ToolResultEvent(outcome.result, outcome.duration))
    run.pending_tool_calls = [c for c in calls if c.id not in refused]
    run.settled = [o.result for o in outcomes]
    return outcomes


def run_tool_turn(
    plan: RunPlan, run: RunResult[Any], calls: list[ToolCall], iteration: int
) -> Generator[Effect, Any, list[ToolOutcome]]:
    info = plan.call_info(iteration)
    for call in calls:
        if plan.stream:
            yield Emit(ToolCallStarted(call))
        if plan.hooks.observed:
            plan.hooks.observe("tool_start", {"call": call}, info)
    refused = yield from _screen(plan, calls, info)
    allowed = [c for c in calls if c.id not in refused]
    ran: list[ToolOutcome] = []
    if allowed:
        box = plan.toolbox or ToolBox([])
        live = LiveEvents() if plan.stream else None
        ran = yield RunTools(
            box,
            allowed,
            _contexts(plan, allowed, iteration, live),
            plan.parallel_tool_calls,
            plan.tool_settings.tool_timeout,
            # Nested execs inside these tools may only use tools offered here.
            frozenset(box.tools),
            plan.deadline,  # a slow tool cannot outlive the run
            live,
        )
    by_id = {o.call.id: o for o in ran}
    outcomes = [refused.get(c.id) or by_id[c.id] for c in calls]
    for outcome in outcomes:
        _record_tool(plan, run, outcome, iteration, info)
        if plan.stream:
            yield Emit(ToolResultEvent(outcome.result, outcome.duration))
    if plan.deadline is not None and time.monotonic() >= plan.deadline:
        raise RunTimeout(plan.deadline_seconds or 0.0, run)
    return outcomes


def _gate(
    plan: RunPlan, calls: list[ToolCall], info: Any
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


def _contexts(
    plan: RunPlan, calls: list[ToolCall], iteration: int, live: LiveEvents | None = None
) -> list[RunContext[Any]]:
    node_id = plan.record.node_id if plan.record is not None else None
    frame = plan.frame
    lookup = frame.previous if frame is not None else None
    return [
        RunContext(
            deps=plan.deps,
            model=plan.qualified,
            node_id=node_id,
            iteration=iteration,
            tool_call_id=c.id,
            tool_name=c.name,
            function=plan.info.function,
            stream_writer=_writer(live or handoff_events.get(), c),
            store=plan.store,
            previous_lookup=lookup,
        )
        for c in calls
    ]


def _writer(live: LiveEvents | None, call: ToolCall) -> Callable[[Any], None]:
    """A call's ``stream_writer``: into this run's stream, else a streamed handoff's caller."""
    return live.writer(call.id, call.name) if live is not None else _no_writer


def _no_writer(payload: Any) -> None:
    """``stream_writer`` when the run is not streamed."""


def _record_tool(
    plan: RunPlan, run: RunResult[Any], outcome: ToolOutcome, iteration: int, info: Any
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


# --- handoffs ----------------------------------------------------------------------------


def handoff_of(plan: RunPlan, response: Response, iteration: int) -> tuple[ToolCall, Any] | None:
    """The first call of a handoff tool this turn (one a run-stage policy does not deny)."""
    box = plan.toolbox
    if box is None or not box.handoffs:
        return None
    info = plan.call_info(iteration)
    for call in response.tool_calls:
        tool = box.tools.get(call.name)
        if tool is None or tool.handoff is None:
            continue
        if plan.hooks.tool_verdict(ToolCheck(call.name, "run", info, call)) == "deny":
            continue  # refused like any denied call, in the tool turn
        return call, tool.handoff
    return None


def hand_off(
    plan: RunPlan,
    run: RunResult[Any],
    response: Response,
    taken: tuple[ToolCall, Any],
    iteration: int,
) -> Steps:
    """End the loop; hand the (filtered) conversation to the target; its return is the output."""
    from ..sessions.agentic import handoff_claim

    call, handoff = taken
    results = tuple(
        ToolResult(
            c.id,
            c.name,
            f"Transferred to {handoff.target_name}."
            if c.id == call.id
            else "Not run: the conversation was handed off.",
        )
        for c in response.tool_calls
    )
    run.messages.append(Message("tool", tool_results=results))
    run.handoff = handoff.name
    if plan.stream:
        yield Emit(ToolCallStarted(call))
    conversation = list(run.messages)
    if handoff.input_filter is not None:
        conversation = list(handoff.input_filter(conversation))
        check_turns(conversation, "handoff input")  # checked before the target sees it
    claim: list[Any] = []
    target = handoff.target
    live = LiveEvents() if plan.stream else None
    if inspect.iscoroutinefunction(target):

        async def invoke() -> Any:
            token, events = handoff_claim.set(claim), handoff_events.set(live)
            try:
                return await target(conversation)
            finally:
                handoff_events.reset(events)
                handoff_claim.reset(token)

    else:

        def invoke() -> Any:  # type: ignore[misc]
            token, events = handoff_claim.set(claim), handoff_events.set(live)
            try:
                return target(conversation)
            finally:
                handoff_events.reset(events)
                handoff_claim.reset(token)

    started = time.perf_counter()
    try:
        value = yield Invoke(invoke, {}, live)
    except BaseException as exc:
        _record_handoff(plan, handoff.name, call.id, claim, exc, started)
        raise
    _record_handoff(plan, handoff.name, call.id, claim, None, started)
    if plan.stream:
        mine = next(r for r in results if r.call_id == call.id)
        yield Emit(ToolResultEvent(mine, time.perf_counter() - started))
    return value


def _record_handoff(
    plan: RunPlan,
    name: str,
    call_id: str,
    claim: list[Any],
    error: BaseException | None,
    started: float,
) -> None:
    session = getattr(plan.frame, "session", None)
    if session is None or plan.record is None:
        return
    from ..sessions.agentic import record_handoff

    target = claim[0] if claim else None
    elapsed = time.perf_counter() - started
    record_handoff(session, plan.record.node_id, name, call_id, target, error, elapsed)
