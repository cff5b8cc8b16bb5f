"""The tool loop: one tool run per call, its result sent back in the vendor's shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from llmport import Runtime
from llmport.testing.loopback import LoopbackServer, Reply
from support.api_modes import MODES, run_via
from wire import TARGETS, Wire

each_target = pytest.mark.parametrize("wire", TARGETS, ids=str)
each_mode = pytest.mark.parametrize("mode", MODES)
each_stream = pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
Make = Callable[..., Runtime]

CALL_ID = "call_Contract0001"
RESULT = "Sunny, 22C in Paris"


def weather(calls: list[str]) -> Callable[[str], str]:
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        calls.append(city)
        return f"Sunny, 22C in {city}"

    return get_weather


def asks_for_the_tool(wire: Wire, stream: bool) -> Reply:
    if stream:
        return wire.stream_tool_call_reply("get_weather", ['{"ci', 'ty": "Pa', 'ris"}'], CALL_ID)
    return wire.tool_call_reply("get_weather", {"city": "Paris"}, CALL_ID)


def answers(wire: Wire, stream: bool) -> Reply:
    if stream:
        return wire.stream_text_reply(["It is sunny ", "in Paris."])
    return wire.text_reply("It is sunny in Paris.")


def assert_carries_the_result(wire: Wire, body: Any) -> None:
    results = wire.tool_results(body)
    assert len(results) == 1, f"expected one tool result in the request, got {results!r}"
    call_id, sent = results[0]
    assert RESULT in sent, f"the tool's output is not in the result sent back: {sent!r}"
    if wire.tool_call_ids:
        assert call_id == CALL_ID, f"the result answers {call_id!r}, not {CALL_ID!r}"


@each_stream
@each_mode
@each_target
async def test_tool_call_then_text(wire: Wire, mode: str, stream: bool, runtime: Make) -> None:
    calls: list[str] = []
    with LoopbackServer([asks_for_the_tool(wire, stream), answers(wire, stream)]) as server:
        result = await run_via(
            mode, runtime(wire, server), "Weather in Paris?", tools=[weather(calls)], stream=stream
        )
        assert len(server.requests) == 2
    assert result.output == "It is sunny in Paris."
    assert calls == ["Paris"], "the tool did not run exactly once"
    assert [r.call.name for r in result.tool_calls] == ["get_weather"]
    assert_carries_the_result(wire, server.requests[1].json())


@each_stream
@each_mode
@each_target
async def test_a_retried_request_never_reruns_the_tool(
    wire: Wire, mode: str, stream: bool, runtime: Make
) -> None:
    calls: list[str] = []
    replies = [
        asks_for_the_tool(wire, stream),
        wire.error_reply(503, "busy"),
        answers(wire, stream),
    ]
    with LoopbackServer(replies) as server:
        result = await run_via(
            mode, runtime(wire, server), "Weather in Paris?", tools=[weather(calls)], stream=stream
        )
        assert len(server.requests) == 3
    assert result.output == "It is sunny in Paris."
    assert calls == ["Paris"], "a retry of the second request ran the tool again"
    assert_carries_the_result(wire, server.requests[2].json())
