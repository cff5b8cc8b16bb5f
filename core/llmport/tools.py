"""Tools: functions the model may call.

``@tool`` (or any plain function) becomes a :class:`Tool` whose JSON schema
comes from its type hints and docstring. The runtime builds a
:class:`ToolBox` per ``exec`` from ``tools=``, ``toolset=`` and
``tools_source=``, filtered by ``tools_allow`` / ``tools_deny`` and the policy
hooks, and asks it to run the calls of each turn.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import json
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .errors import UnknownToolError
from .types import ToolCall, ToolResult, ToolSpec

T = TypeVar("T")


@dataclass(slots=True, frozen=True)
class RunContext(Generic[T]):
    """Immutable context injected into tools that declare ``ctx: RunContext[...]``.

    ``deps`` is whatever was passed as ``exec(..., deps=...)``.
    """

    deps: T
    model: str
    node_id: str | None = None
    iteration: int = 0
    tool_call_id: str = ""
    tool_name: str = ""
    function: str | None = None


@dataclass(slots=True)
class Tool:
    """A callable the model may call."""

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    context_param: str | None = None
    timeout: float | None = None
    strict: bool = False

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.fn)

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters, self.strict)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
) -> Any:
    """Decorator: turn a function into a :class:`Tool` (usable bare or with arguments)."""

    def wrap(f: Callable[..., Any]) -> Tool:
        from .schema import function_schema

        params, doc, ctx_param = function_schema(f)
        return Tool(
            name=name or f.__name__,
            description=description if description is not None else doc,
            parameters=params,
            fn=f,
            context_param=ctx_param,
            timeout=timeout,
        )

    return wrap(fn) if fn is not None else wrap


def as_tool(obj: Any) -> Tool:
    """A Tool from a Tool or a plain function."""
    if isinstance(obj, Tool):
        return obj
    if callable(obj):
        result: Tool = tool(obj)
        return result
    raise TypeError(f"not a tool: {obj!r}")


@dataclass(slots=True)
class Toolset:
    """A named group of tools that can be registered and enabled by name."""

    name: str
    tools: list[Tool] = field(default_factory=list)
    description: str = ""

    def __init__(self, name: str, tools: Iterable[Any] = (), description: str = "") -> None:
        self.name = name
        self.tools = [as_tool(t) for t in tools]
        self.description = description

    def add(self, fn: Any) -> Any:
        """Decorator adding a tool to this set; returns the function unchanged."""
        self.tools.append(as_tool(fn))
        return fn


@dataclass(slots=True, frozen=True)
class ToolOutcome:
    """What running one call produced."""

    call: ToolCall
    result: ToolResult
    duration: float
    error: str | None = None


def _stringify(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


class ToolBox:
    """The tools of one ``exec``, and how to run a turn's calls."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools: dict[str, Tool] = {}
        for t in tools:
            if t.name in self.tools and self.tools[t.name].fn is not t.fn:
                raise ValueError(f"two different tools are named {t.name!r}")
            self.tools[t.name] = t

    def __bool__(self) -> bool:
        return bool(self.tools)

    @property
    def specs(self) -> list[ToolSpec]:
        return [t.spec() for t in self.tools.values()]

    def _prepare(self, call: ToolCall, ctx: RunContext[Any]) -> tuple[Tool | None, dict[str, Any], str | None]:
        t = self.tools.get(call.name)
        if t is None:
            return None, {}, f"unknown tool {call.name!r}; available: {', '.join(self.tools)}"
        args = dict(call.arguments)
        if t.context_param:
            args[t.context_param] = ctx
        return t, args, None

    def _error(self, call: ToolCall, message: str, started: float) -> ToolOutcome:
        return ToolOutcome(call, ToolResult(call.id, call.name, message, True),
                           time.perf_counter() - started, message)

    def run_one(self, call: ToolCall, ctx: RunContext[Any]) -> ToolOutcome:
        started = time.perf_counter()
        t, args, problem = self._prepare(call, ctx)
        if t is None or problem:
            return self._error(call, problem or "", started)
        try:
            if t.is_async:
                value = asyncio.run(t.fn(**args))
            else:
                value = t.fn(**args)
        except Exception as exc:
            return self._error(call, f"{type(exc).__name__}: {exc}", started)
        return ToolOutcome(call, ToolResult(call.id, call.name, _stringify(value)),
                           time.perf_counter() - started)

    async def arun_one(self, call: ToolCall, ctx: RunContext[Any]) -> ToolOutcome:
        started = time.perf_counter()
        t, args, problem = self._prepare(call, ctx)
        if t is None or problem:
            return self._error(call, problem or "", started)
        try:
            if t.is_async:
                value = await t.fn(**args)
            else:
                run = functools.partial(contextvars.copy_context().run, t.fn, **args)
                value = await asyncio.get_running_loop().run_in_executor(None, run)
        except Exception as exc:
            return self._error(call, f"{type(exc).__name__}: {exc}", started)
        return ToolOutcome(call, ToolResult(call.id, call.name, _stringify(value)),
                           time.perf_counter() - started)

    def run(self, calls: Sequence[ToolCall], contexts: Sequence[RunContext[Any]],
            parallel: bool) -> list[ToolOutcome]:
        """Run one turn's calls; results come back in call order."""
        if not parallel or len(calls) < 2:
            return [self.run_one(c, x) for c, x in zip(calls, contexts, strict=True)]
        with ThreadPoolExecutor(max_workers=min(32, len(calls))) as pool:
            futures = [pool.submit(contextvars.copy_context().run, self.run_one, c, x)
                       for c, x in zip(calls, contexts, strict=True)]
            return [f.result() for f in futures]

    async def arun(self, calls: Sequence[ToolCall], contexts: Sequence[RunContext[Any]],
                   parallel: bool) -> list[ToolOutcome]:
        if not parallel or len(calls) < 2:
            return [await self.arun_one(c, x) for c, x in zip(calls, contexts, strict=True)]
        return list(await asyncio.gather(*(self.arun_one(c, x) for c, x in zip(calls, contexts, strict=True))))


def build_toolbox(
    tools: Iterable[Any] | None,
    toolset: Any,
    tools_source: str | None,
    host: Any,
    info: Any,
) -> ToolBox | None:
    """Collect the tools of one exec (filters and policies are applied by the caller)."""
    collected: list[Tool] = [as_tool(t) for t in (tools or [])]
    for ts in ([toolset] if isinstance(toolset, (str, Toolset)) else list(toolset or [])):
        if isinstance(ts, str):
            found = host.toolset(ts)
            ts = found() if callable(found) and not isinstance(found, Toolset) else found
        if not isinstance(ts, Toolset):
            raise UnknownToolError(f"toolset must be a Toolset or a registered name, got {ts!r}")
        collected.extend(ts.tools)
    if tools_source is not None:
        source = host.tool_source(tools_source)
        collected.extend(as_tool(t) for t in source(info))
    return ToolBox(collected) if collected else None
