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

import contextlib
import contextvars
import copy
import inspect
import queue
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from typing import Any

from ..controls.limits import Acquire, Gate, LimitWaitTimeout, rate_info_of_error  # limits
from ..controls.retry import Attempts, Backoff, after_failure
from ..controls.window import (
    SUMMARY_PROMPT,
    conversation_key,
    current_turn_start,
    split_turns,
    summary_message,
    vendor_editing,
)
from ..errors import (
    AttemptFailure,
    ContextWindowExceeded,
    ExecFailed,
    InputError,
    MaxIterationsExceeded,
    ModelBehaviorError,
    OptionError,
    ProviderTimeoutError,
    RunTimeout,
    StreamInterrupted,
    TokenLimitExceeded,
    ToolApprovalRequired,
)
from ..messages.check import check_turns
from ..messages.estimate import estimate_tokens
from ..messages.types import (
    CacheControl,
    CitationEvent,
    CustomEvent,
    FinalEvent,
    MediaBlock,
    Message,
    ProviderEvent,
    Request,
    Response,
    ResponseFormat,
    ServerToolEvent,
    StopEvent,
    StreamEvent,
    StreamRestarted,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallStarted,
    ToolChoice,
    ToolResult,
    ToolResultEvent,
    ToolSpec,
    Usage,
    UsageEvent,
)
from ..observe.logs import log_fallback, log_retry, log_usage  # logging
from ..output import structured
from ..output.decisions import Choice, InvalidPick, resolve_call
from ..output.streaming import OutputStream
from ..provider.assembly import StreamAssembler
from ..provider.contract import Prepared, Provider
from ..tools.deferral import settle_deferral
from ..tools.policy import ToolCheck
from ..tools.tool import RunContext, ToolBox, ToolOutcome, refusal
from .plan import Plan, portable
from .result import RunResult, ToolCallRecord
from .state import note_answer

__all__ = [
    "Approve",
    "Effect",
    "Emit",
    "Invoke",
    "OutputMode",
    "RunTools",
    "Send",
    "Sleep",
    "Stream",
    "StreamReader",
    "build_request",
    "estimate_tokens",
    "first_request",
    "machine",
    "output_mode",
    "turn_request",
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
    #: ``time.monotonic()`` by which the answer must be in (``exec(deadline=...)``), or None.
    deadline: float | None = None


@dataclass(slots=True, frozen=True)
class Prepare:
    """Convert ``request`` for a provider that has not converted one yet; the answer is Prepared.

    A first conversion may import the vendor SDK: the drivers run it under the
    run's deadline, the async one off the event loop. Later ones run inline.
    """

    provider: Provider
    request: Request
    deadline: float | None = None


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
    deadline: float | None = None


class StreamReader:
    """Assembles one attempt's events and remembers what reached the caller.

    The same reader serves every attempt (and every fallback model) of one
    request, so it knows whether the caller has already been handed part of
    an answer: once it has, a failed attempt is never continued by another
    answer. ``shown`` is the text the caller has of this request.

    With ``output`` (a structured output), it also reads the output as it
    arrives: :meth:`feed` returns the first event and leaves the others
    (``OutputDelta``, ``PartialOutput``) in ``more`` for the driver.
    """

    __slots__ = ("assembler", "delivered", "more", "output", "shown")

    def __init__(self, output: OutputStream | None = None) -> None:
        self.assembler = StreamAssembler()
        #: Events of this request handed to the caller (0: a retry is invisible).
        self.delivered = 0
        self.shown: list[str] = []
        self.output = output
        self.more: list[StreamEvent] = []

    def start(self) -> StreamReader:
        """Begin an attempt: a fresh assembly (and a fresh output)."""
        self.assembler = StreamAssembler()
        if self.output is not None:
            self.output.reset()
        return self

    def take_more(self) -> list[StreamEvent]:
        """The events the last :meth:`feed` left for the caller after the one it returned."""
        more, self.more = self.more, []
        return more

    def restart(self) -> None:
        """The caller was told to discard what it was shown (``StreamRestarted``)."""
        self.delivered = 0
        self.shown = []

    def feed(self, event: ProviderEvent) -> StreamEvent | None:
        """Take one provider event; return the event to hand the caller, if any."""
        self.assembler.feed(event)
        kind = type(event)
        if kind is TextDelta:
            text = event.text  # type: ignore[union-attr]
            if not text:
                return None
            self.shown.append(text)
            if self.output is not None:
                self.more = self.output.text(text)
        elif self.output is not None and (kind is ToolCallDelta or kind is StopEvent):
            return self._output_events(event)
        elif not (kind is ThinkingDelta or kind is CitationEvent or kind is ServerToolEvent):
            return None
        self.delivered += 1
        return event  # type: ignore[return-value]

    def _output_events(self, event: ProviderEvent) -> StreamEvent | None:
        """A structured output's events for a tool-call fragment or the answer's end."""
        assert self.output is not None
        # At the StopEvent: the output's last value, if the text grew since it was parsed.
        found = self.output.call(event) if isinstance(event, ToolCallDelta) else self.output.flush()
        if not found:
            return None
        self.delivered += 1
        self.more = found[1:]
        return found[0]

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
    #: The run's deadline (``time.monotonic()``): bounds every call, whatever its own timeout.
    deadline: float | None = None
    #: Streaming: what the tools write (``ctx.stream_writer``), for the driver to emit live.
    events: LiveEvents | None = None


class LiveEvents:
    """Events written while tools run (any thread), handed to the caller as they come.

    The sync driver reads them from a thread-safe queue while the tools run
    in a worker thread; the async driver :meth:`bind` s an ``asyncio.Queue``
    of its loop, fed thread-safely. Order is the order of ``put`` calls.
    """

    __slots__ = ("_aqueue", "_loop", "queue")

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._loop: Any = None
        self._aqueue: Any = None

    def bind(self, loop: Any, aqueue: Any) -> None:
        """Deliver to ``aqueue`` on ``loop`` (the async driver)."""
        self._aqueue = aqueue
        self._loop = loop

    def put(self, event: Any) -> None:
        loop = self._loop
        if loop is None:
            self.queue.put(event)
            return
        with contextlib.suppress(RuntimeError):  # a closed loop: the caller has gone
            loop.call_soon_threadsafe(self._aqueue.put_nowait, event)

    def writer(self, call_id: str, name: str) -> Callable[[Any], None]:
        """A ``stream_writer`` for one tool call."""

        def write(payload: Any) -> None:
            self.put(CustomEvent(payload, call_id, name))

        return write


@dataclass(slots=True, frozen=True)
class Invoke:
    """Call the chosen callable of a decision (awaited if async); the answer is its result.

    With ``events`` (a streamed handoff), the driver emits what is written
    there while the callable runs, as for :class:`RunTools`.
    """

    fn: Callable[..., Any]
    kwargs: dict[str, Any]
    events: LiveEvents | None = None


#: Inside a streamed run's handoff target: where its tools' ``stream_writer`` writes
#: (the target's own execs are not streamed; their progress belongs to the caller's stream).
handoff_events: contextvars.ContextVar[LiveEvents | None] = contextvars.ContextVar(
    "llmport_handoff_events", default=None
)


Effect = Emit | Prepare | Send | Stream | Sleep | Approve | RunTools | Invoke | Acquire
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
        plan.record.finish(
            reply=run.text,
            usage=run.usage,
            tool_calls=[r.call for r in run.tool_calls],
            stop_reason=run.stop_reason,
            output=output,
            attempts=run.attempts,
            thinking=[
                b
                for m in run.messages[len(plan.messages) :]
                for b in m.blocks
                if isinstance(b, ThinkingBlock)
            ],
            model=plan.qualified,
            response_ids=plan.response_ids,
        )
    if plan.stream:
        yield Emit(FinalEvent(run))


def build_request(
    plan: Plan,
    messages: list[Message],
    *,
    tools: bool,
    tool_choice: ToolChoice,
    response_format: ResponseFormat | None,
    specs: list[ToolSpec] | None = None,
) -> Request:
    """The neutral request of one model turn (``specs``: the tools, else the toolbox's)."""
    if specs is None:
        specs = plan.toolbox.specs if (tools and plan.toolbox) else []
    native = plan.native_tools if tools else []
    if specs:
        specs, native = settle_deferral(specs, native, plan.caps)
    request = Request(
        model=plan.model,
        messages=list(messages),
        system=plan.system,
        tools=specs,
        tool_choice=tool_choice if (specs or native) else "auto",
        parallel_tool_calls=plan.parallel_tool_calls,
        response_format=response_format,
        options=dict(plan.options),
        stream=plan.stream,
        vendor=plan.vendor,
        system_blocks=plan.system_blocks,
        native_tools=native,
        reasoning=plan.reasoning,
        cache=plan.cache,
        context_editing=vendor_editing(plan.context_policy, plan.caps, plan.window_limit),
    )
    auto = CacheControl(plan.cache.ttl) if plan.cache is not None and plan.cache.auto else None
    place_cache_marks(request, auto, plan.caps.max_cache_breakpoints, plan.qualified)
    return request


def place_cache_marks(
    request: Request, auto: CacheControl | None, limit: int | None, model: str
) -> None:
    """Cache breakpoints of one request, never more than the vendor's ``limit``.

    ``model`` is the qualified model name errors give.

    Marks left on earlier turns of a continued conversation move to the
    newest user turn (they would pile up, one per turn, past the vendor's
    limit); more explicit marks than ``limit`` are an :class:`OptionError`;
    ``auto`` (``cache="auto"``) marks go where room is left.
    """
    move_stale_marks(request)
    explicit = count_cache_marks(request)
    if limit is not None and explicit > limit:
        raise OptionError(
            f"{model}: {explicit} cache breakpoints in one request, over the limit of {limit}"
        )
    if auto is not None:
        mark_cache_breakpoints(request, auto, None if limit is None else limit - explicit)


def newest_user_turn(messages: list[Message]) -> int | None:
    """Index of the last user message with blocks (``None``: there is none)."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user" and messages[i].blocks:
            return i
    return None


def move_stale_marks(request: Request) -> None:
    """Drop block marks outside the newest user turn; the newest one dropped moves onto it."""
    newest = newest_user_turn(request.messages)
    moved: CacheControl | None = None
    for i, message in enumerate(request.messages):
        if i == newest or not any(marked(b) for b in message.blocks):
            continue
        blocks = []
        for block in message.blocks:
            if marked(block):
                assert isinstance(block, (TextBlock, MediaBlock))
                moved = block.cache
                block = replace(block, cache=None)
            blocks.append(block)
        request.messages[i] = replace(message, blocks=tuple(blocks))
    unmarked = newest is not None and not any(marked(b) for b in request.messages[newest].blocks)
    if moved is not None and newest is not None and unmarked:
        mark_newest_turn(request, newest, moved)


def marked(block: object) -> bool:
    """Whether ``block`` carries a cache mark."""
    return isinstance(block, (TextBlock, MediaBlock)) and block.cache is not None


def count_cache_marks(request: Request) -> int:
    """The cache breakpoints ``request`` carries (tools, system blocks, message blocks)."""
    return (
        sum(t.cache is not None for t in request.tools)
        + sum(b.cache is not None for b in request.system_blocks)
        + sum(marked(b) for m in request.messages for b in m.blocks)
    )


def mark_newest_turn(request: Request, index: int, mark: CacheControl) -> bool:
    """Mark the last block of the user turn at ``index`` if it can be and is not; whether it was."""
    message = request.messages[index]
    last = message.blocks[-1]
    if not isinstance(last, (TextBlock, MediaBlock)) or last.cache is not None:
        return False
    blocks = (*message.blocks[:-1], replace(last, cache=mark))
    request.messages[index] = replace(message, blocks=blocks)
    return True


def mark_cache_breakpoints(request: Request, mark: CacheControl, room: int | None = None) -> None:
    """``cache="auto"``: breakpoints on the newest user turn, the system prompt and the tools.

    In that order while ``room`` (breakpoints left under the vendor's limit)
    lasts: the newest turn's mark caches the most, the tools' the least.
    """
    left = -1 if room is None else room
    newest = newest_user_turn(request.messages)
    if left and newest is not None and mark_newest_turn(request, newest, mark):
        left -= 1
    if left and request.system_blocks and request.system_blocks[-1].cache is None:
        request.system_blocks = (
            *request.system_blocks[:-1],
            replace(request.system_blocks[-1], cache=mark),
        )
        left -= 1
    if left and request.tools and request.tools[-1].cache is None:
        request.tools[-1] = replace(request.tools[-1], cache=mark)


def _loop(plan: Plan, run: RunResult[Any]) -> Steps:
    """The tool loop, then structured output and decisions on its final answer."""
    messages = list(plan.messages)
    run.messages = messages  # the same list: a partial result (RunTimeout, budget) has it too
    mode = output_mode(plan)
    response, reply, handed_off = yield from _turns(plan, run, messages, mode)
    if handed_off:  # another agentic function took the conversation: its return is the output
        return run.value
    pending = bool(run.pending_tool_calls)
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
        output = yield from _structured_output(plan, run, mode, messages, response, reply)
    if plan.decision is not None:
        output = yield from _decide(plan, run, messages)
        run.value = output
    return output


def _turns(
    plan: Plan, run: RunResult[Any], messages: list[Message], mode: OutputMode | None
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
        response = yield from _model(plan, run, request, output)
        messages.append(response.as_message())
        reply = response.text
        if not response.tool_calls:
            break
        ended = None if mode is None else mode.finish(response, messages)
        if ended is not None:  # output_mode="tool": the run ends at the output tool's call
            response, reply = ended
            break
        taken = _handoff_of(plan, response, iteration)
        if taken is not None:  # the conversation goes to another agentic function
            handed = yield from _handoff(plan, run, response, taken, iteration)
            run.text = reply
            run.stop_reason = response.stop_reason
            run.value = handed
            return response, reply, True
        if plan.manual_tools:  # tool_execution="manual": the caller runs them
            outcomes = yield from _manual(plan, run, list(response.tool_calls), iteration)
            if run.pending_tool_calls:
                break
        elif iteration == plan.max_iterations:
            break  # these calls' results could never be sent back: do not run them
        else:
            outcomes = yield from _tools(plan, run, list(response.tool_calls), iteration)
        messages.append(Message("tool", tool_results=tuple(o.result for o in outcomes)))
        # A forced choice ("required" or a name) applies to the first turn only:
        # forced on every turn, the model could never answer and the loop never ends.
        if tool_choice != "none":
            tool_choice = "auto"
        failed_turns = _failed_turns(plan, run, outcomes, failed_turns)
    assert response is not None
    return response, reply, False


def output_mode(plan: Plan) -> OutputMode | None:
    """How the run's structured output travels; None without a response format.

    Call it once per plan: ``output_mode="prompted"`` adds its instruction to
    the plan's system blocks.
    """
    return OutputMode(plan) if plan.response_format is not None else None


def turn_request(
    plan: Plan, messages: list[Message], mode: OutputMode | None, tool_choice: ToolChoice
) -> Request:
    """The request of one tool-loop turn: the toolbox, the output tool and forced choice."""
    return build_request(
        plan,
        messages,
        tools=True,
        tool_choice=tool_choice if mode is None else mode.tool_choice(tool_choice),
        response_format=None if mode is None else mode.response_format,
        specs=None if mode is None else mode.specs,
    )


def first_request(plan: Plan) -> Request:
    """The first request a run of ``plan`` sends, before hooks and window fitting.

    ``count_tokens`` counts this one, built as the run builds its first turn,
    so a count and an exec with the same arguments send the same request.
    """
    return turn_request(plan, list(plan.messages), output_mode(plan), plan.tool_choice)


def _failed_turns(plan: Plan, run: RunResult[Any], outcomes: list[ToolOutcome], before: int) -> int:
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


def _structured_output(
    plan: Plan,
    run: RunResult[Any],
    mode: OutputMode,
    messages: list[Message],
    response: Response,
    reply: str,
) -> Steps:
    """The reply parsed against the response format, after one repair round if it must."""
    value, errors = _structured(plan, reply)
    if errors:
        messages.append(Message("user", (TextBlock(structured.repair_prompt(errors)),)))
        request = build_request(
            plan,
            messages,
            tools=mode.output_tool is not None,
            tool_choice=mode.forced(),
            response_format=mode.response_format,
            specs=[mode.output_spec] if mode.output_spec is not None else None,
        )
        response = yield from _model(plan, run, request, mode.stream(plan))
        messages.append(response.as_message())
        reply = response.text
        ended = mode.finish(response, messages)
        if ended is not None:
            response, reply = ended
        value, errors = _structured(plan, reply)
        if errors:
            raise structured.fail(errors, reply)
    run.text = reply
    run.stop_reason = response.stop_reason
    run.value = value
    return structured.strip_fences(reply)


class OutputMode:
    """How structured output travels (``output_mode``): native, an output tool, or the prompt.

    ``"tool"`` offers a terminal output tool beside the function tools: its
    call ends the run and its arguments are the reply. ``"prompted"`` sends
    no response format and puts the schema in the system prompt. ``None`` and
    ``"native"`` send the response format (plugins choose their fallback).
    """

    __slots__ = ("output_spec", "output_tool", "response_format", "specs")

    def __init__(self, plan: Plan) -> None:
        rf = plan.response_format
        self.response_format = rf
        self.output_tool: structured.OutputTool | None = None
        self.output_spec: ToolSpec | None = None
        self.specs: list[ToolSpec] | None = None
        if rf is None or plan.output_mode in (None, "native"):
            return
        self.response_format = None
        if plan.output_mode == "tool":
            taken = plan.toolbox.tools if plan.toolbox is not None else {}
            self.output_tool, self.output_spec = structured.make_output_tool(
                rf, taken, "Call this with the final answer; it ends the conversation."
            )
            self.specs = [*(plan.toolbox.specs if plan.toolbox else []), self.output_spec]
        else:  # prompted
            instruction = TextBlock(structured.prompt_instruction(rf))
            plan.system_blocks = (*plan.system_blocks, instruction)
            plan.system = "\n\n".join(b.text for b in plan.system_blocks)

    def stream(self, plan: Plan) -> OutputStream | None:
        """What reads the output as a streamed run receives it (None: the run is not streamed)."""
        return OutputStream(self.output_tool) if plan.stream else None

    def tool_choice(self, choice: ToolChoice) -> ToolChoice:
        if self.output_spec is None or choice != "auto":
            return choice
        return "required"  # answer through the output tool, never in plain text

    def forced(self) -> ToolChoice:
        return {"name": self.output_spec.name} if self.output_spec is not None else "auto"

    def final_call(self, response: Response) -> ToolCall | None:
        if self.output_tool is None:
            return None
        name = self.output_tool.name
        return next((c for c in response.tool_calls if c.name == name), None)

    def finish(self, response: Response, messages: list[Message]) -> tuple[Response, str] | None:
        """(answer, reply) when ``response`` calls the output tool, else None.

        The output tool's call is the run's output, not a call to run: the
        run ended with its answer, so its stop reason is ``"end_turn"`` as in
        the native mode and the plugins' own forced output tool.
        The call gets its result, so the conversation can be continued.
        """
        final = self.final_call(response)
        if final is None:
            return None
        assert self.output_tool is not None
        messages.append(self.acknowledge(response))
        reply = self.output_tool.reply_text(final.arguments)
        return replace(response, stop_reason="end_turn"), reply

    def acknowledge(self, response: Response) -> Message:
        """Results for the final turn's calls, so the conversation can be continued."""
        assert self.output_tool is not None
        name = self.output_tool.name
        results = tuple(
            ToolResult(
                c.id,
                c.name,
                "Final answer received." if c.name == name else "Not run: the answer was final.",
            )
            for c in response.tool_calls
        )
        return Message("tool", tool_results=results)


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


def _model(
    plan: Plan, run: RunResult[Any], request: Request, output: OutputStream | None = None
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
    plan: Plan, run: RunResult[Any], request: Request, info: Any, output: OutputStream | None
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
            plan.skipped.append((plan.qualified, str(exc)))
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
    plan: Plan,
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
        except Exception as exc:
            waited_out = isinstance(exc, LimitWaitTimeout)  # capacity only after the deadline
            if deadline is not None and (waited_out or time.monotonic() >= deadline - 0.001):
                attempts.failures.append(AttemptFailure(attempts.count, exc))
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
    plan: Plan, run: RunResult[Any], provider: Provider, request: Request
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
    plan: Plan,
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
        attempts.failures.append(AttemptFailure(attempts.count, exc))
        raise interrupted(plan, run, attempts, reader, exc) from exc
    try:
        delay = _failed(plan, run, attempts, exc, info)
    except Exception as final:
        if plan.candidates and isinstance(final, (ExecFailed, *plan.fallback_on)):
            raise  # the next model restarts the stream (_with_fallbacks)
        attempts.count, attempts.failures = 0, []  # counted on the run by _failed
        raise interrupted(plan, run, attempts, reader, final) from final
    yield Emit(StreamRestarted(attempts.count + 1))
    reader.restart()
    return delay


def interrupted(
    plan: Plan, run: RunResult[Any], attempts: Attempts, reader: StreamReader, exc: Exception
) -> StreamInterrupted:
    """The :class:`StreamInterrupted` of ``exc``, carrying the partial run (the text shown)."""
    run.attempts += attempts.count
    run.failures.extend(attempts.failures)
    attempts.count = 0
    attempts.failures = []
    partial = copy.copy(run)
    partial.text = "".join(reader.shown)
    partial.model = plan.qualified
    return StreamInterrupted(exc, partial, provider=plan.provider.name)


def _timeout(
    plan: Plan, run: RunResult[Any], attempts: Attempts, late: Response | None = None
) -> RunTimeout:
    run.attempts += attempts.count
    run.failures.extend(attempts.failures)
    attempts.count = 0
    attempts.failures = []
    assert plan.deadline_seconds is not None
    return RunTimeout(plan.deadline_seconds, run, late)


def _cap_timeout(plan: Plan, run: RunResult[Any], request: Request) -> None:
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


def _admit(plan: Plan, request: Request) -> int:
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
    plan: Plan, run: RunResult[Any], request: Request
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
    plan: Plan, run: RunResult[Any], dropped: list[Message]
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
    streaming, plan.stream = plan.stream, False  # the summary is not part of the caller's stream
    try:
        response = yield from _attempts(
            plan, run, provider, prepared, attempts, plan.call_info(run.iterations)
        )
    finally:
        plan.stream = streaming
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
            model=plan.qualified if plan.candidates else "",
        )
    except BaseException:
        run.attempts += attempts.count
        run.failures.extend(attempts.failures)
        raise
    log_retry(plan.qualified, attempts.count, plan.max_attempts, delay, exc)  # logging
    return delay


def _limited(
    plan: Plan,
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


# --- one turn of tool calls ---------------------------------------------------------------


def _screen(
    plan: Plan, calls: list[ToolCall], info: Any
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


def _manual(
    plan: Plan, run: RunResult[Any], calls: list[ToolCall], iteration: int
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


def _tools(
    plan: Plan, run: RunResult[Any], calls: list[ToolCall], iteration: int
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


def _contexts(
    plan: Plan, calls: list[ToolCall], iteration: int, live: LiveEvents | None = None
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


# --- handoffs ----------------------------------------------------------------------------


def _handoff_of(plan: Plan, response: Response, iteration: int) -> tuple[ToolCall, Any] | None:
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


def _handoff(
    plan: Plan, run: RunResult[Any], response: Response, taken: tuple[ToolCall, Any], iteration: int
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
    plan: Plan,
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
            request = build_request(
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
        store=plan.store,
        previous_lookup=plan.frame.previous if plan.frame is not None else None,
    )
    fn, kwargs = resolve_call(picked, args, ctx)
    if fn is None:
        return picked.target
    return (yield Invoke(fn, kwargs))
