"""Planning: everything decided before the first request, once per exec.

:func:`start` checks every input (parameters, option values, content,
tools, response format, choices), routes the model to its provider and
builds the first messages; it raises typed input errors and sends nothing.
A plan that fails inside an ``@agentic_function`` is recorded as a failed
``llm`` node (a failure loses nothing).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from ..controls.budget import Ledger, as_budget
from ..controls.limits import Gate  # limits
from ..controls.options import cache_setting, check_options, check_vendor_fields, reasoning_setting
from ..controls.retry import Backoff
from ..controls.window import ContextPolicy, as_policy
from ..errors import (
    ContentError,
    NoModelError,
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
from ..provider.contract import Provider
from ..provider.routing import resolve
from ..sessions.dag import Frame, LlmRecordLike, Prompt, current_frame
from ..tools.policy import CallInfo, ToolCheck
from ..tools.tool import ToolBox, ToolSettings, build_toolbox
from .hooks import RunHooks
from .result import Dropped, RunResult

if TYPE_CHECKING:
    from ..runtime import Runtime

__all__ = ["Plan", "Targets", "start", "target", "tool_scope"]

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
        from ..sessions.dag import node_seq

        session.add_summary(max(node_seq(r) for r in reads), text, usage, model=model)

    gate: Gate | None = None  # limits: the rate limits on this target (llmport.controls.limits)
    trace: Trace | None = None  # tracing: exec(trace=...)

    def call_info(self, iteration: int) -> CallInfo:
        i = self.info
        return CallInfo(i.model, i.provider, i.function, i.node_id, iteration, i.deps, i.metadata)


class Targets:
    """The provider instances of one runtime, created on first use and closed with it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._instances: dict[str, Provider] = {}
        # model string -> (the provider table it was resolved against, the answer):
        # aliases and configurations are resolved once per model, not on every call.
        self._routes: dict[str, tuple[Any, tuple[Provider, str, str, dict[str, Any]]]] = {}

    def resolve(self, rt: Runtime, model: str | None) -> tuple[Provider, str, str, dict[str, Any]]:
        """(provider, model name, qualified name, options from configuration)."""
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise OptionError(f"model must be a non-empty 'provider:model' string, got {model!r}")
        name = model or rt.model
        table = rt.plugins.providers()
        known = self._routes.get(name)
        if known is not None and known[0] is table:
            return known[1]
        answer = self._resolve(rt, name, table)
        self._routes[name] = (table, answer)
        return answer

    def _resolve(
        self, rt: Runtime, name: str, table: Any
    ) -> tuple[Provider, str, str, dict[str, Any]]:
        if name == "default":
            name = rt.config.default_model or ""
            if not name:
                raise NoModelError(
                    "no model to call: give one as 'provider:model' (Runtime(model=...) or "
                    "exec(model=...)), set default_model / LLMPORT_MODEL, or pass call="
                )
        route = resolve(name, rt.config, table)
        provider = self._instances.get(route.prefix)
        if provider is None:
            with self._lock:
                provider = self._instances.get(route.prefix)
                if provider is None:
                    settings = {
                        **rt.config.providers.get(route.prefix, {}),
                        **rt.provider_settings.get(route.prefix, {}),
                    }
                    provider = self._instances[route.prefix] = route.info.create(settings)
        return provider, route.model, route.qualified, route.options

    def providers(self) -> list[Provider]:
        """The provider instances created so far."""
        with self._lock:
            return list(self._instances.values())

    def close(self) -> list[Provider]:
        """Forget every instance; return them for closing."""
        with self._lock:
            providers = list(self._instances.values())
            self._instances.clear()
            self._routes.clear()
        return providers


def target(rt: Runtime, model: str | None) -> tuple[Provider, str, str, dict[str, Any], bool]:
    """(provider, model, qualified, config options, plain callable?)."""
    fn = rt.call_provider()
    if fn is not None:
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise OptionError(f"model must be a non-empty string, got {model!r}")
        name = model or rt.model
        return fn, name, name, {}, True
    provider, name, qualified, options = rt.targets.resolve(rt, model)
    return provider, name, qualified, options, False


def start(
    rt: Runtime, params: dict[str, Any], options: dict[str, Any], *, stream: bool
) -> tuple[Plan, RunResult[Any]]:
    """Plan a run and open its DAG record; a failed plan is recorded as a failed node."""
    frame = current_frame()
    try:
        plan = _plan(rt, params, options, frame, stream=stream)
    except BaseException as exc:
        if frame is not None:
            frame.begin_llm(
                model=str(params["model"] or rt.model),
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


def _plan(
    rt: Runtime,
    params: dict[str, Any],
    options: dict[str, Any],
    frame: Frame | None,
    *,
    stream: bool,
) -> Plan:
    started = time.monotonic()  # deadline=: the clock runs from here (plugins, providers count)
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
    vendor = check_vendor_fields(params["vendor"])

    requested = params["model"]
    fallback_names: list[str] = list(rt.fallbacks) if requested is None else []
    if isinstance(requested, (list, tuple)):
        if not requested:
            raise OptionError("model must be a 'provider:model' string or a non-empty list of them")
        requested, fallback_names = requested[0], list(requested[1:])
    provider, model, qualified, conf_options, plain = target(rt, requested)
    if "fallbacks" in conf_options:  # a configuration's own
        conf_options = dict(conf_options)
        fallback_names += list(conf_options.pop("fallbacks") or [])
    # Per call beats named configuration beats runtime defaults.
    merged = {**rt.options, **conf_options, **options}
    # The plain call's fast path: the run options below are normalised only when given.
    given = _RUN_OPTIONS.intersection(merged)
    fallback_on = _fallback_on(merged.pop("fallback_on", None)) if given else DEFAULT_FALLBACK_ON
    fallbacks = (
        [_candidate(rt, name) for name in fallback_names] if fallback_names and not plain else []
    )
    deps = merged.pop("deps", None)  # for tools and choices, never sent to providers
    system = merged.pop("system", None)
    system_blocks: tuple[TextBlock, ...] = ()
    if type(system) is str:
        system_blocks = (TextBlock(system),) if system else ()
        system = system or None
    elif system is not None:
        system_blocks = _system(system, rt.max_block_bytes)
        system = "".join(b.text for b in system_blocks) if system_blocks else None
    history: list[Message] = []
    manual_tools = False
    reasoning = cache = budget = deadline_seconds = trace = output_mode = None
    stream_restart = False
    if given:
        history = _history(merged.pop("history", None))
        reasoning = reasoning_setting(
            merged.pop("reasoning", None), merged.pop("reasoning_effort", None)
        )
        cache = cache_setting(merged.pop("cache", None))
        output_mode = merged.pop("output_mode", None)
        budget = as_budget(merged.pop("budget", None))
        deadline_seconds = _deadline(merged.pop("deadline", None))
        trace = Trace.of(merged.pop("trace", None))  # tracing: never sent to providers
        manual_tools = _tool_execution(merged.pop("tool_execution", None))
        stream_restart = _stream_retry(merged.pop("stream_retry", None))
    policy = merged.pop("context_policy", rt.context_policy)
    if policy is not None and type(policy) is not ContextPolicy:
        policy = as_policy(policy)
    tool_settings = ToolSettings.pop_from(merged)  # loop options, never sent to providers
    check_options({**merged, "output_mode": output_mode} if output_mode else merged)
    caps = provider.capabilities(model)
    content = params["content"]
    if type(content) is list and content and type(content[0]) is Message:
        prior, content = _split_messages(content)
        history = history + prior
    blocks = checked_input(
        content, history, max_bytes=rt.max_block_bytes, window=caps.context_window, model=qualified
    )
    if not blocks and not history and params["context"] is None and frame is None:
        raise ContentError(0, "content is empty")

    info = CallInfo(
        model=qualified,
        provider=provider.name,
        function=frame.name if frame else None,
        node_id=frame.node_id if frame else None,
        deps=deps,
        metadata={"trace": trace} if trace is not None else {},  # tracing
    )
    hooks = rt.plugins.memo("run_hooks", RunHooks)
    # The DAG read takes at most half the policy's limit: room for the new content.
    read_budget = policy.max_tokens // 2 if policy is not None and policy.max_tokens else None
    messages = _messages(blocks, params["context"], frame, history, read_budget)
    dropped: list[Dropped] = []
    if len(messages) > 1:  # only a conversation can hold another vendor's blocks
        messages, dropped = portable(messages, provider.name)
    native_tools: list[NativeTool] = []
    if params["tools"] is not None:
        native_tools, params = _native_tools(params)
    toolbox = _toolbox(params, info, hooks, rt)
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
    rf = structured.prepare(params["response_format"])
    decision = Decision(params["choices"]) if params["choices"] is not None else None
    no_native = not caps.native_structured_output and not caps.native_tools
    if rf is not None and no_native and output_mode != "prompted":
        raise UnsupportedFeatureError(provider.name, model, "response_format")
    if output_mode is not None:
        if rf is None:
            raise OptionError("output_mode applies to response_format; this call gives none")
        if output_mode == "native" and not caps.native_structured_output:
            raise UnsupportedFeatureError(provider.name, model, 'output_mode="native"')
        if output_mode == "tool" and not caps.native_tools:
            raise UnsupportedFeatureError(provider.name, model, 'output_mode="tool"')
    if toolbox is not None and toolbox.needs_approval and tool_settings.approver is None:
        raise ToolApprovalRequired(
            f"policy requires approval for {', '.join(sorted(toolbox.needs_approval))} but no "
            "approver was given (exec(..., approver=fn) or Runtime(..., approver=fn))"
        )
    ledgers: tuple[Ledger, ...] = ()
    if rt.ledger is not None or budget is not None:
        ledgers = tuple(x for x in (rt.ledger, Ledger(budget, "run") if budget else None) if x)
    return Plan(
        provider=provider,
        model=model,
        qualified=qualified,
        caps=caps,
        messages=messages,
        system=system,
        toolbox=toolbox,
        tool_choice=tool_choice,
        parallel_tool_calls=bool(params["parallel_tool_calls"]),
        max_iterations=max_iterations,
        response_format=rf,
        decision=decision,
        options=merged,
        vendor=vendor,
        deps=deps,
        plain_callable=plain,
        info=info,
        frame=frame,
        hooks=hooks,
        backoff=rt.backoff,
        max_attempts=rt.max_retries,
        input_token_budget=rt.input_token_budget,
        add_usage=rt.add_usage,
        stream=stream,
        tool_settings=tool_settings,
        output_type=structured.output_type(params["response_format"]),
        system_blocks=system_blocks,
        native_tools=native_tools,
        reasoning=reasoning,
        cache=cache,
        output_mode=output_mode,
        dropped=dropped,
        ledgers=ledgers,
        context_policy=policy,
        window_limit=caps.context_window if policy is None else _window_limit(policy, caps),
        summaries=rt.summaries,
        resolve_model=(lambda name: rt.targets.resolve(rt, name)[:2])
        if policy is not None
        else _no_model,
        deadline=started + deadline_seconds if deadline_seconds is not None else None,
        deadline_seconds=deadline_seconds,
        stream_restart=stream_restart,
        gate=rt.gate(qualified),  # limits
        trace=trace,  # tracing
        candidates=[Candidate(provider, model, qualified, caps), *fallbacks] if fallbacks else [],
        fallback_on=fallback_on,
        manual_tools=manual_tools,
        # Only tools and choices see a RunContext: no store is looked up for a plain call.
        store=(
            rt.store_for(getattr(frame, "session", None))
            if toolbox is not None or decision is not None
            else None
        ),
    )


#: What makes a run try its next model when retries did not help.
DEFAULT_FALLBACK_ON: tuple[type[BaseException], ...] = (
    OverloadedError,
    RateLimitError,
    ProviderTimeoutError,
    ProviderConnectionError,
    NotFoundError,
)


def _fallback_on(value: Any) -> tuple[type[BaseException], ...]:
    if value is None:
        return DEFAULT_FALLBACK_ON
    items = (value,) if isinstance(value, type) else tuple(value)
    if not all(isinstance(c, type) and issubclass(c, BaseException) for c in items):
        raise OptionError(f"fallback_on must be exception classes, got {value!r}")
    return items


def _candidate(rt: Runtime, name: Any) -> Candidate:
    if not isinstance(name, str) or not name.strip():
        raise OptionError(f"fallback models must be non-empty strings, got {name!r}")
    provider, model, qualified, _ = rt.targets.resolve(rt, name)
    return Candidate(provider, model, qualified, provider.capabilities(model))


def _tool_execution(value: Any) -> bool:
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


def _deadline(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise OptionError(f"deadline must be a number of seconds > 0, got {value!r}")
    return float(value)


def _window_limit(policy: ContextPolicy | None, caps: ModelCapabilities) -> int | None:
    """Tokens a request may take: the policy's limit, else the model's whole window."""
    if policy is not None:
        return policy.limit(caps.context_window)
    return caps.context_window  # never send what is known not to fit


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


def _history(value: Any) -> list[Message]:
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
    from ..messages.types import NATIVE_TOOL_KINDS

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
    given: list[Message],
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
    params: dict[str, Any], info: CallInfo, hooks: RunHooks, rt: Runtime
) -> ToolBox | None:
    if not (params["tools"] or params["toolset"] or params["tools_source"]):
        return None
    toolbox = build_toolbox(
        params["tools"], params["toolset"], params["tools_source"], rt.plugins, info
    )
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
