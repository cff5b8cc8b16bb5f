"""Scripted vendor answers for the batch cassettes (written from each vendor's documented format).

No batch recording exists among the public wire samples, so every answer here
is written from the vendor's batch API reference (object shapes, field names,
status values, result-file lines); the requests are what the real plugins and
SDKs send (``make_cassettes.py`` records them against the loopback server).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from llmport.testing.loopback import Reply

CREATED = 1763715600


@dataclass
class Scenario:
    name: str
    vendor: str  # the plugin package: llmport_<vendor>
    model: str
    flow: str  # "run" | "resume"
    replies: list[Reply]
    settings: dict[str, Any] = field(default_factory=dict)
    batch_options: dict[str, Any] | None = None
    job_id: str = ""  # the job a "resume" flow picks up

    @property
    def cassette(self) -> str:
        return f"{self.vendor}/batch_{self.flow}.yaml"


def jsonl(lines: list[dict[str, Any]]) -> bytes:
    return ("\n".join(json.dumps(line) for line in lines) + "\n").encode()


# --- OpenAI ---------------------------------------------------------------------------

OPENAI_MODEL = "gpt-4o-mini"


def _openai_batch(
    batch_id: str, status: str, counts: tuple[int, int, int], **files: str | None
) -> dict[str, Any]:
    total, completed, failed = counts
    return {
        "id": batch_id,
        "object": "batch",
        "endpoint": "/v1/chat/completions",
        "errors": None,
        "input_file_id": "file-batchin01",
        "completion_window": "24h",
        "status": status,
        "output_file_id": files.get("output"),
        "error_file_id": files.get("error"),
        "created_at": CREATED,
        "in_progress_at": CREATED + 5 if status != "validating" else None,
        "expires_at": CREATED + 86400,
        "finalizing_at": CREATED + 50 if status == "completed" else None,
        "completed_at": CREATED + 60 if status == "completed" else None,
        "failed_at": None,
        "expired_at": None,
        "cancelling_at": CREATED + 20 if status in ("cancelling", "cancelled") else None,
        "cancelled_at": CREATED + 30 if status == "cancelled" else None,
        "request_counts": {"total": total, "completed": completed, "failed": failed},
        "metadata": {},
    }


def _chat(answer_id: str, text: str, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "id": answer_id,
        "object": "chat.completion",
        "created": CREATED + 30,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": text,
                    "refusal": None,
                    "annotations": [],
                },
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
        "service_tier": "default",
        "system_fingerprint": "fp_560af6e559",
    }


def _openai_line(n: int, custom_id: str, status: int, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"batch_req_{n:02d}",
        "custom_id": custom_id,
        "response": {"status_code": status, "request_id": f"req_batch{n:02d}", "body": body},
        "error": None,
    }


OCTET = {"content-type": "application/octet-stream"}


def openai_scenarios() -> list[Scenario]:
    run_id, resume_id = "batch_6a1run01", "batch_6a1res02"
    upload = {
        "object": "file",
        "id": "file-batchin01",
        "purpose": "batch",
        "filename": "batch.jsonl",
        "bytes": 1450,
        "created_at": CREATED,
        "expires_at": None,
        "status": "processed",
        "status_details": None,
    }
    output = jsonl(
        [
            _openai_line(
                1, "capital", 200, _chat("chatcmpl-B1", "The capital of France is Paris.", 27, 8)
            ),
            _openai_line(
                2, "city", 200, _chat("chatcmpl-B2", '{"city":"Osaka","country":"Japan"}', 71, 12)
            ),
            _openai_line(
                3,
                "too-long",
                400,
                {
                    "error": {
                        "message": "max_tokens is too large: 1000000. This model supports at most "
                        "16384 completion tokens, whereas you provided 1000000.",
                        "type": "invalid_request_error",
                        "param": "max_tokens",
                        "code": "invalid_value",
                    }
                },
            ),
        ]
    )
    run = Scenario(
        "openai_run",
        "openai",
        f"openai:{OPENAI_MODEL}",
        "run",
        [
            Reply(json=upload),
            Reply(json=_openai_batch(run_id, "validating", (0, 0, 0))),
            Reply(json=_openai_batch(run_id, "validating", (0, 0, 0))),
            Reply(json=_openai_batch(run_id, "in_progress", (3, 1, 0))),
            Reply(json=_openai_batch(run_id, "completed", (3, 2, 1), output="file-batchout01")),
            Reply(json=_openai_batch(run_id, "completed", (3, 2, 1), output="file-batchout01")),
            Reply(body=output, headers=OCTET),
        ],
    )
    cancelled_output = jsonl(
        [_openai_line(1, "capital", 200, _chat("chatcmpl-B3", "Paris.", 27, 2))]
    )
    cancelled_errors = jsonl(
        [
            {
                "id": f"batch_req_{n:02d}",
                "custom_id": custom_id,
                "response": None,
                "error": {
                    "code": "batch_cancelled",
                    "message": "This request could not be executed before the batch was cancelled.",
                },
            }
            for n, custom_id in ((2, "city"), (3, "too-long"))
        ]
    )
    ended = {"output": "file-batchout02", "error": "file-batcherr02"}
    resume = Scenario(
        "openai_resume",
        "openai",
        f"openai:{OPENAI_MODEL}",
        "resume",
        [
            Reply(json=_openai_batch(resume_id, "in_progress", (3, 1, 0))),
            Reply(json=_openai_batch(resume_id, "cancelling", (3, 1, 0))),
            Reply(json=_openai_batch(resume_id, "cancelled", (3, 1, 0), **ended)),
            Reply(json=_openai_batch(resume_id, "cancelled", (3, 1, 0), **ended)),
            Reply(body=cancelled_output, headers=OCTET),
            Reply(body=cancelled_errors, headers=OCTET),
        ],
        job_id=f"openai:{resume_id}",
    )
    return [run, resume]


# --- Anthropic ------------------------------------------------------------------------

ANTHROPIC_MODEL = "claude-sonnet-4-5"


def _anthropic_batch(
    batch_id: str,
    status: str,
    counts: tuple[int, int, int, int, int],
    *,
    cancelled: bool = False,
) -> Any:
    """A MessageBatch; ``results_url`` (once ended) points at the server that answered."""
    processing, succeeded, errored, canceled, expired = counts
    ended = status == "ended"

    def answer(request: Any) -> Reply:
        host = request.headers.get("Host") or request.headers.get("host")
        return Reply(
            json={
                "id": batch_id,
                "type": "message_batch",
                "processing_status": status,
                "request_counts": {
                    "processing": processing,
                    "succeeded": succeeded,
                    "errored": errored,
                    "canceled": canceled,
                    "expired": expired,
                },
                "ended_at": "2026-11-21T09:01:00.000000Z" if ended else None,
                "created_at": "2026-11-21T09:00:00.000000Z",
                "expires_at": "2026-11-22T09:00:00.000000Z",
                "archived_at": None,
                "cancel_initiated_at": "2026-11-21T09:00:30.000000Z" if cancelled else None,
                "results_url": f"http://{host}/v1/messages/batches/{batch_id}/results"
                if ended
                else None,
            }
        )

    return Reply(handler=answer)


def _message(message_id: str, text: str, tokens: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": tokens[0],
            "output_tokens": tokens[1],
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "service_tier": "batch",
        },
    }


BINARY = {"content-type": "application/binary"}


def anthropic_scenarios() -> list[Scenario]:
    run_id, resume_id = "msgbatch_01RunBatch0001", "msgbatch_01ResBatch0002"
    results = jsonl(
        [
            {
                "custom_id": "capital",
                "result": {
                    "type": "succeeded",
                    "message": _message("msg_01Bat1", "The capital of France is Paris.", (21, 10)),
                },
            },
            {
                "custom_id": "city",
                "result": {
                    "type": "succeeded",
                    "message": _message(
                        "msg_01Bat2", '{"city": "Osaka", "country": "Japan"}', (180, 16)
                    ),
                },
            },
            {
                "custom_id": "too-long",
                "result": {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {
                            "type": "invalid_request_error",
                            "message": "max_tokens: 1000000 > 64000, which is the maximum "
                            "allowed number of output tokens for claude-sonnet-4-5-20250929",
                        },
                    },
                },
            },
        ]
    )
    run = Scenario(
        "anthropic_run",
        "anthropic",
        f"anthropic:{ANTHROPIC_MODEL}",
        "run",
        [
            _anthropic_batch(run_id, "in_progress", (3, 0, 0, 0, 0)),
            _anthropic_batch(run_id, "in_progress", (3, 0, 0, 0, 0)),
            _anthropic_batch(run_id, "in_progress", (2, 1, 0, 0, 0)),
            _anthropic_batch(run_id, "ended", (0, 2, 1, 0, 0)),
            _anthropic_batch(run_id, "ended", (0, 2, 1, 0, 0)),
            Reply(body=results, headers=BINARY),
        ],
    )
    partial = jsonl(
        [
            {
                "custom_id": "capital",
                "result": {
                    "type": "succeeded",
                    "message": _message("msg_01Bat3", "Paris.", (21, 3)),
                },
            },
            {"custom_id": "city", "result": {"type": "canceled"}},
            {"custom_id": "too-long", "result": {"type": "canceled"}},
        ]
    )
    resume = Scenario(
        "anthropic_resume",
        "anthropic",
        f"anthropic:{ANTHROPIC_MODEL}",
        "resume",
        [
            _anthropic_batch(resume_id, "in_progress", (2, 1, 0, 0, 0)),
            _anthropic_batch(resume_id, "canceling", (2, 1, 0, 0, 0), cancelled=True),
            _anthropic_batch(resume_id, "ended", (0, 1, 0, 2, 0), cancelled=True),
            _anthropic_batch(resume_id, "ended", (0, 1, 0, 2, 0), cancelled=True),
            Reply(body=partial, headers=BINARY),
        ],
        job_id=f"anthropic:{resume_id}",
    )
    return [run, resume]


# --- Gemini ---------------------------------------------------------------------------

GEMINI_MODEL = "gemini-2.5-flash"


def _gemini_job(
    name: str, state: str, answers: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The long-running operation ``batches.get`` returns (Developer API, v1beta)."""
    metadata: dict[str, Any] = {
        "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
        "model": f"models/{GEMINI_MODEL}",
        "displayName": "llmport batch",
        "createTime": "2026-11-21T09:00:00.000000Z",
        "updateTime": "2026-11-21T09:01:00.000000Z",
        "batchStats": {"requestCount": "3", "pendingRequestCount": "3"},
        "state": state,
        "name": name,
    }
    op: dict[str, Any] = {"name": name, "metadata": metadata}
    if answers is not None:
        metadata["endTime"] = "2026-11-21T09:01:00.000000Z"
        output = {"inlinedResponses": {"inlinedResponses": answers}}
        metadata["output"] = output
        op["done"] = True
        kind = "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput"
        op["response"] = {"@type": kind, **output}
    return op


def _gemini_answer(key: str, text: str, tokens: tuple[int, int]) -> dict[str, Any]:
    return {
        "response": {
            "candidates": [
                {
                    "content": {"parts": [{"text": text}], "role": "model"},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": tokens[0],
                "candidatesTokenCount": tokens[1],
                "totalTokenCount": tokens[0] + tokens[1],
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": tokens[0]}],
            },
            "modelVersion": GEMINI_MODEL,
            "responseId": f"resp-{key}",
        },
        "metadata": {"key": key},
    }


def gemini_scenarios() -> list[Scenario]:
    run_name, resume_name = "batches/llmportrun01", "batches/llmportres02"
    answers = [
        _gemini_answer("capital", "The capital of France is Paris.", (14, 8)),
        _gemini_answer("city", '{"city": "Osaka", "country": "Japan"}', (16, 12)),
        {
            "error": {
                "code": 3,
                "message": "The maximum number of output tokens (1000000) exceeds the model's "
                "limit of 65536.",
            },
            "metadata": {"key": "too-long"},
        },
    ]
    run = Scenario(
        "gemini_run",
        "gemini",
        f"gemini:{GEMINI_MODEL}",
        "run",
        [
            Reply(json=_gemini_job(run_name, "BATCH_STATE_PENDING")),
            Reply(json=_gemini_job(run_name, "BATCH_STATE_PENDING")),
            Reply(json=_gemini_job(run_name, "BATCH_STATE_RUNNING")),
            Reply(json=_gemini_job(run_name, "BATCH_STATE_SUCCEEDED", answers)),
            Reply(json=_gemini_job(run_name, "BATCH_STATE_SUCCEEDED", answers)),
        ],
    )
    partial = [_gemini_answer("capital", "Paris.", (14, 2))]
    resume = Scenario(
        "gemini_resume",
        "gemini",
        f"gemini:{GEMINI_MODEL}",
        "resume",
        [
            Reply(json=_gemini_job(resume_name, "BATCH_STATE_RUNNING")),
            Reply(json={}),  # :cancel answers an empty object
            Reply(json=_gemini_job(resume_name, "BATCH_STATE_RUNNING")),
            Reply(json=_gemini_job(resume_name, "BATCH_STATE_CANCELLED", partial)),
            Reply(json=_gemini_job(resume_name, "BATCH_STATE_CANCELLED", partial)),
        ],
        job_id=f"gemini:{resume_name}",
    )
    return [run, resume]


# --- Bedrock ----------------------------------------------------------------------------

BEDROCK_MODEL = "amazon.nova-lite-v1:0"
BUCKET = "llmport-batch-fake"
# No real account id in a cassette (tests/test_cassette_secrets.py): a placeholder.
ROLE = "arn:aws:iam::ACCOUNT_ID:role/llmport-batch-fake"
BEDROCK_OPTIONS = {
    "input_uri": f"s3://{BUCKET}/in/",
    "output_uri": f"s3://{BUCKET}/out/",
    "role_arn": ROLE,
}
BEDROCK_SETTINGS = {
    "region": "us-east-1",
    "aws_access_key_id": "fake-access-key-id",
    "aws_secret_access_key": "fake-secret-access-key",
}


def _job_arn(job_id: str) -> str:
    return f"arn:aws:bedrock:us-east-1:ACCOUNT_ID:model-invocation-job/{job_id}"


def _bedrock_job(
    job_id: str, name: str, status: str, counts: tuple[int, int, int, int]
) -> dict[str, Any]:
    """``GetModelInvocationJob``'s answer."""
    total, processed, ok, failed = counts
    job: dict[str, Any] = {
        "jobArn": _job_arn(job_id),
        "jobName": name,
        "modelId": BEDROCK_MODEL,
        "roleArn": ROLE,
        "status": status,
        "submitTime": "2026-11-21T09:00:00Z",
        "lastModifiedTime": "2026-11-21T09:01:00Z",
        "inputDataConfig": {
            "s3InputDataConfig": {
                "s3InputFormat": "JSONL",
                "s3Uri": f"s3://{BUCKET}/in/{name}.jsonl",
            }
        },
        "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": f"s3://{BUCKET}/out/"}},
        "timeoutDurationInHours": 24,
        "jobExpirationTime": "2026-11-22T09:00:00Z",
        "modelInvocationType": "Converse",
    }
    if total:
        job.update(
            totalRecordCount=total,
            processedRecordCount=processed,
            successRecordCount=ok,
            errorRecordCount=failed,
        )
    if status in ("Completed", "PartiallyCompleted", "Stopped", "Failed"):
        job["endTime"] = "2026-11-21T09:01:00Z"
    return job


def _converse_output(content: list[dict[str, Any]], stop: str, tokens: tuple[int, int]) -> Any:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {
            "inputTokens": tokens[0],
            "outputTokens": tokens[1],
            "totalTokens": tokens[0] + tokens[1],
        },
        "metrics": {"latencyMs": 412},
    }


class _Inputs:
    """Keeps the JSONL the test PUT to S3, to echo each record's modelInput as Bedrock does."""

    def __init__(self) -> None:
        self.records: dict[str, Any] = {}

    def put(self, request: Any) -> Reply:
        for line in request.body.decode().splitlines():
            record = json.loads(line)
            self.records[record["recordId"]] = record["modelInput"]
        return Reply(body=b"", headers={"etag": '"0f1e2d3c"'})

    def output(self, lines: list[dict[str, Any]]) -> Reply:
        def answer(request: Any) -> Reply:
            out = []
            for line in lines:
                model_input = self.records.get(line["recordId"], {"messages": []})
                out.append(
                    {"recordId": line["recordId"], "modelInput": model_input, **line["rest"]}
                )
            return Reply(body=jsonl(out), headers=OCTET)

        return Reply(handler=answer)


def bedrock_scenarios() -> list[Scenario]:
    name = "llmport-batchrun"
    run_id, resume_id = "r0nb4tch0001", "r3sb4tch0002"
    inputs = _Inputs()
    lines = [
        {
            "recordId": "capital",
            "rest": {
                "modelOutput": _converse_output(
                    [{"text": "The capital of France is Paris."}], "end_turn", (19, 9)
                )
            },
        },
        {
            "recordId": "city",
            "rest": {
                "modelOutput": _converse_output(
                    [
                        {
                            "toolUse": {
                                "toolUseId": "tooluse_b4tch01",
                                "name": "response",
                                "input": {"city": "Osaka", "country": "Japan"},
                            }
                        }
                    ],
                    "tool_use",
                    (402, 31),
                )
            },
        },
        {
            "recordId": "too-long",
            "rest": {
                "error": {
                    "errorCode": 400,
                    "errorMessage": "Malformed input request: The maximum tokens you requested "
                    "exceeds the model limit of 10000.",
                }
            },
        },
    ]

    def run_job(status: str, counts: tuple[int, int, int, int]) -> Reply:
        return Reply(json=_bedrock_job(run_id, name, status, counts))

    run = Scenario(
        "bedrock_run",
        "bedrock",
        f"bedrock:{BEDROCK_MODEL}",
        "run",
        [
            Reply(handler=inputs.put),
            Reply(json={"jobArn": _job_arn(run_id)}),
            run_job("Submitted", (0, 0, 0, 0)),
            run_job("InProgress", (3, 1, 1, 0)),
            run_job("Completed", (3, 3, 2, 1)),
            run_job("Completed", (3, 3, 2, 1)),
            inputs.output(lines),
        ],
        settings=dict(BEDROCK_SETTINGS),
        batch_options={**BEDROCK_OPTIONS, "job_name": name},
    )
    resume_name = "llmport-batchres"
    partial = [
        {
            "recordId": "capital",
            "rest": {"modelOutput": _converse_output([{"text": "Paris."}], "end_turn", (19, 2))},
        }
    ]

    def res_job(status: str, counts: tuple[int, int, int, int]) -> Reply:
        return Reply(json=_bedrock_job(resume_id, resume_name, status, counts))

    resume = Scenario(
        "bedrock_resume",
        "bedrock",
        f"bedrock:{BEDROCK_MODEL}",
        "resume",
        [
            res_job("InProgress", (3, 1, 1, 0)),
            Reply(json={}),  # StopModelInvocationJob answers an empty object
            res_job("Stopping", (3, 1, 1, 0)),
            res_job("Stopped", (3, 1, 1, 0)),
            res_job("Stopped", (3, 1, 1, 0)),
            _Inputs().output(partial),
        ],
        settings=dict(BEDROCK_SETTINGS),
        job_id=f"bedrock:{_job_arn(resume_id)}",
    )
    return [run, resume]


def scenarios() -> dict[str, Scenario]:
    found: list[Scenario] = [
        *openai_scenarios(),
        *anthropic_scenarios(),
        *gemini_scenarios(),
        *bedrock_scenarios(),
    ]
    return {s.name: s for s in found}


# --- endpoints: the loopback while recording, the vendor's in the cassette ---------------

VENDOR_HOSTS = {
    "openai": "https://api.openai.com",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
}


def loopback_settings(scenario: Scenario, url: str) -> dict[str, Any]:
    """Provider settings that send the scenario's requests to the loopback server."""
    from batch_flows import FAKE_KEY

    if scenario.vendor == "openai":
        return {"base_url": url + "/v1", "api_key": FAKE_KEY, **scenario.settings}
    if scenario.vendor == "anthropic":
        return {"base_url": url, "api_key": FAKE_KEY, **scenario.settings}
    if scenario.vendor == "gemini":
        return {"base_url": url, "api_key": FAKE_KEY, **scenario.settings}
    return {"control_endpoint_url": url, "s3_endpoint_url": url, **scenario.settings}


def replay_settings(scenario: Scenario) -> dict[str, Any]:
    """Provider settings for replaying: the vendor's default endpoints, a fake key."""
    from batch_flows import FAKE_KEY

    if scenario.vendor == "bedrock":
        return dict(scenario.settings)
    return {"api_key": FAKE_KEY, **scenario.settings}


def rewrite_uri(path: str, vendor: str) -> str:
    """A loopback path (``/v1/...``) as the URI the SDK sends to the vendor by default.

    Bedrock: the control plane's ``/model-invocation-job`` paths go to
    ``bedrock.us-east-1``; S3's path-style ``/bucket/key`` (what boto3 uses
    for an IP endpoint) becomes the virtual-hosted form it uses by default.
    """
    if vendor != "bedrock":
        return VENDOR_HOSTS[vendor] + path
    if path.startswith("/model-invocation-job") or path == "/":
        return "https://bedrock.us-east-1.amazonaws.com" + path
    bucket, _, key = path.lstrip("/").partition("/")
    return f"https://{bucket}.s3.amazonaws.com/{key}"
