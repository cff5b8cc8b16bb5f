"""The run as one generator of effects, shared by the sync and async drivers.

:func:`machine` is the whole of a run: the tool loop, then structured output
and decisions on its final answer, recorded (DAG, usage, observers) whether
it succeeds or fails. It never does I/O itself: it yields an *effect*
(:mod:`.effects`) and a driver (:mod:`.drive`) performs it and sends back the
result, or throws the exception it raised. Events are emitted only when
streaming, so ``run()`` builds none.

The stages live one module each: :mod:`.requests` builds each turn's
request, :mod:`.attempts` sends it (retries, backoff, fallbacks, window,
budgets), :mod:`.tool_turns` runs a turn's tool calls and handoffs, and
:mod:`.output_modes` handles structured output and decisions.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

from ..errors import (
    MaxIterationsExceeded,
    ModelBehaviorError,
)
from ..messages.types import (
    FinalEvent,
    MediaBlock,
    Message,
    Response,
    ThinkingBlock,
)
from ..tools.tool import ToolOutcome
from .attempts import model_request
from .effects import Effect, Emit, Steps
from .output_modes import OutputMode, decide, output_mode, structured_output, turn_request
from .plan import RunPlan
from .result import RunResult
from .tool_turns import hand_off, handoff_of, manual_tool_turn, run_tool_turn

__all__ = [
    "machine",
]


# --- the run ----------------------------------------------------------------------


def machine(plan: RunPlan, run: RunResult[Any]) -> Steps:
    """The whole run; records it (DAG, runtime usage) whether it succeeds or fails.

    The tool loop runs in this generator's own frame (:func:`_turns` below it, then
    :func:`_final` on its answer): every generator layer is an object each call in
    flight holds.
    """
    started = time.perf_counter()
    if plan.hooks.observed:  # tracing: a span per run
        plan.hooks.observe("run_start", {"run": run, "trace": plan.trace}, plan.info)
    try:
        messages = list(plan.messages)
        run.messages = messages  # the same list: a partial result (RunTimeout, budget) has it too
        mode = output_mode(plan)
        response, reply, handed_off = yield from _turns(plan, run, messages, mode)
        if handed_off:  # another agentic function took the conversation: its return is the output
            output = run.value
        else:
            output = yield from _final(plan, run, messages, mode, response, reply)
    except BaseException as exc:
        run.latency = time.perf_counter() - started
        if plan.hooks.observed:  # tracing
            payload = {"run": run, "trace": plan.trace, "error": exc}
            plan.hooks.observe("run_end", payload, plan.info)
        if plan.record is not None:
            plan.record.fail(exc, attempts=run.attempts)
        raise
    run.output = output
    run.latency = time.perf_counter() - started
    if plan.hooks.observed:  # tracing
        plan.hooks.observe("run_end", {"run": run, "trace": plan.trace, "error": None}, plan.info)
    if plan.record is not None:
        _record(plan, run, output)
    if plan.stream:
        yield Emit(FinalEvent(run))


def _record(plan: RunPlan, run: RunResult[Any], output: Any) -> None:
    """Record the finished run on its DAG node."""
    assert plan.record is not None
    added = run.messages[len(plan.messages) :]
    plan.record.finish(
        reply=run.text,
        usage=run.usage,
        tool_calls=[r.call for r in run.tool_calls],
        stop_reason=run.stop_reason,
        output=output,
        attempts=run.attempts,
        thinking=[b for m in added for b in m.blocks if isinstance(b, ThinkingBlock)],
        model=plan.qualified,
        response_ids=plan.response_ids,
        media=[
            b for m in added if m.role == "assistant" for b in m.blocks if isinstance(b, MediaBlock)
        ],
    )


def _final(
    plan: RunPlan,
    run: RunResult[Any],
    messages: list[Message],
    mode: OutputMode | None,
    response: Response,
    reply: str,
) -> Steps:
    """The run's output from its final answer: structured output and decisions on it."""
    # Only a manual run has pending calls (its lazily made list is not read otherwise).
    pending = plan.manual_tools and bool(run.pending_tool_calls)
    final_missing = mode is None or mode.final_call(response) is None
    if response.tool_calls and final_missing and not pending:
        raise MaxIterationsExceeded(plan.max_iterations, run)
    run.text = reply
    run.stop_reason = response.stop_reason
    output: Any = reply
    run.value = reply
    if pending:  # no final answer yet: structured output and decisions wait for it
        return output
    if mode is not None:
        output = yield from structured_output(plan, run, mode, messages, response, reply)
    if plan.decision is not None:
        output = yield from decide(plan, run, messages)
        run.value = output
    return output


def _turns(
    plan: RunPlan, run: RunResult[Any], messages: list[Message], mode: OutputMode | None
) -> Generator[Effect, Any, tuple[Response, str, bool]]:
    """Model turns and their tool runs until an answer: (last response, reply, handed off?)."""
    tool_choice = plan.tool_choice
    response: Response | None = None
    failed_turns = 0
    reply = ""
    output = None if mode is None else mode.stream(plan)
    for iteration in range(1, plan.max_iterations + 1):
        run.iterations = iteration
        request = turn_request(plan, messages, mode, tool_choice)
        response = yield from model_request(plan, run, request, output)
        messages.append(response.as_message())
        reply = response.text
        if not response.tool_calls:
            break
        ended = None if mode is None else mode.finish(response, messages)
        if ended is not None:  # output_mode="tool": the run ends at the output tool's call
            response, reply = ended
            break
        taken = handoff_of(plan, response, iteration)
        if taken is not None:  # the conversation goes to another agentic function
            handed = yield from hand_off(plan, run, response, taken, iteration)
            run.text = reply
            run.stop_reason = response.stop_reason
            run.value = handed
            return response, reply, True
        if plan.manual_tools:  # tool_execution="manual": the caller runs them
            outcomes = yield from manual_tool_turn(plan, run, list(response.tool_calls), iteration)
            if run.pending_tool_calls:
                break
        elif iteration == plan.max_iterations:
            break  # these calls' results could never be sent back: do not run them
        else:
            outcomes = yield from run_tool_turn(plan, run, list(response.tool_calls), iteration)
        messages.append(Message("tool", tool_results=tuple(o.result for o in outcomes)))
        # A forced choice ("required" or a name) applies to the first turn only:
        # forced on every turn, the model could never answer and the loop never ends.
        if tool_choice != "none":
            tool_choice = "auto"
        failed_turns = _failed_turns(plan, run, outcomes, failed_turns)
    assert response is not None
    return response, reply, False


def _failed_turns(
    plan: RunPlan, run: RunResult[Any], outcomes: list[ToolOutcome], before: int
) -> int:
    """Turns in a row whose every tool call failed; too many is a ModelBehaviorError."""
    failed_turns = before + 1 if all(o.result.is_error for o in outcomes) else 0
    if failed_turns >= plan.tool_settings.max_tool_errors:
        error = ModelBehaviorError(
            f"every tool call failed on {failed_turns} turns in a row "
            f"(max_tool_errors={plan.tool_settings.max_tool_errors}); "
            f"last: {outcomes[-1].error}"
        )
        error.run = run  # type: ignore[attr-defined]
        raise error
    return failed_turns
