"""deadline= bounds everything inside the run, client creation included.

A sync ``call=`` function or a scripted reply that returns after the
deadline raises RunTimeout with the late answer on it (it is never
returned late); a plugin's request, including a cold first call that
imports the SDK and makes the client, is given up at the deadline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from llmport import ProviderInfo, Response, Runtime, RunTimeout, Usage, hookimpl
from llmport.messages.types import FinalEvent, ProviderEvent, Request, StopEvent, TextDelta
from llmport.provider.contract import Provider
from llmport.testing import Script, reply

#: What a test allows beyond the deadline: far above the few ms measured, so it
#: cannot flake on a busy machine, and far below the seconds of the old overruns.
ALLOWED = 0.5


def timed_out(rt: Runtime, deadline: float, way: str = "exec") -> tuple[RunTimeout, float]:
    """The RunTimeout of ``rt.exec`` (or a whole ``rt.stream``) with ``deadline``, and when."""
    started = time.monotonic()
    with pytest.raises(RunTimeout) as info:
        if way == "exec":
            rt.exec("hi", deadline=deadline)
        else:
            list(rt.stream("hi", deadline=deadline))
    return info.value, time.monotonic() - started


def test_a_sync_call_function_answering_late_raises_run_timeout_with_the_answer() -> None:
    def slow(content: list[dict[str, object]], model: str, response_format: object) -> str:
        time.sleep(0.6)
        return "late"

    err, elapsed = timed_out(Runtime(call=slow), 0.2)
    print(f"\nsync call=: deadline 0.2 s, raised after {elapsed:.3f} s")
    assert err.late is not None and err.late.text == "late"
    assert elapsed >= 0.6  # the caller's own code is never abandoned in another thread


@pytest.mark.parametrize("way", ["exec", "stream"])
def test_a_scripted_reply_after_the_deadline_raises_run_timeout(way: str) -> None:
    err, elapsed = timed_out(Script([reply("late", delay=0.6)]).runtime(), 0.2, way)
    print(f"\nscripted {way}: deadline 0.2 s, raised after {elapsed:.3f} s")
    if way == "exec":
        assert err.late is not None and err.late.text == "late"


async def test_an_async_scripted_reply_is_cut_at_the_deadline() -> None:
    rt = Script([reply("late", delay=2.0)]).runtime()
    started = time.monotonic()
    with pytest.raises(RunTimeout):
        await rt.async_exec("hi", deadline=0.2)
    assert time.monotonic() - started < 0.2 + ALLOWED


class Cold(Provider):
    """A provider whose first request makes its client slowly (a cold SDK import)."""

    name = "cold"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.made = False

    def _client(self) -> None:
        if not self.made:
            time.sleep(1.5)
            self.made = True

    def _call(self, request: Request) -> Response:
        self._client()
        return Response(text="fine", model=request.model, usage=Usage(1, 1, requests=1))

    def _stream(self, request: Request) -> Iterator[ProviderEvent]:
        self._client()
        yield TextDelta("fine")
        yield StopEvent("end_turn")


class ColdPlugin:
    @hookimpl
    def llmport_providers(self, register: Callable[[ProviderInfo], None]) -> None:
        register(ProviderInfo("cold", Cold))


@pytest.mark.parametrize("way", ["exec", "stream"])
def test_a_slow_client_creation_is_inside_the_deadline(way: str) -> None:
    rt = Runtime(model="cold:m", hooks=[ColdPlugin()])
    _, elapsed = timed_out(rt, 0.3, way)
    print(f"\nslow client, {way}: deadline 0.3 s, raised after {elapsed:.3f} s")
    assert elapsed < 0.3 + ALLOWED
    time.sleep(1.5)  # the abandoned creation finishes: the next call is warm
    assert rt.exec("hi", deadline=1.0) == "fine"


def test_a_run_inside_its_deadline_returns_normally() -> None:
    rt = Runtime(model="cold:m", hooks=[ColdPlugin()])
    assert rt.exec("hi", deadline=5.0) == "fine"
    final = list(rt.stream("hi", deadline=5.0))[-1]
    assert isinstance(final, FinalEvent) and final.result.text == "fine"


#: A fresh interpreter: the first sync exec on Anthropic imports the SDK and makes
#: the client inside the run, against a loopback server slower than the deadline.
COLD = textwrap.dedent(
    """
    import json, sys, time
    from llmport import Runtime, RunTimeout
    from llmport.testing.loopback import LoopbackServer, Reply

    answer = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "late"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    deadline = float(sys.argv[1])
    with LoopbackServer([Reply(delay=deadline + 3, json=answer)]) as server:
        rt = Runtime(
            model="anthropic:claude-sonnet-4-5",
            max_retries=1,
            providers={"anthropic": {"base_url": server.url, "api_key": "test-key-not-real"}},
        )
        cold = "anthropic" not in sys.modules
        started = time.monotonic()
        try:
            rt.exec("hi", deadline=deadline)
            outcome = "returned"
        except RunTimeout:
            outcome = "RunTimeout"
        elapsed = time.monotonic() - started
    print(json.dumps({"cold": cold, "outcome": outcome, "elapsed": elapsed}))
    """
)


def test_a_cold_first_call_on_a_plugin_ends_at_the_deadline() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LLMPORT_"))}
    deadline = 1.0
    out = subprocess.run(
        [sys.executable, "-c", COLD, str(deadline)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    overrun = figures["elapsed"] - deadline
    print(f"\ncold first call: {figures}, overrun {overrun * 1000:.0f} ms")
    assert figures["cold"] and figures["outcome"] == "RunTimeout"
    assert overrun < ALLOWED
