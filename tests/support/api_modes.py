"""Run the same call through the sync or the async API (tests parametrize over MODES)."""

from __future__ import annotations

from typing import Any

from llmport import RunResult, Runtime
from llmport.messages.types import FinalEvent, StreamEvent

MODES = ["sync", "async"]


async def events_via(mode: str, rt: Runtime, *args: Any, **kwargs: Any) -> list[StreamEvent]:
    """Every event of ``rt.stream`` (sync mode) or ``rt.astream`` (async mode)."""
    if mode == "sync":
        return list(rt.stream(*args, **kwargs))
    return [event async for event in rt.astream(*args, **kwargs)]


async def run_via(
    mode: str, rt: Runtime, *args: Any, stream: bool = False, **kwargs: Any
) -> RunResult:
    """``rt.run`` / ``rt.arun``, or with ``stream`` the result of the stream's FinalEvent."""
    if stream:
        final = (await events_via(mode, rt, *args, **kwargs))[-1]
        assert isinstance(final, FinalEvent)
        result: RunResult = final.result
        return result
    if mode == "sync":
        return rt.run(*args, **kwargs)
    return await rt.arun(*args, **kwargs)
