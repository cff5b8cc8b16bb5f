"""Streaming: deltas add up to the final text; tool calls arrive fully assembled."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from llmport import Runtime
from llmport.messages.types import FinalEvent, TextDelta, ToolCallStarted, ToolResultEvent
from llmport.testing.loopback import LoopbackServer
from support.api_modes import MODES, events_via, run_via
from wire import TARGETS, Wire, targets

each_target = pytest.mark.parametrize("wire", TARGETS, ids=str)
each_mode = pytest.mark.parametrize("mode", MODES)
Make = Callable[..., Runtime]


@each_mode
@each_target
async def test_text_reply_and_endpoint(wire: Wire, mode: str, runtime: Make) -> None:
    with LoopbackServer([wire.text_reply("The capital of France is Paris.")]) as server:
        result = await run_via(mode, runtime(wire, server), "Capital of France?")
        assert len(server.requests) == 1
    assert result.output == "The capital of France is Paris."
    request = server.requests[0]
    assert request.method == "POST" and wire.path(stream=False) in request.path, request.path
    assert "Capital of France?" in request.body.decode()


@each_mode
@pytest.mark.parametrize("wire", targets("test_text_deltas_add_up_to_the_final_text"), ids=str)
async def test_text_deltas_add_up_to_the_final_text(wire: Wire, mode: str, runtime: Make) -> None:
    chunks = ["The ", "capital ", "of France ", "is ", "Paris."]
    with LoopbackServer([wire.stream_text_reply(chunks)]) as server:
        events = await events_via(mode, runtime(wire, server), "Capital of France?")
        assert len(server.requests) == 1
    assert wire.path(stream=True) in server.requests[0].path, server.requests[0].path
    final = events[-1]
    assert isinstance(final, FinalEvent)
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 2, f"the answer was not streamed: {deltas!r}"
    assert "".join(deltas) == final.result.output == "".join(chunks)


@each_mode
@each_target
async def test_streamed_tool_call_arrives_assembled(wire: Wire, mode: str, runtime: Make) -> None:
    ran: list[str] = []

    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        ran.append(city)
        return f"Sunny in {city}"

    replies = [
        wire.stream_tool_call_reply("get_weather", ['{"ci', 'ty": "Pa', 'ris"}'], "call_S1"),
        wire.stream_text_reply(["Sunny ", "in Paris."]),
    ]
    with LoopbackServer(replies) as server:
        events = await events_via(
            mode, runtime(wire, server), "Weather in Paris?", tools=[get_weather]
        )
        assert len(server.requests) == 2
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert len(started) == 1, events
    assert started[0].call.name == "get_weather"
    assert started[0].call.arguments == {"city": "Paris"}
    assert ran == ["Paris"]
    assert [type(e) for e in events].index(ToolCallStarted) < [type(e) for e in events].index(
        ToolResultEvent
    )
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.result.output == "Sunny in Paris."
