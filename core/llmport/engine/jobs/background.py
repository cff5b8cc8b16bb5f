"""Background runs: the vendor finishes the run; llmport polls or streams it.

``rt.submit(content, model=..., **exec options) -> BackgroundJob`` (and
``await rt.asubmit(...)``) plans and converts the run's first request with
the machinery ``exec`` uses (bad input fails typed before anything is
sent), then the plugin's :class:`BackgroundBackend` starts it in the
vendor's background mode (OpenAI Responses ``background: true``). The job
has the shape every vendor job has (:class:`~llmport.engine.jobs.job.Job`,
shared with batches): :meth:`~BackgroundJob.status`, :meth:`~Job.wait`
(``progress=True`` draws a bar), :meth:`~Job.cancel`, plus
:meth:`BackgroundJob.result` (a ``RunResult``) and :meth:`BackgroundJob.stream`;
each has its async twin. ``rt.background_job(id)`` resumes a job by its id
(``"provider:vendor-id"``) after a restart; nothing is sent until it is asked.

Streaming: ``rt.submit(..., stream=True)`` opens the run's event stream at
once; ``job.stream()`` hands its events over (text, thinking, citations,
then a ``FinalEvent`` with the RunResult). A dropped connection is resumed
from the last sequence number seen (OpenAI: ``GET /v1/responses/{id}
?stream=true&starting_after=N``): no event is shown twice or lost. A job
not submitted streaming (or resumed by id) streams the same way, from the
start. A stream whose events carry no sequence number cannot be resumed
without showing its start again: dropped before anything reached the
caller it is read again from the start (unseen); after, it raises
:class:`~llmport.errors.StreamInterrupted` carrying the partial run
(a stream never continues with another answer), never "Hello Hello". Reconnections are bounded:
:data:`MAX_RECONNECTS` in a row without a new event, :data:`MAX_TOTAL_RECONNECTS`
in all; each read waits at most the run's ``timeout=`` (the Runtime's, else
the SDK's own).

Tools: a background run has no tool loop. Tools are offered; a function
call the model makes ends the run (``stop_reason == "tool_use"``) with the
calls in ``result.pending_tool_calls``: run them and go on in the
foreground with ``result.continue_with({call_id: value})`` (the submit's
parameters, the whole conversation so far). Tools the vendor runs itself
(``NativeTool``: web search, code interpreter) run in the background.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import (
    BackgroundError,
    BackgroundTimeout,
    LlmportError,
    MalformedResponseError,
    OptionError,
    ProviderConnectionError,
    ProviderError,
    StreamInterrupted,
    UnsupportedFeatureError,
)
from ...messages.types import FinalEvent, ProviderEvent, Request, Response, StreamEvent
from ...provider.contract import Prepared, Provider
from ...slotted import dataclass
from .job import Job, JobStatus, answer_result, plan_job, prepare_first

if TYPE_CHECKING:
    from ..plan import RunPlan
    from ..result import Caller, RunResult
    from ..settings import RunSettings

__all__ = [
    "BackgroundBackend",
    "BackgroundJob",
    "Polled",
    "abackground",
    "background",
    "background_job",
]

#: exec parameters a background run cannot take (the vendor runs it; nothing is held).
_NOT_IN_BACKGROUND = ("deadline", "approver", "budget", "fallback_on", "stream_retry")
#: Reconnections in a row without a new event before a stream's failure is raised.
MAX_RECONNECTS = 5
#: Reconnections of one stream in all: a peer that gives one event per connection
#: (or replays forever) ends here rather than never.
MAX_TOTAL_RECONNECTS = 50


@dataclass(slots=True)
class Polled:
    """What the vendor said of a background run: its status and, once ended, the answer."""

    status: JobStatus
    response: Response | None = None
    error: LlmportError | None = None


class EventConverter(Protocol):
    """A plugin's converter of one stream's vendor events into provider events."""

    def feed(self, item: Any) -> Iterator[ProviderEvent]: ...
    def end(self) -> Iterator[ProviderEvent]: ...


class BackgroundBackend:
    """A vendor's background mode, as a plugin provides it (``Provider.background_backend()``).

    Events are the vendor's raw stream events; :meth:`sequence` reads their
    sequence number, :meth:`started` the run's id from the first ones, and
    :meth:`ended` says whether one ends the run. Async twins default to the
    sync method in a thread (streams have no default: a plugin gives both).
    """

    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    def submit(self, prepared: Prepared) -> str:
        """Start the run in the background; return the vendor's id for it."""
        raise NotImplementedError

    def submit_stream(self, prepared: Prepared) -> Iterator[Any]:
        """Start the run in the background, streaming: its events from the first."""
        raise NotImplementedError

    def submit_astream(self, prepared: Prepared) -> AsyncIterator[Any]:
        raise NotImplementedError

    def retrieve(self, vendor_id: str, prepared: Prepared | None) -> Polled:
        raise NotImplementedError

    def events(
        self, vendor_id: str, after: int | None, *, timeout: float | None = None
    ) -> Iterator[Any]:
        """The run's events after sequence number ``after`` (None: from the start).

        ``timeout``: the longest wait for the next bytes (None: the client's own).
        """
        raise NotImplementedError

    def aevents(
        self, vendor_id: str, after: int | None, *, timeout: float | None = None
    ) -> AsyncIterator[Any]:
        raise NotImplementedError

    def cancel(self, vendor_id: str, prepared: Prepared | None) -> Polled:
        """Ask the vendor to cancel the run; what it says of the run then."""
        raise NotImplementedError

    def converter(self, prepared: Prepared | None) -> EventConverter:
        raise NotImplementedError

    def sequence(self, event: Any) -> int | None:
        raise NotImplementedError

    def started(self, event: Any) -> str | None:
        """The run's id, if ``event`` announces it."""
        raise NotImplementedError

    def ended(self, event: Any) -> bool:
        raise NotImplementedError

    async def asubmit(self, prepared: Prepared) -> str:
        return await asyncio.to_thread(self.submit, prepared)

    async def aretrieve(self, vendor_id: str, prepared: Prepared | None) -> Polled:
        return await asyncio.to_thread(self.retrieve, vendor_id, prepared)

    async def acancel(self, vendor_id: str, prepared: Prepared | None) -> Polled:
        return await asyncio.to_thread(self.cancel, vendor_id, prepared)


class BackgroundJob(Job):
    """A run the vendor finishes in the background. See the module documentation."""

    def __init__(
        self,
        settings: RunSettings,
        provider: Provider,
        backend: BackgroundBackend,
        vendor_id: str,
        *,
        plan: RunPlan | None = None,
        request: Request | None = None,
        prepared: Prepared | None = None,
        caller: Caller | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(1)
        self.runtime = settings
        self.provider = provider
        self.backend = backend
        self.vendor_id = vendor_id
        self.plan = plan
        self.request = request
        self.prepared = prepared
        self.caller = caller
        self.params = dict(params or {})
        #: The last sequence number a stream of this run delivered (None: none yet).
        self.cursor: int | None = None
        self._polled: Polled | None = None
        self._result: RunResult[Any] | None = None
        self._open: Any = None  # the stream submit(stream=True) opened, until stream() reads it
        self._first: list[Any] = []  # events read from it to learn the run's id

    @property
    def id(self) -> str:
        """``"provider:vendor-id"``: give it to ``rt.background_job(id)`` to resume."""
        return f"{self.provider.name}:{self.vendor_id}"

    @property
    def response_id(self) -> str:
        """The vendor's id of the run (OpenAI: the response id, for ``previous_response_id=``)."""
        return self.vendor_id

    def __repr__(self) -> str:
        state = self.last_status.state if self.last_status is not None else "unknown"
        return f"BackgroundJob({self.id!r}, state={state!r})"

    # -- the shared job shape: status, wait, cancel ---------------------------------------

    def _poll(self) -> JobStatus:
        self._polled = self.backend.retrieve(self.vendor_id, self.prepared)
        return self._polled.status

    async def _apoll(self) -> JobStatus:
        self._polled = await self.backend.aretrieve(self.vendor_id, self.prepared)
        return self._polled.status

    def _cancel(self) -> JobStatus:
        self._polled = self.backend.cancel(self.vendor_id, self.prepared)
        return self._polled.status

    async def _acancel(self) -> JobStatus:
        self._polled = await self.backend.acancel(self.vendor_id, self.prepared)
        return self._polled.status

    def _timeout(self, seconds: float, status: JobStatus) -> LlmportError:
        return BackgroundTimeout(self.id, seconds, status)

    # -- the answer -------------------------------------------------------------------------

    def result(self) -> RunResult[Any]:
        """The run's RunResult once it has ended (asked once, then kept).

        Raises :class:`BackgroundError` while it is queued or running
        (``wait()`` first) or when it was cancelled or expired, and the
        vendor's typed error when the run failed.
        """
        if self._result is None:
            if self._polled is None or not self._polled.status.done:
                self.status()
            self._result = self._answer()
        return self._result

    async def aresult(self) -> RunResult[Any]:
        """Async :meth:`result`."""
        if self._result is None:
            if self._polled is None or not self._polled.status.done:
                await self.astatus()
            self._result = self._answer()
        return self._result

    def _answer(self) -> RunResult[Any]:
        polled = self._polled
        assert polled is not None
        status = polled.status
        if not status.done:
            raise BackgroundError(
                f"background run {self.id} is {status.state}: wait() for it to end first"
            )
        if polled.error is not None:
            raise polled.error
        if polled.response is None:
            raise BackgroundError(f"background run {self.id} ended {status.state}, no answer")
        return self._run_of(polled.response)

    def _run_of(self, response: Response) -> RunResult[Any]:
        """The RunResult of the run's answer; function calls are left for the foreground."""
        history = list(self.request.messages) if self.request is not None else []
        model = self.plan.model if self.plan is not None else response.model
        run = answer_result(
            self.runtime,
            self.provider.name,
            model,
            self.plan,
            history,
            response,
            batch=False,
            price_name=self.provider.price_name,
        )
        if isinstance(run, LlmportError):
            raise run  # a structured answer that does not validate
        run.response_id = response.id or self.vendor_id
        if response.tool_calls:
            from ..result import Continuation

            run.pending_tool_calls = list(response.tool_calls)
            if self.caller is not None:  # continue_with() goes on in the foreground
                run.continuation = Continuation(self.caller, self.params)
        return run

    # -- streaming, resumed after a dropped connection ----------------------------------

    def stream(self) -> Iterator[StreamEvent]:
        """The run's events as they come, then a ``FinalEvent``; resumes after a drop."""
        resume = _Resume(self)
        source: Any = self._take_open(False) or self._events()
        while True:
            try:
                for raw in source:
                    yield from resume.take(raw)
            except LlmportError as exc:
                resume.dropped(exc)
            else:
                if resume.ended:
                    break
                resume.dropped(None)
            source = self._events()
        yield from resume.finish()

    async def astream(self) -> AsyncIterator[StreamEvent]:
        """Async :meth:`stream`."""
        resume = _Resume(self)
        source: Any = self._take_open(True) or self._aevents()
        while True:
            try:
                async for raw in source:
                    for event in resume.take(raw):
                        yield event
            except LlmportError as exc:
                resume.dropped(exc)
            else:
                if resume.ended:
                    break
                resume.dropped(None)
            source = self._aevents()
        for event in resume.finish():
            yield event

    def _events(self) -> Iterator[Any]:
        return self.backend.events(self.vendor_id, self.cursor, timeout=self._read_timeout())

    def _aevents(self) -> AsyncIterator[Any]:
        return self.backend.aevents(self.vendor_id, self.cursor, timeout=self._read_timeout())

    def _read_timeout(self) -> float | None:
        """The run's ``timeout=`` (the submit's, else the Runtime's): bounds each stream read."""
        options = self.plan.options if self.plan is not None else self.runtime.options
        timeout = options.get("timeout")
        return float(timeout) if isinstance(timeout, (int, float)) else None

    def _take_open(self, is_async: bool) -> Any:
        """The stream ``submit(stream=True)`` opened (once), its first events replayed.

        ``asubmit`` opened an async stream, read by :meth:`astream` only (and
        ``submit`` a sync one, read by :meth:`stream`).
        """
        opened, first = self._open, self._first
        if opened is None:
            return None
        if isinstance(opened, AsyncIterator) != is_async:
            made, read = ("asubmit", "astream") if not is_async else ("submit", "stream")
            raise OptionError(f"this job was started by {made}(stream=True): read it with {read}()")
        self._open, self._first = None, []
        if is_async:
            return _achain(first, opened)
        return _chain(first, opened)


def _chain(first: list[Any], rest: Iterator[Any]) -> Iterator[Any]:
    yield from first
    yield from rest


async def _achain(first: list[Any], rest: AsyncIterator[Any]) -> AsyncIterator[Any]:
    for item in first:
        yield item
    async for item in rest:
        yield item


class _Resume:
    """One stream of a job across reconnections: the cursor, the assembly, what was shown.

    Shared by :meth:`BackgroundJob.stream` and :meth:`BackgroundJob.astream`:
    an event at or before the cursor was delivered already and is skipped.
    Events without a sequence number cannot be skipped so: see :meth:`dropped`.
    """

    def __init__(self, job: BackgroundJob) -> None:
        from ..effects import StreamReader

        self.job = job
        self.converter = job.backend.converter(job.prepared)
        self.reader = StreamReader()
        self.ended = False
        self.failures = 0  # reconnections in a row without a new event
        self.reconnects = 0  # reconnections in all
        self.taken = 0  # events this connection gave
        self.unnumbered = False  # an event without a sequence number was taken
        self.broken: LlmportError | None = None  # an event that could not be read

    def take(self, raw: Any) -> list[StreamEvent]:
        job = self.job
        self.taken += 1
        seq = job.backend.sequence(raw)
        if seq is not None and job.cursor is not None and seq <= job.cursor:
            return []  # replayed after a reconnection: already delivered
        if seq is not None:
            job.cursor = seq
        else:
            self.unnumbered = True
        self.failures = 0
        self.ended = self.ended or job.backend.ended(raw)
        try:
            shown = [self.reader.feed(e) for e in self.converter.feed(raw)]
        except LlmportError as exc:  # the event itself is unreadable: no reconnection helps
            self.broken = exc
            raise
        return [e for e in shown if e is not None]

    def dropped(self, error: LlmportError | None) -> None:
        """The connection ended before the run did: reconnect, unless it keeps failing.

        A drop is a transient transport error (retryable) or a stream cut
        after some events; any other error, an event that cannot be read, and
        a stream that ends having given nothing at all (not a stream: a
        MalformedResponseError), is raised. Past the bounds
        (:data:`MAX_RECONNECTS` in a row without a new event,
        :data:`MAX_TOTAL_RECONNECTS` in all) the drop's error is raised.
        """
        if error is not None and (
            error is self.broken or not (isinstance(error, ProviderError) and error.retryable)
        ):
            raise error
        if error is None and self.taken == 0:
            raise MalformedResponseError(
                f"background run {self.job.id}: the vendor's stream ended with no event",
                provider=self.job.provider.name,
            )
        self.failures += 1
        self.reconnects += 1
        self.taken = 0
        if self.failures > MAX_RECONNECTS or self.reconnects > MAX_TOTAL_RECONNECTS:
            raise error or BackgroundError(
                f"background run {self.job.id}: the stream kept ending early "
                f"({self.reconnects} reconnections, {self.failures - 1} in a row without an event)"
            )
        if self.job.cursor is None or self.unnumbered:
            self._from_the_start(error)

    def _from_the_start(self, error: LlmportError | None) -> None:
        """Resume a stream that has no sequence numbers: it is read again from its start.

        Unseen when nothing reached the caller yet (a fresh assembly); else
        the caller would be shown the start twice, so the stream is
        interrupted with the partial run.
        """
        job = self.job
        if self.reader.delivered:
            cause = error or ProviderConnectionError(
                f"background run {job.id}: the stream ended before the run did",
                provider=job.provider.name,
            )
            partial = self._partial()
            raise StreamInterrupted(cause, partial, provider=job.provider.name) from cause
        job.cursor = None
        self.unnumbered = False
        self.converter = job.backend.converter(job.prepared)
        self.reader.start()

    def _partial(self) -> RunResult[Any]:
        """The run so far, for :class:`StreamInterrupted`: the text the caller was shown."""
        from ..result import RunResult

        job = self.job
        model = job.plan.qualified if job.plan is not None else job.provider.name
        return RunResult(text="".join(self.reader.shown), model=model, response_id=job.vendor_id)

    def finish(self) -> list[StreamEvent]:
        shown = [self.reader.feed(e) for e in self.converter.end()]
        run = self.job._run_of(self.reader.response())
        self.job._result = run
        return [*(e for e in shown if e is not None), FinalEvent(run)]


# --- the runtime-facing functions ------------------------------------------------------


def _backend(provider: Provider, model: str) -> BackgroundBackend:
    make = getattr(provider, "background_backend", None)
    backend = make() if make is not None else None
    if backend is None:
        raise UnsupportedFeatureError(
            provider.name,
            model,
            "background runs",
            "only OpenAI Responses (openai-responses:) runs requests in the background",
        )
    if not isinstance(backend, BackgroundBackend):
        raise TypeError(f"{provider.name}: background_backend() must return a BackgroundBackend")
    return backend


def _planned(
    settings: RunSettings, content: Any, model: Any, params: Mapping[str, Any]
) -> tuple[RunPlan, BackgroundBackend]:
    for name in _NOT_IN_BACKGROUND:
        if name in params:
            raise OptionError(f"{name}= does not apply to a background run")
    plan = plan_job(settings, content, model, params, kind="background", feature="a background run")
    return plan, _backend(plan.provider, plan.model)


class _Start:
    """A background run being started: planned, converted, and its first events read."""

    def __init__(
        self,
        settings: RunSettings,
        caller: Caller | None,
        content: Any,
        model: Any,
        stream: bool,
        params: Mapping[str, Any],
    ) -> None:
        self.settings, self.caller, self.params = settings, caller, params
        self.plan, self.backend = _planned(settings, content, model, params)
        self.request, self.prepared = prepare_first(self.plan, "a background run", stream=stream)
        self.first: list[Any] = []
        self.vendor_id: str | None = None

    def job(self, vendor_id: str) -> BackgroundJob:
        return BackgroundJob(
            self.settings,
            self.plan.provider,
            self.backend,
            vendor_id,
            plan=self.plan,
            request=self.request,
            prepared=self.prepared,
            caller=self.caller,
            params={**self.params, "model": self.plan.qualified},
        )

    def read(self, raw: Any) -> bool:
        """Keep a first event of the stream; True once the run's id is known."""
        self.first.append(raw)
        self.vendor_id = self.backend.started(raw)
        return self.vendor_id is not None

    def opened(self, events: Any) -> BackgroundJob:
        """The job of a streamed start; its stream goes on where :meth:`read` stopped."""
        if not self.vendor_id:
            raise BackgroundError(
                f"{self.plan.qualified}: the background stream never named its run"
            )
        job = self.job(self.vendor_id)
        job._open, job._first = events, self.first
        return job


def background(
    settings: RunSettings,
    caller: Caller | None,
    content: Any,
    *,
    model: Any = None,
    stream: bool = False,
    **params: Any,
) -> BackgroundJob:
    """Start ``exec(content, model=..., **params)`` in the vendor's background mode."""
    start = _Start(settings, caller, content, model, stream, params)
    if not stream:
        return start.job(start.backend.submit(start.prepared))
    events = start.backend.submit_stream(start.prepared)
    for raw in events:
        if start.read(raw):
            break
    return start.opened(events)


async def abackground(
    settings: RunSettings,
    caller: Caller | None,
    content: Any,
    *,
    model: Any = None,
    stream: bool = False,
    **params: Any,
) -> BackgroundJob:
    """Async :func:`background`."""
    start = _Start(settings, caller, content, model, stream, params)
    if not stream:
        return start.job(await start.backend.asubmit(start.prepared))
    events = start.backend.submit_astream(start.prepared)
    async for raw in events:
        if start.read(raw):
            break
    return start.opened(events)


def background_job(settings: RunSettings, job_id: str) -> BackgroundJob:
    """Resume the background run ``job_id`` (``"provider:vendor-id"``); nothing is sent."""
    if not isinstance(job_id, str) or ":" not in job_id or not job_id.split(":", 1)[1]:
        raise OptionError(f"a background job id looks like 'provider:vendor-id', got {job_id!r}")
    prefix, vendor_id = job_id.split(":", 1)
    provider = settings.resolve(f"{prefix}:background")[0]
    if provider.name != prefix:
        raise OptionError(f"{job_id!r} names {prefix}, which routes to {provider.name}")
    return BackgroundJob(settings, provider, _backend(provider, ""), vendor_id)
