"""Streams with their recorded timing: when each event arrived, and replaying it so.

While a cassette records, the real transports' streamed responses (Server-Sent
Events and AWS event streams) are read through a clock: each chunk's arrival is
noted in seconds after the response's headers (:class:`Arrivals`), and the
stored interaction keeps one offset per event (``event_times``, see
:func:`event_times`). vcrpy reads a whole body before handing it on, so the clock
is put at the one seam per transport where the chunks still arrive one by one:

- httpx and its fork httpx2 (sync and async; the OpenAI, Anthropic, compatible
  and google-genai clients): the real transport's response stream;
- aiohttp (the async default of the OpenAI, Anthropic and Gemini plugins): the
  real response's ``content``;
- urllib3 / botocore (Bedrock): the real ``http.client`` response's chunks.

On replay with a pace (``timing="recorded"`` or ``"scale:F"``), the body is
released event by event at the recorded offsets times the pace, on the same
three seams (:func:`pacing_patches`). Without one, replay is instant, as before.
"""

from __future__ import annotations

import asyncio
import io
import math
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any
from unittest import mock

from ..errors import CassetteError

#: Latest offset an event may have (seconds after the response's headers): an edited
#: cassette cannot make a replay sleep for hours.
MAX_EVENT_SECONDS = 600.0
#: How many times slower than recorded a replay may be.
MAX_PACE = 100.0
#: What ``timing=`` accepts (besides ``scale:F``).
TIMING_CHOICES = ("none", "recorded")
#: The key under which a response dict carries its arrivals (recording) or paced
#: chunks (replay) between this module and :mod:`.cassette_format`.
ARRIVALS_KEY = "llmport_arrivals"
PACED_KEY = "llmport_paced"
_STREAM_TYPES = ("text/event-stream", "vnd.amazon.eventstream")
_SSE_BREAK = re.compile(rb"\r?\n\r?\n")

#: (bytes received so far, seconds after the headers) after each chunk.
Marks = list[tuple[int, float]]
#: (seconds after the headers, the event's bytes) for each event of a paced body.
Paced = list[tuple[float, bytes]]


def replay_pace(timing: str) -> float | None:
    """``timing=`` as a pace: ``None`` for instant replay, else the factor on recorded gaps."""
    if timing == "none":
        return None
    if timing == "recorded":
        return 1.0
    if timing.startswith("scale:"):
        try:
            pace = float(timing[len("scale:") :])
        except ValueError:
            pace = math.nan
        if math.isfinite(pace) and 0 < pace <= MAX_PACE:
            return pace
    raise CassetteError(
        f"timing must be 'none', 'recorded' or 'scale:F' with 0 < F <= {MAX_PACE:g} "
        f"(such as 'scale:0.1'), not {timing!r}"
    )


def is_stream(content_type: str) -> bool:
    """Whether a response of this content type is a stream of events."""
    lowered = content_type.lower()
    return any(kind in lowered for kind in _STREAM_TYPES)


# --- event boundaries and offsets -----------------------------------------------------------


def sse_event_ends(data: bytes) -> list[int]:
    """Where each Server-Sent Event of ``data`` ends (the blocks the decoder keeps)."""
    ends, start = [], 0
    for found in _SSE_BREAK.finditer(data):
        if data[start : found.start()].strip():
            ends.append(found.end())
        start = found.end()
    if data[start:].strip():
        ends.append(len(data))
    return ends


def frame_ends(data: bytes) -> list[int]:
    """Where each AWS event-stream frame of ``data`` ends (its prelude gives its length)."""
    ends, at = [], 0
    while len(data) - at >= 4:
        at += int.from_bytes(data[at : at + 4], "big") or len(data)
        ends.append(min(at, len(data)))
    return ends


def event_times(ends: Sequence[int], marks: Marks) -> list[float] | None:
    """Each event's arrival: the time of the first chunk that completed it (``None`` if unknown)."""
    times: list[float] = []
    chunk = 0
    for end in ends:
        while chunk < len(marks) and marks[chunk][0] < end:
            chunk += 1
        if chunk == len(marks):
            return None  # the marks do not cover this body
        times.append(round(marks[chunk][1], 4))
    return times


def check_event_times(times: Any, events: int, where: str) -> None:
    """Raise ``ValueError`` unless ``times`` are finite, in order, bounded, at most one an event."""
    if not isinstance(times, list):
        raise ValueError(f"{where}: event_times must be a list of seconds")
    if len(times) > events:
        raise ValueError(f"{where}: {len(times)} event_times for {events} events")
    previous = 0.0
    for index, value in enumerate(times):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{where}/{index}: {value!r} is not a number of seconds")
        if not (math.isfinite(value) and previous <= value <= MAX_EVENT_SECONDS):
            raise ValueError(
                f"{where}/{index}: {value!r} is not a time in order between "
                f"{previous:g} and {MAX_EVENT_SECONDS:g} seconds"
            )
        previous = float(value)


def paced_chunks(chunks: Sequence[bytes], times: Sequence[float]) -> Paced:
    """Each event's bytes with its offset (events past the recorded times come with the last)."""
    paced: Paced = []
    last = 0.0
    for index, chunk in enumerate(chunks):
        last = float(times[index]) if index < len(times) else last
        paced.append((last, chunk))
    return paced


# --- recording: when chunks arrive ----------------------------------------------------------


class Arrivals:
    """The chunk arrival marks of the streamed responses read while one cassette records.

    Keyed by the body they add up to: vcrpy appends an interaction with the
    whole body, and :meth:`take` finds its marks (thread- and task-safe).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read: list[tuple[bytes, Marks]] = []

    def note(self, body: bytes, marks: Marks) -> None:
        with self._lock:
            self._read.append((body, marks))

    def take(self, body: Any) -> Marks | None:
        """The marks of a response whose body was ``body`` (forgotten once taken)."""
        if not isinstance(body, bytes):
            return None
        with self._lock:
            for index, (read, marks) in enumerate(self._read):
                if read == body:
                    del self._read[index]
                    return marks
        return None


class _Clock:
    """Marks each chunk of one response as it arrives; files the marks at the end."""

    def __init__(self, arrivals: Arrivals) -> None:
        self.arrivals = arrivals
        self.started = time.monotonic()
        self.chunks: list[bytes] = []
        self.marks: Marks = []
        self.size = 0

    def tick(self, chunk: bytes) -> bytes:
        self.size += len(chunk)
        self.chunks.append(chunk)
        self.marks.append((self.size, time.monotonic() - self.started))
        return chunk

    def done(self) -> bytes:
        body = b"".join(self.chunks)
        self.arrivals.note(body, self.marks)
        return body


class _ClockedStream:
    """An httpx response stream read through a :class:`_Clock` (vcrpy iterates, then closes)."""

    def __init__(self, inner: Any, clock: _Clock) -> None:
        self.inner, self.clock = inner, clock

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.inner:
            yield self.clock.tick(chunk)
        self.clock.done()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            yield self.clock.tick(chunk)
        self.clock.done()

    def close(self) -> None:
        self.inner.close()

    async def aclose(self) -> None:
        await self.inner.aclose()


def _content_type(headers: Any) -> str:
    try:
        return str(headers.get("content-type") or "")
    except AttributeError:
        return ""


def _clocked_httpx(real: Callable[..., Any], arrivals: Arrivals) -> Callable[..., Any]:
    def handle_request(transport: Any, request: Any) -> Any:
        response = real(transport, request)
        if is_stream(_content_type(response.headers)):
            response.stream = _ClockedStream(response.stream, _Clock(arrivals))
        return response

    return handle_request


def _clocked_httpx_async(real: Callable[..., Any], arrivals: Arrivals) -> Callable[..., Any]:
    async def handle_async_request(transport: Any, request: Any) -> Any:
        response = await real(transport, request)
        if is_stream(_content_type(response.headers)):
            response.stream = _ClockedStream(response.stream, _Clock(arrivals))
        return response

    return handle_async_request


def _clocked_aiohttp(real: Callable[..., Any], arrivals: Arrivals) -> Callable[..., Any]:
    async def request(session: Any, *args: Any, **kwargs: Any) -> Any:
        response = await real(session, *args, **kwargs)
        if is_stream(_content_type(response.headers)):
            clock = _Clock(arrivals)
            async for chunk in response.content.iter_any():
                clock.tick(chunk)
            response._body = clock.done()  # vcrpy's read() then returns it, and re-streams it
        return response

    return request


def _clocked_http_client(base: type[Any], arrivals: Arrivals) -> type[Any]:
    """``base`` (an ``http.client`` connection) whose streamed responses are read chunk by chunk."""

    class Clocked(base):  # type: ignore[misc]
        def request(self, *args: Any, **kwargs: Any) -> Any:
            # urllib3 would read the whole body inside getresponse(): leave it to read().
            kwargs.setdefault("preload_content", False)
            return super().request(*args, **kwargs)

        def getresponse(self, *args: Any, **kwargs: Any) -> Any:
            response = super().getresponse(*args, **kwargs)
            if is_stream(response.getheader("content-type") or ""):
                _read_through_clock(response, arrivals)
            return response

    Clocked.__name__ = Clocked.__qualname__ = base.__name__
    return Clocked


def _read_through_clock(response: Any, arrivals: Arrivals) -> None:
    """Make a whole-body ``read()`` of ``response`` read chunk by chunk, marking each arrival.

    ``response`` is ``http.client``'s or urllib3's (botocore's connections are
    urllib3's): both have ``read1``, which returns what has arrived.
    """
    read, read1 = response.read, response.read1

    def read_clocked(amt: int | None = None, *args: Any, **kwargs: Any) -> bytes:
        if amt is not None or args:
            return bytes(read(amt, *args, **kwargs))
        clock = _Clock(arrivals)
        while chunk := read1(65536):
            clock.tick(bytes(chunk))
        body = clock.done()
        if kwargs.get("cache_content"):
            response._body = body  # urllib3's ``data`` is the cached body from now on
        return body

    response.read = read_clocked


def recording_patches(arrivals: Arrivals) -> list[AbstractContextManager[Any]]:
    """Patches putting the clock on each transport's real call; entered before vcrpy's own.

    vcrpy reads the real functions from ``vcr.patch`` when its cassette opens, so
    replacing them there first makes vcrpy record through the clock.
    """
    import vcr.patch  # type: ignore[import-untyped]

    patches: list[AbstractContextManager[Any]] = []
    for name, wrap in (
        ("_HttpxHttpTransport_handle_request", _clocked_httpx),
        ("_HttpxAsyncHttpTransport_handle_async_request", _clocked_httpx_async),
        ("_Httpx2HttpTransport_handle_request", _clocked_httpx),  # the fork the SDKs use
        ("_Httpx2AsyncHttpTransport_handle_async_request", _clocked_httpx_async),
        ("_AiohttpClientSessionRequest", _clocked_aiohttp),
    ):
        real = getattr(vcr.patch, name, None)
        if real is not None:
            patches.append(mock.patch.object(vcr.patch, name, wrap(real, arrivals)))
    try:
        from vcr.stubs import boto3_stubs  # type: ignore[import-untyped]
    except ImportError:  # botocore is not installed
        return patches
    for connection in (
        boto3_stubs.VCRRequestsHTTPConnection,
        boto3_stubs.VCRRequestsHTTPSConnection,
    ):
        clocked = _clocked_http_client(connection._baseclass, arrivals)
        patches.append(mock.patch.object(connection, "_baseclass", clocked))
    return patches


# --- replay: releasing events on time -------------------------------------------------------


class _Schedule:
    """When each event of one replayed body is due, from the moment the response is built."""

    def __init__(self, paced: Paced, pace: float) -> None:
        self.started = time.monotonic()
        self.events = [(offset * pace, chunk) for offset, chunk in paced]

    def wait(self, index: int) -> float:
        """Seconds until event ``index`` is due (0 when it already is)."""
        due = self.started + self.events[index][0]
        return max(0.0, due - time.monotonic())


def _paced_httpx_stream(httpx: Any, paced: Paced, pace: float) -> Any:
    class PacedStream(httpx.ByteStream):  # type: ignore[misc]
        """A replayed body released event by event (sync and async)."""

        def __init__(self) -> None:
            super().__init__(b"".join(chunk for _, chunk in paced))
            self.schedule = _Schedule(paced, pace)

        def __iter__(self) -> Iterator[bytes]:
            for index, (_, chunk) in enumerate(self.schedule.events):
                time.sleep(self.schedule.wait(index))
                yield chunk

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for index, (_, chunk) in enumerate(self.schedule.events):
                await asyncio.sleep(self.schedule.wait(index))
                yield chunk

    return PacedStream()


class _Feeding:
    """Stands in for the connection an aiohttp ``StreamReader`` reads from: one still
    delivering (a reader waits for data only while its connection is connected)."""

    _reading_paused = False
    connected = True

    def pause_reading(self) -> None:
        return None

    def resume_reading(self, resume_parser: bool = True) -> None:
        return None


def _paced_aiohttp_content(paced: Paced, pace: float) -> Any:
    """An aiohttp ``StreamReader`` fed event by event by a task of the running loop."""
    from aiohttp import streams

    loop = asyncio.get_running_loop()

    class PacedReader(streams.StreamReader):
        """A reader that keeps its feeding task (the loop holds tasks weakly)."""

        feeding: asyncio.Task[None] | None = None

    size = sum(len(chunk) for _, chunk in paced)
    connection: Any = _Feeding()  # duck-typed: what the reader calls of a protocol
    reader = PacedReader(connection, max(size, 2**16), loop=loop)
    schedule = _Schedule(paced, pace)

    async def feed() -> None:
        for index, (_, chunk) in enumerate(schedule.events):
            await asyncio.sleep(schedule.wait(index))
            reader.feed_data(chunk)
        reader.feed_eof()

    reader.feeding = loop.create_task(feed())
    return reader


class PacedBytes(io.BytesIO):
    """A replayed urllib3 body: each read returns at most one event, once it is due."""

    def __init__(self, paced: Paced, pace: float) -> None:
        super().__init__(b"".join(chunk for _, chunk in paced))
        self.schedule = _Schedule(paced, pace)
        self.ends: list[int] = []
        for _, chunk in paced:
            self.ends.append((self.ends[-1] if self.ends else 0) + len(chunk))

    def _next_event(self, size: int | None) -> int | None:
        """Wait until what a read of ``size`` returns is due; how much it may take.

        A read of everything (``size`` ``None`` or negative) waits for the last
        event; any other returns at most the rest of the event it starts in.
        """
        at = self.tell()
        index = next((i for i, end in enumerate(self.ends) if end > at), None)
        if index is None:
            return size
        if size is None or size < 0:
            time.sleep(self.schedule.wait(len(self.ends) - 1))
            return size
        time.sleep(self.schedule.wait(index))
        return min(size, self.ends[index] - at)

    def read(self, size: int | None = -1) -> bytes:
        return super().read(self._next_event(size))

    def read1(self, size: int | None = -1) -> bytes:
        return super().read1(self._next_event(size))

    def readinto(self, buffer: Any) -> int:
        allowed = self._next_event(len(buffer)) or 0
        return super().readinto(memoryview(buffer)[:allowed])


def pacing_patches(pace: float) -> list[AbstractContextManager[Any]]:
    """Patches making vcrpy's replayed responses release a paced body event by event."""
    import vcr.stubs
    import vcr.stubs.httpx_stubs  # type: ignore[import-untyped]

    patches: list[AbstractContextManager[Any]] = []
    build_httpx = vcr.stubs.httpx_stubs._deserialize_response

    def httpx_response(vcr_response: Any, httpx: Any) -> Any:
        response = build_httpx(vcr_response, httpx)
        paced = vcr_response.get(PACED_KEY)
        if paced:
            response.stream = _paced_httpx_stream(httpx, paced, pace)
        return response

    patches.append(
        mock.patch.object(vcr.stubs.httpx_stubs, "_deserialize_response", httpx_response)
    )

    plain_response = vcr.stubs.VCRHTTPResponse

    class PacedHTTPResponse(plain_response):  # type: ignore[misc,valid-type]
        def __init__(self, recorded_response: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(recorded_response, *args, **kwargs)
            paced = recorded_response.get(PACED_KEY)
            if paced:
                self._content = PacedBytes(paced, pace)

    patches.append(mock.patch.object(vcr.stubs, "VCRHTTPResponse", PacedHTTPResponse))
    try:
        import vcr.stubs.aiohttp_stubs as aiohttp_stubs  # type: ignore[import-untyped,unused-ignore]
    except ImportError:  # aiohttp is not installed
        return patches
    build_aiohttp = aiohttp_stubs.build_response

    def aiohttp_response(vcr_request: Any, vcr_response: Any, history: Any) -> Any:
        response = build_aiohttp(vcr_request, vcr_response, history)
        paced = vcr_response.get(PACED_KEY)
        if paced:
            response.content = _paced_aiohttp_content(paced, pace)
        return response

    patches.append(mock.patch.object(aiohttp_stubs, "build_response", aiohttp_response))
    return patches
