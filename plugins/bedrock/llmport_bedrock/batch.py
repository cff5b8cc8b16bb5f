"""Bedrock batch inference: model-invocation jobs over the caller's S3 locations.

``batch_options`` (required: ``input_uri``, ``output_uri``, ``role_arn``):

* ``input_uri``: where llmport writes the JSONL input: an ``s3://`` key ending
  in ``.jsonl``, or a folder (``s3://bucket/prefix/``: the file is
  ``<job name>.jsonl`` in it);
* ``output_uri``: the ``s3://`` folder Bedrock writes results to;
* ``role_arn``: the service role Bedrock runs the job as (it must read the
  input and write the output locations);
* ``job_name`` (default ``llmport-<content hash>``), ``timeout_hours``, ``tags``
  (a dict).

The job uses ``modelInvocationType="Converse"``: each input line is
``{"recordId": custom_id, "modelInput": <the Converse body>}``, the body being
exactly what the provider's ``prepare`` built for ``converse`` (``modelId``
left out, it is the job's; raw bytes base64-encoded, as botocore puts them on
the wire). ``clientRequestToken`` is a hash of the job, so resubmitting the
same batch is idempotent. When the job ends llmport reads
``<output_uri>/<job id>/<input file name>.out``: each line holds
``modelOutput`` (a Converse answer, converted by the plugin's own
:func:`~llmport_bedrock.convert_out.response`) or ``error``
(``errorCode``/``errorMessage``, typed by its status).

The control-plane (``bedrock``) and ``s3`` clients come from the provider's
boto3 session, with botocore's retries off; the ``control_endpoint_url`` and
``s3_endpoint_url`` settings point them elsewhere (VPC endpoints, a test
server). Every call runs inside the provider's error translation.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from llmport.errors import LlmportError, OptionError
from llmport.messages.types import Request
from llmport.plugin_api import BatchBackend, BatchItem, BatchOutcome, BatchState, BatchStatus
from llmport.provider.clients import ClientCache
from llmport.provider.contract import Provider
from llmport.provider.translate import answer_field, malformed, status_error, vendor_boundary

from .convert_in import ConversePrepared, materialize
from .convert_out import response
from .errors import VENDOR

#: Model-invocation job status -> neutral state.
STATES: dict[str, BatchState] = {
    "Submitted": "queued",
    "Validating": "queued",
    "Scheduled": "queued",
    "InProgress": "running",
    "Stopping": "running",
    "Completed": "completed",
    "PartiallyCompleted": "completed",
    "Failed": "failed",
    "Stopped": "cancelled",
    "Expired": "expired",
}
REQUIRED = ("input_uri", "output_uri", "role_arn")


def _split(uri: str) -> tuple[str, str]:
    """``s3://bucket/key`` -> (bucket, key)."""
    if not isinstance(uri, str) or not uri.startswith("s3://") or not uri[5:].strip("/"):
        raise OptionError(f"bedrock batch: expected an s3://bucket/... location, got {uri!r}")
    bucket, _, key = uri[5:].partition("/")
    return bucket, key


def _wire(value: Any) -> Any:
    """JSON for botocore parameters: bytes as base64 (as botocore sends blobs)."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


class BedrockBatch(BatchBackend):
    """Model-invocation jobs (Converse format) for ``bedrock:`` models."""

    options = frozenset({*REQUIRED, "job_name", "timeout_hours", "tags"})

    def __init__(
        self, provider: Provider, session: Callable[[], Any], timeouts: tuple[float, float]
    ) -> None:
        super().__init__(provider)
        #: (read, connect) seconds: the provider's, so its setting (or the runtime's
        #: timeout=) bounds the control plane and the bucket as it bounds Converse.
        self.timeouts = timeouts
        #: The provider's boto3 session (made once, by the provider).
        self.session = session
        self._clients: dict[str, ClientCache[Any, Any]] = {}

    def check(self, model: str, options: Mapping[str, Any]) -> None:
        super().check(model, options)
        missing = [name for name in REQUIRED if not options.get(name)]
        if missing:
            raise OptionError(
                f"bedrock batch jobs need batch_options {', '.join(missing)} "
                "(input_uri and output_uri: s3:// locations; role_arn: the job's service role)"
            )
        _split(options["input_uri"])
        _split(options["output_uri"])

    # -- clients ------------------------------------------------------------------------

    def client(self, service: str) -> Any:
        """The ``bedrock`` or ``s3`` client (from the provider's session; made once)."""
        cache = self._clients.get(service)
        if cache is None:
            cache = self._clients[service] = ClientCache(functools.partial(self._make, service))
        return cache.sync()

    def _make(self, service: str) -> Any:
        from botocore.config import Config  # type: ignore[import-untyped]

        settings = self.provider.settings
        endpoint = settings.get("s3_endpoint_url" if service == "s3" else "control_endpoint_url")
        config = Config(
            retries={"total_max_attempts": 1, "mode": "standard"},
            # A stalled control plane or bucket is a ProviderTimeoutError within the
            # provider's timeouts, not botocore's 60 s default.
            read_timeout=self.timeouts[0],
            connect_timeout=self.timeouts[1],
            user_agent_extra="llmport",
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        )
        return self.session().client(service, endpoint_url=endpoint, config=config)

    def close(self) -> None:
        for cache in self._clients.values():
            cache.close()
        self._clients.clear()

    # -- submit ----------------------------------------------------------------------------

    def jsonl(self, items: list[BatchItem]) -> bytes:
        lines = []
        for item in items:
            payload = materialize(item.prepared.payload)
            body = {k: v for k, v in payload.items() if k != "modelId"}
            record = {"recordId": item.custom_id, "modelInput": body}
            lines.append(json.dumps(record, default=_wire, separators=(",", ":")))
        return ("\n".join(lines) + "\n").encode()

    @vendor_boundary
    def submit(self, items: list[BatchItem], model: str, options: Mapping[str, Any]) -> str:
        data = self.jsonl(items)
        digest = hashlib.sha256(data + model.encode() + str(sorted(options.items())).encode())
        token = digest.hexdigest()[:32]
        name = str(options.get("job_name") or f"llmport-{token[:16]}")
        bucket, key = _split(options["input_uri"])
        if not key.endswith(".jsonl"):
            key = f"{key.rstrip('/')}/{name}.jsonl".lstrip("/")
        args: dict[str, Any] = {
            "jobName": name,
            "roleArn": options["role_arn"],
            "clientRequestToken": token,
            "modelId": model,
            "modelInvocationType": "Converse",
            "inputDataConfig": {
                "s3InputDataConfig": {"s3Uri": f"s3://{bucket}/{key}", "s3InputFormat": "JSONL"}
            },
            "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": options["output_uri"]}},
        }
        if options.get("timeout_hours"):
            args["timeoutDurationInHours"] = int(options["timeout_hours"])
        if options.get("tags"):
            args["tags"] = [{"key": k, "value": str(v)} for k, v in dict(options["tags"]).items()]
        self.client("s3").put_object(
            Bucket=bucket, Key=key, Body=data, ContentType="application/jsonl"
        )
        created = self.client("bedrock").create_model_invocation_job(**args)
        return answer_field(created, "jobArn", str, VENDOR)

    # -- status and cancel ---------------------------------------------------------------

    def job(self, vendor_id: str) -> Any:
        """``GetModelInvocationJob``'s answer (a MalformedResponseError if it is no job)."""
        found = self.client("bedrock").get_model_invocation_job(jobIdentifier=vendor_id)
        neutral(found)
        return found

    @vendor_boundary
    def status(self, vendor_id: str) -> BatchStatus:
        return neutral(self.job(vendor_id))

    @vendor_boundary
    def cancel(self, vendor_id: str) -> BatchStatus:
        self.client("bedrock").stop_model_invocation_job(jobIdentifier=vendor_id)
        return self.status(vendor_id)

    # -- results -------------------------------------------------------------------------

    @vendor_boundary
    def outcomes(self, vendor_id: str, items: Mapping[str, BatchItem]) -> list[BatchOutcome]:
        job = self.job(vendor_id)
        bucket, key = output_location(job)
        answer = self.client("s3").get_object(Bucket=bucket, Key=key)
        text = answer["Body"].read().decode()
        model = str(job.get("modelId", ""))
        return [self.outcome(json.loads(line), items, model) for line in text.splitlines() if line]

    def outcome(self, line: dict[str, Any], items: Mapping[str, BatchItem], model: str) -> Any:
        custom_id = str(line.get("recordId"))
        error = line.get("error")
        if error:
            return BatchOutcome(custom_id, error=record_error(error))
        item = items.get(custom_id)
        prepared = item.prepared if item is not None else None
        if not isinstance(prepared, ConversePrepared):  # resumed by id alone
            prepared = ConversePrepared(Request(model=model, messages=[]), {"modelId": model})
        try:
            return BatchOutcome(custom_id, response=response(line.get("modelOutput"), prepared))
        except LlmportError as exc:
            return BatchOutcome(custom_id, error=exc)


def output_location(job: Mapping[str, Any]) -> tuple[str, str]:
    """(bucket, key) of an ended job's results: ``<output_uri>/<job id>/<input file>.out``."""
    try:
        source = job["inputDataConfig"]["s3InputDataConfig"]["s3Uri"]
        output = job["outputDataConfig"]["s3OutputDataConfig"]["s3Uri"]
    except (KeyError, TypeError):
        raise malformed(VENDOR, "the job's input and output locations expected") from None
    bucket, prefix = _split(output)
    job_id = str(job["jobArn"]).rsplit("/", 1)[-1]
    key = "/".join(p for p in (prefix.strip("/"), job_id, source.rsplit("/", 1)[-1] + ".out"))
    return bucket, key.lstrip("/")


def neutral(job: Mapping[str, Any]) -> BatchStatus:
    """A ``GetModelInvocationJob`` answer as a neutral status (a MalformedResponseError if none)."""
    job_arn = answer_field(job, "jobArn", str, VENDOR)
    raw = answer_field(job, "status", str, VENDOR)
    return BatchStatus(
        id=job_arn,
        state=STATES.get(raw, "running"),
        total=int(job.get("totalRecordCount") or 0),
        succeeded=int(job.get("successRecordCount") or 0),
        failed=int(job.get("errorRecordCount") or 0),
        raw=raw,
    )


def record_error(error: Any) -> LlmportError:
    """An output record's ``error`` (``errorCode`` is an HTTP status) as its typed error."""
    if not isinstance(error, dict):
        return status_error(500, str(error), provider=VENDOR)
    code = error.get("errorCode")
    status = int(str(code)) if str(code).isdigit() else 400
    message = str(error.get("errorMessage") or f"record failed ({code})")
    return status_error(status, message, provider=VENDOR)
