"""Planning: everything decided before the first request, once per exec.

:func:`start` checks every input (parameters, option values, content,
tools, response format, choices), routes the model to its provider and
builds the first messages; it raises typed input errors and sends nothing.
It reads only the runtime's :class:`~.snapshot.RunSnapshot` and returns a
frozen :class:`RunPlan`; what changes while the run goes on (the model in
use after a fallback, the system prompt an output mode extends, the DAG
record) is the plan's one :class:`RunState`.
A plan that fails inside an ``@agentic_function`` is recorded as a failed
``llm`` node (a failure loses nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from ..controls.budget import Budget, Ledger
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
from ..provider.deadline import early_deadline, setup_within
from ..provider.instances import declared_instances
from ..provider.routing import KNOWN_PLUGINS
from ..sessions.dag import Frame, LlmRecordLike, Prompt, current_frame, node_seq
from ..slotted import dataclass
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
    "RunPlan",
    "RunState",
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
class RunState:
    """What changes while a run goes on; everything else of a run is its :class:`RunPlan`.

    The model in use (a fallback takes over with :meth:`use`), whether the
    caller is being streamed to (a context summary is not), the system
    prompt (``output_mode="prompted"`` adds its instruction), the run's DAG
    record, the fallback models skipped and the ids of the answers a vendor
    keeps on its server (:mod:`.state`).
    """

    provider: Provider
    model: str
    qualified: str
    caps: ModelCapabilities
    info: CallInfo
    stream: bool
    system: str | None
    system_blocks: tuple[TextBlock, ...]
    #: The index of the candidate in use (:attr:`RunPlan.candidates`).
    index: int = 0
    record: LlmRecordLike | None = None
    #: Fallback models that could not take the request: (model, reason). Tuples, grown
    #: on the rare run that adds to them: no list held for every call in flight.
    skipped: tuple[tuple[str, str], ...] = ()
    response_ids: tuple[str, ...] = ()

    def skip(self, model: str, reason: str) -> None:
        """Note a fallback model that could not take the request."""
        self.skipped += ((model, reason),)

    def note_response_id(self, response_id: str) -> None:
        """Note the id of an answer the vendor keeps on its server."""
        self.response_ids += (response_id,)

    def use(self, candidate: Candidate, index: int) -> None:
        """Switch the run to ``candidate`` (it stays for the rest of the run)."""
        self.index = index
        self.provider, self.model, self.qualified, self.caps = (
            candidate.provider,
            candidate.model,
            candidate.qualified,
            candidate.caps,
        )
        i = self.info
        self.info = CallInfo(
            candidate.qualified,
            candidate.provider.name,
            i.function,
            i.node_id,
            i.iteration,
            i.deps,
            i.metadata,
        )


@dataclass(slots=True, frozen=True)
class RunPlan:
    """Everything decided before the first request; built once per exec, never changed.

    What changes during the run is its :attr:`state` (a :class:`RunState`);
    the properties below read the model in use and the rest from there.
    """

    state: RunState
    messages: list[Message]
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
    frame: Frame | None
    hooks: RunHooks
    backoff: Backoff
    max_attempts: int
    input_token_budget: int | None
    add_usage: Callable[[Usage], None]
    tool_settings: ToolSettings
    output_type: Any
    native_tools: list[NativeTool]
    reasoning: Reasoning | None
    cache: CacheSettings | None
    output_mode: str | None
    #: ``output_modalities=`` (empty: the model's default).
    output_modalities: tuple[str, ...]
    #: What the given conversation held that this vendor cannot take (the run's
    #: ``dropped`` starts with it); a tuple, the shared empty one on almost every run.
    dropped: tuple[Dropped, ...]
    #: Budgets this run draws on: the runtime's (cumulative) and the exec's own.
    ledgers: tuple[Ledger, ...]
    context_policy: ContextPolicy | None
    #: Input-token limit for one request (policy or window), None: unchecked.
    window_limit: int | None
    #: Context summaries already written, shared by the runtime's runs.
    summaries: dict[str, str]
    resolve_model: Callable[[str], tuple[Provider, str]]
    #: ``time.monotonic()`` when the run must end (``deadline=``), and the seconds given.
    deadline: float | None
    deadline_seconds: float | None
    #: ``stream_retry="restart"``: a stream that failed after the caller saw part of it
    #: is retried after a ``StreamRestarted`` event, instead of ``StreamInterrupted``.
    stream_restart: bool
    #: The models this run may use, in order (empty: no fallbacks).
    candidates: tuple[Candidate, ...]
    fallback_on: tuple[type[BaseException], ...]
    #: ``tool_execution="manual"``: stop at the first turn with tool calls.
    manual_tools: bool
    #: ``RunContext.store``: the key-value store of this run (llmport.sessions.kv).
    store: Any
    gate: Gate | None  # limits: the rate limits on this target (llmport.controls.limits)
    trace: Trace | None  # tracing: exec(trace=...)

    @property
    def provider(self) -> Provider:
        """The provider of the model in use."""
        return self.state.provider

    @property
    def model(self) -> str:
        return self.state.model

    @property
    def qualified(self) -> str:
        return self.state.qualified

    @property
    def caps(self) -> ModelCapabilities:
        return self.state.caps

    @property
    def info(self) -> CallInfo:
        return self.state.info

    @property
    def index(self) -> int:
        return self.state.index

    @property
    def stream(self) -> bool:
        return self.state.stream

    @property
    def system(self) -> str | None:
        return self.state.system

    @property
    def system_blocks(self) -> tuple[TextBlock, ...]:
        return self.state.system_blocks

    @property
    def record(self) -> LlmRecordLike | None:
        return self.state.record

    @property
    def skipped(self) -> tuple[tuple[str, str], ...]:
        return self.state.skipped

    @property
    def response_ids(self) -> tuple[str, ...]:
        return self.state.response_ids

    def note_response_id(self, response_id: str) -> None:
        """Note the id of an answer the vendor keeps on its server."""
        self.state.note_response_id(response_id)

    def use(self, index: int) -> None:
        """Switch the run to candidate ``index`` (it stays for the rest of the run)."""
        self.state.use(self.candidates[index], index)

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

    def call_info(self, iteration: int) -> CallInfo:
        i = self.info
        return CallInfo(i.model, i.provider, i.function, i.node_id, iteration, i.deps, i.metadata)


def start(
    settings: RunSnapshot,
    params: dict[str, Any],
    options: dict[str, Any],
    *,
    stream: bool,
    started: float | None = None,
) -> tuple[RunPlan, RunResult[Any]]:
    """Plan a run and open its DAG record; a failed plan is recorded as a failed node."""
    frame = current_frame()
    try:
        plan = plan_run(settings, params, options, frame, stream=stream, started=started)
    except BaseException as exc:
        if frame is not None:
            frame.begin_llm(
                model=str(params["model"] or settings.model),
                messages=[],
                system=None,
                context_override=params["context"] is not None,
            ).fail(exc, attempts=0)
        raise
    run: RunResult[Any] = RunResult(model=plan.qualified)
    if plan.dropped:  # else the run's list is made on first read
        run.dropped.extend(plan.dropped)
    if frame is not None:
        record = plan.state.record = frame.begin_llm(
            model=plan.qualified,
            messages=plan.messages,
            system=plan.system,
            context_override=params["context"] is not None,
        )
        run.node_id = record.node_id
    return plan, run


def plan_run(
    settings: RunSnapshot,
    params: dict[str, Any],
    options: dict[str, Any],
    frame: Frame | None,
    *,
    stream: bool,
    started: float | None = None,
) -> RunPlan:
    """Check every input and decide everything before the first request (sends nothing);
    the steps run in the order their input errors take precedence.

    ``started`` (``time.monotonic()``) is when the caller's call began: the
    deadline's clock runs from there (loading the engine, plugins and
    providers count), else from here.
    """
    if started is None:
        started = time.monotonic()
    check_loop_params(params)
    vendor = check_vendor_fields(params["vendor"])
    requested = params["model"]
    if _warm(settings, requested):  # the hot path: nothing to load, no thread
        first, conf_options, fallback_names = requested_model(settings, requested)
    else:  # a cold setup (plugins, the provider) is cut at the deadline
        first, conf_options, fallback_names = setup_within(
            lambda: requested_model(settings, requested),
            started,
            early_deadline(options, settings.options),
        )
    if vendor and not first.plain:
        check_vendor_names(vendor, settings)
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
    used = Candidate(
        first.provider, first.model, first.qualified, first.provider.capabilities(first.model)
    )
    info = call_info(first, frame, deps, run_options.trace)
    hooks = settings.plugins.memo("run_hooks", RunHooks)
    max_attempts = settings.max_retries
    messages, dropped = first_conversation(
        settings, params, run_options.history, policy, used, frame
    )
    native_tools, toolbox = offered_tools(settings, params, info, hooks, tool_settings)
    response_format, decision = output_setting(
        params, used.caps, first.provider.name, first.model, mode
    )
    output_type = structured.output_type(params["response_format"])
    check_approver(toolbox, tool_settings)
    deadline_seconds = run_options.deadline_seconds
    # The policy's limit, else the model's whole window: never send what is known not to fit.
    window = used.caps.context_window
    return RunPlan(
        state=RunState(
            first.provider,
            first.model,
            first.qualified,
            used.caps,
            info,
            stream,
            system,
            system_blocks,
        ),
        messages=messages,
        toolbox=toolbox,
        tool_choice=params["tool_choice"],
        parallel_tool_calls=bool(params["parallel_tool_calls"]),
        max_iterations=params["max_iterations"],
        response_format=response_format,
        decision=decision,
        options=merged,
        vendor=vendor,
        deps=deps,
        plain_callable=first.plain,
        frame=frame,
        hooks=hooks,
        backoff=settings.backoff,
        max_attempts=max_attempts,
        input_token_budget=settings.input_token_budget,
        add_usage=settings.add_usage,
        tool_settings=tool_settings,
        output_type=output_type,
        native_tools=native_tools,
        reasoning=run_options.reasoning,
        cache=run_options.cache,
        output_mode=mode,
        output_modalities=run_options.output_modalities,
        dropped=tuple(dropped),
        ledgers=run_ledgers(settings.ledger, run_options.budget),
        context_policy=policy,
        window_limit=window if policy is None else policy.limit(window),
        summaries=settings.summaries,
        resolve_model=(
            (lambda name: settings.resolve(name)[:2]) if policy is not None else _no_model
        ),
        deadline=None if deadline_seconds is None else started + deadline_seconds,
        deadline_seconds=deadline_seconds,
        stream_restart=run_options.stream_restart,
        candidates=(used, *fallbacks) if fallbacks else (),
        fallback_on=fallback_on,
        manual_tools=run_options.manual_tools,
        gate=settings.gate(first.qualified),  # limits
        store=run_store(settings, toolbox, decision, frame),
        trace=run_options.trace,  # tracing
    )


@dataclass(slots=True, frozen=True)
class First:
    """The model a run starts with, as routed (``plain``: a ``call=`` function)."""

    provider: Provider
    model: str
    qualified: str
    plain: bool


def _warm(settings: RunSnapshot, requested: Any) -> bool:
    """Whether the call's first model was routed before (a list: its first entry)."""
    first = requested[0] if isinstance(requested, (list, tuple)) and requested else requested
    return settings.routed(first if isinstance(first, str) else None)


def check_vendor_names(vendor: dict[str, Any], settings: RunSnapshot) -> None:
    """Each key of ``vendor=`` names a provider (a plugin's prefix, a first-party prefix
    whose plugin is not installed, or a named instance).

    The fields under a name no provider answers to would be dropped without a
    word (a typo such as ``"opneai"``): an :class:`OptionError` instead. A
    first-party vendor's name is known even when its plugin is not installed: a
    portable ``vendor=`` dict carries fields for every vendor a call may reach.
    """
    known = set(settings.plugins.providers()) | set(KNOWN_PLUGINS)
    unknown = [name for name in vendor if name not in known]
    if unknown:
        known |= set(declared_instances(settings.config.providers, settings.provider_settings))
        unknown = [name for name in unknown if name not in known]
    if unknown:
        raise OptionError(
            f"vendor={{{unknown[0]!r}: ...}} names no provider; known: {', '.join(sorted(known))}"
        )


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


def first_conversation(
    settings: RunSnapshot,
    params: dict[str, Any],
    history: Sequence[Message],
    policy: ContextPolicy | None,
    used: Candidate,
    frame: Frame | None,
) -> tuple[list[Message], list[Dropped]]:
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
        window=used.caps.context_window,
        model=used.qualified,
    )
    if not blocks and not history and params["context"] is None and frame is None:
        raise ContentError(0, "content is empty")
    # The DAG read takes at most half the policy's limit: room for the new content.
    read_budget = policy.max_tokens // 2 if policy is not None and policy.max_tokens else None
    messages = first_messages(blocks, params["context"], frame, history, read_budget)
    if len(messages) > 1:  # only a conversation can hold another vendor's blocks
        return portable(messages, used.provider.name)
    return messages, []


def run_ledgers(shared: Ledger | None, budget: Budget | None) -> tuple[Ledger, ...]:
    """The budgets a run draws on: the runtime's (cumulative) and the exec's own ``budget=``."""
    if shared is None and budget is None:
        return ()
    own = Ledger(budget, "run") if budget else None
    return tuple(x for x in (shared, own) if x)


def run_store(
    settings: RunSnapshot, toolbox: ToolBox | None, decision: Decision | None, frame: Frame | None
) -> Any:
    """``RunContext.store``: looked up only when tools or choices will see a RunContext."""
    if toolbox is None and decision is None:
        return None
    return settings.store_for(getattr(frame, "session", None))


def _no_model(name: str) -> tuple[Provider, str]:
    raise AssertionError("a summary model is only resolved under a context policy")
