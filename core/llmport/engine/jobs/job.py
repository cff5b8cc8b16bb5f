"""The job shape batches and background runs share: status, wait, cancel, results.

A vendor job is polled, not held: :class:`Job` asks where it stands
(:meth:`Job.status`, a neutral :class:`JobStatus`), polls until it has
ended (:meth:`Job.wait`, with an optional rich progress bar and a timeout
that leaves the job running), and cancels it (:meth:`Job.cancel`), each
with its async twin. :class:`~llmport.engine.jobs.batch.BatchJob` (many requests
through a vendor's batch API) and :class:`~llmport.engine.jobs.background.BackgroundJob`
(one run the vendor finishes in the background) are its two kinds; a kind
says how to ask the vendor (``_poll`` / ``_cancel`` and their async twins)
and what a timeout raises.

The helpers below are shared too: the plan and first request of a job
(planned and converted exactly as ``exec`` would, so bad input fails
before anything is sent) and the ``RunResult`` of a job's answer.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from ...errors import LlmportError, OptionError, UnsupportedFeatureError
from ...messages.types import Message, Request, Response
from ...provider.contract import Prepared
from ...slotted import dataclass

if TYPE_CHECKING:
    from rich.console import Console

    from ..plan import RunPlan
    from ..result import RunResult
    from ..settings import RunSettings

__all__ = [
    "Job",
    "JobState",
    "JobStatus",
    "answer_result",
    "plan_job",
    "prepare_first",
]

#: The shortest pause between two polls of :meth:`Job.wait`: ``poll=0`` would ask the
#: vendor hundreds of times a second (each ask a billed, rate-limited request).
MIN_POLL = 0.1

#: The neutral states of a job; the first two are "not done".
JobState = Literal["queued", "running", "completed", "failed", "cancelled", "expired"]
PENDING = ("queued", "running")


@dataclass(slots=True, frozen=True)
class JobStatus:
    """Where a job stands, in neutral terms, with the vendor's own status in ``raw``.

    ``succeeded`` and ``failed`` count the requests finished so far (as the
    vendor reports them); ``total`` is the number of requests (0 if unknown;
    a background run is one request).
    """

    id: str
    state: JobState
    total: int = 0
    succeeded: int = 0
    failed: int = 0
    raw: str = ""

    @property
    def done(self) -> bool:
        """Whether the job has ended (completed, failed, cancelled or expired)."""
        return self.state not in PENDING

    @property
    def processed(self) -> int:
        return self.succeeded + self.failed


class Job:
    """A vendor job polled until it ends; subclasses say how to reach the vendor."""

    def __init__(self, size: int = 0) -> None:
        self.last_status: JobStatus | None = None
        #: The number of requests in the job, when known (0: unknown).
        self.size = size

    @property
    def id(self) -> str:
        """``"provider:vendor-id"``: enough to resume the job after a restart."""
        raise NotImplementedError

    # -- what a kind of job provides ----------------------------------------------------

    def _poll(self) -> JobStatus:
        raise NotImplementedError

    async def _apoll(self) -> JobStatus:
        raise NotImplementedError

    def _cancel(self) -> JobStatus:
        raise NotImplementedError

    async def _acancel(self) -> JobStatus:
        raise NotImplementedError

    def _timeout(self, seconds: float, status: JobStatus) -> LlmportError:
        """The error :meth:`wait` raises when ``seconds`` passed before the job ended."""
        raise NotImplementedError

    # -- the shared shape ------------------------------------------------------------------

    def _own(self, status: JobStatus) -> JobStatus:
        self.last_status = replace(status, id=self.id, total=status.total or self.size)
        return self.last_status

    def status(self) -> JobStatus:
        """Ask the vendor where the job stands."""
        return self._own(self._poll())

    async def astatus(self) -> JobStatus:
        """Async :meth:`status`."""
        return self._own(await self._apoll())

    def wait(
        self,
        *,
        poll: float = 30.0,
        timeout: float | None = None,
        progress: bool = False,
        console: Console | None = None,
    ) -> JobStatus:
        """Poll every ``poll`` seconds until the job has ended; return its last status.

        ``progress=True`` draws a rich progress bar (on ``console``, default
        stderr). Past ``timeout`` seconds the job's timeout error is raised
        (:class:`~llmport.errors.BatchTimeout`, :class:`~llmport.errors.BackgroundTimeout`);
        the job goes on. ``poll`` below :data:`MIN_POLL` waits :data:`MIN_POLL`;
        a negative or non-finite ``poll`` or ``timeout`` is an
        :class:`~llmport.errors.OptionError` before the first poll.
        """
        poll = wait_options(poll, timeout)
        started = time.monotonic()
        with _Bar(self, progress, console) as bar:
            while True:
                status = self.status()
                bar.update(status)
                if status.done:
                    return status
                left = _left(started, timeout)
                if left is not None and left <= 0:
                    raise self._timeout(timeout or 0.0, status)
                time.sleep(poll if left is None else min(poll, left))

    async def wait_async(
        self,
        *,
        poll: float = 30.0,
        timeout: float | None = None,
        progress: bool = False,
        console: Console | None = None,
    ) -> JobStatus:
        """Async :meth:`wait` (``await job.wait_async(...)``)."""
        poll = wait_options(poll, timeout)
        started = time.monotonic()
        with _Bar(self, progress, console) as bar:
            while True:
                status = await self.astatus()
                bar.update(status)
                if status.done:
                    return status
                left = _left(started, timeout)
                if left is not None and left <= 0:
                    raise self._timeout(timeout or 0.0, status)
                await asyncio.sleep(poll if left is None else min(poll, left))

    def cancel(self) -> JobStatus:
        """Ask the vendor to cancel the job (what is already done keeps its results)."""
        return self._own(self._cancel())

    async def acancel(self) -> JobStatus:
        """Async :meth:`cancel`."""
        return self._own(await self._acancel())


def wait_options(poll: Any, timeout: Any) -> float:
    """``wait``'s pause between polls, checked with its timeout (an OptionError if bad).

    A pause below :data:`MIN_POLL` is raised to it rather than refused: ``poll=0``
    means "as often as is sane", and a busy loop against a vendor never is.
    """
    if not _seconds(poll):
        raise OptionError(f"poll must be a finite number of seconds >= 0, got {poll!r}")
    if timeout is not None and not _seconds(timeout):
        raise OptionError(
            f"timeout must be None or a finite number of seconds >= 0, got {timeout!r}"
        )
    return max(float(poll), MIN_POLL)


def _seconds(value: Any) -> bool:
    """Whether ``value`` is a finite, non-negative number of seconds (a bool is not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and value >= 0


def _left(started: float, timeout: float | None) -> float | None:
    return None if timeout is None else timeout - (time.monotonic() - started)


class _Bar:
    """A rich progress bar over a job's polls (nothing at all when ``progress=False``)."""

    def __init__(self, job: Job, enabled: bool, console: Console | None) -> None:
        self.job = job
        self.enabled = enabled
        self.console = console
        self.progress: Any = None
        self.task: Any = None

    def __enter__(self) -> _Bar:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            console = self.console if self.console is not None else Console(stderr=True)
            self.progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[state]}"),
                TimeElapsedColumn(),
                console=console,
                transient=False,
            )
            self.progress.start()
            total = self.job.size or None
            self.task = self.progress.add_task(self.job.id, total=total, state="submitted")
        return self

    def update(self, status: JobStatus) -> None:
        if self.progress is None:
            return
        failed = f", {status.failed} failed" if status.failed else ""
        self.progress.update(
            self.task,
            total=status.total or None,
            completed=status.processed,
            state=f"{status.state}{failed}",
        )
        self.progress.refresh()

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()


# --- planning a job's request, and its answer's RunResult ----------------------------------


def plan_job(
    settings: RunSettings,
    content: Any,
    model: Any,
    kwargs: Mapping[str, Any],
    *,
    kind: str,
    feature: str,
    label: str = "",
) -> RunPlan:
    """The exec plan of a job's request (no I/O), for one model and no tool-loop choices.

    ``kind`` names the job API (``"batch"``), ``feature`` the job in messages
    (``"a batch"``), ``label`` prefixes them (a batch request's ``custom_id``).
    """
    from ...controls.options import split_call
    from ..plan import plan_run

    if isinstance(model, (list, tuple)):
        raise OptionError(f"{feature} goes to one model: fallback model lists do not apply")
    params, options = split_call(kwargs)
    params["content"] = content
    params["model"] = model
    if params["choices"] is not None:
        raise OptionError(f"{label}choices= needs a tool loop; not in {feature}")
    plan = plan_run(settings.snapshot(), params, options, None, stream=False)
    if plan.plain_callable:
        raise UnsupportedFeatureError(
            plan.provider.name, plan.model, kind, f"call= functions have no {kind} API"
        )
    return replace(plan, fallback_on=(), candidates=())  # one model: no fallbacks in a job


def prepare_first(plan: RunPlan, feature: str, *, stream: bool = False) -> tuple[Request, Prepared]:
    """The request ``exec`` would send first, through the hooks and the plugin's ``prepare``."""
    from ..output_modes import OutputMode
    from ..requests import build_request

    mode = OutputMode(plan)
    request = build_request(
        plan,
        plan.messages,
        tools=True,
        tool_choice=mode.tool_choice(plan.tool_choice),
        response_format=mode.response_format,
        specs=mode.specs,
    )
    if mode.output_tool is not None:
        feature = f'output_mode="tool" in {feature}'
        raise UnsupportedFeatureError(plan.provider.name, plan.model, feature)
    request = plan.hooks.before_request(request, plan.call_info(1))
    if stream:
        request = replace(request, stream=True)
    prepared = plan.provider.prepare(request) or Prepared(request)
    return request, prepared


def answer_result(
    settings: RunSettings,
    provider: str,
    model: str,
    plan: RunPlan | None,
    history: list[Message],
    response: Response,
    *,
    batch: bool,
    price_name: str | None = None,
) -> RunResult[Any] | LlmportError:
    """A job's answer as the RunResult ``exec`` would have built (no tool loop, no repair).

    ``batch`` prices the usage as a batch request; ``price_name`` is the provider
    whose prices apply (a named instance's base; default ``provider``). A structured reply that
    does not validate is returned as its typed error (carrying the run).
    """
    from ...output import structured
    from ..result import RunResult

    model = model or response.model
    usage = response.usage
    usage.requests = usage.requests or 1
    usage.priced_as(price_name or provider, model, batch=batch)
    settings.add_usage(usage)
    run: RunResult[Any] = RunResult(
        output=response.text,
        text=response.text,
        model=plan.qualified if plan is not None else f"{provider}:{model}",
        usage=usage,
        iterations=1,
        stop_reason=response.stop_reason,
        attempts=1,
        thinking=response.thinking if response.blocks else "",
    )
    run.messages = [*history, response.as_message()]
    run.value = response.text
    if plan is not None and plan.response_format is not None and not response.tool_calls:
        value, errors = structured.parse_reply(plan.response_format, response.text)
        if not errors:
            try:
                value = structured.to_output(value, plan.output_type)
            except Exception as exc:  # a validator stricter than the schema
                errors = [f"<root>: {type(exc).__name__}: {exc}"]
        if errors:
            run.output = None
            failure = structured.fail(errors, response.text)
            failure.run = run  # type: ignore[attr-defined]
            return failure
        run.output = structured.strip_fences(response.text)
        run.value = value
    return run
