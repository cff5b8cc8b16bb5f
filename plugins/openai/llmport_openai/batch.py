"""OpenAI batches: a JSONL file uploaded with purpose ``batch``, then ``POST /v1/batches``.

Each line is ``{"custom_id", "method": "POST", "url", "body"}`` where
``body`` is exactly the JSON the provider's ``prepare`` built for
``/v1/chat/completions`` (``openai:``) or ``/v1/responses``
(``openai-responses:``). When the job ends, the output file holds one
``{"custom_id", "response": {"status_code", "body"}, "error"}`` line per
finished request (converted by the plugin's own ``chat_response`` /
``responses_response``; a non-200 ``status_code`` becomes the typed error
of that status), and the error file the requests that failed before
reaching the model (``error: {"code", "message"}``).

``batch_options``: ``completion_window`` (default ``"24h"``, the only window
OpenAI offers) and ``metadata`` (a dict of strings). All calls go through the
provider's cached clients and its error translation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from llmport.errors import BadRequestError, LlmportError
from llmport.plugin_api import (
    BatchBackend,
    BatchError,
    BatchItem,
    BatchOutcome,
    BatchState,
    BatchStatus,
)
from llmport.provider.clients import ClientCache
from llmport.provider.contract import Prepared, Provider
from llmport.provider.translate import answer_field, status_error, vendor_boundary
from llmport.provider.wire import plain

from .convert_out import chat_response, responses_response

#: OpenAI batch status -> neutral state.
STATES: dict[str, BatchState] = {
    "validating": "queued",
    "in_progress": "running",
    "finalizing": "running",
    "cancelling": "running",
    "completed": "completed",
    "failed": "failed",
    "expired": "expired",
    "cancelled": "cancelled",
}


class OpenAIBatch(BatchBackend):
    """The batch API of ``openai:`` (Chat Completions) and ``openai-responses:`` (Responses)."""

    options = frozenset({"completion_window", "metadata"})

    def __init__(self, provider: Provider, clients: ClientCache[Any, Any], url: str) -> None:
        super().__init__(provider)
        #: The provider's SDK clients (sync, and one per event loop).
        self.clients = clients
        #: The endpoint every request of the batch goes to (the provider's API).
        self.url = url

    # -- submit ----------------------------------------------------------------------

    def jsonl(self, items: list[BatchItem]) -> bytes:
        """The input file: one request line per item, bodies as ``prepare`` built them."""
        lines = []
        for item in items:
            line: dict[str, Any] = {"custom_id": item.custom_id, "method": "POST", "url": self.url}
            line["body"] = body_of(item.prepared)
            lines.append(json.dumps(line, separators=(",", ":"), ensure_ascii=False))
        return ("\n".join(lines) + "\n").encode()

    def _create_args(self, file_id: str, options: Mapping[str, Any]) -> dict[str, Any]:
        args: dict[str, Any] = {
            "input_file_id": file_id,
            "endpoint": self.url,
            "completion_window": options.get("completion_window", "24h"),
        }
        if options.get("metadata"):
            args["metadata"] = dict(options["metadata"])
        return args

    @vendor_boundary
    def submit(self, items: list[BatchItem], model: str, options: Mapping[str, Any]) -> str:
        client = self.clients.sync()
        upload = client.files.create(
            file=("batch.jsonl", self.jsonl(items), "application/jsonl"), purpose="batch"
        )
        file_id = answer_field(upload, "id", str, self.provider.name)
        created = client.batches.create(**self._create_args(file_id, options))
        return answer_field(created, "id", str, self.provider.name)

    @vendor_boundary
    async def asubmit(self, items: list[BatchItem], model: str, options: Mapping[str, Any]) -> str:
        client = await self.clients.aclient()
        upload = await client.files.create(
            file=("batch.jsonl", self.jsonl(items), "application/jsonl"), purpose="batch"
        )
        file_id = answer_field(upload, "id", str, self.provider.name)
        created = await client.batches.create(**self._create_args(file_id, options))
        return answer_field(created, "id", str, self.provider.name)

    # -- status and cancel --------------------------------------------------------------

    @vendor_boundary
    def status(self, vendor_id: str) -> BatchStatus:
        return neutral(self.clients.sync().batches.retrieve(vendor_id), self.provider.name)

    @vendor_boundary
    async def astatus(self, vendor_id: str) -> BatchStatus:
        job = await (await self.clients.aclient()).batches.retrieve(vendor_id)
        return neutral(job, self.provider.name)

    @vendor_boundary
    def cancel(self, vendor_id: str) -> BatchStatus:
        return neutral(self.clients.sync().batches.cancel(vendor_id), self.provider.name)

    @vendor_boundary
    async def acancel(self, vendor_id: str) -> BatchStatus:
        job = await (await self.clients.aclient()).batches.cancel(vendor_id)
        return neutral(job, self.provider.name)

    # -- results ---------------------------------------------------------------------------

    @vendor_boundary
    def outcomes(self, vendor_id: str, items: Mapping[str, BatchItem]) -> list[BatchOutcome]:
        client = self.clients.sync()
        job = client.batches.retrieve(vendor_id)
        neutral(job, self.provider.name)  # the shape check: a job, not an error object
        texts = [client.files.content(file_id).text for file_id in result_files(job)]
        return self.parse(texts, items)

    @vendor_boundary
    async def aoutcomes(self, vendor_id: str, items: Mapping[str, BatchItem]) -> list[BatchOutcome]:
        client = await self.clients.aclient()
        job = await client.batches.retrieve(vendor_id)
        neutral(job, self.provider.name)
        texts = [(await client.files.content(file_id)).text for file_id in result_files(job)]
        return self.parse(texts, items)

    def parse(self, texts: list[str], items: Mapping[str, BatchItem]) -> list[BatchOutcome]:
        """Output and error file lines -> one outcome per ``custom_id``."""
        out: list[BatchOutcome] = []
        for text in texts:
            for raw in text.splitlines():
                if raw.strip():
                    out.append(self.outcome(json.loads(raw), items))
        return out

    def outcome(self, line: dict[str, Any], items: Mapping[str, BatchItem]) -> BatchOutcome:
        custom_id = str(line.get("custom_id"))
        name = self.provider.name
        response = line.get("response") or {}
        error = line.get("error")
        status = int(response.get("status_code") or 0)
        body = response.get("body") or {}
        if error or status != 200:
            return BatchOutcome(custom_id, error=line_error(name, status, body, error))
        item = items.get(custom_id)
        try:
            converted = self.convert(body, item)
        except LlmportError as exc:
            return BatchOutcome(custom_id, error=exc)
        return BatchOutcome(custom_id, response=converted)

    def convert(self, body: dict[str, Any], item: BatchItem | None) -> Any:
        """The response body through the plugin's own conversion (as ``send`` does)."""
        restore = restore_of(item)
        if self.url == "/v1/responses":
            return responses_response(body, restore, self.provider.name)
        return chat_response(body, restore, self.provider.name)


def body_of(prepared: Prepared) -> dict[str, Any]:
    """The JSON body ``prepare`` built (the SDK arguments without call-only ones)."""
    payload = dict(prepared.payload)
    extra = payload.pop("extra_body", None) or {}
    for call_only in ("timeout", "extra_headers", "extra_query"):
        payload.pop(call_only, None)
    body: dict[str, Any] = plain({**payload, **extra})
    return body  # a JSONL line: media as strings


def restore_of(item: BatchItem | None) -> Any:
    """The schema a structured answer is restored to (``prepare`` kept it), if any."""
    prepared = item.prepared if item is not None else None
    return getattr(prepared, "restore", None)


def result_files(job: Any) -> list[str]:
    """The ids of a job's output and error files (those it has)."""
    return [file_id for file_id in (job.output_file_id, job.error_file_id) if file_id]


def neutral(job: Any, provider: str) -> BatchStatus:
    """An OpenAI ``Batch`` object as a neutral status (a MalformedResponseError if it is none)."""
    job_id = answer_field(job, "id", str, provider)
    raw = answer_field(job, "status", str, provider)
    counts = job.request_counts
    return BatchStatus(
        id=job_id,
        state=STATES.get(raw, "running"),
        total=int(getattr(counts, "total", 0) or 0),
        succeeded=int(getattr(counts, "completed", 0) or 0),
        failed=int(getattr(counts, "failed", 0) or 0),
        raw=raw,
    )


def line_error(provider: str, status: int, body: Any, error: Any) -> LlmportError:
    """A failed line's typed error: its HTTP status (with OpenAI's error object), or its code."""
    detail = body.get("error") if isinstance(body, dict) else None
    if status and status != 200:
        detail = detail if isinstance(detail, dict) else {}
        return status_error(
            status,
            str(detail.get("message") or f"HTTP {status}"),
            provider=provider,
            code=detail.get("code") or detail.get("type"),
        )
    detail = error if isinstance(error, dict) else {}
    code = detail.get("code")
    if code in ("batch_expired", "batch_cancelled"):  # never sent: the job ended first
        return BatchError(f"{provider} {code}: {detail.get('message') or 'not processed'}")
    return BadRequestError(
        f"{provider} {code or 'error'}: {detail.get('message') or 'request failed in the batch'}",
        provider=provider,
        code=code,
    )
