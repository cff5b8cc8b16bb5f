"""One Runtime, several event loops: clients never outlive their loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from llmport import Runtime
from llmport.messages.types import FinalEvent
from llmport.testing.loopback import LoopbackServer
from wire import TARGETS, Wire

each_target = pytest.mark.parametrize("wire", TARGETS, ids=str)
Make = Callable[..., Runtime]


@each_target
def test_same_runtime_in_two_consecutive_asyncio_runs(wire: Wire, runtime: Make) -> None:
    with LoopbackServer([wire.text_reply("one"), wire.text_reply("two")]) as server:
        rt = runtime(wire, server, max_retries=1)
        assert asyncio.run(rt.async_exec("hi")) == "one"
        assert asyncio.run(rt.async_exec("hi")) == "two"
        assert len(server.requests) == 2


@each_target
def test_sync_then_two_loops_then_sync(wire: Wire, runtime: Make) -> None:
    replies = [
        wire.text_reply("one"),
        wire.text_reply("two"),
        wire.stream_text_reply(["th", "ree"]),
        wire.text_reply("four"),
    ]

    async def streamed(rt: Runtime) -> str:
        events = [e async for e in rt.astream("hi")]
        assert isinstance(events[-1], FinalEvent)
        return str(events[-1].result.output)

    with LoopbackServer(replies) as server:
        rt = runtime(wire, server, max_retries=1)
        assert rt.exec("hi") == "one"
        assert asyncio.run(rt.async_exec("hi")) == "two"
        assert asyncio.run(streamed(rt)) == "three"
        assert rt.exec("hi") == "four"
        assert len(server.requests) == 4
