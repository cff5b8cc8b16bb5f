"""The Runtime: call models, run tool loops, retry, record.

One run is written once, as a generator of *steps* (:meth:`Runtime._steps`):
"send this request", "run these tool calls", "call this chosen function".
Two drivers execute the steps, one sync and one async, both able to stream
events. ``exec``, ``run`` and ``stream`` use the sync driver; ``async_exec``,
``arun`` and ``astream`` the async one. So every parameter behaves the same
in both worlds by construction.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
import time
from collections.abc import (
    AsyncIterator,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from . import structured
from .config import Config, load_config
from .content import DEFAULT_MAX_BLOCK_BYTES, block_to_dict, normalize_content
from .dag import Frame, LlmRecord, Prompt, current_frame
from .decisions import Choice, Decision, InvalidPick, resolve_call
from .errors import (
    AttemptFailure,
    ContentError,
    GuardrailTripped,
    MaxIterationsExceeded,
    ModelBehaviorError,
    TokenLimitExceeded,
    ToolApprovalRequired,
    UnsupportedFeatureError,
)
from .plugins import PluginHost
from .policy import CallInfo, ToolCheck, aask_approval, ask_approval, combine_verdicts
from .provider import Provider, StreamAssembler
from .retry import Attempts, Backoff, _after_failure
from .routing import resolve
from .tools import (
    RunContext,
    ToolBox,
    ToolOutcome,
    ToolSettings,
    build_toolbox,
    refusal,
    run_coroutine_blocking,
)
from .types import (
    Block,
    FinalEvent,
    Message,
    ModelCapabilities,
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

__all__ = ["RunResult", "Runtime", "ToolCallRecord"]

# Tools an outer exec allowed; a nested exec (from inside a tool) may only narrow it.
_tool_scope: contextvars.ContextVar[frozenset[str] | None] = contextvars.ContextVar(
    "llmport_tool_scope", default=None
)


@dataclass(slots=True, frozen=True)
class ToolCallRecord:
    """One tool call made during a run, with its outcome and duration."""

    call: ToolCall
    result: ToolResult
    duration: float
    iteration: int
    error: str | None = None
    node_id: str | None = None
    #: ok | error | timeout | invalid_arguments | unknown_tool | denied | not_approved | repeated
    status: str = "ok"


@dataclass(slots=True)
class RunResult:
    """Everything about one ``exec``: what it returned and how it got there."""

    output: Any = None
    text: str = ""
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    iterations: int = 0
    stop_reason: str = ""
    attempts: int = 0
    failures: list[AttemptFailure] = field(default_factory=list)
    latency: float = 0.0
    node_id: str | None = None
    messages: list[Message] = field(default_factory=list)
    choice: str | None = None
    #: The parsed result: with response_format the JSON value (an instance for a
    #: pydantic model / dataclass format), with choices the decision, else the text.
    value: Any = None


# --- steps of a run -------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class _ModelStep:
    request: Request


@dataclass(slots=True, frozen=True)
class _ToolStep:
    calls: list[ToolCall]
    iteration: int


@dataclass(slots=True, frozen=True)
class _InvokeStep:
    fn: Callable[..., Any]
    kwargs: dict[str, Any]


@dataclass(slots=True, frozen=True)
class _Done:
    value: Any


_Step = _ModelStep | _ToolStep | _InvokeStep


@dataclass(slots=True)
class _Plan:
    """Everything decided before the first request; built once per exec."""

    target: Provider
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
    deps: Any
    plain_callable: bool
    info: CallInfo
    frame: Frame | None
    record: LlmRecord | None = None
    stream: bool = False
    tool_settings: ToolSettings = field(default_factory=ToolSettings)
    output_type: Any = None


# --- providers made from call= functions and _call overrides -------------------


def request_to_content(request: Request) -> list[dict[str, Any]]:
    """The seed API's view of a request: a flat list of content dicts.

    The system prompt and earlier turns become text blocks; the blocks of
    user messages keep their form (see :func:`llmport.content.block_to_dict`).
    """
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"type": "text", "text": request.system})
    for message in request.messages:
        if message.role == "user":
            out.extend(block_to_dict(b) for b in message.blocks)
        elif message.role == "assistant" and message.text:
            out.append({"type": "text", "text": f"[assistant] {message.text}"})
        for result in message.tool_results:
            out.append({"type": "text", "text": f"[tool {result.name}] {result.content}"})
    return out


class CallableProvider(Provider):
    """Adapts a ``call=`` function or a ``_call`` / ``_async_call`` override."""

    name = "call"

    def __init__(
        self, sync_fn: Callable[..., Any] | None, async_fn: Callable[..., Any] | None, label: str
    ) -> None:
        super().__init__()
        self.sync_fn = sync_fn
        self.async_fn = async_fn
        self.label = label
        fn = sync_fn or async_fn
        params = inspect.signature(fn).parameters.values() if fn else []
        self.accepts_any = any(p.kind is p.VAR_KEYWORD for p in params)
        self.accepted = {p.name for p in params} - {"content", "model", "response_format"}

    def capabilities(self, model: str) -> ModelCapabilities:
        return ModelCapabilities(
            input_modalities=frozenset({"text", "image", "audio", "file"}),
            native_tools=False,
            native_structured_output=True,
        )

    def prepare(self, request: Request) -> None:
        if request.tools:
            raise UnsupportedFeatureError(
                self.label,
                request.model,
                "tools",
                "a call function returns text only; "
                "use a provider plugin (e.g. 'openai:...') for tools",
            )
        unknown = [k for k in request.options if not self.accepts_any and k not in self.accepted]
        if unknown:
            raise UnsupportedFeatureError(
                self.label,
                request.model,
                f"option(s) {', '.join(sorted(unknown))}",
                "add them as keyword parameters (or **kwargs) to the call function",
            )

    def _args(self, request: Request) -> tuple[list[dict[str, Any]], str, dict[str, Any] | None]:
        rf = request.response_format.schema if request.response_format else None
        return request_to_content(request), request.model, rf

    @staticmethod
    def _check(text: Any) -> str:
        if not isinstance(text, str):
            raise TypeError(f"the call function must return str, got {type(text).__name__}")
        return text

    def _call(self, request: Request) -> Response:
        if self.sync_fn is None:
            raise TypeError(f"{self.label} is async: use async_exec() (or astream())")
        content, model, rf = self._args(request)
        text = self._check(self.sync_fn(content, model, rf, **request.options))
        return Response(text=text, model=model, usage=Usage(requests=1))

    async def _async_call(self, request: Request) -> Response:
        content, model, rf = self._args(request)
        if self.async_fn is not None:
            text = await self.async_fn(content, model, rf, **request.options)
        else:
            assert self.sync_fn is not None
            # to_thread carries the current contextvars (frame, tool scope) into the worker.
            text = await asyncio.to_thread(self.sync_fn, content, model, rf, **request.options)
        return Response(text=self._check(text), model=model, usage=Usage(requests=1))


# --- the runtime -------------------------------------------------------------------

_CALL_PARAMS = (
    "content",
    "context",
    "response_format",
    "model",
    "tools",
    "toolset",
    "tools_source",
    "tools_allow",
    "tools_deny",
    "tool_choice",
    "parallel_tool_calls",
    "max_iterations",
    "choices",
)
_TOOL_CHOICES = ("auto", "required", "none")
#: Consecutive tool errors (unknown tool, bad arguments, exceptions) before giving up.
MAX_TOOL_ERRORS = 3


class Runtime:
    """Calls models.

    ``Runtime(call=None, model="default", max_retries=2, **settings)``.

    * ``call``: ``fn(content, model, response_format) -> str`` (sync or async).
    * ``model``: the default model (``"provider:model"``, an alias or a named
      configuration); each call may override it.
    * ``max_retries``: total attempts per model request, first included (>= 1);
      when not given, ``max_retries`` from configuration (``LLMPORT_MAX_RETRIES``), else 2.

    Settings: ``backoff`` (:class:`~llmport.retry.Backoff`), ``providers``
    (``{"openai": {"base_url": ...}}``), ``hooks`` (objects with hookimpls:
    policies, providers, toolsets, for this runtime only), ``config``
    (a :class:`~llmport.config.Config`;
    default: loaded from files and environment), ``plugins`` (a
    :class:`~llmport.plugins.PluginHost`), ``input_token_budget``,
    ``max_block_bytes``; anything else is a default option for every call
    (``temperature=0.2``).
    """

    def __init__(
        self,
        call: Callable[..., Any] | None = None,
        model: str = "default",
        max_retries: int | None = None,
        *,
        backoff: Backoff | None = None,
        providers: Mapping[str, Mapping[str, Any]] | None = None,
        hooks: Sequence[Any] = (),
        config: Config | None = None,
        plugins: PluginHost | None = None,
        input_token_budget: int | None = None,
        max_block_bytes: int = DEFAULT_MAX_BLOCK_BYTES,
        **settings: Any,
    ) -> None:
        if max_retries is not None:
            _check_max_retries(max_retries)
        if call is not None and not callable(call):
            raise TypeError("call must be a function fn(content, model, response_format) -> str")
        self.call = call
        self.model = model
        self._max_retries = max_retries
        self.backoff = backoff or Backoff()
        self.options: dict[str, Any] = dict(settings)
        self.input_token_budget = input_token_budget
        self.max_block_bytes = max_block_bytes
        self._provider_settings = {k: dict(v) for k, v in (providers or {}).items()}
        self._hooks = tuple(hooks)
        self._config = config
        self._host = plugins
        self._hooks_added = False
        self._instances: dict[str, Provider] = {}
        self._lock = threading.Lock()
        self._usage = Usage()

    # -- configuration, plugins, providers ------------------------------------

    @property
    def config(self) -> Config:
        if self._config is None:
            self._config = load_config()
        return self._config

    @property
    def plugins(self) -> PluginHost:
        host = self._host
        if host is not None and self._hooks_added:
            return host  # the hot path: no lock, no pluggy lookups
        with self._lock:
            if self._host is None:
                self._host = PluginHost(extra=self._hooks)
            elif self._hooks and not any(self._host.pm.is_registered(p) for p in self._hooks):
                for p in self._hooks:  # a PluginHost given by the caller
                    self._host.register(p)
            self._hooks_added = True
            return self._host

    @property
    def max_retries(self) -> int:
        """Total attempts per model request: the argument, else configuration, else 2."""
        if self._max_retries is not None:
            return self._max_retries
        return self.config.max_retries or 2

    @max_retries.setter
    def max_retries(self, value: int) -> None:
        self._max_retries = _check_max_retries(value)

    @property
    def usage(self) -> Usage:
        """Tokens used by every call of this runtime so far (a copy)."""
        with self._lock:
            return Usage(**self._usage.to_dict())

    def _overridden(self, name: str) -> bool:
        return getattr(type(self), name) is not getattr(Runtime, name)

    def _target(self, model: str | None) -> tuple[Provider, str, str, dict[str, Any], bool]:
        """(provider, model name, qualified name, options from config, plain callable?)."""
        model = model or self.model
        if self.call is not None:
            is_async = inspect.iscoroutinefunction(self.call)
            fn = self.call
            return (
                CallableProvider(
                    None if is_async else fn, fn if is_async else None, "call function"
                ),
                model,
                model,
                {},
                True,
            )
        if self._overridden("_call") or self._overridden("_async_call"):
            sync = self._call if self._overridden("_call") else None
            asyn = self._async_call if self._overridden("_async_call") else None
            return (
                CallableProvider(sync, asyn, f"{type(self).__name__}._call"),
                model,
                model,
                {},
                True,
            )
        if model == "default":
            model = self.config.default_model
            if not model:
                raise NotImplementedError(
                    "no model to call: pass call=, override _call/_async_call, or give a "
                    "'provider:model' (or set default_model / LLMPORT_MODEL)"
                )
        route = resolve(model, self.config, self.plugins.providers())
        with self._lock:
            provider = self._instances.get(route.prefix)
            if provider is None:
                settings = {
                    **self.config.providers.get(route.prefix, {}),
                    **self._provider_settings.get(route.prefix, {}),
                }
                provider = route.info.create(settings)
                self._instances[route.prefix] = provider
        return provider, route.model, route.qualified, route.options, False

    # -- the seed API ---------------------------------------------------------------

    def _call(
        self,
        content: list[dict[str, Any]],
        model: str = "default",
        response_format: dict[str, Any] | None = None,
        **options: Any,
    ) -> str:
        """Override to make a runtime from a function; returns the reply text."""
        raise NotImplementedError

    async def _async_call(
        self,
        content: list[dict[str, Any]],
        model: str = "default",
        response_format: dict[str, Any] | None = None,
        **options: Any,
    ) -> str:
        """Async override; by default runs ``_call`` in a thread."""
        return await asyncio.to_thread(self._call, content, model, response_format, **options)

    # -- planning (all input checks; nothing is sent) -----------------------------

    def _plan(self, params: dict[str, Any], options: dict[str, Any], *, stream: bool) -> _Plan:
        frame = current_frame()
        max_iterations = params["max_iterations"]
        if not isinstance(max_iterations, int) or max_iterations < 1:
            raise ValueError("max_iterations must be an integer >= 1")
        tool_choice = params["tool_choice"]
        if not (
            tool_choice in _TOOL_CHOICES
            or (isinstance(tool_choice, dict) and isinstance(tool_choice.get("name"), str))
        ):
            raise ValueError(
                "tool_choice must be 'auto', 'required', 'none' or {'name': ...}, "
                f"got {tool_choice!r}"
            )
        if params["choices"] is not None and params["response_format"] is not None:
            raise ValueError("choices and response_format cannot be combined")

        target, model, qualified, conf_options, plain = self._target(params["model"])
        # Per call beats named configuration beats runtime defaults.
        merged = {**self.options, **conf_options, **options}
        deps = merged.pop("deps", None)  # for tools and choices, never sent to providers
        system = merged.pop("system", None)
        caps = target.capabilities(model)
        blocks = normalize_content(params["content"], max_bytes=self.max_block_bytes)
        if not blocks and params["context"] is None and frame is None:
            raise ContentError(0, "content is empty")

        info = CallInfo(
            model=qualified,
            provider=target.name,
            function=frame.name if frame else None,
            node_id=frame.node_id if frame else None,
            deps=deps,
        )
        messages = self._messages(blocks, params["context"], frame)
        toolbox = self._toolbox(params, info)
        if isinstance(tool_choice, dict) and (
            toolbox is None or tool_choice["name"] not in toolbox.tools
        ):
            raise ValueError(
                f"tool_choice names {tool_choice['name']!r}, which is not among the tools"
            )
        rf = structured.prepare(params["response_format"])
        decision = Decision(params["choices"]) if params["choices"] is not None else None
        if rf is not None and not caps.native_structured_output and not caps.native_tools:
            raise UnsupportedFeatureError(target.name, model, "response_format")
        tool_settings = ToolSettings.pop_from(merged)  # loop options, never sent to providers
        if toolbox is not None and toolbox.needs_approval and tool_settings.approver is None:
            raise ToolApprovalRequired(
                f"policy requires approval for {', '.join(sorted(toolbox.needs_approval))} but no "
                "approver was given (exec(..., approver=fn) or Runtime(..., approver=fn))"
            )
        return _Plan(
            target=target,
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
            deps=deps,
            plain_callable=plain,
            info=info,
            frame=frame,
            stream=stream,
            tool_settings=tool_settings,
            output_type=structured.output_type(params["response_format"]),
        )

    @staticmethod
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

    def _toolbox(self, params: dict[str, Any], info: CallInfo) -> ToolBox | None:
        if not (params["tools"] or params["toolset"] or params["tools_source"]):
            return None
        toolbox = build_toolbox(
            params["tools"], params["toolset"], params["tools_source"], self.plugins, info
        )
        if toolbox is None:
            return None
        allow = _patterns(params["tools_allow"], "tools_allow")
        deny = _patterns(params["tools_deny"], "tools_deny")
        scope = _tool_scope.get()
        host = self.plugins
        kept = {}
        for name, t in toolbox.tools.items():
            if allow is not None and not any(fnmatchcase(name, p) for p in allow):
                continue
            if deny and any(fnmatchcase(name, p) for p in deny):
                continue
            if scope is not None and name not in scope:
                continue
            verdict = combine_verdicts(
                host.hook.llmport_tool_policy(
                    check=ToolCheck(name, "offer", info, None, t.description)
                )
            )
            if verdict == "deny":
                continue
            if verdict == "approve":  # offered; each call is put to the approver before it runs
                toolbox.needs_approval.add(name)
            kept[name] = t
        toolbox.tools = kept
        return toolbox if kept else None

    # -- the run, as steps -------------------------------------------------------------

    def _request(
        self,
        plan: _Plan,
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
        )

    def _steps(self, plan: _Plan, run: RunResult) -> Generator[_Step, Any, Any]:
        messages = list(plan.messages)
        tool_choice = plan.tool_choice
        # With tools, the schema is enforced on the final answer (tools off) if the
        # vendor cannot combine both; plugins decide; we send it on every turn.
        response: Response | None = None
        failed_turns = 0
        for iteration in range(1, plan.max_iterations + 1):
            run.iterations = iteration
            request = self._request(
                plan,
                messages,
                tools=True,
                tool_choice=tool_choice,
                response_format=plan.response_format,
            )
            response = yield _ModelStep(request)
            messages.append(response.as_message())
            if not response.tool_calls:
                break
            if iteration == plan.max_iterations:
                break  # these calls' results could never be sent back: do not run them
            outcomes: list[ToolOutcome] = yield _ToolStep(list(response.tool_calls), iteration)
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
            value, errors = self._structured(plan, response.text)
            if errors:
                messages.append(Message("user", (TextBlock(structured.repair_prompt(errors)),)))
                response = yield _ModelStep(
                    self._request(
                        plan,
                        messages,
                        tools=False,
                        tool_choice="auto",
                        response_format=plan.response_format,
                    )
                )
                messages.append(response.as_message())
                value, errors = self._structured(plan, response.text)
                if errors:
                    run.messages = messages
                    raise structured.fail(errors, response.text)
            run.text = response.text
            run.stop_reason = response.stop_reason
            output = _strip(response.text)
            run.value = value

        if plan.decision is not None:
            output = yield from self._decide(plan, run, messages)
            run.value = output
        run.messages = messages
        return output

    @staticmethod
    def _structured(plan: _Plan, text: str) -> tuple[Any, list[str]]:
        """(value, errors) of a structured reply; building the output class may reject it too."""
        assert plan.response_format is not None
        value, errors = structured.parse_reply(plan.response_format, text)
        if errors:
            return value, errors
        try:
            return structured.to_output(value, plan.output_type), []
        except Exception as exc:  # e.g. a pydantic validator stricter than the schema
            return value, [f"<root>: {type(exc).__name__}: {exc}"]

    def _decide(
        self, plan: _Plan, run: RunResult, messages: list[Message]
    ) -> Generator[_Step, Any, Any]:
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
                )
            else:
                request = self._request(
                    plan,
                    messages,
                    tools=False,
                    tool_choice="auto",
                    response_format=decision.response_format(),
                )
            response = yield _ModelStep(request)
            messages.append(response.as_message())
            try:
                picked, args = decision.parse(response, via_tools)
            except InvalidPick as bad:
                errors = bad.errors
                if response.tool_calls:
                    messages.append(
                        Message(
                            "tool",
                            tool_results=tuple(
                                ToolResult(c.id, c.name, "invalid pick: " + "; ".join(errors), True)
                                for c in response.tool_calls
                            ),
                        )
                    )
                messages.append(
                    Message(
                        "user",
                        (
                            TextBlock(
                                "That was not a valid choice: "
                                + "; ".join(errors)
                                + ". "
                                + decision.prompt(via_tools)
                            ),
                        ),
                    )
                )
                continue
            return (yield from self._resolve_choice(plan, run, picked, args))
        raise decision.fail(errors)

    def _resolve_choice(
        self, plan: _Plan, run: RunResult, picked: Choice, args: dict[str, Any]
    ) -> Generator[_Step, Any, Any]:
        run.choice = picked.name
        ctx = RunContext(
            deps=plan.deps,
            model=plan.qualified,
            node_id=_node_id(plan),
            iteration=run.iterations,
            tool_name=picked.name,
            function=plan.info.function,
        )
        fn, kwargs = resolve_call(picked, args, ctx)
        if fn is None:
            return picked.target
        return (yield _InvokeStep(fn, kwargs))

    # -- drivers -----------------------------------------------------------------------

    def _info(self, plan: _Plan, iteration: int) -> CallInfo:
        i = plan.info
        return CallInfo(i.model, i.provider, i.function, i.node_id, iteration, i.deps, i.metadata)

    def _before_request(self, plan: _Plan, request: Request, run: RunResult) -> Request:
        self._check_budget(request)
        plan.target.prepare(request)
        host = self.plugins
        for impl in reversed(host.hook.llmport_before_request.get_hookimpls()):
            new = _call_impl(impl, request=request, info=self._info(plan, run.iterations))
            if new is not None:
                if not isinstance(new, Request):
                    raise GuardrailTripped(
                        f"before_request hook {impl.plugin_name} returned {type(new).__name__}"
                    )
                request = new
        self._observe(plan, "model_start", {"model": plan.qualified, "request": request}, run)
        return request

    def _after_response(
        self, plan: _Plan, request: Request, response: Response, run: RunResult, attempts: Attempts
    ) -> Response:
        for impl in reversed(self.plugins.hook.llmport_after_response.get_hookimpls()):
            new = _call_impl(
                impl, request=request, response=response, info=self._info(plan, run.iterations)
            )
            if new is not None:
                response = new
        run.usage.add(response.usage if response.usage.requests else _one_request(response.usage))
        run.attempts += attempts.count
        run.failures.extend(attempts.failures)
        self._observe(
            plan,
            "model_end",
            {"model": plan.qualified, "response": response, "attempts": attempts.count},
            run,
        )
        return response

    def _observe(self, plan: _Plan, event: str, payload: dict[str, Any], run: RunResult) -> None:
        impls = self.plugins.hook.llmport_observe.get_hookimpls()
        if not impls:
            return
        info = self._info(plan, run.iterations)
        for impl in reversed(impls):  # one by one: a failing observer hides nothing from the others
            try:
                _call_impl(impl, event=event, payload=payload, info=info)
            except Exception:  # observers never break a run
                import logging

                logging.getLogger("llmport").exception(
                    "observer %s failed on %s", impl.plugin_name, event
                )

    def _check_budget(self, request: Request) -> None:
        if self.input_token_budget is None:
            return
        estimated = estimate_tokens(request)
        if estimated > self.input_token_budget:
            raise TokenLimitExceeded(estimated, self.input_token_budget)

    def _failure_hook(self, plan: _Plan, run: RunResult) -> Callable[[AttemptFailure], None]:
        def on_failure(failure: AttemptFailure) -> None:
            self._observe(
                plan,
                "model_error",
                {"model": plan.qualified, "error": failure.error, "attempt": failure.number},
                run,
            )

        return on_failure

    def _model_sync(self, plan: _Plan, run: RunResult, step: _ModelStep) -> Iterator[Any]:
        request = self._before_request(plan, step.request, run)
        attempts = Attempts()
        gate = _TextGate()
        number = 0
        while True:
            number += 1
            attempts.count = number
            gate.new_attempt()
            try:
                if plan.stream:
                    assembler = StreamAssembler()
                    for event in plan.target._stream(request):
                        assembler.feed(event)
                        if isinstance(event, TextDelta) and (piece := gate.admit(event.text)):
                            yield TextDelta(piece)
                    response = assembler.response()
                else:
                    response = plan.target._call(request)
                break
            except Exception as exc:
                delay = self._retry_delay(plan, run, attempts, exc, number)
                if delay > 0:
                    self.backoff.sleep(delay)
        response = self._after_response(plan, request, response, run, attempts)
        if plan.stream:
            yield UsageEvent(response.usage)
        yield _Done(response)

    async def _model_async(
        self, plan: _Plan, run: RunResult, step: _ModelStep
    ) -> AsyncIterator[Any]:
        request = self._before_request(plan, step.request, run)
        attempts = Attempts()
        gate = _TextGate()
        number = 0
        while True:
            number += 1
            attempts.count = number
            gate.new_attempt()
            try:
                if plan.stream:
                    assembler = StreamAssembler()
                    events: AsyncIterator[ProviderEvent] = plan.target._astream(request)
                    async for event in events:
                        assembler.feed(event)
                        if isinstance(event, TextDelta) and (piece := gate.admit(event.text)):
                            yield TextDelta(piece)
                    response = assembler.response()
                else:
                    response = await plan.target._async_call(request)
                break
            except Exception as exc:
                delay = self._retry_delay(plan, run, attempts, exc, number)
                if delay > 0:
                    await self.backoff.async_sleep(delay)
        response = self._after_response(plan, request, response, run, attempts)
        if plan.stream:
            yield UsageEvent(response.usage)
        yield _Done(response)

    def _retry_delay(
        self, plan: _Plan, run: RunResult, attempts: Attempts, exc: Exception, number: int
    ) -> float:
        try:
            return _after_failure(
                exc,
                number,
                max_attempts=self.max_retries,
                backoff=self.backoff,
                plain_callable=plan.plain_callable,
                function_name=plan.info.function,
                attempts=attempts,
                on_failure=self._failure_hook(plan, run),
            )
        except BaseException:
            run.attempts += attempts.count
            run.failures.extend(attempts.failures)
            raise

    def _tool_contexts(self, plan: _Plan, step: _ToolStep) -> list[RunContext[Any]]:
        return [
            RunContext(
                deps=plan.deps,
                model=plan.qualified,
                node_id=_node_id(plan),
                iteration=step.iteration,
                tool_call_id=c.id,
                tool_name=c.name,
                function=plan.info.function,
            )
            for c in step.calls
        ]

    def _run_verdict(self, plan: _Plan, call: ToolCall, run: RunResult) -> str:
        """The run-stage verdict; a tool marked "approve" when offered still needs approval."""
        hook = self.plugins.hook.llmport_tool_policy
        verdict = "allow"
        if hook.get_hookimpls():
            verdict = combine_verdicts(
                hook(check=ToolCheck(call.name, "run", self._info(plan, run.iterations), call))
            )
        if (
            verdict == "allow"
            and plan.toolbox is not None
            and call.name in plan.toolbox.needs_approval
        ):
            verdict = "approve"
        return verdict

    def _record_tools(
        self, plan: _Plan, run: RunResult, step: _ToolStep, outcomes: list[ToolOutcome]
    ) -> Iterator[StreamEvent]:
        for outcome in outcomes:
            node_id = None
            if plan.frame is not None and plan.record is not None:
                node_id = plan.frame.record_tool(
                    llm_node_id=plan.record.node_id,
                    call=outcome.call,
                    result=outcome.result,
                    duration=outcome.duration,
                    error=outcome.error,
                    iteration=step.iteration,
                )
            run.tool_calls.append(
                ToolCallRecord(
                    outcome.call,
                    outcome.result,
                    outcome.duration,
                    step.iteration,
                    outcome.error,
                    node_id,
                    outcome.status,
                )
            )
            self._observe(
                plan,
                "tool_end",
                {
                    "call": outcome.call,
                    "result": outcome.result,
                    "duration": outcome.duration,
                    "error": outcome.error,
                },
                run,
            )
            yield ToolResultEvent(outcome.result, outcome.duration)

    def _denied(
        self, plan: _Plan, run: RunResult, step: _ToolStep
    ) -> tuple[dict[str, ToolOutcome], list[tuple[ToolCall, ToolCheck]]]:
        """Gate a turn's calls: (refused outcomes by call id, calls awaiting approval).

        Run-stage policy first (deny wins), then the repeated-call rule; calls a
        policy wants approved are returned for the driver to put to the approver.
        """
        refused: dict[str, ToolOutcome] = {}
        pending: list[tuple[ToolCall, ToolCheck]] = []
        for call in step.calls:
            verdict = self._run_verdict(plan, call, run)
            if verdict == "deny":
                refused[call.id] = refusal(
                    call, f"tool {call.name!r} was denied by policy.", "denied"
                )
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
                info = self._info(plan, run.iterations)
                description = (
                    plan.toolbox.tools[call.name].description
                    if (plan.toolbox and call.name in plan.toolbox.tools)
                    else ""
                )
                pending.append((call, ToolCheck(call.name, "run", info, call, description)))
        return refused, pending

    @staticmethod
    def _approved(
        step: _ToolStep,
        refused: dict[str, ToolOutcome],
        pending: list[tuple[ToolCall, ToolCheck]],
        answers: list[bool],
    ) -> list[ToolCall]:
        """Record the approver's answers; return the calls to run, in call order."""
        for (call, _), granted in zip(pending, answers, strict=True):
            if not granted:
                refused[call.id] = refusal(
                    call, f"running {call.name!r} was not approved.", "not_approved"
                )
        return [c for c in step.calls if c.id not in refused]

    def _drive(self, plan: _Plan, run: RunResult) -> Iterator[StreamEvent | _Done]:
        gen = self._steps(plan, run)
        value: Any = None
        while True:
            try:
                step = gen.send(value)
            except StopIteration as stop:
                yield _Done(stop.value)
                return
            if isinstance(step, _ModelStep):
                for item in self._model_sync(plan, run, step):
                    if isinstance(item, _Done):
                        value = item.value
                    else:
                        yield item
            elif isinstance(step, _ToolStep):
                for call in step.calls:
                    yield ToolCallStarted(call)
                    self._observe(plan, "tool_start", {"call": call}, run)
                refused, pending = self._denied(plan, run, step)
                answers = [ask_approval(plan.tool_settings.approver, check) for _, check in pending]
                allowed = self._approved(step, refused, pending, answers)
                box = plan.toolbox or ToolBox([])
                # Nested execs inside these tools may only use tools offered here.
                scope_token = _tool_scope.set(frozenset(box.tools))
                try:
                    ran = box.run(
                        allowed,
                        self._tool_contexts(plan, _ToolStep(allowed, step.iteration)),
                        plan.parallel_tool_calls,
                        plan.tool_settings.tool_timeout,
                    )
                finally:
                    _tool_scope.reset(scope_token)
                outcomes = _in_order(step.calls, ran, refused)
                yield from self._record_tools(plan, run, step, outcomes)
                value = outcomes
            else:
                value = _invoke_sync(step.fn, step.kwargs)

    async def _adrive(self, plan: _Plan, run: RunResult) -> AsyncIterator[StreamEvent | _Done]:
        gen = self._steps(plan, run)
        value: Any = None
        while True:
            try:
                step = gen.send(value)
            except StopIteration as stop:
                yield _Done(stop.value)
                return
            if isinstance(step, _ModelStep):
                async for item in self._model_async(plan, run, step):
                    if isinstance(item, _Done):
                        value = item.value
                    else:
                        yield item
            elif isinstance(step, _ToolStep):
                for call in step.calls:
                    yield ToolCallStarted(call)
                    self._observe(plan, "tool_start", {"call": call}, run)
                refused, pending = self._denied(plan, run, step)
                answers = [
                    await aask_approval(plan.tool_settings.approver, check) for _, check in pending
                ]
                allowed = self._approved(step, refused, pending, answers)
                box = plan.toolbox or ToolBox([])
                # Nested execs inside these tools may only use tools offered here.
                scope_token = _tool_scope.set(frozenset(box.tools))
                try:
                    ran = await box.arun(
                        allowed,
                        self._tool_contexts(plan, _ToolStep(allowed, step.iteration)),
                        plan.parallel_tool_calls,
                        plan.tool_settings.tool_timeout,
                    )
                finally:
                    _tool_scope.reset(scope_token)
                outcomes = _in_order(step.calls, ran, refused)
                for event in self._record_tools(plan, run, step, outcomes):
                    yield event
                value = outcomes
            else:
                result = step.fn(**step.kwargs)
                value = await result if inspect.isawaitable(result) else result

    # -- run bookkeeping shared by every entry point -------------------------------

    def _start(
        self, params: dict[str, Any], options: dict[str, Any], stream: bool
    ) -> tuple[_Plan, RunResult]:
        frame = current_frame()
        try:
            plan = self._plan(params, options, stream=stream)
        except BaseException as exc:
            if frame is not None:  # a failure loses nothing: record it
                frame.begin_llm(
                    model=str(params["model"] or self.model),
                    messages=[],
                    system=None,
                    context_override=params["context"] is not None,
                ).fail(exc, attempts=0)
            raise
        run = RunResult(model=plan.qualified)
        if frame is not None:
            plan.record = frame.begin_llm(
                model=plan.qualified,
                messages=plan.messages,
                system=plan.system,
                context_override=params["context"] is not None,
            )
            run.node_id = plan.record.node_id
        return plan, run

    def _finish(self, plan: _Plan, run: RunResult, output: Any, started: float) -> RunResult:
        run.output = output
        run.latency = time.perf_counter() - started
        with self._lock:
            self._usage.add(run.usage)
        if plan.record is not None:
            plan.record.finish(
                reply=run.text,
                usage=run.usage,
                tool_calls=[r.call for r in run.tool_calls],
                stop_reason=run.stop_reason,
                output=output,
                attempts=run.attempts,
            )
        return run

    def _fail(self, plan: _Plan, run: RunResult, exc: BaseException, started: float) -> None:
        run.latency = time.perf_counter() - started
        with self._lock:
            self._usage.add(run.usage)
        if plan.record is not None:
            plan.record.fail(exc, attempts=run.attempts)

    def _run_events(
        self, params: dict[str, Any], options: dict[str, Any], stream: bool
    ) -> Iterator[StreamEvent]:
        started = time.perf_counter()
        plan, run = self._start(params, options, stream)
        try:
            for item in self._drive(plan, run):
                if isinstance(item, _Done):
                    self._finish(plan, run, item.value, started)
                    yield FinalEvent(run)
                else:
                    yield item
        except BaseException as exc:
            self._fail(plan, run, exc, started)
            raise

    async def _arun_events(
        self, params: dict[str, Any], options: dict[str, Any], stream: bool
    ) -> AsyncIterator[StreamEvent]:
        started = time.perf_counter()
        plan, run = self._start(params, options, stream)
        try:
            async for item in self._adrive(plan, run):
                if isinstance(item, _Done):
                    self._finish(plan, run, item.value, started)
                    yield FinalEvent(run)
                else:
                    yield item
        except BaseException as exc:
            self._fail(plan, run, exc, started)
            raise

    # -- public API -----------------------------------------------------------------------

    def run(
        self,
        content: Any = None,
        context: str | None = None,
        response_format: Any = None,
        model: str | None = None,
        tools: Iterable[Any] | None = None,
        toolset: Any = None,
        tools_source: str | None = None,
        tools_allow: Sequence[str] | None = None,
        tools_deny: Sequence[str] | None = None,
        tool_choice: ToolChoice = "auto",
        parallel_tool_calls: bool = True,
        max_iterations: int = 20,
        choices: Any = None,
        **options: Any,
    ) -> RunResult:
        """Like :meth:`exec`, but return the whole :class:`RunResult`."""
        params = _params(locals())
        final: RunResult | None = None
        for event in self._run_events(params, options, stream=False):
            if isinstance(event, FinalEvent):
                final = event.result
        assert final is not None
        return final

    async def arun(
        self,
        content: Any = None,
        context: str | None = None,
        response_format: Any = None,
        model: str | None = None,
        tools: Iterable[Any] | None = None,
        toolset: Any = None,
        tools_source: str | None = None,
        tools_allow: Sequence[str] | None = None,
        tools_deny: Sequence[str] | None = None,
        tool_choice: ToolChoice = "auto",
        parallel_tool_calls: bool = True,
        max_iterations: int = 20,
        choices: Any = None,
        **options: Any,
    ) -> RunResult:
        """Async :meth:`run`."""
        params = _params(locals())
        final: RunResult | None = None
        async for event in self._arun_events(params, options, stream=False):
            if isinstance(event, FinalEvent):
                final = event.result
        assert final is not None
        return final

    def exec(
        self,
        content: Any = None,
        context: str | None = None,
        response_format: Any = None,
        model: str | None = None,
        tools: Iterable[Any] | None = None,
        toolset: Any = None,
        tools_source: str | None = None,
        tools_allow: Sequence[str] | None = None,
        tools_deny: Sequence[str] | None = None,
        tool_choice: ToolChoice = "auto",
        parallel_tool_calls: bool = True,
        max_iterations: int = 20,
        choices: Any = None,
        **options: Any,
    ) -> Any:
        """Call the model (running tools, validating output) and return the reply.

        Returns the reply text; with ``response_format`` the validated JSON
        text; with ``choices`` the chosen value or the chosen callable's result.
        """
        params = _params(locals())
        return self.run(**params, **options).output

    async def async_exec(
        self,
        content: Any = None,
        context: str | None = None,
        response_format: Any = None,
        model: str | None = None,
        tools: Iterable[Any] | None = None,
        toolset: Any = None,
        tools_source: str | None = None,
        tools_allow: Sequence[str] | None = None,
        tools_deny: Sequence[str] | None = None,
        tool_choice: ToolChoice = "auto",
        parallel_tool_calls: bool = True,
        max_iterations: int = 20,
        choices: Any = None,
        **options: Any,
    ) -> Any:
        """Async :meth:`exec`; same parameters, same behaviour."""
        params = _params(locals())
        return (await self.arun(**params, **options)).output

    def stream(
        self,
        content: Any = None,
        context: str | None = None,
        response_format: Any = None,
        model: str | None = None,
        tools: Iterable[Any] | None = None,
        toolset: Any = None,
        tools_source: str | None = None,
        tools_allow: Sequence[str] | None = None,
        tools_deny: Sequence[str] | None = None,
        tool_choice: ToolChoice = "auto",
        parallel_tool_calls: bool = True,
        max_iterations: int = 20,
        choices: Any = None,
        **options: Any,
    ) -> Iterator[StreamEvent]:
        """Yield :data:`~llmport.types.StreamEvent` objects; the last is a FinalEvent."""
        params = _params(locals())
        return self._run_events(params, options, stream=True)

    def astream(
        self,
        content: Any = None,
        context: str | None = None,
        response_format: Any = None,
        model: str | None = None,
        tools: Iterable[Any] | None = None,
        toolset: Any = None,
        tools_source: str | None = None,
        tools_allow: Sequence[str] | None = None,
        tools_deny: Sequence[str] | None = None,
        tool_choice: ToolChoice = "auto",
        parallel_tool_calls: bool = True,
        max_iterations: int = 20,
        choices: Any = None,
        **options: Any,
    ) -> AsyncIterator[StreamEvent]:
        """Async :meth:`stream`: ``async for event in rt.astream(...)``."""
        params = _params(locals())
        return self._arun_events(params, options, stream=True)

    def close(self) -> None:
        """Close provider clients this runtime created."""
        with self._lock:
            for provider in self._instances.values():
                provider.close()
            self._instances.clear()


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


# --- helpers -----------------------------------------------------------------------------


def _check_max_retries(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            f"max_retries is the total number of attempts and must be >= 1, got {value!r}"
        )
    return value


def _call_impl(impl: Any, **kwargs: Any) -> Any:
    """Call one pluggy hookimpl as pluggy would: with only the arguments it declares."""
    return impl.function(*(kwargs[name] for name in impl.argnames))


def _params(frame_locals: dict[str, Any]) -> dict[str, Any]:
    return {k: frame_locals[k] for k in _CALL_PARAMS}


def _patterns(value: Any, name: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    items = list(value)
    if not all(isinstance(p, str) for p in items):
        raise TypeError(f"{name} must be a list of glob patterns")
    return items


def _in_order(
    calls: list[ToolCall], ran: list[ToolOutcome], denied: dict[str, ToolOutcome]
) -> list[ToolOutcome]:
    by_id = {o.call.id: o for o in ran}
    return [denied.get(c.id) or by_id[c.id] for c in calls]


def _node_id(plan: _Plan) -> str | None:
    return plan.record.node_id if plan.record is not None else None


def _one_request(usage: Usage) -> Usage:
    return Usage(
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.reasoning_tokens,
        1,
    )


def _strip(text: str) -> str:
    from .structured import _strip_fences

    return _strip_fences(text)


def _invoke_sync(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Call a chosen callable from sync code; an async one runs to completion."""
    result = fn(**kwargs)
    return run_coroutine_blocking(result) if inspect.isawaitable(result) else result


def estimate_tokens(request: Request) -> int:
    """A cheap estimate of input tokens (4 characters a token; media by size)."""
    chars = len(request.system or "")
    media = 0
    for message in request.messages:
        for block in message.blocks:
            if isinstance(block, TextBlock):
                chars += len(block.text)
            else:
                media += 1000 if block.type == "image" else max(1, block.size // 4)
        for result in message.tool_results:
            chars += len(result.content)
        for call in message.tool_calls:
            chars += len(call.raw_arguments)
    for spec in request.tools:
        chars += len(spec.description) + len(str(spec.parameters))
    return chars // 4 + media
