"""The fourth batch's embedding samples as replayable scenarios, for every vendor but OpenAI.

Each :class:`Scenario` names a wire sample, the provider settings, and the
``rt.embed`` call that sends the recorded request. ``replies()`` are the
recorded answers for a :class:`~llmport.testing.loopback.LoopbackServer`
(base64 vectors, which the samples keep truncated, are rebuilt at their
recorded length from :func:`vectors`). Used by the plugins' embedding tests
and by ``tests/make_embed_cassettes.py``.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass, field
from typing import Any

from llmport.testing.loopback import Reply
from support.embed_samples import interactions

#: Bedrock credentials for recordings and replays (fake, never sent anywhere real).
AWS = {
    "region": "us-east-1",
    "aws_access_key_id": "AKIAFAKEFAKEFAKEFAKE",
    "aws_secret_access_key": "fake-secret-for-tests",
}


def vectors(count: int, size: int, seed: int = 0) -> list[list[float]]:
    """``count`` distinct vectors of ``size`` exact float32 values (input ``i``'s starts with i)."""
    return [[float(seed + i)] + [((i + j) % 17) / 32 for j in range(1, size)] for i in range(count)]


def base64_rows(rows: list[list[float]]) -> list[str]:
    """The rows as OpenAI / Voyage AI send them: base64 little-endian float32."""
    return [base64.b64encode(struct.pack(f"<{len(r)}f", *r)).decode() for r in rows]


def _truncated_length(text: str) -> int:
    """The original length of a sample's truncated base64 (``…<truncated N chars>``: 80 + N)."""
    head, _, tail = text.partition("...<truncated ")
    return len(head) + int(tail.split()[0]) if tail else len(text)


@dataclass(frozen=True)
class Scenario:
    """One sample replayed through ``rt.embed``."""

    name: str
    sample: str
    provider: str
    model: str
    inputs: tuple[str, ...]
    call: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    #: Recorded vector length and input tokens of the whole call.
    dimensions: int = 0
    tokens: int = 0

    @property
    def one_per_call(self) -> bool:
        """The model embeds one text per request (the core sends a list concurrently)."""
        return len(self.inputs) > 1 and len(interactions(self.sample)) == len(self.inputs)

    @property
    def cassette(self) -> str:
        return f"embeddings/{self.name}.yaml"

    def replies(self) -> list[Reply]:
        """The recorded answers (status, headers, body) in order."""
        out = []
        for item in interactions(self.sample):
            response = item["response"]
            body = response["body"]
            if self.provider == "voyage" and response["status"] == 200:
                body = _voyage_body(body)
            headers = {k: v for k, v in response["headers"].items() if k != "content-type"}
            out.append(Reply(status=response["status"], json=body, headers=headers))
        return out

    def requests(self) -> list[dict[str, Any]]:
        """The recorded requests (method, uri, body)."""
        return [item["request"] for item in interactions(self.sample)]


def _voyage_body(body: dict[str, Any]) -> dict[str, Any]:
    """Voyage AI's answer with each truncated base64 vector rebuilt at its recorded length."""
    size = _truncated_length(body["data"][0]["embedding"]) * 3 // 4 // 4
    encoded = base64_rows(vectors(len(body["data"]), size))
    data = [{**item, "embedding": text} for item, text in zip(body["data"], encoded, strict=True)]
    return {**body, "data": data}


SCENARIOS = {
    s.name: s
    for s in [
        Scenario(
            "gemini_task_type_dimensions",
            "gemini/embed-task-type-dimensions.json",
            "gemini",
            "gemini-embedding-2-preview",
            ("Hello, world!",),
            {"input_type": "query", "dimensions": 768},
            {"api_key": "recording-key"},
            768,
            0,
        ),
        Scenario(
            "gemini_task_prefix",
            "gemini/embed-task-prefix.json",
            "gemini",
            "gemini-embedding-2",
            ("Hello, world!",),
            {"input_type": "query", "vendor": {"gemini": {"task": "question answering"}}},
            {"api_key": "recording-key"},
            3072,
            11,
        ),
        Scenario(
            "vertex_predict",
            "gemini-vertex/embed-predict.json",
            "gemini-vertex",
            "gemini-embedding-001",
            ("Hello, world!",),
            {"input_type": "query"},
            {"project": "pydantic-ai", "location": "global", "api_version": "v1beta1"},
            3072,
            4,
        ),
        Scenario(
            "bedrock_titan_v2_dimensions",
            "bedrock-invoke/titan-v2-dimensions.json",
            "bedrock",
            "amazon.titan-embed-text-v2:0",
            ("Test embedding dimensions",),
            {"dimensions": 256},
            AWS,
            256,
            4,
        ),
        Scenario(
            "bedrock_cohere_v3_input_type",
            "bedrock-invoke/cohere-v3-input-type.json",
            "bedrock",
            "cohere.embed-english-v3",
            ("Test input type setting",),
            {"vendor": {"bedrock": {"input_type": "classification"}}},
            AWS,
            1024,
            4,
        ),
        Scenario(
            "bedrock_cohere_v4_dimensions",
            "bedrock-invoke/cohere-v4-dimensions.json",
            "bedrock",
            "cohere.embed-v4:0",
            ("Test dimensions setting",),
            {"input_type": "query", "dimensions": 512},
            AWS,
            512,
            3,
        ),
        Scenario(
            "bedrock_cohere_v4_regional_prefix",
            "bedrock-invoke/cohere-v4-regional-prefix.json",
            "bedrock",
            "us.cohere.embed-v4:0",
            ("Hello from regional endpoint!",),
            {"input_type": "query"},
            AWS,
            1536,
            5,
        ),
        Scenario(
            "bedrock_nova_multiple_texts",
            "bedrock-invoke/nova-multiple-texts.json",
            "bedrock",
            "amazon.nova-2-multimodal-embeddings-v1:0",
            ("hello", "world"),
            {},
            AWS,
            3072,
            6,
        ),
        Scenario(
            "cohere_query_truncate",
            "cohere/embed-query-truncate.json",
            "cohere",
            "embed-v4.0",
            ("Hello, world!",),
            {"input_type": "query", "truncate": "end"},
            {"api_key": "recording-key"},
            1536,
            4,
        ),
        Scenario(
            "voyage_documents",
            "voyage/embed-documents.json",
            "voyage",
            "voyage-3.5",
            ("hello", "world"),
            {"input_type": "document"},
            {"api_key": "recording-key"},
            1024,
            0,
        ),
    ]
}


# -- answers of any shape, for hostile servers ---------------------------------------

#: Per vendor: a model that takes two inputs in one request and a size it offers.
HOSTILE_TARGETS: dict[str, tuple[str, int, dict[str, Any]]] = {
    "gemini": ("gemini-embedding-001", 768, {"api_key": "test-key"}),
    "gemini-vertex": ("text-embedding-005", 256, {"project": "p", "location": "us-central1"}),
    "bedrock": ("cohere.embed-v4:0", 512, AWS),
    "cohere": ("embed-v4.0", 256, {"api_key": "test-key"}),
    "voyage": ("voyage-3.5", 256, {"api_key": "test-key"}),
}


def answer_with(provider: str, rows: list[list[float]]) -> dict[str, Any]:
    """The vendor's success answer carrying ``rows`` (for :data:`HOSTILE_TARGETS`' models)."""
    if provider == "gemini":
        return {"embeddings": [{"values": row} for row in rows]}
    if provider == "gemini-vertex":
        stats = {"token_count": 1, "truncated": False}
        return {"predictions": [{"embeddings": {"values": r, "statistics": stats}} for r in rows]}
    if provider == "bedrock":
        return {"embeddings": {"float": rows}, "response_type": "embeddings_by_type"}
    if provider == "cohere":
        return {"embeddings": {"float": rows}, "meta": {"billed_units": {"input_tokens": 1}}}
    data = [{"embedding": text, "index": i} for i, text in enumerate(base64_rows(rows))]
    return {"data": data, "usage": {"total_tokens": 1}}
