"""RunContext: stream_writer, previous, merge and override."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from agent_helpers import WAY_IDS, WAYS, events_via, run, runtime
from llmport import (
    CustomEvent,
    FinalEvent,
    RunContext,
    Session,
    ToolCallStarted,
    ToolResultEvent,
    agentic_function,
    tool,
)
from llmport.testing import Script, call_tools

SEEN = threading.Event()
ASEEN: list[asyncio.Event] = []


@tool
def slow_sync(step: int, ctx: RunContext[None]) -> str:
    """A sync tool reporting progress (runs in a worker thread)."""
    ctx.stream_writer({"step": step, "of": 2})
    if ctx.stream_writer.__name__ == "write":  # streamed: wait until the caller saw it
        assert SEEN.wait(5), "the progress line did not reach the caller while the tool ran"
    ctx.stream_writer({"step": step + 1, "of": 2})
    return "synced"


@tool
async def slow_async(ctx: RunContext[None]) -> str:
    """An async tool reporting progress."""
    ctx.stream_writer("half way")
    if ASEEN:
        await asyncio.wait_for(ASEEN[0].wait(), 5)
    ctx.stream_writer("done")
    return "asynced"


def kinds(events: list[Any]) -> list[str]:
    out = []
    for e in events:
        if isinstance(e, CustomEvent):
            out.append(f"custom:{e.payload}")
        elif isinstance(e, (ToolCallStarted, ToolResultEvent, FinalEvent)):
            out.append(e.kind)
    return out


def test_a_sync_tool_in_a_thread_streams_live_in_order() -> None:
    SEEN.clear()
    script = Script([call_tools(("slow_sync", {"step": 1})), "ok"])
    rt = runtime(script)
    events = []
    for event in rt.stream("go", tools=[slow_sync]):
        events.append(event)
        if isinstance(event, CustomEvent):
            SEEN.set()  # the tool is still running, waiting for this
    assert kinds(events) == [
        "tool_call_started",
        "custom:{'step': 1, 'of': 2}",
        "custom:{'step': 2, 'of': 2}",
        "tool_result",
        "final",
    ]
    first = next(e for e in events if isinstance(e, CustomEvent))
    assert (first.tool_name, first.tool_call_id) == ("slow_sync", script.steps[0].tool_calls[0].id)


async def test_an_async_tool_and_a_sync_tool_stream_in_astream() -> None:
    SEEN.clear()
    ASEEN[:] = [asyncio.Event()]
    try:
        script = Script(
            [call_tools(("slow_async", {})), call_tools(("slow_sync", {"step": 1})), "ok"]
        )
        rt = runtime(script)
        events = []
        async for event in rt.astream("go", tools=[slow_async, slow_sync]):
            events.append(event)
            if isinstance(event, CustomEvent):
                ASEEN[0].set()
                SEEN.set()
    finally:
        ASEEN.clear()
    assert kinds(events) == [
        "tool_call_started",
        "custom:half way",
        "custom:done",
        "tool_result",
        "tool_call_started",
        "custom:{'step': 1, 'of': 2}",
        "custom:{'step': 2, 'of': 2}",
        "tool_result",
        "final",
    ]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_parallel_tools_each_stream_their_own_lines(mode: str) -> None:
    @tool
    def counter(name: str, ctx: RunContext[None]) -> str:
        """Count."""
        for i in range(3):
            ctx.stream_writer(f"{name}{i}")
        return name

    script = Script([call_tools(("counter", {"name": "a"}), ("counter", {"name": "b"})), "ok"])
    events = await events_via(mode, runtime(script), "go", tools=[counter])
    custom = [e for e in events if isinstance(e, CustomEvent)]
    for name in "ab":
        mine = [e.payload for e in custom if e.payload.startswith(name)]
        assert mine == [f"{name}0", f"{name}1", f"{name}2"]  # each call's order kept
    last_custom = max(i for i, e in enumerate(events) if isinstance(e, CustomEvent))
    first_result = min(i for i, e in enumerate(events) if isinstance(e, ToolResultEvent))
    assert last_custom < first_result


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_stream_writer_is_a_no_op_when_not_streaming(mode: str) -> None:
    @tool
    def talk(ctx: RunContext[None]) -> str:
        """Talk."""
        ctx.stream_writer("ignored")
        return "fine"

    script = Script([call_tools(("talk", {})), "ok"])
    result = await run((mode, False), runtime(script), "go", tools=[talk])
    assert result.text == "ok" and result.tool_calls[0].result.content == "fine"


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_previous_is_the_last_successful_return_of_the_function(
    way: tuple[str, bool],
) -> None:
    seen: list[Any] = []

    @tool
    def remember(ctx: RunContext[None]) -> str:
        """Look at the previous answer."""
        seen.append(ctx.previous)
        return "ok"

    script = Script([call_tools(("remember", {})), "r"] * 3)
    rt = runtime(script)
    session = Session()

    @agentic_function(session=session)
    async def task(n: int) -> dict[str, int]:
        await run(way, rt, f"go {n}", tools=[remember])
        if n == 2:
            raise ValueError("failed call")
        return {"n": n}

    @agentic_function(session=session)
    async def other() -> str:
        return "other"

    await task(1)
    await other()
    with pytest.raises(ValueError):
        await task(2)
    await task(3)
    assert seen == [None, {"n": 1}, {"n": 1}]  # the failed call is not a return


def test_previous_outside_an_agentic_function_is_none() -> None:
    assert RunContext(deps=None, model="m").previous is None
    assert RunContext(deps=None, model="m").override(previous=3).previous == 3


def test_override_and_merge_return_new_frozen_contexts() -> None:
    base = RunContext(deps={"user": 1}, model="a:m", iteration=2, tool_name="t")
    changed = base.override(deps={"user": 2}, tool_call_id="c1")
    assert changed.deps == {"user": 2} and changed.tool_call_id == "c1"
    assert changed.iteration == 2 and base.deps == {"user": 1}  # the original is unchanged
    with pytest.raises(AttributeError):
        changed.deps = None  # type: ignore[misc]
    with pytest.raises(TypeError, match="no field"):
        base.override(colour="red")

    def writer(payload: Any) -> None:
        pass

    other = RunContext(deps=None, model="", stream_writer=writer, function="f")
    merged = base.merge(other)
    assert merged.deps == {"user": 1} and merged.model == "a:m"  # other left them unset
    assert merged.stream_writer is writer and merged.function == "f"
    assert merged.iteration == 2 and merged is not base
    with pytest.raises(TypeError):
        base.merge("nope")  # type: ignore[arg-type]
