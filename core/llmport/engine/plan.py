"""Planning: everything decided before the first request, once per exec.

:func:`start` checks every input (parameters, option values, content,
tools, response format, choices), routes the model to its provider and
builds the first messages; it raises typed input errors and sends nothing.
A plan that fails inside an ``@agentic_function`` is recorded as a failed
``llm`` node (a failure loses nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..controls.budget import Ledger
from ..controls.limits import Gate  # limits
from ..controls.options import check_options, check_vendor_fields
from ..controls.retry import Backoff
from ..controls.window import ContextPolicy
from ..errors import (
    ContentError,
    OptionError,
)
from ..messages.content import checked_input
from ..messages.types import (
    CacheSettings,
    Message,
    ModelCapabilities,
    NativeTool,
    Reasoning,
    ResponseFormat,
    TextBlock,
    ToolChoice,
    Usage,
)
from ..observe.tracing import Trace  # tracing
from ..output import structured
from ..output.decisions import Decision
from ..provider.contract import Provider, check_server_state
from ..sessions.dag import Frame, LlmRecordLike, Prompt, current_frame, node_seq
from ..tools.policy import CallInfo
from ..tools.tool import ToolBox, ToolSettings
from .conversation import first_messages, portable, split_messages
from .hooks import RunHooks
from .inputs import (
    NO_RUN_OPTIONS,
    RUN_OPTION_NAMES,
    RunOptions,
    check_approver,
    check_loop_params,
    fallback_setting,
    output_setting,
    policy_setting,
    system_setting,
)
from .result import Dropped, RunResult
from .snapshot import RunSnapshot
from .state import drop_unset
from .tool_offer import offered_tools

__all__ = [
    "Candidate",
    "Plan",
    "plan_run",
    "start",
]


@dataclass(slots=True, frozen=True)
class Candidate:
    """One model a run may use: the first, or a fallback."""

    provider: Provider
    model: str
    qualified: str
    caps: ModelCapabilities


@dataclass(slots=True)
class Plan:
    """Everything decided before the first request; built once per exec."""

    provider: Provider
    model: str
    qualified: str
    caps: ModelCapabilities
    messages: list[Message]
    system: str | None
    toolbox: ToolBox | None
    tool_choice: ToolChoice
    parallel_tool_calls: bool
    max_iterations: int
    response_format: ResponseFormat | None
    decision: Decision | None
    options: dict[str, Any]
    vendor: dict[str, dict[str, Any]]
    deps: Any
    plain_callable: bool
    info: CallInfo
    frame: Frame | None
    hooks: RunHooks
    backoff: Backoff
    max_attempts: int
    input_token_budget: int | None
    add_usage: Callable[[Usage], None]
    stream: bool = False
    record: LlmRecordLike | None = None
    tool_settings: ToolSettings = field(default_factory=ToolSettings)
    output_type: Any = None
    system_blocks: tuple[TextBlock, ...] = ()
    native_tools: list[NativeTool] = field(default_factory=list)
    reasoning: Reasoning | None = None
    cache: CacheSettings | None = None
    output_mode: str | None = None
    dropped: list[Dropped] = field(default_factory=list)
    #: Budgets this run draws on: the runtime's (cumulative) and the exec's own.
    ledgers: tuple[Ledger, ...] = ()
    context_policy: ContextPolicy | None = None
    #: Input-token limit for one request (policy or window), None: unchecked.
    window_limit: int | None = None
    summaries: dict[str, str] = field(default_factory=dict)
    resolve_model: Callable[[str], tuple[Provider, str]] = field(default=lambda name: (None, name))  # type: ignore[assignment]
    #: ``time.monotonic()`` when the run must end (``deadline=``), and the seconds given.
    deadline: float | None = None
    deadline_seconds: float | None = None
    #: ``stream_retry="restart"``: a stream that failed after the caller saw part of it
    #: is retried after a ``StreamRestarted`` event, instead of ``StreamInterrupted``.
    stream_restart: bool = False
    #: The models this run may use, in order (empty: no fallbacks); ``index`` is the one in use.
    candidates: list[Candidate] = field(default_factory=list)
    index: int = 0
    #: The ids of this run's answers a vendor keeps on its server (:mod:`.state`).
    response_ids: list[str] = field(default_factory=list)
    fallback_on: tuple[type[BaseException], ...] = ()
    #: Fallback models that could not take the request: (model, reason).
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: ``tool_execution="manual"``: stop at the first turn with tool calls.
    manual_tools: bool = False
    #: ``RunContext.store``: the key-value store of this run (llmport.sessions.kv).
    store: Any = None

    def use(self, index: int) -> None:
        """Switch the run to candidate ``index`` (it stays for the rest of the run)."""
        c = self.candidates[index]
        self.index = index
        self.provider, self.model, self.qualified, self.caps = (
            c.provider,
            c.model,
            c.qualified,
            c.caps,
        )
        self.info = CallInfo(
            c.qualified,
            c.provider.name,
            self.info.function,
            self.info.node_id,
            self.info.iteration,
            self.info.deps,
            self.info.metadata,
        )

    def frame_summary(self, text: str, usage: Usage, model: str, dropped: int) -> None:
        """Record a context summary as a ``summary`` node of the session DAG.

        Only when the summary covers every entry this exec read from the DAG
        (the common case once a session outgrows the window): later execs then
        read the summary in place of those entries instead of recomputing it.
        """
        session = getattr(self.frame, "session", None)
        reads = getattr(self.messages, "reads", None)
        in_dag = self.messages.dag_count if isinstance(self.messages, Prompt) else 1 << 30
        if session is None or not reads or dropped < in_dag:
            return
        session.add_summary(max(node_seq(r) for r in reads), text, usage, model=model)

    gate: Gate | None = None  # limits: the rate limits on this target (llmport.controls.limits)
    trace: Trace | None = None  # tracing: exec(trace=...)

    def call_info(self, iteration: int) -> CallInfo:
        i = self.info
        return CallInfo(i.model, i.provider, i.function, i.node_id, iteration, i.deps, i.metadata)


def start(
    settings: RunSnapshot, params: dict[str, Any], options: dict[str, Any], *, stream: bool
) -> tuple[Plan, RunResult[Any]]:
    """Plan a run and open its DAG record; a failed plan is recorded as a failed node."""
    frame = current_frame()
    try:
        plan = plan_run(settings, params, options, frame, stream=stream)
    except BaseException as exc:
        if frame is not None:
            frame.begin_llm(
                model=str(params["model"] or settings.model),
                messages=[],
                system=None,
                context_override=params["context"] is not None,
            ).fail(exc, attempts=0)
        raise
    run: RunResult[Any] = RunResult(model=plan.qualified, dropped=plan.dropped)
    if frame is not None:
        plan.record = frame.begin_llm(
            model=plan.qualified,
            messages=plan.messages,
            system=plan.system,
            context_override=params["context"] is not None,
        )
        run.node_id = plan.record.node_id
    return plan, run


def plan_run(
    settings: RunSnapshot,
    params: dict[str, Any],
    options: dict[str, Any],
    frame: Frame | None,
    *,
    stream: bool,
) -> Plan:
    """Check every input and decide everything before the first request (sends nothing);
    the steps run in the order their input errors take precedence."""
    started = time.monotonic()  # deadline=: the clock runs from here (plugins, providers count)
    check_loop_params(params)
    vendor = check_vendor_fields(params["vendor"])
    first, conf_options, fallback_names = requested_model(settings, params["model"])
    merged = {**settings.options, **conf_options, **options}  # the call's own win
    # The plain call's fast path: the run options are normalised only when given.
    given = not RUN_OPTION_NAMES.isdisjoint(merged)
    fallback_on = fallback_setting(merged.pop("fallback_on", None) if given else None)
    fallbacks = fallback_candidates(settings, fallback_names, first.plain)
    deps = merged.pop("deps", None)  # for tools and choices, never sent to providers
    system, system_blocks = system_setting(merged.pop("system", None), settings.max_block_bytes)
    run_options = RunOptions.pop_from(merged) if given else NO_RUN_OPTIONS
    policy = policy_setting(merged.pop("context_policy", settings.context_policy))
    tool_settings = ToolSettings.pop_from(merged)  # loop options, never sent to providers
    mode = run_options.output_mode
    check_options({**merged, "output_mode": mode} if mode else merged)
    drop_unset(merged)
    check_server_state(first.provider, first.model, merged)  # every path: exec, count, submit
    plan = Plan(
        provider=first.provider,
        model=first.model,
        qualified=first.qualified,
        caps=first.provider.capabilities(first.model),
        messages=[],  # the steps below fill in the conversation, tools and output format
        system=system,
        toolbox=None,
        tool_choice=params["tool_choice"],
        parallel_tool_calls=bool(params["parallel_tool_calls"]),
        max_iterations=params["max_iterations"],
        response_format=None,
        decision=None,
        options=merged,
        vendor=vendor,
        deps=deps,
        plain_callable=first.plain,
        info=call_info(first, frame, deps, run_options.trace),
        frame=frame,
        hooks=settings.plugins.memo("run_hooks", RunHooks),
        backoff=settings.backoff,
        max_attempts=settings.max_retries,
        input_token_budget=settings.input_token_budget,
        add_usage=settings.add_usage,
        stream=stream,
        tool_settings=tool_settings,
        system_blocks=system_blocks,
        fallback_on=fallback_on,
    )
    add_conversation(plan, settings, params, run_options.history, policy)
    add_tools_and_output(plan, settings, params, mode)
    apply_run_options(plan, settings, run_options, policy, fallbacks, started)
    return plan


@dataclass(slots=True, frozen=True)
class First:
    """The model a run starts with, as routed (``plain``: a ``call=`` function)."""

    provider: Provider
    model: str
    qualified: str
    plain: bool


def requested_model(
    settings: RunSnapshot, requested: Any
) -> tuple[First, dict[str, Any], list[str]]:
    """(the first model, its configuration's options, the fallback models' names).

    A call's model list replaces the runtime's fallbacks; a named
    configuration's own ``fallbacks`` come after them.
    """
    fallback_names: list[str] = list(settings.fallbacks) if requested is None else []
    if isinstance(requested, (list, tuple)):
        if not requested:
            raise OptionError("model must be a 'provider:model' string or a non-empty list of them")
        requested, fallback_names = requested[0], list(requested[1:])
    provider, model, qualified, conf_options, plain = settings.route(requested)
    if "fallbacks" in conf_options:  # a configuration's own
        conf_options = dict(conf_options)
        fallback_names += list(conf_options.pop("fallbacks") or [])
    return First(provider, model, qualified, plain), conf_options, fallback_names


def fallback_candidates(settings: RunSnapshot, names: list[str], plain: bool) -> list[Candidate]:
    """The fallback models, routed (a ``call=`` function has none)."""
    if not names or plain:
        return []
    candidates = []
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise OptionError(f"fallback models must be non-empty strings, got {name!r}")
        provider, model, qualified, _ = settings.resolve(name)
        candidates.append(Candidate(provider, model, qualified, provider.capabilities(model)))
    return candidates


def call_info(first: First, frame: Frame | None, deps: Any, trace: Trace | None) -> CallInfo:
    """What policies and observers are told about this run's calls."""
    return CallInfo(
        model=first.qualified,
        provider=first.provider.name,
        function=frame.name if frame else None,
        node_id=frame.node_id if frame else None,
        deps=deps,
        metadata={"trace": trace} if trace is not None else {},  # tracing
    )


def add_conversation(
    plan: Plan,
    settings: RunSnapshot,
    params: dict[str, Any],
    history: Sequence[Message],
    policy: ContextPolicy | None,
) -> None:
    """The first request's conversation: DAG context, ``history=``, then the new content.

    Other vendors' thinking and server-tool blocks are dropped (and listed).
    """
    content = params["content"]
    if type(content) is list and content and type(content[0]) is Message:
        prior, content = split_messages(content)
        history = [*history, *prior]
    blocks = checked_input(
        content,
        history,
        max_bytes=settings.max_block_bytes,
        window=plan.caps.context_window,
        model=plan.qualified,
    )
    frame = plan.frame
    if not blocks and not history and params["context"] is None and frame is None:
        raise ContentError(0, "content is empty")
    # The DAG read takes at most half the policy's limit: room for the new content.
    read_budget = policy.max_tokens // 2 if policy is not None and policy.max_tokens else None
    plan.messages = first_messages(blocks, params["context"], frame, history, read_budget)
    if len(plan.messages) > 1:  # only a conversation can hold another vendor's blocks
        plan.messages, plan.dropped = portable(plan.messages, plan.provider.name)


def add_tools_and_output(
    plan: Plan, settings: RunSnapshot, params: dict[str, Any], output_mode: str | None
) -> None:
    """The tools offered, the response format or decision, checked against the model."""
    tool_settings = plan.tool_settings
    plan.native_tools, plan.toolbox = offered_tools(
        settings, params, plan.info, plan.hooks, tool_settings
    )
    plan.response_format, plan.decision = output_setting(
        params, plan.caps, plan.provider.name, plan.model, output_mode
    )
    plan.output_type = structured.output_type(params["response_format"])
    check_approver(plan.toolbox, tool_settings)


def apply_run_options(
    plan: Plan,
    settings: RunSnapshot,
    given: RunOptions,
    policy: ContextPolicy | None,
    fallbacks: list[Candidate],
    started: float,
) -> None:
    """Set the plan's run options, budgets, deadline, context policy, limits and models."""
    plan.reasoning, plan.cache, plan.output_mode = given.reasoning, given.cache, given.output_mode
    plan.trace, plan.manual_tools = given.trace, given.manual_tools  # tracing
    plan.stream_restart = given.stream_restart
    budget = given.budget
    if settings.ledger is not None or budget is not None:
        run_ledger = Ledger(budget, "run") if budget else None
        plan.ledgers = tuple(x for x in (settings.ledger, run_ledger) if x)
    if given.deadline_seconds is not None:
        plan.deadline = started + given.deadline_seconds
        plan.deadline_seconds = given.deadline_seconds
    plan.context_policy = policy
    # The policy's limit, else the model's whole window: never send what is known not to fit.
    plan.window_limit = (
        plan.caps.context_window if policy is None else policy.limit(plan.caps.context_window)
    )
    plan.summaries = settings.summaries
    plan.resolve_model = (
        (lambda name: settings.resolve(name)[:2]) if policy is not None else _no_model
    )
    plan.gate = settings.gate(plan.qualified)  # limits
    if fallbacks:
        first = Candidate(plan.provider, plan.model, plan.qualified, plan.caps)
        plan.candidates = [first, *fallbacks]
    if plan.toolbox is not None or plan.decision is not None:
        # Only tools and choices see a RunContext: no store is looked up for a plain call.
        plan.store = settings.store_for(getattr(plan.frame, "session", None))


def _no_model(name: str) -> tuple[Provider, str]:
    raise AssertionError("a summary model is only resolved under a context policy")
