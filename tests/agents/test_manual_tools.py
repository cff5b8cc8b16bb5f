"""tool_execution="manual": the run stops at the first turn with tool calls."""

from __future__ import annotations

from typing import Any

import pytest
from agent_helpers import WAY_IDS, WAYS, events_via, run, runtime
from llmport import (
    FinalEvent,
    Message,
    OptionError,
    RunResult,
    Session,
    ToolCallStarted,
    ToolResultEvent,
    agentic_function,
    hookimpl,
    tool,
)
from llmport.testing import Script, call_tools
from llmport.tools.policy import ToolCheck

RAN: list[str] = []


@tool
def weather(city: str) -> str:
    """Weather for a city."""
    RAN.append(city)
    return f"sunny in {city}"


@tool
def wipe(disk: str) -> str:
    """Wipe a disk."""
    RAN.append("wipe " + disk)
    return "wiped"


class DenyWipe:
    @hookimpl
    def llmport_tool_policy(self, check: ToolCheck) -> str | None:
        return "deny" if check.tool_name == "wipe" and check.stage == "run" else None


@pytest.fixture(autouse=True)
def clear() -> None:
    RAN.clear()


def results_of(message: Message) -> list[tuple[str, str, bool]]:
    return [(r.name, r.content, r.is_error) for r in message.tool_results]


async def finish(way: tuple[str, bool], result: RunResult[Any], values: dict[str, Any]) -> Any:
    """continue_with / acontinue_with / continue_stream / acontinue_stream, as ``way`` says."""
    mode, stream = way
    if stream:
        if mode == "sync":
            events = list(result.continue_stream(values))
        else:
            events = [e async for e in result.acontinue_stream(values)]
        assert isinstance(events[-1], FinalEvent)
        return events[-1].result
    if mode == "sync":
        return result.continue_with(values)
    return await result.acontinue_with(values)


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_parallel_calls_are_returned_then_continued(way: tuple[str, bool]) -> None:
    script = Script(
        [call_tools(("weather", {"city": "Paris"}), ("weather", {"city": "Oslo"})), "Both sunny."]
    )
    rt = runtime(script)
    result = await run(way, rt, "Weather?", tools=[weather], tool_execution="manual")
    assert RAN == []  # nothing ran
    assert [c.arguments["city"] for c in result.pending_tool_calls] == ["Paris", "Oslo"]
    assert result.stop_reason == "tool_use" and result.messages[-1].tool_calls
    assert len(script.requests) == 1
    first, second = result.pending_tool_calls
    done = await finish(way, result, {second.id: "snow", first.id: {"t": 21}})
    assert done.text == "Both sunny." and done.pending_tool_calls == []
    sent = script.requests[1].messages
    assert sent[0].text == "Weather?"  # the same conversation
    assert results_of(sent[-1]) == [("weather", '{"t": 21}', False), ("weather", "snow", False)]
    assert [m.role for m in done.messages] == ["user", "assistant", "tool", "assistant"]


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_a_denied_call_is_never_pending(way: tuple[str, bool]) -> None:
    script = Script([call_tools(("wipe", {"disk": "c"}), ("weather", {"city": "Rome"})), "ok"])
    rt = runtime(script, DenyWipe())  # type: ignore[arg-type]
    result = await run(way, rt, "go", tools=[weather, wipe], tool_execution="manual")
    assert [c.name for c in result.pending_tool_calls] == ["weather"]
    assert [(r.call.name, r.status) for r in result.tool_calls] == [("wipe", "denied")]
    (call,) = result.pending_tool_calls
    done = await finish(way, result, {call.id: ValueError("station offline")})
    sent = script.requests[1].messages[-1]
    assert [(n, e) for n, _, e in results_of(sent)] == [("wipe", True), ("weather", True)]
    assert "denied by policy" in sent.tool_results[0].content
    assert sent.tool_results[1].content == (
        "Error: tool 'weather' raised ValueError: station offline"
    )
    assert done.text == "ok" and RAN == []


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_when_every_call_is_denied_the_loop_goes_on(way: tuple[str, bool]) -> None:
    script = Script([call_tools(("wipe", {"disk": "c"})), "I will not wipe it."])
    rt = runtime(script, DenyWipe())  # type: ignore[arg-type]
    result = await run(way, rt, "go", tools=[wipe], tool_execution="manual")
    assert result.pending_tool_calls == [] and result.text == "I will not wipe it."
    assert script.requests[1].messages[-1].tool_results[0].is_error


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_in_a_stream_the_final_result_has_the_pending_calls(mode: str) -> None:
    script = Script([call_tools(("wipe", {"disk": "c"}), ("weather", {"city": "Rome"}))])
    rt = runtime(script, DenyWipe())  # type: ignore[arg-type]
    events = await events_via(mode, rt, "go", tools=[weather, wipe], tool_execution="manual")
    started = [e.call.name for e in events if isinstance(e, ToolCallStarted)]
    assert started == ["wipe", "weather"]
    assert [e.result.name for e in events if isinstance(e, ToolResultEvent)] == ["wipe"]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert [c.name for c in final.result.pending_tool_calls] == ["weather"]


def test_continuing_through_history() -> None:
    script = Script([call_tools(("weather", {"city": "Lima"})), "Lima is sunny."])
    rt = runtime(script)
    result = rt.run("Weather?", tools=[weather], tool_execution="manual")
    (call,) = result.pending_tool_calls
    message = result.tool_message({call.id: "sunny"})
    stored = [m.to_dict() for m in [*result.messages, message]]  # e.g. kept in a database
    done = rt.run(history=stored, tools=[weather], tool_execution="manual")
    assert done.text == "Lima is sunny."
    assert results_of(script.requests[1].messages[-1]) == [("weather", "sunny", False)]


def test_continuing_stops_again_at_the_next_turn_with_calls() -> None:
    script = Script(
        [call_tools(("weather", {"city": "A"})), call_tools(("weather", {"city": "B"})), "done"]
    )
    rt = runtime(script)
    result = rt.run("go", tools=[weather], tool_execution="manual")
    result = result.continue_with({result.pending_tool_calls[0].id: "x"})
    assert [c.arguments for c in result.pending_tool_calls] == [{"city": "B"}]
    result = result.continue_with({result.pending_tool_calls[0].id: "y"})
    assert result.text == "done" and RAN == []
    assert len(script.requests[2].messages) == 5


def test_bad_input_is_a_typed_error_before_any_request() -> None:
    script = Script([call_tools(("weather", {"city": "A"}))])
    rt = runtime(script)
    with pytest.raises(OptionError, match="tool_execution"):
        rt.run("go", tools=[weather], tool_execution="later")
    assert script.requests == []
    result = rt.run("go", tools=[weather], tool_execution="manual")
    (call,) = result.pending_tool_calls
    with pytest.raises(OptionError, match="no result for pending call"):
        result.continue_with({})
    with pytest.raises(OptionError, match="no pending call has id"):
        result.continue_with({call.id: "x", "nope": "y"})
    assert len(script.requests) == 1


def test_only_manual_runs_continue() -> None:
    rt = runtime(Script(["hi"]))
    result = rt.run("go", tools=[weather], tool_execution="manual")
    assert result.pending_tool_calls == []
    with pytest.raises(OptionError, match="no pending tool calls"):
        result.continue_with({})
    with pytest.raises(OptionError, match="tool_execution='manual'"):
        runtime(Script(["hi"])).run("go").continue_with({})


def test_structured_output_waits_for_the_final_answer() -> None:
    script = Script([call_tools(("weather", {"city": "A"})), '{"sunny": true}'])
    rt = runtime(script)
    schema = {
        "type": "object",
        "properties": {"sunny": {"type": "boolean"}},
        "required": ["sunny"],
    }
    result = rt.run("go", tools=[weather], tool_execution="manual", response_format=schema)
    assert result.pending_tool_calls and result.value == ""
    done = result.continue_with({result.pending_tool_calls[0].id: "sun"})
    assert done.value == {"sunny": True}


def test_inside_an_agentic_function_the_context_is_not_repeated() -> None:
    script = Script(["earlier", call_tools(("weather", {"city": "A"})), "done"])
    rt = runtime(script)
    session = Session()

    @agentic_function(session=session)
    def task() -> str:
        rt.exec("first")
        result = rt.run("second", tools=[weather], tool_execution="manual")
        done = result.continue_with({result.pending_tool_calls[0].id: "sun"})
        return str(done.text)

    assert task() == "done"
    sent = script.requests[2].messages
    assert [m.role for m in sent] == [m.role for m in script.requests[1].messages] + [
        "assistant",
        "tool",
    ]
    assert sum("first" in m.text for m in sent) == 1
