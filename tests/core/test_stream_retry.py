"""A stream that fails after sending text and is retried must not repeat that text."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from llmport import ProviderConnectionError, ProviderInfo, Runtime, hookimpl
from llmport.controls.retry import Backoff
from llmport.messages.types import (
    FinalEvent,
    ProviderEvent,
    Request,
    StopEvent,
    TextDelta,
    Usage,
    UsageEvent,
)
from llmport.provider.contract import Provider


class FlakyStream(Provider):
    """First attempt: 'Hel' then a dropped connection; later attempts: the given pieces."""

    name = "flaky"

    def __init__(self, settings: Any = None, info: Any = None, retry_pieces: tuple[str, ...] = ()):
        super().__init__(settings, info)
        self.attempts = 0
        self.retry_pieces = retry_pieces

    def _events(self) -> Iterator[ProviderEvent]:
        self.attempts += 1
        if self.attempts == 1:
            yield TextDelta("Hel")
            raise ProviderConnectionError("connection reset mid-stream")
        for piece in self.retry_pieces:
            yield TextDelta(piece)
        yield UsageEvent(Usage(1, 1))
        yield StopEvent("end_turn")

    def _stream(self, request: Request) -> Iterator[ProviderEvent]:
        yield from self._events()

    async def _astream(self, request: Request) -> AsyncIterator[ProviderEvent]:
        for event in self._events():
            yield event


def runtime(pieces: tuple[str, ...]) -> Runtime:
    class Plugin:
        @hookimpl
        def llmport_providers(self, register: Any) -> None:
            register(
                ProviderInfo("flaky", lambda settings, info: FlakyStream(settings, info, pieces))
            )

    return Runtime(model="flaky:m", hooks=[Plugin()], backoff=Backoff.none(), max_retries=2)


def texts(events: list[Any]) -> tuple[list[str], str]:
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    final = next(e for e in events if isinstance(e, FinalEvent))
    return deltas, final.result.text


def test_retried_stream_does_not_repeat_sent_text() -> None:
    deltas, final = texts(list(runtime(("Hel", "lo")).stream("hi")))
    assert deltas == ["Hel", "lo"]
    assert "".join(deltas) == final == "Hello"


def test_retried_stream_split_differently_sends_only_the_rest() -> None:
    deltas, final = texts(list(runtime(("H", "ello", " there")).stream("hi")))
    assert "".join(deltas) == final == "Hello there"


async def test_retried_astream_does_not_repeat_sent_text() -> None:
    rt = runtime(("Hel", "lo"))
    events = [e async for e in rt.astream("hi")]
    deltas, final = texts(events)
    assert deltas == ["Hel", "lo"]
    assert final == "Hello"
    await asyncio.sleep(0)


def test_recording_backoff_records_instead_of_sleeping_sync_and_async() -> None:
    from llmport import RateLimitError
    from llmport.testing import Script, fail, recording_backoff, reply

    for use_async in (False, True):
        delays: list[float] = []
        script = Script(
            [fail(RateLimitError("429", retry_after=2.5)), fail(RateLimitError("429")), reply("ok")]
        )
        rt = script.runtime(
            max_retries=3, backoff=recording_backoff(delays, jitter=False, initial=0.25)
        )
        started = time.perf_counter()
        out = asyncio.run(rt.async_exec("hi")) if use_async else rt.exec("hi")
        assert out == "ok"
        assert delays == [2.5, 0.5]  # Retry-After honoured, then 0.25 * 2 ** 1
        assert time.perf_counter() - started < 1.0  # nothing actually slept
