"""One deadline for the whole run: attempts, backoff, tools and streams."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from conversation_helpers import WAY_IDS, WAYS, run, runtime
from llmport import (
    OptionError,
    OverloadedError,
    ProviderInfo,
    ProviderTimeoutError,
    RunTimeout,
    Tool,
    hookimpl,
)
from llmport.controls.retry import Backoff
from llmport.messages.types import ProviderEvent, Request, StopEvent, TextDelta, UsageEvent
from llmport.provider.contract import Provider
from llmport.testing import Script, call_tools, fail

# The deadline holds within this much. The runtime's own overshoot is a few ms; the rest is
# room for a loaded CI machine (2 cores under xdist), still far short of what each run would
# take without the deadline (seconds).
SLACK = 0.35
PACE = 0.1  # a word every PACE seconds: several words arrive well inside the deadline


class SlowStream(Provider):
    """Streams a word every PACE seconds; honours the request timeout as an HTTP read would."""

    name = "slow"

    def _pace(self, request: Request, started: float) -> float:
        timeout = request.options.get("timeout")
        if timeout is not None and time.monotonic() - started + PACE > timeout:
            return max(0.0, started + timeout - time.monotonic())
        return PACE

    def _stream(self, request: Request) -> Iterator[ProviderEvent]:
        started = time.monotonic()
        for word in ["one ", "two ", "three ", "four ", "five ", "six "] * 3:
            pause = self._pace(request, started)
            time.sleep(pause)
            if pause < PACE:
                raise ProviderTimeoutError("read timed out")
            yield TextDelta(word)
        yield UsageEvent(__import__("llmport").Usage(1, 1, requests=1))
        yield StopEvent("end_turn")

    async def _astream(self, request: Request) -> AsyncIterator[ProviderEvent]:
        for word in ["one ", "two ", "three ", "four ", "five ", "six "] * 3:
            await asyncio.sleep(PACE)
            yield TextDelta(word)
        yield StopEvent("end_turn")


class SlowPlugin:
    @hookimpl
    def llmport_providers(self, register: Any) -> None:
        register(
            ProviderInfo(prefix="slow", factory=lambda settings, info: SlowStream(settings, info))
        )


def within(started: float, deadline: float) -> float:
    elapsed = time.monotonic() - started
    assert deadline - 0.01 <= elapsed <= deadline + SLACK, f"took {elapsed:.3f} s"
    return elapsed


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_the_deadline_holds_across_retries_with_backoff(way: tuple[str, bool]) -> None:
    script = Script([fail(OverloadedError("busy")) for _ in range(10)])
    rt = runtime(script, max_retries=10, backoff=Backoff(initial=0.2, multiplier=1.0, jitter=False))
    started = time.monotonic()
    with pytest.raises(RunTimeout) as caught:
        await run(way, rt, "q", deadline=0.5)
    within(started, 0.5)
    partial = caught.value.run
    assert partial is not None and 2 <= partial.attempts <= 4
    assert all(isinstance(f.error, OverloadedError) for f in partial.failures)


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_the_deadline_holds_with_a_slow_tool(way: tuple[str, bool]) -> None:
    def slow() -> str:
        time.sleep(1.5)
        return "late"

    tool = Tool("slow", "", {"type": "object", "properties": {}}, slow, timeout=30)
    script = Script([call_tools(("slow", {})), "never"])
    rt = runtime(script)
    started = time.monotonic()
    with pytest.raises(RunTimeout) as caught:
        await run(way, rt, "q", tools=[tool], deadline=0.4)
    within(started, 0.4)
    partial = caught.value.run
    assert [m.role for m in partial.messages] == ["user", "assistant"]
    assert partial.tool_calls[0].status == "timeout"
    assert len(script.requests) == 1


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_deadline_holds_mid_stream(mode: str) -> None:
    rt = runtime(Script([]), SlowPlugin(), model="slow:m")  # type: ignore[arg-type]
    started = time.monotonic()
    seen: list[str] = []
    with pytest.raises(RunTimeout):
        if mode == "sync":
            for event in rt.stream("q", deadline=0.5):
                if isinstance(event, TextDelta):
                    seen.append(event.text)
        else:
            async for event in rt.astream("q", deadline=0.5):
                if isinstance(event, TextDelta):
                    seen.append(event.text)
    within(started, 0.5)
    assert seen[:2] == ["one ", "two "]


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_a_run_inside_its_deadline_is_unaffected(way: tuple[str, bool]) -> None:
    script = Script(["fine"])
    rt = runtime(script)
    assert (await run(way, rt, "q", deadline=5)).text == "fine"
    assert 0 < script.requests[0].options["timeout"] <= 5  # the HTTP timeout never outlives it


def test_a_bad_deadline_is_an_option_error() -> None:
    with pytest.raises(OptionError, match="deadline"):
        runtime(Script([])).exec("q", deadline=-1)
