"""Vendor batch APIs: many ``exec`` requests at once, at about half the price.

``rt.batch(requests, *, model=None, batch_options=None, **common) -> BatchJob``
(and ``await rt.abatch(...)``) plans and converts every request with the
machinery ``exec`` uses (:func:`llmport.engine.plan.plan_run`, then the
plugin's own ``prepare``), so a request that cannot go to the model fails
with its typed input error **before anything is sent**; then the plugin's
:class:`BatchBackend` submits them all through the vendor's batch API
(OpenAI batches, Anthropic message batches, Gemini batch mode, Bedrock
model-invocation jobs).

A request is what ``exec`` takes, with a ``custom_id``: a dict
``{"custom_id": "a", "content": "...", **params}`` or a :class:`BatchRequest`.
There is no tool loop: tools are offered, and a tool call the model makes is
returned in the result (``result.stop_reason == "tool_use"``,
``result.messages[-1].tool_calls``), never run.

The job: :attr:`BatchJob.id` (``"provider:vendor-id"``, enough to resume it
with ``rt.batch_job(id)`` after a restart), :meth:`BatchJob.status` (a
neutral :class:`BatchStatus`), :meth:`BatchJob.wait` (optionally with a rich
progress bar), :meth:`BatchJob.results` (``{custom_id: RunResult |
LlmportError}``) and :meth:`BatchJob.cancel`; ``astatus``, ``wait_async``,
``aresults`` and ``acancel`` are the async twins.

Costs: each result's ``usage`` is priced as a batch request
(``Usage.priced_as(..., batch=True)``): genai-prices' batch price where it
has one, else the vendor's documented 50% discount (:func:`llmport.observe.prices.price`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from ...errors import BatchError, BatchTimeout, LlmportError, OptionError, UnsupportedFeatureError
from ...messages.types import Request, Response
from ...provider.contract import Prepared, Provider
from ...slotted import dataclass
from .job import Job, JobState, JobStatus, answer_result, plan_job, prepare_first

if TYPE_CHECKING:
    from ..plan import RunPlan
    from ..result import RunResult
    from ..settings import RunSettings

__all__ = [
    "BatchBackend",
    "BatchError",
    "BatchItem",
    "BatchJob",
    "BatchOutcome",
    "BatchRequest",
    "BatchState",
    "BatchStatus",
    "BatchTimeout",
    "abatch",
    "batch",
    "batch_job",
    "plan_items",
]

#: The neutral states of a batch (the job states every job shares).
BatchState = JobState
BatchStatus = JobStatus
"""Where a batch stands: a :class:`~llmport.engine.jobs.job.JobStatus`, as every job."""
#: exec parameters a batch request cannot take (it is one request, sent later).
_NOT_IN_BATCH = ("stream", "deadline", "approver", "budget", "fallback_on")


@dataclass(slots=True, frozen=True)
class BatchRequest:
    """One request of a batch: what ``exec`` takes, plus the caller's ``custom_id``.

    ``params`` are ``exec``'s keyword arguments (``system=``, ``max_tokens=``,
    ``response_format=``, ``tools=``, ``vendor=``, ...); the batch's own
    ``**common`` keywords apply to every request, a request's own win.
    """

    custom_id: str
    content: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, item: Any) -> BatchRequest:
        """A BatchRequest from one, or from ``{"custom_id": ..., "content": ..., **params}``."""
        if isinstance(item, BatchRequest):
            return item
        if isinstance(item, Mapping):
            rest = dict(item)
            custom_id = rest.pop("custom_id", None)
            content = rest.pop("content", None)
            return cls(custom_id, content, rest)
        raise OptionError(
            "batch requests are dicts {'custom_id': ..., 'content': ..., **params} "
            f"or BatchRequest objects, got {type(item).__name__}"
        )


@dataclass(slots=True)
class BatchItem:
    """One request of a batch as its backend sees it: planned, checked and converted."""

    custom_id: str
    request: Request
    prepared: Prepared
    plan: Any = None  # the exec RunPlan (structured output, messages); None on a bare resume


@dataclass(slots=True)
class BatchOutcome:
    """One id's answer as a backend returns it: a converted response or a typed error."""

    custom_id: str
    response: Response | None = None
    error: LlmportError | None = None


class BatchBackend:
    """A vendor's batch API, as a plugin provides it (``Provider.batch_backend()``).

    Plugins override :meth:`submit`, :meth:`status`, :meth:`outcomes` and
    :meth:`cancel` (sync) and, when the SDK has an async client, their async
    twins; the async defaults run the sync method in a thread. ``vendor_id``
    is the vendor's own batch id (the job id without the ``provider:`` prefix).
    """

    #: ``batch_options`` keys this backend takes.
    options: frozenset[str] = frozenset()

    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    def check(self, model: str, options: Mapping[str, Any]) -> None:
        """Raise before any request when this model or these options cannot be batched."""
        unknown = set(options) - self.options
        if unknown:
            from ...controls.options import unknown_option_error

            raise unknown_option_error(unknown, self.options, f"{self.provider.name} batch option")

    def submit(self, items: list[BatchItem], model: str, options: Mapping[str, Any]) -> str:
        """Send the batch; return the vendor's id for it."""
        raise NotImplementedError

    def status(self, vendor_id: str) -> BatchStatus:
        raise NotImplementedError

    def outcomes(self, vendor_id: str, items: Mapping[str, BatchItem]) -> list[BatchOutcome]:
        """Every result of an ended job. ``items`` may be empty (a job resumed by id alone)."""
        raise NotImplementedError

    def cancel(self, vendor_id: str) -> BatchStatus:
        raise NotImplementedError

    async def asubmit(self, items: list[BatchItem], model: str, options: Mapping[str, Any]) -> str:
        return await asyncio.to_thread(self.submit, items, model, options)

    async def astatus(self, vendor_id: str) -> BatchStatus:
        return await asyncio.to_thread(self.status, vendor_id)

    async def aoutcomes(self, vendor_id: str, items: Mapping[str, BatchItem]) -> list[BatchOutcome]:
        return await asyncio.to_thread(self.outcomes, vendor_id, items)

    async def acancel(self, vendor_id: str) -> BatchStatus:
        return await asyncio.to_thread(self.cancel, vendor_id)


# --- the job ------------------------------------------------------------------------------


class BatchJob(Job):
    """A submitted (or resumed) batch. See the module documentation."""

    def __init__(
        self,
        rt: RunSettings,
        provider: Provider,
        backend: BatchBackend,
        vendor_id: str,
        model: str | None,
        items: Mapping[str, BatchItem] | None = None,
    ) -> None:
        super().__init__(len(items or {}))
        self.runtime = rt
        self.provider = provider
        self.backend = backend
        self.vendor_id = vendor_id
        #: The model the requests went to (without the provider prefix), if known.
        self.model = model
        self.items: dict[str, BatchItem] = dict(items or {})
        self._results: dict[str, RunResult[Any] | LlmportError] | None = None

    @property
    def id(self) -> str:
        """``"provider:vendor-id"``: give it to ``rt.batch_job(id)`` to resume after a restart."""
        return f"{self.provider.name}:{self.vendor_id}"

    def __repr__(self) -> str:
        state = self.last_status.state if self.last_status is not None else "unknown"
        return f"BatchJob({self.id!r}, state={state!r}, requests={len(self.items) or '?'})"

    # -- the vendor's batch API (status, wait, cancel: the shared job shape) -------------

    def _poll(self) -> BatchStatus:
        return self.backend.status(self.vendor_id)

    async def _apoll(self) -> BatchStatus:
        return await self.backend.astatus(self.vendor_id)

    def _cancel(self) -> BatchStatus:
        return self.backend.cancel(self.vendor_id)

    async def _acancel(self) -> BatchStatus:
        return await self.backend.acancel(self.vendor_id)

    def _timeout(self, seconds: float, status: BatchStatus) -> LlmportError:
        return BatchTimeout(self.id, seconds, status)

    # -- results -------------------------------------------------------------------------

    def results(self) -> dict[str, RunResult[Any] | LlmportError]:
        """``{custom_id: RunResult | LlmportError}`` of an ended job (fetched once, then kept).

        Raises :class:`BatchError` while the job is still queued or running.
        """
        if self._results is None:
            last = self.last_status
            status = last if last is not None and last.done else self.status()
            _require_done(self.id, status)
            self._results = self._collect(self.backend.outcomes(self.vendor_id, self.items))
        return self._results

    async def aresults(self) -> dict[str, RunResult[Any] | LlmportError]:
        """Async :meth:`results`."""
        if self._results is None:
            last = self.last_status
            status = last if last is not None and last.done else await self.astatus()
            _require_done(self.id, status)
            outcomes = await self.backend.aoutcomes(self.vendor_id, self.items)
            self._results = self._collect(outcomes)
        return self._results

    def _collect(self, outcomes: list[BatchOutcome]) -> dict[str, RunResult[Any] | LlmportError]:
        out: dict[str, RunResult[Any] | LlmportError] = {}
        for outcome in outcomes:
            item = self.items.get(outcome.custom_id)
            if outcome.error is not None or outcome.response is None:
                out[outcome.custom_id] = outcome.error or BatchError(
                    f"{outcome.custom_id}: no answer in batch {self.id}"
                )
                continue
            out[outcome.custom_id] = answer_result(
                self.runtime,
                self.provider.name,
                self.model or "",
                item.plan if item is not None else None,
                list(item.request.messages) if item is not None else [],
                outcome.response,
                batch=True,
                price_name=self.provider.price_name,
            )
        state = self.last_status.state if self.last_status is not None else "ended"
        for custom_id in self.items:
            if custom_id not in out:  # never processed: the job was cancelled, expired or failed
                out[custom_id] = BatchError(f"{custom_id}: not processed (batch {self.id} {state})")
        return out


def _require_done(job_id: str, status: BatchStatus) -> None:
    if not status.done:
        raise BatchError(
            f"batch {job_id} is {status.state} ({status.processed}/{status.total} processed): "
            "wait() for it to end before reading results"
        )


# --- the runtime-facing functions ------------------------------------------------------


def _backend(provider: Provider, model: str) -> BatchBackend:
    make = getattr(provider, "batch_backend", None)
    backend = make() if make is not None else None
    if backend is None:
        raise UnsupportedFeatureError(
            provider.name, model, "batch", "this provider has no batch API in llmport"
        )
    if not isinstance(backend, BatchBackend):
        raise TypeError(f"{provider.name}: batch_backend() must return a BatchBackend")
    return backend


def plan_items(
    settings: RunSettings,
    requests: Iterable[Any],
    model: str | None,
    common: Mapping[str, Any],
) -> tuple[Provider, str, list[BatchItem]]:
    """Plan, check and convert every request (no I/O); all go to one provider and model."""
    _check_not_in_batch(common, "")
    items: list[BatchItem] = []
    seen: set[str] = set()
    provider: Provider | None = None
    target = ""
    for index, raw in enumerate(requests):
        spec = BatchRequest.of(raw)
        if not isinstance(spec.custom_id, str) or not spec.custom_id:
            raise OptionError(f"batch request {index} needs a non-empty string custom_id")
        if spec.custom_id in seen:
            raise OptionError(f"custom_id {spec.custom_id!r} appears twice in the batch")
        seen.add(spec.custom_id)
        plan = _plan_one(settings, spec, model, common)
        if provider is None:
            provider, target = plan.provider, plan.qualified
            _backend(provider, plan.model)  # unsupported: fail before converting the rest
        elif plan.qualified != target:
            raise OptionError(
                f"a batch goes to one model: {spec.custom_id!r} asks for {plan.qualified}, "
                f"the batch for {target}"
            )
        items.append(_convert(spec.custom_id, plan))
    if provider is None:
        raise OptionError("a batch needs at least one request")
    return provider, items[0].request.model, items


def _check_not_in_batch(kwargs: Mapping[str, Any], custom_id: str) -> None:
    for name in _NOT_IN_BATCH:
        if name in kwargs:
            where = f"{custom_id}: " if custom_id else ""
            raise OptionError(f"{where}{name}= does not apply to a batch request")


def _plan_one(
    settings: RunSettings, spec: BatchRequest, model: str | None, common: Mapping[str, Any]
) -> RunPlan:
    """The exec plan of one request (the batch's ``common`` keywords, the request's own win)."""
    kwargs = {**common, **spec.params}
    _check_not_in_batch(kwargs, spec.custom_id)
    requested = kwargs.pop("model", None) or model
    return plan_job(
        settings,
        spec.content,
        requested,
        kwargs,
        kind="batch",
        feature="a batch",
        label=f"{spec.custom_id}: ",
    )


def _convert(custom_id: str, plan: RunPlan) -> BatchItem:
    """The request ``exec`` would send first, through the hooks and the plugin's ``prepare``."""
    request, prepared = prepare_first(plan, "a batch")
    return BatchItem(custom_id, request, prepared, plan)


def _submit_args(
    rt: RunSettings,
    requests: Iterable[Any],
    model: str | None,
    batch_options: Mapping[str, Any] | None,
    common: Mapping[str, Any],
) -> tuple[Provider, BatchBackend, str, list[BatchItem], dict[str, Any]]:
    provider, name, items = plan_items(rt, requests, model, common)
    backend = _backend(provider, name)
    options = dict(batch_options or {})
    backend.check(name, options)
    return provider, backend, name, items, options


def batch(
    rt: RunSettings,
    requests: Iterable[Any],
    *,
    model: str | None = None,
    batch_options: Mapping[str, Any] | None = None,
    **common: Any,
) -> BatchJob:
    """Submit ``requests`` through the vendor's batch API (see the module documentation)."""
    provider, backend, name, items, options = _submit_args(
        rt, requests, model, batch_options, common
    )
    vendor_id = backend.submit(items, name, options)
    job = BatchJob(rt, provider, backend, vendor_id, name, {i.custom_id: i for i in items})
    return job


async def abatch(
    rt: RunSettings,
    requests: Iterable[Any],
    *,
    model: str | None = None,
    batch_options: Mapping[str, Any] | None = None,
    **common: Any,
) -> BatchJob:
    """Async :func:`batch`."""
    provider, backend, name, items, options = _submit_args(
        rt, requests, model, batch_options, common
    )
    vendor_id = await backend.asubmit(items, name, options)
    return BatchJob(rt, provider, backend, vendor_id, name, {i.custom_id: i for i in items})


def batch_job(
    rt: RunSettings,
    job_id: str,
    *,
    requests: Iterable[Any] | None = None,
    model: str | None = None,
    **common: Any,
) -> BatchJob:
    """Resume the job ``job_id`` (``"provider:vendor-id"``), e.g. in a new process.

    Give the same ``requests`` (and ``model``/``**common``) the job was
    submitted with to get results exactly as in the first process (structured
    output parsed, the conversation in ``messages``); they are planned again,
    nothing is sent. Without them, results are the vendor's answers converted
    by the plugin (text, tool calls, usage), priced with the model the vendor reports.
    """
    if not isinstance(job_id, str) or ":" not in job_id:
        raise OptionError(f"a batch job id looks like 'provider:vendor-id', got {job_id!r}")
    prefix, vendor_id = job_id.split(":", 1)
    items: dict[str, BatchItem] = {}
    name: str | None = None
    if requests is not None:
        if model is None:
            raise OptionError("batch_job(requests=...) needs the model the batch was sent to")
        provider, name, planned = plan_items(rt, requests, model, common)
        items = {i.custom_id: i for i in planned}
    elif model is not None:
        provider, name = rt.resolve(model)[:2]
    else:
        provider = rt.resolve(f"{prefix}:batch")[0]
    if provider.name != prefix:
        raise OptionError(f"{job_id!r} is a {prefix} job, but the model routes to {provider.name}")
    backend = _backend(provider, name or "")
    return BatchJob(rt, provider, backend, vendor_id, name, items)
