"""The tool loop, in exec and async_exec: errors, timeouts, repeats, concurrency, retries."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from llmport import RunContext, ToolCall, ToolCallStarted, ToolResultEvent, tool
from llmport.errors import MaxIterationsExceeded, ModelBehaviorError, RateLimitError
from llmport.testing import Script, call_tools, fail, reply

Run = Callable[..., Any]


def results_sent(script: Script, request_index: int) -> list[Any]:
    """The tool results carried by the request at ``request_index``."""
    return list(script.requests[request_index].messages[-1].tool_results)


class Counter:
    """Counts calls and the most calls running at the same time."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.running = 0
        self.peak = 0
        self._lock = threading.Lock()

    def enter(self, name: str) -> None:
        with self._lock:
            self.calls.append(name)
            self.running += 1
            self.peak = max(self.peak, self.running)

    def leave(self) -> None:
        with self._lock:
            self.running -= 1


def test_run_context_is_injected_and_immutable(run: Run) -> None:
    seen: list[RunContext[Any]] = []

    @tool
    def lookup(city: str, ctx: RunContext[dict[str, int]]) -> str:
        seen.append(ctx)
        with pytest.raises(dataclasses.FrozenInstanceError):
            ctx.iteration = 99  # type: ignore[misc]
        return city.upper()

    script = Script(
        [
            call_tools(("lookup", {"city": "paris"})),
            call_tools(("lookup", {"city": "rome"})),
            reply("done"),
        ]
    )
    result = run(script.runtime(), "go", tools=[lookup], deps={"user": 7})
    assert result.output == "done"
    assert [c.deps for c in seen] == [{"user": 7}, {"user": 7}]
    assert [c.iteration for c in seen] == [1, 2]
    assert [c.tool_call_id for c in seen] == [call.call.id for call in result.tool_calls]
    assert seen[0].model == "scripted:test" and seen[0].tool_name == "lookup"
    assert seen[0].node_id is None  # outside @agentic_function
    assert "ctx" not in script.requests[0].tools[0].parameters["properties"]


def test_invalid_arguments_go_back_as_error_and_tool_does_not_run(run: Run) -> None:
    ran: list[int] = []

    @tool
    def double(n: int) -> int:
        ran.append(n)
        return n * 2

    script = Script(
        [call_tools(("double", {"n": "three"})), call_tools(("double", {"n": 3})), reply("6")]
    )
    result = run(script.runtime(), "go", tools=[double])
    assert ran == [3]
    first = results_sent(script, 1)[0]
    assert (
        first.is_error
        and "invalid arguments" in first.content
        and "'three' is not of type" in first.content
    )
    assert results_sent(script, 2)[0].content == "6" and not results_sent(script, 2)[0].is_error
    assert [r.status for r in result.tool_calls] == ["invalid_arguments", "ok"]


def test_unknown_tool_and_bad_json_and_exception_are_error_results(run: Run) -> None:
    @tool
    def boom() -> str:
        raise ValueError("kaput")

    bad_json = ToolCall("c9", "boom", {}, raw_arguments='{"oops": ')
    script = Script([call_tools(("nope", {}), bad_json, ("boom", {})), reply("ok")])
    result = run(script.runtime(), "go", tools=[boom])
    sent = results_sent(script, 1)
    assert [r.is_error for r in sent] == [True, True, True]
    assert "unknown tool 'nope'" in sent[0].content and "boom" in sent[0].content
    assert "not valid JSON" in sent[1].content
    assert "ValueError: kaput" in sent[2].content
    assert [r.status for r in result.tool_calls] == ["unknown_tool", "invalid_arguments", "error"]
    assert result.output == "ok"


def test_consecutive_failed_turns_are_bounded(run: Run) -> None:
    @tool
    def flaky() -> str:
        raise RuntimeError("no")

    script = Script([call_tools(("flaky", {})) for _ in range(3)] + [reply("never")])
    with pytest.raises(ModelBehaviorError, match="3 turns in a row") as info:
        run(script.runtime(), "go", tools=[flaky], max_repeated_calls=None)
    assert len(script.requests) == 3
    assert len(info.value.run.tool_calls) == 3  # type: ignore[attr-defined]


def test_a_successful_turn_resets_the_error_count(run: Run) -> None:
    @tool
    def check(ok: bool) -> str:
        if not ok:
            raise RuntimeError("no")
        return "yes"

    steps = [
        call_tools(("check", {"ok": False})),
        call_tools(("check", {"ok": False})),
        call_tools(("check", {"ok": True})),
        call_tools(("check", {"ok": False})),
        call_tools(("check", {"ok": False})),
        reply("done"),
    ]
    result = run(
        Script(steps).runtime(), "go", tools=[check], max_tool_errors=3, max_repeated_calls=None
    )
    assert result.output == "done"


def test_sync_tool_timeout_is_an_error_result(run: Run) -> None:
    @tool(timeout=0.05)
    def slow() -> str:
        time.sleep(1.5)
        return "late"

    script = Script([call_tools(("slow", {})), reply("ok")])
    started = time.perf_counter()
    result = run(script.runtime(), "go", tools=[slow])
    assert time.perf_counter() - started < 1.0  # the run did not wait out the 1.5 s tool
    assert result.tool_calls[0].status == "timeout"
    assert "timed out after 0.05 s" in results_sent(script, 1)[0].content


def test_async_tool_timeout_and_own_timeout_error(run: Run) -> None:
    @tool
    async def slow() -> str:
        await asyncio.sleep(1.5)
        return "late"

    @tool
    async def raises_timeout() -> str:
        raise TimeoutError("upstream")

    script = Script([call_tools(("slow", {}), ("raises_timeout", {})), reply("ok")])
    started = time.perf_counter()
    result = run(script.runtime(), "go", tools=[slow, raises_timeout], tool_timeout=0.05)
    assert time.perf_counter() - started < 1.0  # the run did not wait out the 1.5 s tool
    assert [r.status for r in result.tool_calls] == ["timeout", "error"]
    assert "TimeoutError: upstream" in result.tool_calls[1].result.content


def test_repeated_identical_calls_are_detected(run: Run) -> None:
    ran: list[str] = []

    @tool
    def search(q: str) -> str:
        ran.append(q)
        return "nothing"

    same = ("search", {"q": "x"})
    script = Script(
        [
            call_tools(same),
            call_tools(same),
            call_tools(("search", {"q": "y"})),
            call_tools(same),
            reply("gave up"),
        ]
    )
    result = run(script.runtime(), "go", tools=[search], max_repeated_calls=2)
    assert ran == ["x", "x", "y"]  # the third identical call did not run
    assert result.tool_calls[3].status == "repeated"
    assert "already called 'search'" in results_sent(script, 4)[0].content

    script = Script([call_tools(same) for _ in range(4)] + [reply("never")])
    with pytest.raises(ModelBehaviorError, match="same arguments"):
        run(script.runtime(), "go", tools=[search], max_repeated_calls=2)


def test_repeat_check_can_be_turned_off(run: Run) -> None:
    @tool
    def roll() -> int:
        return 4

    script = Script([call_tools(("roll", {})) for _ in range(5)] + [reply("done")])
    result = run(script.runtime(), "go", tools=[roll], max_repeated_calls=None)
    assert [r.status for r in result.tool_calls] == ["ok"] * 5


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_parallel_calls_run_concurrently_and_results_keep_call_order(run: Run, kind: str) -> None:
    counter = Counter()

    if kind == "sync":

        @tool
        def work(n: int) -> int:
            counter.enter(f"work{n}")
            time.sleep(0.15 if n == 0 else 0.05)  # the first call finishes last
            counter.leave()
            return n
    else:

        @tool
        async def work(n: int) -> int:
            counter.enter(f"work{n}")
            await asyncio.sleep(0.15 if n == 0 else 0.05)
            counter.leave()
            return n

    script = Script([call_tools(*[("work", {"n": i}) for i in range(4)]), reply("ok")])
    result = run(script.runtime(), "go", tools=[work], parallel_tool_calls=True)
    assert counter.peak == 4  # all four were inside the tool at once
    assert [r.content for r in results_sent(script, 1)] == ["0", "1", "2", "3"]
    assert [r.call.arguments["n"] for r in result.tool_calls] == [0, 1, 2, 3]
    assert script.requests[0].parallel_tool_calls is True


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_sequential_calls_run_one_at_a_time_in_order(run: Run, kind: str) -> None:
    counter = Counter()

    if kind == "sync":

        @tool
        def work(n: int) -> int:
            counter.enter(f"work{n}")
            time.sleep(0.02)
            counter.leave()
            return n
    else:

        @tool
        async def work(n: int) -> int:
            counter.enter(f"work{n}")
            await asyncio.sleep(0.02)
            counter.leave()
            return n

    script = Script([call_tools(*[("work", {"n": i}) for i in range(3)]), reply("ok")])
    run(script.runtime(), "go", tools=[work], parallel_tool_calls=False)
    assert counter.peak == 1
    assert counter.calls == ["work0", "work1", "work2"]
    assert script.requests[0].parallel_tool_calls is False


def test_sync_tool_does_not_block_the_event_loop() -> None:
    @tool
    def blocking() -> str:
        time.sleep(0.2)
        return "done"

    async def main() -> int:
        ticks = 0
        stop = False

        async def ticker() -> None:
            nonlocal ticks
            while not stop:
                ticks += 1
                await asyncio.sleep(0.01)

        task = asyncio.create_task(ticker())
        script = Script([call_tools(("blocking", {})), reply("ok")])
        await script.runtime().async_exec("go", tools=[blocking], parallel_tool_calls=False)
        stop = True
        await task
        return ticks

    assert asyncio.run(main()) >= 5


def test_tool_choice_is_forced_on_the_first_turn_only(run: Run) -> None:
    @tool
    def ping() -> str:
        return "pong"

    script = Script([call_tools(("ping", {})), call_tools(("ping", {})), reply("ok")])
    run(script.runtime(), "go", tools=[ping], tool_choice="required")
    assert [r.tool_choice for r in script.requests] == ["required", "auto", "auto"]

    script = Script([call_tools(("ping", {})), reply("ok")])
    run(script.runtime(), "go", tools=[ping], tool_choice={"name": "ping"})
    assert [r.tool_choice for r in script.requests] == [{"name": "ping"}, "auto"]


def test_tool_choice_none_stays_none(run: Run) -> None:
    @tool
    def ping() -> str:
        return "pong"

    script = Script([reply("no tools")])
    run(script.runtime(), "go", tools=[ping], tool_choice="none")
    assert script.requests[0].tool_choice == "none"


def test_max_iterations_raises_with_the_calls_made(run: Run) -> None:
    ran: list[int] = []

    @tool
    def step(n: int) -> int:
        ran.append(n)
        return n

    script = Script([call_tools(("step", {"n": i})) for i in range(5)])
    with pytest.raises(MaxIterationsExceeded) as info:
        run(script.runtime(), "go", tools=[step], max_iterations=3)
    assert ran == [0, 1]  # the third turn's call could never be answered: not run
    assert [r.call.arguments["n"] for r in info.value.tool_calls] == [0, 1]
    assert info.value.run.iterations == 3
    assert len(script.requests) == 3


def test_a_retry_never_runs_a_tool_again(run: Run) -> None:
    runs: list[str] = []

    @tool
    def charge(amount: int) -> str:
        runs.append("charged")
        return "ok"

    script = Script(
        [
            call_tools(("charge", {"amount": 5})),
            fail(RateLimitError("slow down", status=429)),
            reply("charged once"),
        ]
    )
    result = run(script.runtime(max_retries=3), "go", tools=[charge])
    assert result.output == "charged once"
    assert runs == ["charged"]
    assert result.attempts == 3  # 1 + (1 failed + 1 retried)
    assert len(result.failures) == 1 and isinstance(result.failures[0].error, RateLimitError)
    # The retried request carried the same tool result; the tool was not re-run.
    assert script.requests[1].messages == script.requests[2].messages


def test_run_result_details(run: Run) -> None:
    @tool
    def ping() -> dict[str, int]:
        time.sleep(0.01)
        return {"pong": 1}

    script = Script([call_tools(("ping", {})), reply("fin")])
    result = run(script.runtime(), "go", tools=[ping])
    assert result.iterations == 2 and result.stop_reason == "end_turn"
    assert result.usage.requests == 2 and result.usage.total_tokens > 0
    assert result.latency >= result.tool_calls[0].duration >= 0.01
    record = result.tool_calls[0]
    assert record.status == "ok" and record.error is None and record.iteration == 1
    assert record.result.content == '{"pong": 1}'
    assert result.value == result.output == "fin"


def test_arguments_are_coerced_to_declared_types(run: Run) -> None:
    @dataclasses.dataclass
    class Box:
        w: float
        h: float

    @tool
    def area(box: Box) -> float:
        assert isinstance(box, Box)
        return box.w * box.h

    script = Script([call_tools(("area", {"box": {"w": 2, "h": 3}})), reply("6")])
    run(script.runtime(), "go", tools=[area])
    assert results_sent(script, 1)[0].content == "6.0"


def test_async_tool_from_sync_exec_and_sync_tool_from_async_exec(run: Run) -> None:
    @tool
    async def a() -> str:
        await asyncio.sleep(0)
        return "A"

    @tool
    def b() -> str:
        return "B"

    script = Script([call_tools(("a", {}), ("b", {})), reply("ok")])
    run(script.runtime(), "go", tools=[a, b], parallel_tool_calls=False)
    assert [r.content for r in results_sent(script, 1)] == ["A", "B"]


def test_stream_reports_tool_calls_and_results() -> None:
    @tool
    def ping(x: int) -> int:
        return x + 1

    def events_sync() -> list[Any]:
        script = Script([call_tools(("ping", {"x": 1})), reply("two")])
        return list(script.runtime().stream("go", tools=[ping]))

    async def events_async() -> list[Any]:
        script = Script([call_tools(("ping", {"x": 1})), reply("two")])
        return [e async for e in script.runtime().astream("go", tools=[ping])]

    for events in (events_sync(), asyncio.run(events_async())):
        started = [e for e in events if isinstance(e, ToolCallStarted)]
        results = [e for e in events if isinstance(e, ToolResultEvent)]
        assert started[0].call.arguments == {"x": 1}
        assert results[0].result.content == "2"
        assert events[-1].kind == "final" and events[-1].result.output == "two"
