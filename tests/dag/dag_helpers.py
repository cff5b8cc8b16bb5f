"""Helpers for the DAG tests: programs described as data, run as sync or async code.

A *program* is a dict of agentic functions described as data, so one
description runs both as plain functions calling ``exec`` and as coroutines
awaiting ``async_exec``::

    {"main": fn([exec_("hi"), call("child", a=1)], doc="Main doc."),
     "child": fn([exec_("q")], expose="full", returns="done")}
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from llmport import agentic_function
from llmport.messages.types import Message, TextBlock


@dataclass
class Fn:
    steps: list[tuple[Any, ...]]
    expose: str = "io"
    render_range: dict[str, Any] | None = None
    doc: str | None = None
    returns: Any = None  # None: the last step's value


def fn(steps: list[tuple[Any, ...]], **options: Any) -> Fn:
    return Fn(steps, **options)


def exec_(content: Any, **kwargs: Any) -> tuple[Any, ...]:
    return ("exec", content, kwargs)


def call(name: str, **kwargs: Any) -> tuple[Any, ...]:
    return ("call", name, kwargs)


def raise_(error: BaseException) -> tuple[Any, ...]:
    return ("raise", error)


@dataclass
class Program:
    mode: str
    funcs: dict[str, Callable[..., Any]] = field(default_factory=dict)

    def run(self, name: str, **kwargs: Any) -> Any:
        """Call a function of the program from the top (asyncio.run for async programs)."""
        if self.mode == "sync":
            return self.funcs[name](**kwargs)
        return asyncio.run(self.funcs[name](**kwargs))


def build(mode: str, rt: Any, specs: dict[str, Fn]) -> Program:
    program = Program(mode)
    for name, spec in specs.items():
        program.funcs[name] = _make(mode, rt, name, spec, program.funcs)
    return program


def _make(mode: str, rt: Any, name: str, spec: Fn, funcs: dict[str, Callable[..., Any]]) -> Any:
    if mode == "sync":
        def body(**kwargs: Any) -> Any:
            out = None
            for step in spec.steps:
                if step[0] == "exec":
                    out = rt.exec(step[1], **step[2])
                elif step[0] == "call":
                    out = funcs[step[1]](**step[2])
                else:
                    raise step[1]
            return spec.returns if spec.returns is not None else out
    else:
        async def body(**kwargs: Any) -> Any:  # type: ignore[misc]
            out = None
            for step in spec.steps:
                if step[0] == "exec":
                    out = await rt.async_exec(step[1], **step[2])
                elif step[0] == "call":
                    out = await funcs[step[1]](**step[2])
                else:
                    raise step[1]
            return spec.returns if spec.returns is not None else out
    body.__name__ = body.__qualname__ = name
    body.__doc__ = spec.doc
    return agentic_function(expose=spec.expose, render_range=spec.render_range)(body)  # type: ignore[arg-type]


def texts(messages: list[Message]) -> list[tuple[str, list[str]]]:
    """Messages as (role, [text of each block]) for exact comparisons."""
    return [(m.role, [b.text if isinstance(b, TextBlock) else repr(b) for b in m.blocks])
            for m in messages]


def ids(session: Any, name: str) -> list[str]:
    """Ids of the nodes called ``name``, in order."""
    return [n.id for n in session.nodes() if n.name == name]
