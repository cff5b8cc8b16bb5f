"""Recorded streams replayed with their timing, on every transport the recordings reach.

A loopback "vendor" sends a stream event by event, evenly over ``LIVE`` seconds;
the cassette keeps when each event arrived. ``timing="recorded"`` replays the
events spaced as they came (each text delta at least half a gap after the one
before, the whole answer at least half as long as it took live: lower bounds,
which a loaded machine cannot break); the default replays without waiting at all.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from llmport import Runtime
from llmport.messages.types import TextDelta
from llmport.testing import cassette
from llmport.testing.cassette_format import decode_event_stream
from llmport.testing.loopback import LoopbackServer, Reply
from wire import TARGETS, Wire

Make = Callable[..., Runtime]
LIVE = 0.6
CHUNKS = ["One", " two", " three", " four"]
_BY_ID = {wire.id: wire for wire in TARGETS}

#: (target, sync or async, async transport): each seam the timing is kept and replayed on.
TRANSPORTS = [
    ("openai-chat", "sync", None),  # httpx, sync
    ("openai-chat", "async", None),  # aiohttp (the async default)
    ("anthropic", "async", "httpx"),  # httpx, async
    ("gemini", "sync", None),  # google-genai on httpx
    ("gemini", "async", None),  # google-genai on aiohttp
    ("bedrock", "sync", None),  # botocore (urllib3), AWS event stream
]


def events_in(reply: Reply) -> int:
    if reply.sse is not None:
        return len(reply.sse)
    return len(decode_event_stream(reply.body or b"") or [])


def gap_for(reply: Reply) -> float:
    """The gap between events that makes the whole stream last ``LIVE`` seconds."""
    return LIVE / (events_in(reply) - 1)


def stopped(url: str) -> Any:
    """Where the vendor was: nothing listens there any more."""
    return type("Stopped", (), {"url": url})()


def delta_times(rt: Runtime, mode: str) -> tuple[float, list[float]]:
    """How long the streamed answer took, and when each text delta arrived (from the call)."""
    started = time.monotonic()
    if mode == "sync":
        seen = [time.monotonic() for e in rt.stream("Count") if isinstance(e, TextDelta)]
    else:

        async def read() -> list[float]:
            return [time.monotonic() async for e in rt.astream("Count") if isinstance(e, TextDelta)]

        seen = asyncio.run(read())
    return time.monotonic() - started, [moment - started for moment in seen]


@pytest.mark.parametrize(("target", "mode", "transport"), TRANSPORTS, ids=str)
def test_a_stream_replays_with_its_recorded_gaps_and_instantly_by_default(
    target: str,
    mode: str,
    transport: str | None,
    runtime: Make,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wire: Wire = _BY_ID[target]
    settings = {"async_transport": transport} if transport else None
    reply = wire.stream_text_reply(CHUNKS)
    reply.gap = gap = gap_for(reply)
    path = tmp_path / "stream.yaml"
    with LoopbackServer([reply]) as server, cassette(path):
        delta_times(runtime(wire, server, max_retries=1, settings=settings), mode)
    stored = yaml.safe_load(path.read_text())["interactions"][0]["response"]
    assert len(stored["event_times"]) == events_in(reply)
    live = stored["event_times"][-1]  # the stream took this long, from its headers on
    assert live >= LIVE * 0.9

    def replay(timing: str) -> tuple[float, list[float]]:
        with cassette(path, record="none", timing=timing):
            rt = runtime(wire, stopped(server.url), max_retries=1, settings=settings)
            return delta_times(rt, mode)

    took, deltas = replay("recorded")
    assert len(deltas) == len(CHUNKS)
    assert took >= live / 2
    assert min(b - a for a, b in itertools.pairwise(deltas)) >= gap / 2

    waits = watch_waits(monkeypatch)
    assert len(replay("none")[1]) == len(CHUNKS)
    assert waits == []  # instant replay never waits


def watch_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits for data asked of ``time.sleep`` or ``asyncio.sleep`` from now on: longer
    than a tick, and not the async client keeper's sleep until its loop ends (a year)."""
    waits: list[float] = []
    sleep, asleep = time.sleep, asyncio.sleep

    def noted_sleep(seconds: float) -> None:
        waits.extend([seconds] if 0.001 < seconds < 3600 else [])
        sleep(seconds)

    async def noted_asleep(seconds: float, *args: Any) -> Any:
        waits.extend([seconds] if 0.001 < seconds < 3600 else [])
        return await asleep(seconds, *args)

    monkeypatch.setattr(time, "sleep", noted_sleep)
    monkeypatch.setattr(asyncio, "sleep", noted_asleep)
    return waits
