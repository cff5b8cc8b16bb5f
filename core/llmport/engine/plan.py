"""Planning: everything decided before the first request, once per exec.

:func:`start` checks every input (parameters, option values, content,
tools, response format, choices), routes the model to its provider and
builds the first messages; it raises typed input errors and sends nothing.
A plan that fails inside an ``@agentic_function`` is recorded as a failed
``llm`` node (a failure loses nothing).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from ..controls.budget import Budget, Ledger, as_budget
from ..controls.limits import Gate  # limits
from ..controls.options import (
    cache_setting,
    check_options,
    check_vendor_fields,
    reasoning_setting,
    trace_setting,
)
from ..controls.retry import Backoff
from ..controls.window import ContextPolicy, as_policy
from ..errors import (
    ContentError,
    NotFoundError,
    OptionError,
    OverloadedError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
    ToolApprovalRequired,
    UnsupportedFeatureError,
)
from ..messages.content import checked_input, normalize_content
from ..messages.types import (
    NATIVE_TOOL_KINDS,
    Block,
    CacheSettings,
    Message,
    ModelCapabilities,
    NativeTool,
    Reasoning,
    ResponseFormat,
    ServerToolCall,
    ServerToolResult,
    TextBlock,
    ThinkingBlock,
    ToolChoice,
    Usage,
)
from ..observe.tracing import Trace  # tracing
from ..output import structured
from ..output.decisions import Decision
from ..provider.contract import Provider, check_server_state
from ..sessions.dag import Frame, LlmRecordLike, Prompt, current_frame, node_seq
from ..tools.policy import CallInfo, ToolCheck
from ..tools.tool import ToolBox, ToolSettings, build_toolbox
from .hooks import RunHooks
from .result import Dropped, RunResult
from .settings import RunSettings
from .state import drop_unset

__all__ = [
    "DEFAULT_FALLBACK_ON",
    "Candidate",
    "Plan",
    "RunOptions",
    "plan_run",
    "portable",
    "start",
    "tool_scope",
]

#: Tools an outer exec allowed; a nested exec (from inside a tool) may only narrow it.
tool_scope: contextvars.ContextVar[frozenset[str] | None] = contextvars.ContextVar(
    "llmport_tool_scope", default=None
)
_TOOL_CHOICES = ("auto", "required", "none")
VENDOR_BLOCKS = (ThinkingBlock, ServerToolCall, ServerToolResult)
#: Run options normalised by the planner (looked for together: a plain call has none).
_RUN_OPTIONS = frozenset(
    {
        "fallback_on",
        "history",
        "reasoning",
        "reasoning_effort",
        "cache",
        "output_mode",
        "budget",
        "deadline",
        "trace",
        "tool_execution",
        "stream_retry",
    }
)


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
    settings: RunSettings, params: dict[str, Any], options: dict[str, Any], *, stream: bool
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
    settings: RunSettings,
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
    given = not _RUN_OPTIONS.isdisjoint(merged)
    fallback_on = fallback_setting(merged.pop("fallback_on", None) if given else None)
    fallbacks = fallback_candidates(settings, fallback_names, first.plain)
    deps = merged.pop("deps", None)  # for tools and choices, never sent to providers
    system, system_blocks = system_setting(merged.pop("system", None), settings.max_block_bytes)
    run_options = RunOptions.pop_from(merged) if given else _NO_RUN_OPTIONS
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


@dataclass(slots=True, frozen=True)
class RunOptions:
    """The run options the planner normalises (none of them is sent to providers)."""

    history: tuple[Message, ...] = ()
    reasoning: Reasoning | None = None
    cache: CacheSettings | None = None
    output_mode: str | None = None
    budget: Budget | None = None
    deadline_seconds: float | None = None
    trace: Trace | None = None  # tracing
    manual_tools: bool = False
    stream_restart: bool = False

    @classmethod
    def pop_from(cls, merged: dict[str, Any]) -> RunOptions:
        """Take (and check) the run options out of a call's merged options."""
        return cls(
            history=tuple(history_setting(merged.pop("history", None))),
            reasoning=reasoning_setting(
                merged.pop("reasoning", None), merged.pop("reasoning_effort", None)
            ),
            cache=cache_setting(merged.pop("cache", None)),
            output_mode=merged.pop("output_mode", None),
            budget=as_budget(merged.pop("budget", None)),
            deadline_seconds=deadline_setting(merged.pop("deadline", None)),
            trace=trace_setting(merged.pop("trace", None)),
            manual_tools=tool_execution_setting(merged.pop("tool_execution", None)),
            stream_restart=_stream_retry(merged.pop("stream_retry", None)),
        )


#: A plain call's run options: none given.
_NO_RUN_OPTIONS = RunOptions()


def check_loop_params(params: dict[str, Any]) -> None:
    """``max_iterations``, ``tool_choice`` and ``choices`` against ``response_format``."""
    max_iterations = params["max_iterations"]
    if (
        isinstance(max_iterations, bool)
        or not isinstance(max_iterations, int)
        or max_iterations < 1
    ):
        raise OptionError(f"max_iterations must be an integer >= 1, got {max_iterations!r}")
    tool_choice = params["tool_choice"]
    if not (
        tool_choice in _TOOL_CHOICES
        or (isinstance(tool_choice, dict) and isinstance(tool_choice.get("name"), str))
    ):
        raise OptionError(
            "tool_choice must be 'auto', 'required', 'none' or {'name': ...}, "
            f"got {tool_choice!r}"
        )
    if params["choices"] is not None and params["response_format"] is not None:
        raise OptionError("choices and response_format cannot be combined")


def requested_model(
    settings: RunSettings, requested: Any
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


def fallback_candidates(settings: RunSettings, names: list[str], plain: bool) -> list[Candidate]:
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


def system_setting(value: Any, max_bytes: int) -> tuple[str | None, tuple[TextBlock, ...]]:
    """``system=`` as (its text, its blocks): a string, or text blocks.

    The text joins the blocks with a blank line (as added instructions are
    joined), so a vendor that takes one string never runs two blocks' words
    together; vendors that take blocks send the blocks.
    """
    if type(value) is str:
        return (value or None), ((TextBlock(value),) if value else ())
    if value is None:
        return None, ()
    blocks = _system(value, max_bytes)
    return ("\n\n".join(b.text for b in blocks) if blocks else None), blocks


def policy_setting(value: Any) -> ContextPolicy | None:
    """``context_policy=`` (a call's, else the runtime's) as a checked ContextPolicy."""
    if value is not None and type(value) is not ContextPolicy:
        return as_policy(value)
    return value


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
    settings: RunSettings,
    params: dict[str, Any],
    history: Sequence[Message],
    policy: ContextPolicy | None,
) -> None:
    """The first request's conversation: DAG context, ``history=``, then the new content.

    Other vendors' thinking and server-tool blocks are dropped (and listed).
    """
    content = params["content"]
    if type(content) is list and content and type(content[0]) is Message:
        prior, content = _split_messages(content)
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
    plan.messages = _messages(blocks, params["context"], frame, history, read_budget)
    if len(plan.messages) > 1:  # only a conversation can hold another vendor's blocks
        plan.messages, plan.dropped = portable(plan.messages, plan.provider.name)


def add_tools_and_output(
    plan: Plan, settings: RunSettings, params: dict[str, Any], output_mode: str | None
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


def offered_tools(
    settings: RunSettings,
    params: dict[str, Any],
    info: CallInfo,
    hooks: RunHooks,
    tool_settings: ToolSettings,
) -> tuple[list[NativeTool], ToolBox | None]:
    """(provider-native tools, the function tools policy lets this run offer), checked."""
    native_tools: list[NativeTool] = []
    if params["tools"] is not None:
        native_tools, params = _native_tools(params)
    toolbox = _toolbox(params, info, hooks, settings)
    tool_choice = params["tool_choice"]
    if tool_choice != "auto" and tool_choice != "none" and toolbox is None:
        raise OptionError(
            f"tool_choice={tool_choice!r} needs tools, but this call offers none "
            "(give tools=, toolset= or tools_source=, or check tools_allow/tools_deny)"
        )
    if (
        isinstance(tool_choice, dict)
        and toolbox is not None
        and tool_choice["name"] not in toolbox.tools
    ):
        raise OptionError(
            f"tool_choice names {tool_choice['name']!r}, which is not among the tools "
            f"({', '.join(sorted(toolbox.tools))})"
        )
    return native_tools, toolbox


def output_setting(
    params: dict[str, Any],
    caps: ModelCapabilities,
    name: str,
    model: str,
    output_mode: str | None,
) -> tuple[ResponseFormat | None, Decision | None]:
    """(the response format, the decision of ``choices=``), checked against the model."""
    rf = structured.prepare(params["response_format"])
    decision = Decision(params["choices"]) if params["choices"] is not None else None
    no_native = not caps.native_structured_output and not caps.native_tools
    # Source: the capability table (native_structured_output, native_tools): with neither, llmport
    #   has no way to ask for the schema but a prompt (output_mode="prompted").
    if rf is not None and no_native and output_mode != "prompted":
        raise UnsupportedFeatureError(name, model, "response_format")
    if output_mode is not None:
        if rf is None:
            raise OptionError("output_mode applies to response_format; this call gives none")
        # Source: the capability table: the vendor's structured-output page lists the models with a
        #   JSON-schema response format.
        if output_mode == "native" and not caps.native_structured_output:
            raise UnsupportedFeatureError(name, model, 'output_mode="native"')
        if output_mode == "tool" and not caps.native_tools:
            raise UnsupportedFeatureError(name, model, 'output_mode="tool"')
    return rf, decision


def apply_run_options(
    plan: Plan,
    settings: RunSettings,
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


def check_approver(toolbox: ToolBox | None, tool_settings: ToolSettings) -> None:
    """A tool policy marked "approve" needs an approver before anything is sent."""
    if toolbox is not None and toolbox.needs_approval and tool_settings.approver is None:
        raise ToolApprovalRequired(
            f"policy requires approval for {', '.join(sorted(toolbox.needs_approval))} but no "
            "approver was given (exec(..., approver=fn) or Runtime(..., approver=fn))"
        )


#: What makes a run try its next model when retries did not help.
DEFAULT_FALLBACK_ON: tuple[type[BaseException], ...] = (
    OverloadedError,
    RateLimitError,
    ProviderTimeoutError,
    ProviderConnectionError,
    NotFoundError,
)


def fallback_setting(value: Any) -> tuple[type[BaseException], ...]:
    if value is None:
        return DEFAULT_FALLBACK_ON
    items = (value,) if isinstance(value, type) else tuple(value)
    if not all(isinstance(c, type) and issubclass(c, BaseException) for c in items):
        raise OptionError(f"fallback_on must be exception classes, got {value!r}")
    return items


def tool_execution_setting(value: Any) -> bool:
    """``tool_execution=``: True for ``"manual"`` (the caller runs the tools)."""
    if value is None or value == "auto":
        return False
    if value == "manual":
        return True
    raise OptionError(f"tool_execution must be 'auto' or 'manual', got {value!r}")


def _no_model(name: str) -> tuple[Provider, str]:
    raise AssertionError("a summary model is only resolved under a context policy")


def _stream_retry(value: Any) -> bool:
    """``stream_retry=``: None (a failed stream the caller saw ends the run) or "restart"."""
    if value is None or value == "restart":
        return value is not None
    raise OptionError(f'stream_retry must be "restart" or None, got {value!r}')


def deadline_setting(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise OptionError(f"deadline must be a number of seconds > 0, got {value!r}")
    return float(value)


def portable(messages: list[Message], vendor: str) -> tuple[list[Message], list[Dropped]]:
    """The conversation without other vendors' thinking and server-tool blocks; what was removed.

    Signed thinking, encrypted reasoning and server-tool results are only
    valid for the vendor that produced them; they are sent back to it alone.
    """
    dropped: list[Dropped] = []
    out: list[Message] | None = None
    for i, message in enumerate(messages):
        if message.role != "assistant":
            continue
        foreign = [b for b in message.blocks if isinstance(b, VENDOR_BLOCKS) and b.vendor != vendor]
        if not foreign:
            continue
        if out is None:
            out = list(messages)
        for block in foreign:
            what = "thinking" if isinstance(block, ThinkingBlock) else "server-side tool"
            dropped.append(
                Dropped(
                    i,
                    block.type,
                    block.vendor or "unknown",
                    f"{what} from {block.vendor or 'an unknown vendor'} cannot be sent to {vendor}",
                )
            )
        kept = tuple(
            b for b in message.blocks if not (isinstance(b, VENDOR_BLOCKS) and b.vendor != vendor)
        )
        out[i] = Message(
            message.role, kept, message.tool_calls, message.tool_results, dict(message.extra)
        )
    if out is None:
        return messages, dropped
    if isinstance(messages, Prompt):
        prompt = Prompt(out, content=messages.content, reads=messages.reads)
        prompt.dag_count = messages.dag_count
        return prompt, dropped
    return out, dropped


def _system(value: Any, max_bytes: int) -> tuple[TextBlock, ...]:
    """``system=`` as text blocks: a string, or blocks (dicts or TextBlocks, ``"cache"`` kept)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (TextBlock(value),) if value else ()
    if isinstance(value, (TextBlock, dict)):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise OptionError(
            f"system must be a string or a list of text blocks, got {type(value).__name__}"
        )
    blocks = normalize_content(list(value), max_bytes=max_bytes)
    for block in blocks:
        if not isinstance(block, TextBlock):
            raise OptionError(f"system blocks must be text, got a {block.type} block")
    return tuple(blocks)  # type: ignore[arg-type]


def history_setting(value: Any) -> list[Message]:
    """``history=``: Messages (or their ``to_dict()`` form) that come before the new content."""
    if value is None:
        return []
    if isinstance(value, (Message, dict)) or not isinstance(value, (list, tuple)):
        raise OptionError(f"history must be a list of Message, got {type(value).__name__}")
    out: list[Message] = []
    for i, item in enumerate(value):
        if isinstance(item, dict):
            item = Message.from_dict(item)
        if not isinstance(item, Message):
            raise OptionError(
                f"history[{i}] must be a Message or its to_dict() form, got {type(item).__name__}"
            )
        out.append(item)
    return out


def _split_messages(content: Any) -> tuple[list[Message], Any]:
    """(leading Messages of ``content``, the rest): ``exec(result.messages + ["next"])``."""
    if not isinstance(content, (list, tuple)) or not any(isinstance(c, Message) for c in content):
        return [], content
    messages: list[Message] = []
    rest: list[Any] = []
    for i, item in enumerate(content):
        if isinstance(item, Message):
            if rest:
                raise ContentError(i, "Message items must come before the new content blocks")
            messages.append(item)
        else:
            rest.append(item)
    return messages, rest


def _native_tools(params: dict[str, Any]) -> tuple[list[NativeTool], dict[str, Any]]:
    """Separate provider-native tools from the function tools of ``tools=``."""
    tools = params["tools"]
    if isinstance(tools, NativeTool):
        tools = [tools]
    if not isinstance(tools, (list, tuple)) or not any(isinstance(t, NativeTool) for t in tools):
        return [], params
    native = [t for t in tools if isinstance(t, NativeTool)]
    for t in native:
        if t.kind not in NATIVE_TOOL_KINDS:
            raise OptionError(
                f"unknown native tool {t.kind!r}; "
                f"expected one of {', '.join(sorted(NATIVE_TOOL_KINDS))}"
            )
    return native, {**params, "tools": [t for t in tools if not isinstance(t, NativeTool)]}


def _messages(
    blocks: list[Block],
    context: str | None,
    frame: Frame | None,
    given: Sequence[Message],
    read_budget: int | None = None,
) -> list[Message]:
    history: list[Message]
    if context is not None:
        if not isinstance(context, str):
            raise TypeError("context must be a string")
        history = [Message("user", (TextBlock(context),))] if context else []
    elif frame is not None:
        # A context policy's max_tokens bounds the DAG read too (newest first).
        history = (
            frame.context_messages(max_tokens=read_budget)
            if read_budget is not None
            else frame.context_messages()
        )
    else:
        history = []
    # history= (and Messages given as content) come after the DAG context, before the new content.
    messages = [*history, *given]
    if blocks:
        if messages and messages[-1].role == "user" and not messages[-1].tool_results:
            last = messages.pop()
            messages.append(Message("user", (*last.blocks, *blocks)))
        else:
            messages.append(Message("user", tuple(blocks)))
    if frame is None:
        return messages
    # Inside an agentic function: keep the exec's own blocks and what the
    # history was read from, for its llm node (see llmport.sessions.dag.Prompt).
    prompt = Prompt(messages, content=blocks, reads=getattr(history, "reads", None))
    prompt.dag_count = len(history)
    return prompt


def _patterns(value: Any, name: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    items = list(value)
    if not all(isinstance(p, str) for p in items):
        raise TypeError(f"{name} must be a list of glob patterns")
    return items


def _toolbox(
    params: dict[str, Any], info: CallInfo, hooks: RunHooks, settings: RunSettings
) -> ToolBox | None:
    if not (params["tools"] or params["toolset"] or params["tools_source"]):
        return None
    host = settings.plugins
    toolbox = build_toolbox(params["tools"], params["toolset"], params["tools_source"], host, info)
    if toolbox is None:
        return None
    allow = _patterns(params["tools_allow"], "tools_allow")
    deny = _patterns(params["tools_deny"], "tools_deny")
    scope = tool_scope.get()
    kept = {}
    for name, t in toolbox.tools.items():
        if allow is not None and not any(fnmatchcase(name, p) for p in allow):
            continue
        if deny and any(fnmatchcase(name, p) for p in deny):
            continue
        if scope is not None and name not in scope:
            continue
        verdict = hooks.tool_verdict(ToolCheck(name, "offer", info, None, t.description))
        if verdict == "deny":
            continue
        if verdict == "approve":  # offered; each call is put to the approver before it runs
            toolbox.needs_approval.add(name)
        kept[name] = t
    toolbox.tools = kept
    return toolbox if kept else None
