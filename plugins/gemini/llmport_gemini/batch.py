"""Gemini batch mode: ``models/{model}:batchGenerateContent`` with inline requests.

Each request is an ``InlinedRequest`` built from exactly what the provider's
``prepare`` built for ``generate_content`` (``contents`` and the
``GenerateContentConfig``), with ``metadata: {"key": custom_id}``; the
fields ``prepare`` puts in ``http_options.extra_body`` (function
declarations, native tools, ``thinkingConfig``, ``vendor=`` fields) are
merged into that request's wire form. ``client.batches.get`` polls; when
the job ends its ``dest.inlined_responses`` hold one ``response`` (converted
by the plugin's own :func:`~llmport_gemini.convert_out.response`) or
``error`` (a ``google.rpc.Status``: typed by its code) per request.

Gemini Developer API only: on Vertex AI batch prediction reads its input
from Cloud Storage or BigQuery, which llmport does not write
(:class:`~llmport.errors.UnsupportedFeatureError` before any request).
google-genai does not expose the Developer API's ``batchStats``, so counts
are known once the job has ended. ``batch_options``: ``display_name``.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from llmport.errors import LlmportError, OptionError, UnsupportedFeatureError
from llmport.plugin_api import BatchBackend, BatchItem, BatchOutcome, BatchState, BatchStatus
from llmport.provider.contract import Provider
from llmport.provider.translate import answer_field, status_error, vendor_boundary

from . import sdk_internals
from .convert_in import merge, sdk_payload
from .convert_out import response
from .errors import VENDOR
from .models import family_for

#: google-genai job state -> neutral state.
STATES: dict[str, BatchState] = {
    "JOB_STATE_QUEUED": "queued",
    "JOB_STATE_PENDING": "queued",
    "JOB_STATE_RUNNING": "running",
    "JOB_STATE_CANCELLING": "running",
    "JOB_STATE_UPDATING": "running",
    "JOB_STATE_PAUSED": "running",
    "JOB_STATE_SUCCEEDED": "completed",
    "JOB_STATE_PARTIALLY_SUCCEEDED": "completed",
    "JOB_STATE_FAILED": "failed",
    "JOB_STATE_CANCELLED": "cancelled",
    "JOB_STATE_EXPIRED": "expired",
}
#: google.rpc.Code -> the HTTP status it stands for.
RPC_STATUS = {1: 499, 3: 400, 4: 504, 5: 404, 7: 403, 8: 429, 9: 400, 13: 500, 14: 503, 16: 401}
#: A Developer API batch job's name (what google-genai takes; anything else it refuses).
JOB_NAME = re.compile(r"batches/[^/]+")


class GeminiBatch(BatchBackend):
    """Batch mode of ``gemini:`` models (Developer API, inline requests)."""

    options = frozenset({"display_name"})

    def __init__(
        self,
        provider: Provider,
        client: Callable[[], Any],
        async_client: Callable[[], Awaitable[Any]],
        *,
        vertex: bool,
    ) -> None:
        super().__init__(provider)
        #: The provider's sync ``genai.Client``, and the running event loop's.
        self.client = client
        self.async_client = async_client
        #: Whether the provider talks to Vertex AI (no inline batches there).
        self.vertex = vertex

    def check(self, model: str, options: Mapping[str, Any]) -> None:
        super().check(model, options)
        self.developer_api(model)

    def developer_api(self, model: str) -> None:
        """Raise before any request on Vertex AI: llmport batches the Developer API's way."""
        # Source: Vertex AI, "Batch prediction for Gemini": input from Cloud Storage or BigQuery,
        #   not inline requests.
        if self.vertex:
            raise UnsupportedFeatureError(
                VENDOR,
                model,
                "batch on Vertex AI",
                "Vertex AI batch prediction reads from Cloud Storage or BigQuery; "
                "llmport sends inline requests (the Gemini Developer API)",
            )

    def job_name(self, vendor_id: str) -> str:
        """``vendor_id`` if it names a Developer API job (``batches/...``), else an OptionError."""
        self.developer_api("batch")
        if not JOB_NAME.fullmatch(vendor_id):
            raise OptionError(
                f"gemini: a batch job id looks like 'gemini:batches/<id>', got {vendor_id!r}"
            )
        return vendor_id

    # -- submit ----------------------------------------------------------------------

    def create_args(self, items: list[BatchItem], model: str, options: Mapping[str, Any]) -> Any:
        """``batches.create`` arguments: one inline request per item, extra fields merged."""
        from google.genai import types

        inlined = []
        extras: list[dict[str, Any]] = []
        for item in items:
            payload = sdk_payload(item.prepared, family_for(item.prepared.request.model))
            config = payload["config"]
            http = config.http_options
            extras.append(dict(http.extra_body or {}) if http is not None else {})
            inlined.append(
                types.InlinedRequest(
                    contents=payload["contents"],
                    config=config.model_copy(update={"http_options": None}),
                    metadata={"key": item.custom_id},
                )
            )
        job: dict[str, Any] = {"display_name": options.get("display_name", "llmport batch")}
        if any(extras):  # the requests' wire form with prepare's extra_body fields merged in
            job["http_options"] = types.HttpOptions(
                extra_body={
                    "batch": {"inputConfig": {"requests": {"requests": self.wire(inlined, extras)}}}
                }
            )
        return {"model": model, "src": inlined, "config": types.CreateBatchJobConfig(**job)}

    def wire(self, inlined: list[Any], extras: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each inline request as google-genai writes it, ``extra_body`` merged into ``request``."""
        api = sdk_internals.api_client(self.client())
        out = []
        for request, extra in zip(inlined, extras, strict=True):
            converted = sdk_internals.inlined_request_json(api, request)
            converted["request"] = merge(converted.get("request", {}), extra)
            out.append(converted)
        return out

    @vendor_boundary
    def submit(self, items: list[BatchItem], model: str, options: Mapping[str, Any]) -> str:
        args = self.create_args(items, model, options)
        job = self.client().batches.create(**args)
        return answer_field(job, "name", str, VENDOR)

    @vendor_boundary
    async def asubmit(self, items: list[BatchItem], model: str, options: Mapping[str, Any]) -> str:
        args = self.create_args(items, model, options)
        job = await (await self.async_client()).aio.batches.create(**args)
        return answer_field(job, "name", str, VENDOR)

    # -- status and cancel ------------------------------------------------------------------

    @vendor_boundary
    def status(self, vendor_id: str) -> BatchStatus:
        return neutral(self.client().batches.get(name=self.job_name(vendor_id)))

    @vendor_boundary
    async def astatus(self, vendor_id: str) -> BatchStatus:
        client = await self.async_client()
        return neutral(await client.aio.batches.get(name=self.job_name(vendor_id)))

    @vendor_boundary
    def cancel(self, vendor_id: str) -> BatchStatus:
        self.client().batches.cancel(name=self.job_name(vendor_id))
        return self.status(vendor_id)

    @vendor_boundary
    async def acancel(self, vendor_id: str) -> BatchStatus:
        await (await self.async_client()).aio.batches.cancel(name=self.job_name(vendor_id))
        return await self.astatus(vendor_id)

    # -- results ------------------------------------------------------------------------------

    @vendor_boundary
    def outcomes(self, vendor_id: str, items: Mapping[str, BatchItem]) -> list[BatchOutcome]:
        return self.parse(self.client().batches.get(name=self.job_name(vendor_id)))

    @vendor_boundary
    async def aoutcomes(self, vendor_id: str, items: Mapping[str, BatchItem]) -> list[BatchOutcome]:
        job = await (await self.async_client()).aio.batches.get(name=self.job_name(vendor_id))
        return self.parse(job)

    def parse(self, job: Any) -> list[BatchOutcome]:
        """One outcome per inline answer of an ended job (a MalformedResponseError if no job)."""
        neutral(job)
        model = str(job.model or "").removeprefix("models/")
        out = []
        for n, answer in enumerate(_inlined(job)):
            custom_id = str((answer.metadata or {}).get("key", n))
            if answer.error is not None:
                out.append(BatchOutcome(custom_id, error=rpc_error(answer.error)))
                continue
            try:
                out.append(BatchOutcome(custom_id, response=response(answer.response, model)))
            except LlmportError as exc:
                out.append(BatchOutcome(custom_id, error=exc))
        return out


def _inlined(job: Any) -> list[Any]:
    dest = job.dest
    return list(getattr(dest, "inlined_responses", None) or []) if dest is not None else []


def neutral(job: Any) -> BatchStatus:
    """A google-genai ``BatchJob`` as a neutral status (counts: Vertex's stats, or the answers).

    A job without a name or a state (``{}``, an error object) is a MalformedResponseError.
    """
    name = answer_field(job, "name", str, VENDOR)
    state_field = answer_field(job, "state", object, VENDOR)
    raw = str(getattr(state_field, "value", state_field))
    state = STATES.get(raw, "running")
    stats = job.completion_stats
    succeeded = failed = total = 0
    if stats is not None:
        succeeded = int(stats.successful_count or 0)
        failed = int(stats.failed_count or 0)
        total = succeeded + failed + int(stats.incomplete_count or 0)
    else:
        answers = _inlined(job)
        failed = sum(1 for a in answers if a.error is not None)
        succeeded, total = len(answers) - failed, len(answers)
    return BatchStatus(
        id=name, state=state, total=total, succeeded=succeeded, failed=failed, raw=raw
    )


def rpc_error(error: Any) -> LlmportError:
    """A per-request ``google.rpc.Status`` as the typed error of the HTTP status it stands for."""
    fields = error if isinstance(error, dict) else vars(error)
    code = int(fields.get("code") or 13)
    message = str(fields.get("message") or f"rpc code {code}")
    return status_error(RPC_STATUS.get(code, 500), message, provider=VENDOR, code=str(code))
