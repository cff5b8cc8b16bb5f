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
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from .. import structured
from ..content import normalize_content
from ..dag import Frame, LlmRecord, Prompt, current_frame
from ..decisions import Decision
from ..errors import (
    ContentError,
    NoModelError,
    OptionError,
    ToolApprovalRequired,
    UnsupportedFeatureError,
)
from ..limits import Gate  # limits
from ..options import check_options, check_vendor_fields
from ..policy import CallInfo, ToolCheck
from ..provider import Provider
from ..retry import Backoff
from ..routing import resolve
from ..tools import ToolBox, ToolSettings, build_toolbox
from ..tracing import Trace  # tracing
from ..types import Block, Message, ModelCapabilities, ResponseFormat, TextBlock, ToolChoice, Usage
from .hooks import RunHooks
from .result import RunResult

if TYPE_CHECKING:
    from ..runtime import Runtime

__all__ = ["Plan", "Targets", "start", "target", "tool_scope"]

#: Tools an outer exec allowed; a nested exec (from inside a tool) may only narrow it.
tool_scope: contextvars.ContextVar[frozenset[str] | None] = contextvars.ContextVar(
    "llmport_tool_scope", default=None
)
_TOOL_CHOICES = ("auto", "required", "none")


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
    record: LlmRecord | None = None
    tool_settings: ToolSettings = field(default_factory=ToolSettings)
    output_type: Any = None
    gate: Gate | None = None  # limits: the rate limits on this target (llmport.limits)
    trace: Trace | None = None  # tracing: exec(trace=...)

    def call_info(self, iteration: int) -> CallInfo:
        i = self.info
        return CallInfo(i.model, i.provider, i.function, i.node_id, iteration, i.deps, i.metadata)


class Targets:
    """The provider instances of one runtime, created on first use and closed with it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._instances: dict[str, Provider] = {}

    def resolve(self, rt: Runtime, model: str | None) -> tuple[Provider, str, str, dict[str, Any]]:
        """(provider, model name, qualified name, options from configuration)."""
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise OptionError(f"model must be a non-empty 'provider:model' string, got {model!r}")
        name = model or rt.model
        if name == "default":
            name = rt.config.default_model or ""
            if not name:
                raise NoModelError(
                    "no model to call: give one as 'provider:model' (Runtime(model=...) or "
                    "exec(model=...)), set default_model / LLMPORT_MODEL, or pass call="
                )
        route = resolve(name, rt.config, rt.plugins.providers())
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
    run: RunResult[Any] = RunResult(model=plan.qualified)
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

    provider, model, qualified, conf_options, plain = target(rt, params["model"])
    # Per call beats named configuration beats runtime defaults.
    merged = {**rt.options, **conf_options, **options}
    deps = merged.pop("deps", None)  # for tools and choices, never sent to providers
    system = merged.pop("system", None)
    if system is not None and not isinstance(system, str):
        raise OptionError(f"system must be a string, got {type(system).__name__}")
    tool_settings = ToolSettings.pop_from(merged)  # loop options, never sent to providers
    trace = Trace.of(merged.pop("trace", None))  # tracing: never sent to providers
    check_options(merged)
    caps = provider.capabilities(model)
    blocks = normalize_content(params["content"], max_bytes=rt.max_block_bytes)
    if not blocks and params["context"] is None and frame is None:
        raise ContentError(0, "content is empty")

    info = CallInfo(
        model=qualified,
        provider=provider.name,
        function=frame.name if frame else None,
        node_id=frame.node_id if frame else None,
        deps=deps,
        metadata={"trace": trace} if trace is not None else {},  # tracing
    )
    hooks = RunHooks(rt.plugins)
    messages = _messages(blocks, params["context"], frame)
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
    if rf is not None and not caps.native_structured_output and not caps.native_tools:
        raise UnsupportedFeatureError(provider.name, model, "response_format")
    if toolbox is not None and toolbox.needs_approval and tool_settings.approver is None:
        raise ToolApprovalRequired(
            f"policy requires approval for {', '.join(sorted(toolbox.needs_approval))} but no "
            "approver was given (exec(..., approver=fn) or Runtime(..., approver=fn))"
        )
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
        gate=rt.gate(qualified),  # limits
        trace=trace,  # tracing
    )


def _messages(blocks: list[Block], context: str | None, frame: Frame | None) -> list[Message]:
    history: list[Message]
    if context is not None:
        if not isinstance(context, str):
            raise TypeError("context must be a string")
        history = [Message("user", (TextBlock(context),))] if context else []
    elif frame is not None:
        history = frame.context_messages()
    else:
        history = []
    messages = list(history)
    if blocks:
        if messages and messages[-1].role == "user" and not messages[-1].tool_results:
            last = messages.pop()
            messages.append(Message("user", (*last.blocks, *blocks)))
        else:
            messages.append(Message("user", tuple(blocks)))
    if frame is None:
        return messages
    # Inside an agentic function: keep the exec's own blocks and what the
    # history was read from, for its llm node (see llmport.dag.Prompt).
    return Prompt(messages, content=blocks, reads=getattr(history, "reads", None))


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
