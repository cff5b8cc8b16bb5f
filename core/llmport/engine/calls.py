"""One call, from the caller's keywords to a step machine ready to drive.

:func:`begin` is what ``exec``, ``run`` and ``stream`` (sync and async)
share before the first effect: split the keywords, plan, and wire the
connected toolsets and manual tool runs back to the caller.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, Protocol

from ..controls.options import split_call
from ..messages.types import StreamEvent
from ..tools.tool import toolsets_closed_by
from .drive import adrive, drive
from .effects import Steps
from .plan import start
from .result import Caller, Continuation, RunResult
from .settings import RunSettings
from .steps import machine

__all__ = ["Entry", "Owner", "arun", "astream", "begin", "run", "stream"]


class Owner(RunSettings, Caller, Protocol):
    """The caller of a run: its settings, its ways to call again, and who closes resources."""

    def adopt(self, resource: Any) -> None:
        """Close ``resource`` (a connected toolset) with the caller."""


class Entry(Protocol):
    """This module as its caller uses it (the runtime keeps it, loaded on the first call)."""

    def run(
        self, owner: Owner, content: Any, kwargs: Mapping[str, Any], started: float | None = None
    ) -> RunResult[Any]: ...

    async def arun(
        self, owner: Owner, content: Any, kwargs: Mapping[str, Any], started: float | None = None
    ) -> RunResult[Any]: ...

    def stream(
        self, owner: Owner, content: Any, kwargs: Mapping[str, Any], started: float | None = None
    ) -> Iterator[StreamEvent]: ...

    def astream(
        self, owner: Owner, content: Any, kwargs: Mapping[str, Any], started: float | None = None
    ) -> AsyncIterator[StreamEvent]: ...


def begin(
    owner: Owner,
    content: Any,
    kwargs: Mapping[str, Any],
    *,
    stream: bool,
    started: float | None = None,
) -> tuple[RunResult[Any], Steps]:
    """Plan the call and return its result (filled as it runs) and its step machine.

    ``started``: when the caller's call began (``time.monotonic()``), where
    the deadline's clock starts.
    """
    params, options = split_call(kwargs)
    params["content"] = content
    if params["tools"] is None and params["toolset"] is None:
        snapshot = owner.snapshot()  # no toolset to adopt
        plan, run = start(snapshot, params, options, stream=stream, started=started)
        return run, machine(plan, run)
    with toolsets_closed_by(owner.adopt):  # connected toolsets close with the caller
        plan, run = start(owner.snapshot(), params, options, stream=stream, started=started)
    if plan.manual_tools:  # result.continue_with() calls again with the same parameters
        run.continuation = Continuation(owner, dict(kwargs))
    return run, machine(plan, run)


def run(
    owner: Owner, content: Any, kwargs: Mapping[str, Any], started: float | None = None
) -> RunResult[Any]:
    """The whole call, driven in this thread: ``Runtime.run``."""
    result, steps = begin(owner, content, kwargs, stream=False, started=started)
    for _ in drive(steps):
        pass
    return result


async def arun(
    owner: Owner, content: Any, kwargs: Mapping[str, Any], started: float | None = None
) -> RunResult[Any]:
    """The whole call, driven on the running loop: ``Runtime.arun``."""
    result, steps = begin(owner, content, kwargs, stream=False, started=started)
    async for _ in adrive(steps):
        pass
    return result


def stream(
    owner: Owner, content: Any, kwargs: Mapping[str, Any], started: float | None = None
) -> Iterator[StreamEvent]:
    """The call's events as they come (the last is a FinalEvent): ``Runtime.stream``."""
    yield from drive(begin(owner, content, kwargs, stream=True, started=started)[1])


async def astream(
    owner: Owner, content: Any, kwargs: Mapping[str, Any], started: float | None = None
) -> AsyncIterator[StreamEvent]:
    """Async :func:`stream`: ``Runtime.astream``."""
    async for event in adrive(begin(owner, content, kwargs, stream=True, started=started)[1]):
        yield event
