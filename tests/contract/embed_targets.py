"""Which contract targets embed, and how their vendor answers.

:data:`EMBED_TARGETS` maps a target id of ``wire.TARGETS``,
``wire.PROFILE_TARGETS`` or ``wire.EMBED_ONLY_TARGETS`` (Cohere, Voyage AI) to
an :class:`EmbedTarget`: the embedding model the contract calls, the path its
requests go to, how the loopback "vendor" answers one request (vectors that
say which input they belong to) and how to read the inputs back out of a
request. Every target not in it must be in :data:`NO_EMBEDDINGS` with the
reason it refuses typed. A vendor plugin that gains embeddings adds its row
here; the embedding contract (test_contract_embeddings) then runs on it, and
the invariants table (test_contract_invariants: ``embed`` / ``aembed``) too
for a target of ``wire.TARGETS``.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llmport.testing.loopback import RecordedRequest, Reply

#: Values per vector the loopback vendors answer.
DIMS = 3


def vector_of(text: str) -> tuple[float, ...]:
    """The loopback vendor's vector for ``text``: ``(len, first char, last char)``."""
    return (float(len(text)), float(ord(text[0])), float(ord(text[-1])))


@dataclass(frozen=True)
class EmbedTarget:
    """One target's embeddings: model, request path, the vendor's answer, inputs sent."""

    model: str
    #: The end of the URL path every embedding request of this target goes to.
    path: str
    #: The vendor's success answer to one embedding request.
    answer: Callable[[RecordedRequest], Reply]
    #: The inputs one request carries, read from the request.
    inputs: Callable[[RecordedRequest], list[str]]
    #: Usage the vendor reports per input (its answer's tokens).
    tokens_per_input: int = 1
    #: The target's model that embeds images (its API reference documents it), or None:
    #: an image input is refused typed before any request.
    media_model: str | None = None


def content_text(item: Any) -> str:
    """The loopback vendor's name of one input: its text, or its content parts' texts
    (``img`` for an image), joined by ``+``."""
    if isinstance(item, str):
        return item
    parts = item["content"]
    return "+".join(p["text"] if p["type"] == "text" else "img" for p in parts)


def _texts_or_inputs(body: dict[str, Any], texts: str = "texts") -> list[str]:
    """The inputs of a body that sends ``texts`` (text only) or ``inputs`` (content)."""
    if texts in body:
        return list(body[texts])
    return [content_text(item) for item in body["inputs"]]


def openai_inputs(request: RecordedRequest) -> list[str]:
    return list(request.json()["input"])


def openai_answer(*, b64: bool) -> Callable[[RecordedRequest], Reply]:
    """OpenAI's ``/embeddings`` answer (base64 float32 or floats, as the service sends)."""

    def answer(request: RecordedRequest) -> Reply:
        body = request.json()
        data = []
        for index, text in enumerate(body["input"]):
            row = vector_of(text)
            packed = base64.b64encode(struct.pack(f"<{DIMS}f", *row)).decode()
            data.append(
                {"object": "embedding", "index": index, "embedding": packed if b64 else list(row)}
            )
        count = len(body["input"])
        usage = {"prompt_tokens": count, "total_tokens": count}
        return Reply(json={"object": "list", "data": data, "model": body["model"], "usage": usage})

    return answer


def gemini_inputs(request: RecordedRequest) -> list[str]:
    return [one["content"]["parts"][0]["text"] for one in request.json()["requests"]]


def gemini_answer(request: RecordedRequest) -> Reply:
    """Gemini's ``batchEmbedContents`` answer: ``embeddings[].values``, ``usageMetadata``."""
    texts = gemini_inputs(request)
    rows = [{"values": list(vector_of(text))} for text in texts]
    return Reply(json={"embeddings": rows, "usageMetadata": {"promptTokenCount": len(texts)}})


def vertex_inputs(request: RecordedRequest) -> list[str]:
    return [one["content"] for one in request.json()["instances"]]


def vertex_answer(request: RecordedRequest) -> Reply:
    """Vertex AI's ``:predict`` answer (wire-samples gemini-vertex/embed-predict.json)."""
    texts = vertex_inputs(request)
    statistics = {"token_count": 1, "truncated": False}
    rows = [{"embeddings": {"values": list(vector_of(t)), "statistics": statistics}} for t in texts]
    return Reply(json={"predictions": rows, "metadata": {"billableCharacterCount": 1}})


def bedrock_inputs(request: RecordedRequest) -> list[str]:
    return _texts_or_inputs(request.json())


def bedrock_answer(request: RecordedRequest) -> Reply:
    """Cohere Embed v4 on Bedrock: ``embeddings.float``; the token count in a header."""
    texts = bedrock_inputs(request)
    body = {
        "embeddings": {"float": [list(vector_of(text)) for text in texts]},
        "id": "contract",
        "response_type": "embeddings_by_type",
        "texts": texts,
    }
    return Reply(json=body, headers={"x-amzn-bedrock-input-token-count": str(len(texts))})


def cohere_inputs(request: RecordedRequest) -> list[str]:
    return _texts_or_inputs(request.json())


def cohere_answer(request: RecordedRequest) -> Reply:
    """Cohere's ``/v2/embed`` answer: ``embeddings.float``, ``meta.billed_units``."""
    texts = cohere_inputs(request)
    body = {
        "id": "contract",
        "embeddings": {"float": [list(vector_of(text)) for text in texts]},
        "texts": texts,
        "meta": {"api_version": {"version": "2"}, "billed_units": {"input_tokens": len(texts)}},
        "response_type": "embeddings_by_type",
    }
    return Reply(json=body)


def voyage_inputs(request: RecordedRequest) -> list[str]:
    return _texts_or_inputs(request.json(), "input")


def voyage_answer(request: RecordedRequest) -> Reply:
    """Voyage AI's ``/v1/embeddings`` answer: base64 float32 (asked for), ``usage.total_tokens``."""
    body, texts = request.json(), voyage_inputs(request)
    data = [
        {
            "object": "embedding",
            "embedding": base64.b64encode(struct.pack(f"<{DIMS}f", *vector_of(text))).decode(),
            "index": index,
        }
        for index, text in enumerate(texts)
    ]
    usage = {"total_tokens": len(texts)}
    return Reply(json={"object": "list", "data": data, "model": body["model"], "usage": usage})


def _openai_like(model: str, path: str, *, b64: bool) -> EmbedTarget:
    return EmbedTarget(model, path, openai_answer(b64=b64), openai_inputs)


EMBED_TARGETS: dict[str, EmbedTarget] = {
    "openai-chat": _openai_like("openai:text-embedding-3-small", "/embeddings", b64=True),
    "ollama": _openai_like("ollama:nomic-embed-text", "/embeddings", b64=True),
    "mistral": _openai_like("mistral:mistral-embed", "/embeddings", b64=True),
    "openrouter": _openai_like(
        "openrouter:openai/text-embedding-3-small", "/embeddings", b64=False
    ),
    "vllm": _openai_like("vllm:intfloat/e5-small", "/embeddings", b64=True),
    "lmstudio": _openai_like("lmstudio:nomic-embed-text-v1.5", "/embeddings", b64=False),
    "together": _openai_like("together:BAAI/bge-base-en-v1.5", "/embeddings", b64=False),
    "fireworks": _openai_like("fireworks:nomic-ai/nomic-embed-text-v1.5", "/embeddings", b64=False),
    "gemini": EmbedTarget(
        "gemini:gemini-embedding-001", ":batchEmbedContents", gemini_answer, gemini_inputs
    ),
    "bedrock": EmbedTarget(
        "bedrock:cohere.embed-v4:0",
        "/invoke",
        bedrock_answer,
        bedrock_inputs,
        media_model="bedrock:cohere.embed-v4:0",
    ),
    "cohere": EmbedTarget(
        "cohere:embed-v4.0",
        "/v2/embed",
        cohere_answer,
        cohere_inputs,
        media_model="cohere:embed-v4.0",
    ),
    "voyage": EmbedTarget(
        "voyage:voyage-3.5",
        "/v1/embeddings",
        voyage_answer,
        voyage_inputs,
        media_model="voyage:voyage-multimodal-3.5",
    ),
    "gemini-vertex": EmbedTarget(
        "gemini-vertex:text-embedding-005", ":predict", vertex_answer, vertex_inputs
    ),
}

#: target id -> why it has no embeddings (its typed refusal, before any request).
NO_EMBEDDINGS: dict[str, str] = {
    "openai-responses": "the Responses API has no embeddings (openai: has them)",
    "anthropic": "Anthropic has no embeddings endpoint (its docs point to Voyage AI: voyage:)",
    "anthropic-vertex": "Claude on Vertex AI has no embeddings (gemini-vertex: has them)",
    "callonly": "a call= function only chats",
    "callonly-stream": "a call= function only chats",
    "groq": "GroqCloud serves no embedding models",
    "deepseek": "DeepSeek's API has no embeddings endpoint",
    "deepseek-responses": "DeepSeek's API has no embeddings endpoint",
    "xai": "xAI lists no embedding model",
    "cerebras": "Cerebras serves no embedding models",
    "huggingface": "the router's OpenAI-compatible API serves chat only",
}


def embed_model(wire_id: str) -> str:
    """The embedding model the contract calls on target ``wire_id``."""
    return EMBED_TARGETS[wire_id].model


__all__ = [
    "DIMS",
    "EMBED_TARGETS",
    "NO_EMBEDDINGS",
    "EmbedTarget",
    "bedrock_answer",
    "bedrock_inputs",
    "cohere_answer",
    "cohere_inputs",
    "content_text",
    "embed_model",
    "gemini_answer",
    "gemini_inputs",
    "openai_answer",
    "openai_inputs",
    "vector_of",
    "vertex_answer",
    "vertex_inputs",
    "voyage_answer",
    "voyage_inputs",
]
