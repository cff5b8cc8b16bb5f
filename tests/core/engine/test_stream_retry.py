"""A stream that fails after the caller got text is never continued by another answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from llmport import (
    OptionError,
    ProviderConnectionError,
    ProviderInfo,
    Runtime,
    StreamInterrupted,
    StreamRestarted,
    hookimpl,
)
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


def split(events: list[Any]) -> tuple[str, str, str]:
    """(text before a StreamRestarted, text after it, the final result's text)."""
    restart = next((i for i, e in enumerate(events) if isinstance(e, StreamRestarted)), 0)
    before = "".join(e.text for e in events[:restart] if isinstance(e, TextDelta))
    after = "".join(e.text for e in events[restart:] if isinstance(e, TextDelta))
    final = next(e for e in events if isinstance(e, FinalEvent))
    return before, after, final.result.text


def test_a_stream_cut_after_text_is_interrupted_not_spliced() -> None:
    shown: list[str] = []
    with pytest.raises(StreamInterrupted) as caught:
        for event in runtime(("Bonjour", " le monde")).stream("hi"):
            if isinstance(event, TextDelta):
                shown.append(event.text)
    assert shown == ["Hel"] and caught.value.run.text == "Hel"
    assert isinstance(caught.value.__cause__, ProviderConnectionError)
    assert caught.value.run.attempts == 1 and len(caught.value.run.failures) == 1


async def test_an_astream_cut_after_text_is_interrupted_not_spliced() -> None:
    shown: list[str] = []
    with pytest.raises(StreamInterrupted) as caught:
        async for event in runtime(("Bonjour", " le monde")).astream("hi"):
            if isinstance(event, TextDelta):
                shown.append(event.text)
    assert shown == ["Hel"] and caught.value.run.text == "Hel"


def test_restart_streams_the_whole_new_answer_after_stream_restarted() -> None:
    events = list(runtime(("H", "ello", " there")).stream("hi", stream_retry="restart"))
    assert split(events) == ("Hel", "Hello there", "Hello there")
    assert [e for e in events if isinstance(e, StreamRestarted)] == [StreamRestarted(2)]


async def test_arestart_streams_the_whole_new_answer_after_stream_restarted() -> None:
    events = [e async for e in runtime(("Bonjour",)).astream("hi", stream_retry="restart")]
    assert split(events) == ("Hel", "Bonjour", "Bonjour")
    await asyncio.sleep(0)


def test_stream_retry_takes_only_restart() -> None:
    with pytest.raises(OptionError, match="stream_retry"):
        list(runtime(("x",)).stream("hi", stream_retry="always"))


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
        assert time.perf_counter() - started < 2.0  # nothing slept (the delays add to 3 s)
