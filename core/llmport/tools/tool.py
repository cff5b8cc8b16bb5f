"""Tools: functions the model may call, and how one turn of calls is run.

``@tool`` (or any plain function) becomes a :class:`Tool` whose JSON schema
comes from its type hints and docstring (:mod:`llmport.schema.build`). The runtime
builds a :class:`ToolBox` per ``exec`` from ``tools=``, ``toolset=`` and
``tools_source=``, filtered by ``tools_allow`` / ``tools_deny`` and the
policy hooks, and asks it to run the calls of each turn.

Running a call never raises into the loop: an unknown tool, arguments that
are not JSON or fail the schema, an exception in the tool and a timeout all
become an error :class:`~llmport.messages.types.ToolResult` (``is_error=True``) that
goes back to the model. Only ``BaseException`` s that are not ``Exception``
(``KeyboardInterrupt``, cancellation) propagate.

Concurrency: with ``parallel=True`` the calls of one turn run at the same
time, sync tools each in their own worker thread and async tools as tasks;
with ``parallel=False`` one after the other, in call order. Results always
come back in call order.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ..controls.options import check_vendor_fields
from ..errors import MessageError, ModelBehaviorError, OptionError, UnknownToolError
from ..messages.check import (
    check_tool_parameters,
    media_problem,
    nesting_problem,
    sniff_media_type,
)
from ..messages.types import (
    Block,
    CacheControl,
    FileRef,
    MediaBlock,
    TextBlock,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from ..observe.redaction import redact
from ..patterns import pattern
from ..provider.wire import loads as strict_json
from ..schema.build import check_schema, coerce, function_schema
from ..slotted import dataclass, field, lazy_field
from .context import RunContext

if TYPE_CHECKING:
    import asyncio
    from concurrent.futures import Future, ThreadPoolExecutor

T = TypeVar("T")

__all__ = [
    "CallHistory",
    "Handoff",
    "RunContext",
    "Tool",
    "ToolBox",
    "ToolOutcome",
    "ToolSettings",
    "Toolset",
    "as_tool",
    "build_toolbox",
    "handoff",
    "tool",
]

#: How a call ended, as recorded in :class:`ToolOutcome` / ``ToolCallRecord.status``.
ToolStatus = Literal[
    "ok",
    "error",
    "timeout",
    "invalid_arguments",
    "unknown_tool",
    "denied",
    "not_approved",
    "repeated",
]

_NAME = pattern(r"^[A-Za-z0-9_-]{1,64}$")


class _CheckedSchema(dict[str, Any]):
    """A parameters schema this module made and checked: :class:`Tool` does not check it again.

    Tool keeps a plain ``dict`` of it. (A marker on the value, not an ``InitVar``
    parameter: an ``InitVar`` needs ``dataclasses`` imported with this module.)
    """

    __slots__ = ()


@dataclass(slots=True)
class Tool:
    """A callable the model may call.

    Calling the Tool calls the function directly (``lookup("Paris")``), so
    decorating a function keeps it usable from Python.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    context_param: str | None = None
    timeout: float | None = None
    strict: bool = False
    annotations: dict[str, Any] = field(default_factory=dict)
    #: JSON fields merged into one vendor's entry for this tool:
    #: ``{"anthropic": {"defer_loading": True}}``.
    vendor: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: A prompt-cache breakpoint after this tool's definition (``True`` or ``{"ttl": "1h"}``).
    cache: bool | dict[str, str] = False
    #: Set for the tool of a :func:`handoff`: calling it hands the conversation over.
    handoff: Handoff | None = None
    #: Loaded on demand by the vendor's tool search; a plain tool elsewhere.
    defer_loading: bool = False
    _validator: list[Any] = field(default_factory=list, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Every constructor checks here, before a request: Tool(...), @tool, from_schema, handoff().
        schema_checked = type(self.parameters) is _CheckedSchema  # made and checked here
        if schema_checked:
            self.parameters = dict(self.parameters)
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise OptionError(f"tool name {self.name!r} must be 1-64 letters, digits, '_' or '-'")
        if not isinstance(self.description, str):
            raise OptionError(f"tool {self.name!r} description must be a string")
        if not callable(self.fn):
            raise OptionError(f"tool {self.name!r} needs a function, got {self.fn!r}")
        if self.timeout is not None and not (
            isinstance(self.timeout, (int, float))
            and not isinstance(self.timeout, bool)
            and self.timeout > 0
        ):
            raise OptionError(f"tool timeout must be > 0 seconds, got {self.timeout!r}")
        self.vendor = check_vendor_fields(self.vendor, f"tool {self.name!r} vendor")
        if not (
            isinstance(self.cache, bool)
            or (isinstance(self.cache, dict) and set(self.cache) <= {"ttl"})
        ):
            raise OptionError(f"tool cache must be True or {{'ttl': '1h'}}, got {self.cache!r}")
        if not isinstance(self.defer_loading, bool):
            raise OptionError(f"tool defer_loading must be a bool, got {self.defer_loading!r}")
        check_tool_parameters(self.parameters, f"tool {self.name!r} parameters")
        if not schema_checked:
            check_schema(self.parameters)

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        parameters: dict[str, Any],
        fn: Callable[..., Any],
        *,
        timeout: float | None = None,
        strict: bool = False,
        vendor: dict[str, dict[str, Any]] | None = None,
        cache: bool | dict[str, str] = False,
        defer_loading: bool = False,
    ) -> Tool:
        """A tool with a hand-written JSON schema; ``fn`` gets the arguments as keywords.

        Useful for tool sources that learn their tools at run time (remote
        tool servers, generated APIs). The schema is checked as for any Tool.
        """
        return cls(
            name,
            description,
            dict(parameters) if isinstance(parameters, dict) else parameters,
            fn,
            timeout=timeout,
            strict=strict,
            vendor=dict(vendor or {}),
            cache=cache,
            defer_loading=defer_loading,
        )

    @property
    def is_async(self) -> bool:
        # A callable object with an ``async def __call__`` counts as async too.
        import inspect  # here: its import costs a script's start-up ~10 ms

        fn = self.fn
        call = getattr(type(fn), "__call__", None) if not inspect.isfunction(fn) else None  # noqa: B004
        return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)

    def spec(self) -> ToolSpec:
        cache = None
        if self.cache:
            cache = CacheControl(self.cache.get("ttl") if isinstance(self.cache, dict) else None)
        return ToolSpec(
            self.name,
            self.description,
            self.parameters,
            self.strict,
            self.vendor,
            cache,
            self.defer_loading,
        )

    def validation_errors(self, arguments: Any) -> list[str]:
        """What is wrong with ``arguments`` (empty when they satisfy the schema)."""
        if not self._validator:
            import jsonschema

            self._validator.append(jsonschema.Draft202012Validator(self.parameters))
        errors = sorted(
            self._validator[0].iter_errors(arguments), key=lambda e: list(e.absolute_path)
        )
        return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors]

    def bind(self, arguments: Mapping[str, Any], ctx: RunContext[Any] | None) -> dict[str, Any]:
        """Keyword arguments for ``fn``: validated JSON in the declared types, plus the context."""

        kwargs = {
            k: coerce(v, self.annotations[k]) if k in self.annotations else v
            for k, v in arguments.items()
        }
        if self.context_param:
            kwargs[self.context_param] = ctx
        return kwargs

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    strict: bool = False,
    vendor: dict[str, dict[str, Any]] | None = None,
    cache: bool | dict[str, str] = False,
    defer_loading: bool = False,
) -> Any:
    """Decorator: turn a function into a :class:`Tool` (usable bare or with arguments).

    ``timeout`` (seconds) bounds one call; a call that takes longer is
    reported to the model as an error. ``strict`` asks vendors that support
    it (OpenAI) to enforce the schema while decoding. ``vendor`` holds JSON
    fields merged into one vendor's entry for the tool
    (``vendor={"anthropic": {"eager_input_streaming": True}}``).
    ``defer_loading`` leaves the tool out of the model's context until the
    vendor's tool search finds it (OpenAI Responses, Anthropic; elsewhere the
    tool is sent as usual).
    """

    # The namespace @tool was used in: resolves string hints naming local types.
    caller = sys._getframe(1).f_locals

    def wrap(f: Callable[..., Any]) -> Tool:

        found = function_schema(f, caller)
        return Tool(
            name=name or str(getattr(f, "__name__", type(f).__name__)),
            description=description if description is not None else found.description,
            parameters=_CheckedSchema(found.parameters),  # function_schema checked it
            fn=f,
            context_param=found.context_param,
            timeout=timeout,
            strict=strict,
            annotations=found.annotations,
            vendor=dict(vendor or {}),
            cache=cache,
            defer_loading=defer_loading,
        )

    return wrap(fn) if fn is not None else wrap


def as_tool(obj: Any) -> Tool:
    """A Tool from a Tool, a :func:`handoff` or a plain function."""
    if isinstance(obj, Tool):
        return obj
    if isinstance(obj, Handoff):
        return obj.tool
    if callable(obj):
        result: Tool = tool(obj)
        return result
    raise TypeError(f"not a tool: {obj!r}")


_HANDOFF_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}


class Handoff:
    """A tool that hands the conversation to another agentic function (:func:`handoff`)."""

    __slots__ = ("description", "input_filter", "name", "target", "tool")

    def __init__(
        self,
        target: Callable[..., Any],
        name: str,
        description: str,
        input_filter: Callable[[list[Any]], list[Any]] | None,
    ) -> None:
        self.target = target
        self.name = name
        self.description = description
        self.input_filter = input_filter
        self.tool = Tool(
            name,
            description,
            _CheckedSchema(_HANDOFF_PARAMETERS),  # a constant, valid schema
            self._not_run,
            handoff=self,
        )

    def _not_run(self) -> str:
        return f"Error: the handoff {self.name!r} is taken by the run, never run as a tool."

    @property
    def target_name(self) -> str:
        return str(getattr(self.target, "__name__", self.name))

    def __repr__(self) -> str:
        return f"handoff({self.target_name}, name={self.name!r})"


def handoff(
    target: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    input_filter: Callable[[list[Any]], list[Any]] | None = None,
) -> Handoff:
    """A tool for ``tools=[...]`` that hands the conversation to ``target``.

    ``target`` is an ``@agentic_function`` whose first parameter takes the
    conversation (``list[Message]``). The model sees a tool named ``name``
    (default ``transfer_to_<function name>``) described by ``description``
    (default: the function's docstring). When the model calls it, the
    exec's tool loop ends, ``input_filter(conversation)`` (default: the
    conversation unchanged; see :mod:`llmport.tools.filters`) is passed to
    ``target``, and ``target``'s return value is the exec's result
    (``RunResult.output`` / ``.value``). The target may use another model or
    vendor. Inside an agentic function the DAG records a ``handoff`` node
    from the exec's ``llm`` node to the target's ``function`` node.
    """
    spec = getattr(target, "__agentic__", None)
    if spec is None or not callable(target):
        raise TypeError(
            f"handoff() needs an @agentic_function, got {target!r} "
            "(decorate the target with @agentic_function)"
        )
    import inspect  # here: its import costs a script's start-up ~10 ms

    signature = getattr(spec, "signature", None)
    positional = (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.VAR_POSITIONAL,
    )
    if signature is not None and not any(
        p.kind in positional for p in signature.parameters.values()
    ):
        raise TypeError(
            f"handoff target {spec.name}() must take the conversation as its first parameter"
        )
    if input_filter is not None and not callable(input_filter):
        raise TypeError("input_filter must be a function fn(messages) -> messages")
    made_name = name or f"transfer_to_{spec.name}"
    doc = description if description is not None else (spec.doc or "").strip()
    text = doc or f"Hand the conversation over to {spec.name}."
    return Handoff(target, made_name, text, input_filter)


class Toolset:
    """A named group of tools, enabled with ``exec(toolset=...)``.

    Register one under a name from a plugin (the ``llmport_toolsets`` hook)
    so users can write ``toolset="units"``; or pass the object itself.
    """

    __slots__ = ("description", "name", "tools")

    def __init__(self, name: str, tools: Iterable[Any] = (), description: str = "") -> None:
        self.name = name
        self.tools: list[Tool] = [as_tool(t) for t in tools]
        self.description = description

    def add(self, fn: Any = None, **options: Any) -> Any:
        """Decorator adding a tool (``@ts.add`` or ``@ts.add(timeout=5)``); returns the Tool."""

        def wrap(f: Any) -> Tool:
            made = f if isinstance(f, Tool) and not options else tool(f, **options)
            self.tools.append(made)
            return made

        return wrap(fn) if fn is not None else wrap

    def __iter__(self) -> Any:
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    def __repr__(self) -> str:
        return f"Toolset({self.name!r}, tools={[t.name for t in self.tools]})"


@dataclass(slots=True, frozen=True)
class ToolOutcome:
    """What running (or refusing) one call produced."""

    call: ToolCall
    result: ToolResult
    duration: float
    error: str | None = None
    status: ToolStatus = "ok"


def stringify(value: Any) -> str:
    """A tool's return value as the text sent to the model (JSON for data)."""
    if isinstance(value, str):
        return value
    if hasattr(value, "model_dump_json"):
        return str(value.model_dump_json())
    problem = nesting_problem(value)
    if problem:  # json.dumps (and str) would raise RecursionError
        raise MessageError(f"a tool result value is {problem}")
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    import json  # here, not at import: json costs ~2 ms of a script's start-up

    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def refusal(call: ToolCall, message: str, status: ToolStatus, duration: float = 0.0) -> ToolOutcome:
    """An error outcome for a call that did not run (or failed); ``message`` is redacted.

    A tool's exception may quote a key: redacted here, it is never posted to
    the vendor nor kept in the run's messages, spans or session.
    """
    message = redact(message)
    return ToolOutcome(
        call, ToolResult(call.id, call.name, f"Error: {message}", True), duration, message, status
    )


@dataclass(slots=True, frozen=True)
class _Bound:
    """A call that passed its checks and is ready to run."""

    call: ToolCall
    tool: Tool
    kwargs: dict[str, Any]
    timeout: float | None


class _ToolTimedOut(Exception):
    pass


class ToolBox:
    """The tools of one ``exec``, and how to run a turn's calls."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools: dict[str, Tool] = {}
        for t in tools:
            if t.name in self.tools:
                # The vendor would get two definitions of one name (or, deduplicated here,
                # a list that is not the one given): refused either way.
                raise OptionError(f"two tools are named {t.name!r}: give each tool once")
            self.tools[t.name] = t
        #: Tools a policy marked "approve" when they were offered.
        self.needs_approval: set[str] = set()

    @property
    def handoffs(self) -> bool:
        """Whether any tool is a :func:`handoff`."""
        return any(t.handoff is not None for t in self.tools.values())

    def __bool__(self) -> bool:
        return bool(self.tools)

    @property
    def specs(self) -> list[ToolSpec]:
        return [t.spec() for t in self.tools.values()]

    # -- checks -----------------------------------------------------------------

    def bind(
        self,
        call: ToolCall,
        ctx: RunContext[Any],
        default_timeout: float | None,
        deadline: float | None = None,
    ) -> _Bound | ToolOutcome:
        """Check a call (known tool, JSON object, schema) and bind its arguments."""
        t = self.tools.get(call.name)
        if t is None:
            available = ", ".join(self.tools) or "none"
            return refusal(
                call, f"unknown tool {call.name!r}. Available tools: {available}.", "unknown_tool"
            )
        arguments: Any = call.arguments
        if call.raw_arguments.strip():
            import json  # for its error; see stringify

            try:
                arguments = strict_json(call.raw_arguments)
            except json.JSONDecodeError as exc:
                return refusal(
                    call,
                    f"the arguments of {call.name!r} are not valid JSON ({exc.msg} at "
                    f"position {exc.pos}). Call it again with a JSON object.",
                    "invalid_arguments",
                )
        if not isinstance(arguments, dict):
            return refusal(
                call, f"the arguments of {call.name!r} must be a JSON object.", "invalid_arguments"
            )
        errors = t.validation_errors(arguments)
        if errors:
            return refusal(
                call,
                f"invalid arguments for {call.name!r}:\n"
                + "\n".join(f"- {e}" for e in errors)
                + "\nCall it again with arguments matching its schema.",
                "invalid_arguments",
            )
        try:
            kwargs = t.bind(arguments, ctx)
        except Exception as exc:  # coercion (e.g. a pydantic validator) rejected them
            return refusal(
                call,
                f"invalid arguments for {call.name!r}: {type(exc).__name__}: {exc}",
                "invalid_arguments",
            )
        timeout = t.timeout if t.timeout is not None else default_timeout
        if deadline is not None:  # the run's deadline bounds every tool, whatever its own timeout
            left = max(0.001, deadline - time.monotonic())
            timeout = left if timeout is None else min(timeout, left)
        return _Bound(call, t, kwargs, timeout)

    # -- sync ---------------------------------------------------------------------

    def run(
        self,
        calls: Sequence[ToolCall],
        contexts: Sequence[RunContext[Any]],
        parallel: bool,
        default_timeout: float | None = None,
        deadline: float | None = None,
    ) -> list[ToolOutcome]:
        """Run one turn's calls (threads when parallel); results come back in call order.

        ``deadline`` (a ``time.monotonic()`` value: the run's deadline) bounds every call.
        """
        checked = [
            self.bind(c, x, default_timeout, deadline) for c, x in zip(calls, contexts, strict=True)
        ]
        runnable = [b for b in checked if isinstance(b, _Bound)]
        done: dict[int, ToolOutcome] = {}
        if parallel and len(runnable) > 1:
            done = _run_threads(runnable)
        else:
            for bound in runnable:
                done[id(bound)] = _run_inline(bound)
        return [done[id(b)] if isinstance(b, _Bound) else b for b in checked]

    # -- async ----------------------------------------------------------------------

    async def arun(
        self,
        calls: Sequence[ToolCall],
        contexts: Sequence[RunContext[Any]],
        parallel: bool,
        default_timeout: float | None = None,
        deadline: float | None = None,
    ) -> list[ToolOutcome]:
        """Run one turn's calls (tasks and threads when parallel); results in call order."""
        from concurrent.futures import ThreadPoolExecutor  # at first use (start-up)

        checked = [
            self.bind(c, x, default_timeout, deadline) for c, x in zip(calls, contexts, strict=True)
        ]
        runnable = [b for b in checked if isinstance(b, _Bound)]
        sync_count = sum(1 for b in runnable if not b.tool.is_async)
        # A private pool: the loop's default executor may have fewer workers than calls.
        pool = (
            ThreadPoolExecutor(
                max_workers=max(1, sync_count if parallel else 1), thread_name_prefix="llmport-tool"
            )
            if sync_count
            else None
        )
        try:
            if parallel and len(runnable) > 1:
                import asyncio  # here, not at import: asyncio is a third of `import llmport`

                ran = await asyncio.gather(*(_arun_one(b, pool) for b in runnable))
            else:
                ran = [await _arun_one(b, pool) for b in runnable]
        finally:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)  # never wait for a timed-out thread
        done = {id(b): o for b, o in zip(runnable, ran, strict=True)}
        return [done[id(b)] if isinstance(b, _Bound) else b for b in checked]


def result_for(call: ToolCall, value: Any) -> ToolResult:
    """What the model gets for ``call``: the tool's return value, or the exception it raised.

    Redacted before it joins the conversation: a result or an error quoting
    a key is never posted to the vendor nor kept in the run's messages.
    """
    if isinstance(value, BaseException):
        return refusal(call, raised(call, value), "error").result
    if isinstance(value, ToolResult):
        from dataclasses import replace  # here: dataclasses imports inspect

        lying = lying_media(call, value.blocks)
        return lying or replace(value, content=redact(value.content))
    media = media_return(value)
    if media is not None:
        text, returned = media
        lying = lying_media(call, returned)
        return lying or ToolResult(call.id, call.name, redact(text), blocks=returned)
    # Media a tool returns beside its text (e.g. an MCP image) travel as ToolResult.blocks.
    blocks = tuple(b for b in getattr(value, "blocks", ()) if isinstance(b, MediaBlock))
    lying = lying_media(call, blocks)
    if lying is not None:
        return lying
    try:
        text = stringify(value)
    except MessageError as exc:  # told to the model, like any tool failure
        return refusal(call, f"tool {call.name!r}: {exc}", "error").result
    return ToolResult(call.id, call.name, redact(text), blocks=blocks)


def lying_media(call: ToolCall, blocks: Iterable[Block]) -> ToolResult | None:
    """The error result for media whose bytes contradict their media type (None: none do).

    A tool may build a ``MediaBlock`` itself, past the checks content goes
    through: its bytes are checked here, so a PNG said to be a JPEG never
    reaches the vendor; the model is told, as for any tool failure.
    """
    for block in blocks:
        if isinstance(block, MediaBlock) and block.inline:
            head = block.head()
            problem = media_problem(block.media_type, head, sniff_media_type(head))
            if problem is not None:
                why = f"tool {call.name!r} returned {block.describe()}: {problem}"
                return refusal(call, why, "error").result
    return None


def media_return(value: Any) -> tuple[str, tuple[Block, ...]] | None:
    """``(text, media)`` when a tool returned media: a ``MediaBlock`` or ``FileRef``, or a
    list of them mixed with strings / ``TextBlock``s (the text joined by newlines, the media in
    order). ``None`` for any other value (it is sent as text or JSON).
    """
    if isinstance(value, (MediaBlock, FileRef)):
        return "", (value,)
    if not isinstance(value, (list, tuple)) or not value:
        return None
    if not all(isinstance(v, (str, TextBlock, MediaBlock, FileRef)) for v in value):
        return None
    media = tuple(v for v in value if isinstance(v, (MediaBlock, FileRef)))
    if not media:
        return None  # a list of strings is data: sent as JSON, as before
    text = "\n".join(
        v if isinstance(v, str) else v.text for v in value if isinstance(v, (str, TextBlock))
    )
    return text, media


def raised(call: ToolCall, exc: BaseException) -> str:
    """The error message of a tool call that raised ``exc`` (before redaction)."""
    return f"tool {call.name!r} raised {type(exc).__name__}: {exc}"


def _ok(bound: _Bound, value: Any, started: float) -> ToolOutcome:
    return ToolOutcome(bound.call, result_for(bound.call, value), time.perf_counter() - started)


def _failed(bound: _Bound, exc: BaseException, started: float) -> ToolOutcome:
    elapsed = time.perf_counter() - started
    if isinstance(exc, _ToolTimedOut):
        return refusal(
            bound.call,
            f"tool {bound.call.name!r} timed out after {bound.timeout:g} s.",
            "timeout",
            elapsed,
        )
    return refusal(bound.call, raised(bound.call, exc), "error", elapsed)


async def _bounded(coro: Coroutine[Any, Any, Any], timeout: float | None) -> Any:
    """Await ``coro`` within ``timeout``; only our own deadline becomes _ToolTimedOut."""
    if timeout is None:
        return await coro
    import asyncio  # at the first timed async tool, not at import (start-up)

    scope = asyncio.timeout(timeout)
    try:
        async with scope:
            return await coro
    except TimeoutError:
        if scope.expired():  # our deadline, not a TimeoutError the tool raised itself
            raise _ToolTimedOut() from None
        raise


def _call_sync(bound: _Bound) -> Any:
    """Call the tool in this thread (an async tool gets a private event loop)."""
    if not bound.tool.is_async:
        return bound.tool.fn(**bound.kwargs)
    import asyncio  # at the first async tool, not at import (start-up)

    return asyncio.run(_bounded(bound.tool.fn(**bound.kwargs), bound.timeout))


def _in_running_loop() -> bool:
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:  # never imported: no event loop can be running
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _run_inline(bound: _Bound) -> ToolOutcome:
    """One call, sequentially: in this thread unless a deadline or a running loop needs another."""
    started = time.perf_counter()
    needs_thread = (bound.timeout is not None and not bound.tool.is_async) or (
        bound.tool.is_async and _in_running_loop()
    )
    if not needs_thread:
        try:
            return _ok(bound, _call_sync(bound), started)
        except Exception as exc:
            return _failed(bound, exc, started)
    return _run_threads([bound])[id(bound)]


def _run_threads(bounds: Sequence[_Bound]) -> dict[int, ToolOutcome]:
    """Each call in its own worker thread (context copied); wait for each within its deadline."""
    from concurrent.futures import ThreadPoolExecutor  # at the first use, not at import (start-up)
    from concurrent.futures import TimeoutError as FutureTimeout

    pool = ThreadPoolExecutor(max_workers=len(bounds), thread_name_prefix="llmport-tool")
    started = time.perf_counter()
    try:
        futures: list[Future[ToolOutcome]] = []
        for bound in bounds:
            ctx = contextvars.copy_context()
            futures.append(pool.submit(ctx.run, _timed_sync, bound))
        out: dict[int, ToolOutcome] = {}
        for bound, future in zip(bounds, futures, strict=True):
            if (
                bound.timeout is None or bound.tool.is_async
            ):  # async tools time out on their own loop
                out[id(bound)] = future.result()
                continue
            remaining = max(0.0, started + bound.timeout - time.perf_counter())
            try:
                out[id(bound)] = future.result(timeout=remaining)
            except FutureTimeout:
                out[id(bound)] = _failed(bound, _ToolTimedOut(), started)
        return out
    finally:
        # Python cannot stop a thread: a timed-out sync tool finishes in the background
        # and its result is dropped. Do not wait for it.
        pool.shutdown(wait=False, cancel_futures=True)


def _timed_sync(bound: _Bound) -> ToolOutcome:
    started = time.perf_counter()
    try:
        return _ok(bound, _call_sync(bound), started)
    except Exception as exc:
        return _failed(bound, exc, started)


async def _arun_one(bound: _Bound, pool: ThreadPoolExecutor | None) -> ToolOutcome:
    started = time.perf_counter()
    try:
        if bound.tool.is_async:
            value = await _bounded(bound.tool.fn(**bound.kwargs), bound.timeout)
        else:
            assert pool is not None
            job = functools.partial(contextvars.copy_context().run, bound.tool.fn, **bound.kwargs)
            import asyncio  # loaded already: this coroutine runs on its loop

            future = asyncio.get_running_loop().run_in_executor(pool, job)
            value = await _bounded(_await(future), bound.timeout)
    except Exception as exc:
        return _failed(bound, exc, started)
    return _ok(bound, value, started)


async def _await(future: asyncio.Future[Any]) -> Any:
    return await future


# --- per-exec settings and state ---------------------------------------------------


class CallHistory:
    """Counts identical calls (same tool, same arguments) within one exec.

    The rule (see docs/tools.md): an identical call may run up to ``limit``
    times. The next one is not run; the model gets an error result saying
    so. One more identical call after that raises
    :class:`~llmport.errors.ModelBehaviorError`. ``limit=None`` turns the
    check off.
    """

    # Slotted, the counts made by the first check and no lock of its own: one is kept
    # per exec in flight, and most execs never call a tool.
    __slots__ = ("_counts", "limit")

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._counts: dict[tuple[str, str], int] | None = None

    @staticmethod
    def key(call: ToolCall) -> tuple[str, str]:
        import json  # see stringify

        try:
            args = strict_json(call.raw_arguments) if call.raw_arguments.strip() else call.arguments
        except json.JSONDecodeError:
            args = call.raw_arguments
        return call.name, json.dumps(args, sort_keys=True, default=str)

    def check(self, call: ToolCall) -> ToolOutcome | None:
        """None if the call may run; an error outcome if it repeats too often."""
        if self.limit is None:
            return None
        key = self.key(call)
        with _COUNTING:
            if self._counts is None:
                self._counts = {}
            count = self._counts.get(key, 0) + 1
            self._counts[key] = count
        if count <= self.limit:
            return None
        if count == self.limit + 1:
            return refusal(
                call,
                f"you already called {call.name!r} with exactly these arguments "
                f"{self.limit} time(s); the result will not change. Use the earlier "
                "result or change the arguments.",
                "repeated",
            )
        raise ModelBehaviorError(
            f"the model kept calling {call.name!r} with the same arguments "
            f"({count} times, limit {self.limit}) after being told the result will not change"
        )


#: Held while a :class:`CallHistory` counts a call: one lock for every history, not one
#: per exec (a count is a few dictionary operations; checks are rare and short).
_COUNTING = threading.Lock()


@dataclass(slots=True)
class ToolSettings:
    """Tool-loop options of one exec, taken out of ``**options`` (never sent to providers).

    * ``approver``: ``fn(check: ToolCheck) -> bool`` (sync or async) asked
      when a policy answers ``"approve"`` for a tool.
    * ``tool_timeout``: default seconds per tool call (``@tool(timeout=)`` wins).
    * ``max_tool_errors``: consecutive turns in which every call failed
      before :class:`~llmport.errors.ModelBehaviorError` (default 3).
    * ``max_repeated_calls``: runs allowed for identical calls (default 3;
      ``None`` turns the check off), see :class:`CallHistory`.
    """

    approver: Callable[..., Any] | None = None
    tool_timeout: float | None = None
    max_tool_errors: int = 3
    max_repeated_calls: int | None = 3
    #: Made on first read (lazy_field): a run that calls no tool never makes one.
    history: CallHistory = lazy_field(lambda: CallHistory(3))

    KEYS = ("approver", "tool_timeout", "max_tool_errors", "max_repeated_calls")

    @classmethod
    def pop_from(cls, options: dict[str, Any]) -> ToolSettings:
        """Remove the tool-loop keys from ``options`` and check them."""
        found = {k: options.pop(k) for k in cls.KEYS if k in options}
        if not found:  # the plain call: defaults are valid, and the history is made once
            return cls()
        settings = cls(**found)
        if settings.approver is not None and not callable(settings.approver):
            raise TypeError("approver must be a function fn(check) -> bool")
        if settings.tool_timeout is not None and not settings.tool_timeout > 0:
            raise ValueError("tool_timeout must be > 0 seconds")
        if not isinstance(settings.max_tool_errors, int) or settings.max_tool_errors < 1:
            raise ValueError("max_tool_errors must be an integer >= 1")
        limit = settings.max_repeated_calls
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise ValueError("max_repeated_calls must be an integer >= 1 or None")
        settings.history = CallHistory(limit)
        return settings


# --- collecting the tools of one exec ----------------------------------------------

#: Set by the Runtime while it plans a run: called with every Toolset of the run
#: that holds a connection (one with a ``close()`` method, such as an MCP server),
#: so the Runtime closes it in ``close()`` / ``aclose()``.
toolset_owner: contextvars.ContextVar[Callable[[Any], None] | None] = contextvars.ContextVar(
    "llmport_toolset_owner", default=None
)


@contextlib.contextmanager
def toolsets_closed_by(adopt: Callable[[Any], None]) -> Iterator[None]:
    """While planning a run (or a count): hand its connected toolsets to ``adopt``."""
    token = toolset_owner.set(adopt)
    try:
        yield
    finally:
        toolset_owner.reset(token)


def _adopted(ts: Toolset) -> Toolset:
    owner = toolset_owner.get()
    if owner is not None and callable(getattr(ts, "close", None)):
        owner(ts)
    return ts


def _toolset_of(entry: Any, label: str) -> list[Tool]:
    """Tools from a registered toolset entry: a Toolset, a factory, or a list of tools."""
    if not isinstance(entry, Toolset) and callable(entry) and not isinstance(entry, Tool):
        entry = entry()
    if isinstance(entry, Toolset):
        return list(_adopted(entry).tools)
    if isinstance(entry, (list, tuple)):
        return [as_tool(t) for t in entry]
    raise UnknownToolError(f"toolset {label} is not a Toolset (got {type(entry).__name__})")


def build_toolbox(
    tools: Iterable[Any] | None,
    toolset: Any,
    tools_source: Any,
    host: Any,
    info: Any,
) -> ToolBox | None:
    """Collect the tools of one exec (filters and policies are applied by the caller).

    ``toolset`` is a :class:`Toolset`, a registered name, or a list of
    those; ``tools_source`` a registered source name or a list of names.
    Unknown names raise :class:`~llmport.errors.UnknownToolError`.
    """
    if tools is not None and not isinstance(tools, (list, tuple)):
        # One tool given bare (tools=lookup) or a dict/str of them: a list is the one form,
        # so a typo never becomes a different tool set on the wire.
        hint = (
            " (tools=[...])"
            if isinstance(tools, (Tool, Toolset, Handoff)) or callable(tools)
            else ""
        )
        raise OptionError(f"tools must be a list of tools{hint}, got {type(tools).__name__}")
    collected: list[Tool] = []
    for i, t in enumerate(tools or []):
        if not isinstance(t, (Tool, Toolset, Handoff)) and not callable(t):
            raise OptionError(
                f"tools[{i}] is not a tool (a Tool, a function or a Toolset): {t!r:.60}"
            )
        collected.extend(_adopted(t).tools if isinstance(t, Toolset) else [as_tool(t)])
    for ts in [toolset] if isinstance(toolset, (str, Toolset)) else list(toolset or []):
        if isinstance(ts, str):
            collected.extend(_toolset_of(host.toolset(ts), repr(ts)))
        elif isinstance(ts, Toolset):
            collected.extend(_adopted(ts).tools)
        else:
            raise UnknownToolError(f"toolset must be a Toolset or a registered name, got {ts!r}")
    sources = [tools_source] if isinstance(tools_source, str) else list(tools_source or [])
    for name in sources:
        if not isinstance(name, str):
            raise TypeError(f"tools_source must be a registered source name, got {name!r}")
        supplied = host.tool_source(name)(info)
        import inspect  # here: its import costs a script's start-up ~10 ms

        if inspect.isawaitable(supplied):
            raise TypeError(
                f"tool source {name!r} returned an awaitable; sources are called synchronously"
            )
        collected.extend(
            supplied.tools if isinstance(supplied, Toolset) else [as_tool(t) for t in supplied]
        )
    return ToolBox(collected) if collected else None


def run_coroutine_blocking(awaitable: Any) -> Any:
    """Run an awaitable to completion from sync code (in a worker thread if a loop runs here)."""

    async def wait() -> Any:
        return await awaitable

    import asyncio  # at the first use, not at import (start-up)
    from concurrent.futures import ThreadPoolExecutor

    if not _in_running_loop():
        return asyncio.run(wait())
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(contextvars.copy_context().run, asyncio.run, wait()).result()
