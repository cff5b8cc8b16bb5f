"""Anthropic message batches: ``POST /v1/messages/batches``, poll, then the results JSONL.

Each request is ``{"custom_id", "params"}`` where ``params`` is exactly the
Messages body the provider's ``prepare`` built (call-only arguments such as
``timeout`` left out, ``extra_body`` fields merged in). Beta headers a
request needs (``anthropic-beta``) go on the batch's own request. Results
(``GET`` the batch's ``results_url``) are one line per request:
``succeeded`` (the ``message``, converted by the plugin's own
:func:`~llmport_anthropic.convert_out.response`), ``errored`` (Anthropic's
error object, typed through :data:`~llmport_anthropic.errors.BY_TYPE`),
``canceled`` or ``expired`` (:class:`~llmport.engine.jobs.batch.BatchError`).

No ``batch_options``. Calls go through the provider's cached clients and its
error translation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmport.errors import LlmportError
from llmport.messages.types import Request
from llmport.plugin_api import BatchBackend, BatchError, BatchItem, BatchOutcome, BatchStatus
from llmport.provider.clients import ClientCache
from llmport.provider.contract import Provider
from llmport.provider.translate import answer_field, status_error, vendor_boundary
from llmport.provider.wire import plain

from .convert_in import AnthropicPrepared
from .convert_out import response
from .errors import BY_TYPE, VENDOR

#: Not body fields of a batch request (``stream``: batch requests are never streamed).
_CALL_ONLY = ("timeout", "extra_headers", "extra_query", "extra_body", "stream")


class AnthropicBatch(BatchBackend):
    """The Message Batches API of ``anthropic:`` models."""

    def __init__(self, provider: Provider, clients: ClientCache[Any, Any]) -> None:
        super().__init__(provider)
        #: The provider's SDK clients (sync, and one per event loop).
        self.clients = clients

    # -- submit ----------------------------------------------------------------------

    def create_args(self, items: list[BatchItem]) -> dict[str, Any]:
        """``messages.batches.create`` arguments: every request's body, the betas they need."""
        requests = []
        betas: list[str] = []
        for item in items:
            params = dict(item.prepared.payload)
            extra = params.get("extra_body") or {}
            headers = params.get("extra_headers") or {}
            for beta in str(headers.get("anthropic-beta", "")).split(","):
                if beta.strip() and beta.strip() not in betas:
                    betas.append(beta.strip())
            body = {k: v for k, v in params.items() if k not in _CALL_ONLY}
            # The SDK serializes the batch: media as strings.
            requests.append({"custom_id": item.custom_id, "params": plain({**body, **extra})})
        args: dict[str, Any] = {"requests": requests}
        if betas:
            args["extra_headers"] = {"anthropic-beta": ",".join(betas)}
        return args

    @vendor_boundary
    def submit(self, items: list[BatchItem], model: str, options: Mapping[str, Any]) -> str:
        created = self.clients.sync().messages.batches.create(**self.create_args(items))
        return answer_field(created, "id", str, VENDOR)

    @vendor_boundary
    async def asubmit(self, items: list[BatchItem], model: str, options: Mapping[str, Any]) -> str:
        batches = (await self.clients.aclient()).messages.batches
        created = await batches.create(**self.create_args(items))
        return answer_field(created, "id", str, VENDOR)

    # -- status and cancel ---------------------------------------------------------------

    @vendor_boundary
    def status(self, vendor_id: str) -> BatchStatus:
        return neutral(self.clients.sync().messages.batches.retrieve(vendor_id))

    @vendor_boundary
    async def astatus(self, vendor_id: str) -> BatchStatus:
        return neutral(await (await self.clients.aclient()).messages.batches.retrieve(vendor_id))

    @vendor_boundary
    def cancel(self, vendor_id: str) -> BatchStatus:
        return neutral(self.clients.sync().messages.batches.cancel(vendor_id))

    @vendor_boundary
    async def acancel(self, vendor_id: str) -> BatchStatus:
        return neutral(await (await self.clients.aclient()).messages.batches.cancel(vendor_id))

    # -- results ---------------------------------------------------------------------------

    @vendor_boundary
    def outcomes(self, vendor_id: str, items: Mapping[str, BatchItem]) -> list[BatchOutcome]:
        lines = list(self.clients.sync().messages.batches.results(vendor_id))
        return [self.outcome(line, items) for line in lines]

    @vendor_boundary
    async def aoutcomes(self, vendor_id: str, items: Mapping[str, BatchItem]) -> list[BatchOutcome]:
        batches = (await self.clients.aclient()).messages.batches
        lines = [line async for line in await batches.results(vendor_id)]
        return [self.outcome(line, items) for line in lines]

    def outcome(self, line: Any, items: Mapping[str, BatchItem]) -> BatchOutcome:
        custom_id = str(line.custom_id)
        result = line.result
        kind = result.type
        if kind == "succeeded":
            item = items.get(custom_id)
            prepared = item.prepared if item is not None else None
            if not isinstance(prepared, AnthropicPrepared):  # resumed by id alone
                prepared = AnthropicPrepared(Request(model=result.message.model, messages=[]), {})
            try:
                message = result.message.to_dict(mode="json")  # the answer's JSON, as send reads it
                return BatchOutcome(custom_id, response=response(message, prepared))
            except LlmportError as exc:
                return BatchOutcome(custom_id, error=exc)
        if kind == "errored":
            return BatchOutcome(custom_id, error=result_error(result.error))
        return BatchOutcome(
            custom_id, error=BatchError(f"{VENDOR}: {custom_id} was {kind} before it ran")
        )


def neutral(batch: Any) -> BatchStatus:
    """A ``MessageBatch`` as a neutral status (a MalformedResponseError if it is none)."""
    batch_id = answer_field(batch, "id", str, VENDOR)
    raw = answer_field(batch, "processing_status", str, VENDOR)
    counts = batch.request_counts
    succeeded, errored = int(counts.succeeded), int(counts.errored)
    canceled, expired = int(counts.canceled), int(counts.expired)
    total = int(counts.processing) + succeeded + errored + canceled + expired
    state: Any = "running"
    if raw == "ended":
        state = "completed"
        if batch.cancel_initiated_at is not None:
            state = "cancelled"
        elif expired and not (succeeded + errored):
            state = "expired"
    return BatchStatus(
        id=batch_id, state=state, total=total, succeeded=succeeded, failed=errored, raw=raw
    )


def result_error(error: Any) -> LlmportError:
    """An ``errored`` result's error object as the typed error of its type."""
    inner = getattr(error, "error", None) or error
    kind = str(getattr(inner, "type", "") or "api_error")
    message = str(getattr(inner, "message", "") or kind)
    cls, status = BY_TYPE.get(kind, BY_TYPE["api_error"])
    return status_error(status, message, provider=VENDOR, code=kind, cls=cls)
