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
from typing import TYPE_CHECKING, Any

from llmport.errors import BadRequestError, LlmportError
from llmport.plugin import (
    BatchBackend,
    BatchError,
    BatchItem,
    BatchOutcome,
    BatchState,
    BatchStatus,
)
from llmport.provider.translate import status_error
from llmport.provider.wire import plain

if TYPE_CHECKING:
    from .provider import OpenAIPrepared, _OpenAIProvider

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
    provider: _OpenAIProvider

    @property
    def url(self) -> str:
        return "/v1/responses" if self.provider.conversation == "input" else "/v1/chat/completions"

    # -- submit ----------------------------------------------------------------------

    def jsonl(self, items: list[BatchItem]) -> bytes:
        """The input file: one request line per item, bodies as ``prepare`` built them."""
        lines = []
        for item in items:
            line: dict[str, Any] = {"custom_id": item.custom_id, "method": "POST", "url": self.url}
            line["body"] = body_of(item.prepared)  # type: ignore[arg-type]
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

    def submit(self, items: list[BatchItem], model: str, options: Mapping[str, Any]) -> str:
        client = self.provider.clients.sync()
        with self.provider._translating():
            upload = client.files.create(
                file=("batch.jsonl", self.jsonl(items), "application/jsonl"), purpose="batch"
            )
            created = client.batches.create(**self._create_args(upload.id, options))
        return str(created.id)

    async def asubmit(self, items: list[BatchItem], model: str, options: Mapping[str, Any]) -> str:
        client = self.provider.clients.for_loop()
        with self.provider._translating():
            upload = await client.files.create(
                file=("batch.jsonl", self.jsonl(items), "application/jsonl"), purpose="batch"
            )
            created = await client.batches.create(**self._create_args(upload.id, options))
        return str(created.id)

    # -- status and cancel --------------------------------------------------------------

    def status(self, vendor_id: str) -> BatchStatus:
        with self.provider._translating():
            return neutral(self.provider.clients.sync().batches.retrieve(vendor_id))

    async def astatus(self, vendor_id: str) -> BatchStatus:
        with self.provider._translating():
            return neutral(await self.provider.clients.for_loop().batches.retrieve(vendor_id))

    def cancel(self, vendor_id: str) -> BatchStatus:
        with self.provider._translating():
            return neutral(self.provider.clients.sync().batches.cancel(vendor_id))

    async def acancel(self, vendor_id: str) -> BatchStatus:
        with self.provider._translating():
            return neutral(await self.provider.clients.for_loop().batches.cancel(vendor_id))

    # -- results ---------------------------------------------------------------------------

    def outcomes(self, vendor_id: str, items: Mapping[str, BatchItem]) -> list[BatchOutcome]:
        client = self.provider.clients.sync()
        with self.provider._translating():
            job = client.batches.retrieve(vendor_id)
            texts = [
                client.files.content(file_id).text
                for file_id in (job.output_file_id, job.error_file_id)
                if file_id
            ]
        return self.parse(texts, items)

    async def aoutcomes(self, vendor_id: str, items: Mapping[str, BatchItem]) -> list[BatchOutcome]:
        client = self.provider.clients.for_loop()
        with self.provider._translating():
            job = await client.batches.retrieve(vendor_id)
            texts = []
            for file_id in (job.output_file_id, job.error_file_id):
                if file_id:
                    texts.append((await client.files.content(file_id)).text)
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
        restore = _restore(item)
        from .convert_out import chat_response, responses_response

        if self.provider.conversation == "input":
            return responses_response(body, restore, self.provider.name)
        return chat_response(body, restore, self.provider.name)


def body_of(prepared: OpenAIPrepared) -> dict[str, Any]:
    """The JSON body ``prepare`` built (the SDK arguments without call-only ones)."""
    payload = dict(prepared.payload)
    extra = payload.pop("extra_body", None) or {}
    for call_only in ("timeout", "extra_headers", "extra_query"):
        payload.pop(call_only, None)
    body: dict[str, Any] = plain({**payload, **extra})
    return body  # a JSONL line: media as strings


def _restore(item: BatchItem | None) -> Any:
    prepared = item.prepared if item is not None else None
    return getattr(prepared, "restore", None)


def neutral(job: Any) -> BatchStatus:
    """An OpenAI ``Batch`` object as a neutral status."""
    counts = job.request_counts
    return BatchStatus(
        id=str(job.id),
        state=STATES.get(str(job.status), "running"),
        total=int(getattr(counts, "total", 0) or 0),
        succeeded=int(getattr(counts, "completed", 0) or 0),
        failed=int(getattr(counts, "failed", 0) or 0),
        raw=str(job.status),
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
