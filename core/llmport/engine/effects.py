"""The effects: what the step machine asks a driver to do, and nothing else.

The machine (:mod:`.steps`) yields one of these and a driver (:mod:`.drive`)
performs it and sends back the answer: send or stream a prepared request,
convert one, sleep, ask the approver, run tools, call a chosen function, or
hand the caller an event. :class:`StreamReader` assembles a streamed answer
and remembers what reached the caller; :class:`LiveEvents` carries what tools
write while they run.
"""

from __future__ import annotations

import contextlib
import contextvars
import queue
from collections.abc import Callable, Generator
from typing import Any

from ..controls.limits import Acquire  # limits
from ..controls.retry import Backoff
from ..messages.types import (
    CitationEvent,
    CustomEvent,
    MediaBlock,
    MediaDelta,
    ProviderEvent,
    Request,
    Response,
    ServerToolEvent,
    StopEvent,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
)
from ..output.streaming import OutputStream
from ..provider.assembly import StreamAssembler
from ..provider.contract import Prepared, Provider
from ..slotted import dataclass
from ..tools.policy import ToolCheck
from ..tools.tool import RunContext, ToolBox

__all__ = [
    "Approve",
    "Effect",
    "Emit",
    "Invoke",
    "LiveEvents",
    "Prepare",
    "RunTools",
    "Send",
    "Sleep",
    "Steps",
    "Stream",
    "StreamReader",
    "handoff_events",
]


# --- effects: what the machine asks a driver to do -----------------------------------


@dataclass(slots=True, frozen=True)
class Emit:
    """Hand ``event`` to the caller (streaming only)."""

    event: StreamEvent


@dataclass(slots=True, frozen=True)
class Send:
    """Send a prepared request; the answer is the :class:`Response`."""

    provider: Provider
    prepared: Prepared
    #: ``time.monotonic()`` by which the answer must be in (``exec(deadline=...)``), or None.
    deadline: float | None = None


@dataclass(slots=True, frozen=True)
class Prepare:
    """Convert ``request`` for a provider that has not converted one yet; the answer is Prepared.

    A first conversion may import the vendor SDK: the drivers run it under the
    run's deadline, the async one off the event loop. Later ones run inline.
    """

    provider: Provider
    request: Request
    deadline: float | None = None


@dataclass(slots=True, frozen=True)
class Stream:
    """Send a prepared request as a stream; the answer is the assembled :class:`Response`.

    The driver feeds every provider event to ``reader`` and hands the caller
    what it returns (new text), one loop per stream: no round trip through the
    machine per event.
    """

    provider: Provider
    prepared: Prepared
    reader: StreamReader
    deadline: float | None = None


class StreamReader:
    """Assembles one attempt's events and remembers what reached the caller.

    The same reader serves every attempt (and every fallback model) of one
    request, so it knows whether the caller has already been handed part of
    an answer: once it has, a failed attempt is never continued by another
    answer. ``shown`` is the text the caller has of this request.

    With ``output`` (a structured output), it also reads the output as it
    arrives: :meth:`feed` returns the first event and leaves the others
    (``OutputDelta``, ``PartialOutput``) in ``more`` for the driver.
    """

    __slots__ = ("assembler", "delivered", "more", "output", "shown")

    def __init__(self, output: OutputStream | None = None) -> None:
        self.assembler = StreamAssembler()
        #: Events of this request handed to the caller (0: a retry is invisible).
        self.delivered = 0
        self.shown: list[str] = []
        self.output = output
        self.more: list[StreamEvent] = []

    def start(self) -> StreamReader:
        """Begin an attempt: a fresh assembly (and a fresh output)."""
        self.assembler = StreamAssembler()
        if self.output is not None:
            self.output.reset()
        return self

    def take_more(self) -> list[StreamEvent]:
        """The events the last :meth:`feed` left for the caller after the one it returned."""
        more, self.more = self.more, []
        return more

    def restart(self) -> None:
        """The caller was told to discard what it was shown (``StreamRestarted``)."""
        self.delivered = 0
        self.shown = []

    def feed(self, event: ProviderEvent) -> StreamEvent | None:
        """Take one provider event; return the event to hand the caller, if any."""
        self.assembler.feed(event)
        kind = type(event)
        if kind is TextDelta:
            text = event.text  # type: ignore[union-attr]
            if not text:
                return None
            self.shown.append(text)
            if self.output is not None:
                self.more = self.output.text(text)
        elif self.output is not None and (kind is ToolCallDelta or kind is StopEvent):
            return self._output_events(event)
        elif kind not in _SHOWN:
            return None
        self.delivered += 1
        return event  # type: ignore[return-value]

    def _output_events(self, event: ProviderEvent) -> StreamEvent | None:
        """A structured output's events for a tool-call fragment or the answer's end."""
        assert self.output is not None
        # At the StopEvent: the output's last value, if the text grew since it was parsed.
        found = self.output.call(event) if isinstance(event, ToolCallDelta) else self.output.flush()
        if not found:
            return None
        self.delivered += 1
        self.more = found[1:]
        return found[0]

    def response(self) -> Response:
        return self.assembler.response()


#: Provider events handed to the caller as they are (text and output events aside).
_SHOWN = frozenset({ThinkingDelta, CitationEvent, ServerToolEvent, MediaDelta, MediaBlock})


@dataclass(slots=True, frozen=True)
class Sleep:
    """Wait between attempts (``time.sleep`` or ``await asyncio.sleep``, as the backoff says)."""

    backoff: Backoff
    seconds: float


@dataclass(slots=True, frozen=True)
class Approve:
    """Ask the approver (sync or async) whether a call may run; the answer is a bool."""

    approver: Callable[..., Any]
    check: ToolCheck


@dataclass(slots=True, frozen=True)
class RunTools:
    """Run tool calls (threads for sync tools, tasks for async ones); the answer is outcomes."""

    box: ToolBox
    calls: list[ToolCall]
    contexts: list[RunContext[Any]]
    parallel: bool
    timeout: float | None
    scope: frozenset[str]
    #: The run's deadline (``time.monotonic()``): bounds every call, whatever its own timeout.
    deadline: float | None = None
    #: Streaming: what the tools write (``ctx.stream_writer``), for the driver to emit live.
    events: LiveEvents | None = None


class LiveEvents:
    """Events written while tools run (any thread), handed to the caller as they come.

    The sync driver reads them from a thread-safe queue while the tools run
    in a worker thread; the async driver :meth:`bind` s an ``asyncio.Queue``
    of its loop, fed thread-safely. Order is the order of ``put`` calls.
    """

    __slots__ = ("_aqueue", "_loop", "queue")

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._loop: Any = None
        self._aqueue: Any = None

    def bind(self, loop: Any, aqueue: Any) -> None:
        """Deliver to ``aqueue`` on ``loop`` (the async driver)."""
        self._aqueue = aqueue
        self._loop = loop

    def put(self, event: Any) -> None:
        loop = self._loop
        if loop is None:
            self.queue.put(event)
            return
        with contextlib.suppress(RuntimeError):  # a closed loop: the caller has gone
            loop.call_soon_threadsafe(self._aqueue.put_nowait, event)

    def writer(self, call_id: str, name: str) -> Callable[[Any], None]:
        """A ``stream_writer`` for one tool call."""

        def write(payload: Any) -> None:
            self.put(CustomEvent(payload, call_id, name))

        return write


@dataclass(slots=True, frozen=True)
class Invoke:
    """Call the chosen callable of a decision (awaited if async); the answer is its result.

    With ``events`` (a streamed handoff), the driver emits what is written
    there while the callable runs, as for :class:`RunTools`.
    """

    fn: Callable[..., Any]
    kwargs: dict[str, Any]
    events: LiveEvents | None = None


#: Inside a streamed run's handoff target: where its tools' ``stream_writer`` writes
#: (the target's own execs are not streamed; their progress belongs to the caller's stream).
handoff_events: contextvars.ContextVar[LiveEvents | None] = contextvars.ContextVar(
    "llmport_handoff_events", default=None
)


Effect = Emit | Prepare | Send | Stream | Sleep | Approve | RunTools | Invoke | Acquire
Steps = Generator[Effect, Any, Any]
