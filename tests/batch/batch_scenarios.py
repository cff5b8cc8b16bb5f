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

from llmport.loopback import Reply

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
                "message": {"role": "assistant", "content": text, "refusal": None, "annotations": []},
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


def scenarios() -> dict[str, Scenario]:
    found: list[Scenario] = [*openai_scenarios()]
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
    return {"endpoint_url": url, **scenario.settings}


def replay_settings(scenario: Scenario) -> dict[str, Any]:
    """Provider settings for replaying: the vendor's default endpoints, a fake key."""
    from batch_flows import FAKE_KEY

    if scenario.vendor == "bedrock":
        return dict(scenario.settings)
    return {"api_key": FAKE_KEY, **scenario.settings}


def rewrite_uri(path: str, vendor: str) -> str:
    """A loopback path (``/v1/...``) as the URI the SDK sends to the vendor by default."""
    return VENDOR_HOSTS[vendor] + path
