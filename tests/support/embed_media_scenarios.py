"""Image-embedding scenarios: inputs, the call, and the vendor's answer from its API reference.

No recording of image embeddings exists: each answer here is written from the vendor's
API reference (named per scenario), and ``tests/make_embed_media_cassettes.py`` records
what the real plugins send against them into ``cassettes/embeddings/media_*.yaml``.
``tests/embed_vendors/test_embed_media.py`` replays those and checks the bodies.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from llmport.testing.loopback import RecordedRequest, Reply
from support.embed_scenarios import AWS
from support.media_samples import JPEG, PNG

DIMS = 4
IMAGE = {"type": "image", "data": PNG, "media_type": "image/png"}
JPEG_IMAGE = {"type": "image", "data": JPEG, "media_type": "image/jpeg"}
#: Three inputs: an image, a caption fused with an image, a text.
INPUTS: list[Any] = [IMAGE, ["a red square", IMAGE], "plain text"]


def rows(count: int, width: int = DIMS) -> list[list[float]]:
    """``count`` vectors of ``width`` exact float32 values, input ``i``'s starting with ``i``."""
    return [[float(i)] + [1.0] * (width - 1) for i in range(count)]


def cohere_reply(request: RecordedRequest) -> Reply:
    """Cohere API reference, "Embed API (v2)": ``embeddings.float``, ``meta.billed_units``."""
    body = request.json()
    count = len(body.get("inputs") or body.get("texts") or [])
    meta = {"billed_units": {"input_tokens": 7, "images": 2}}
    return Reply(json={"id": "x", "embeddings": {"float": rows(count)}, "meta": meta})


def voyage_reply(request: RecordedRequest) -> Reply:
    """Voyage AI API reference, "Multimodal embeddings": ``data[].embedding`` (base64 asked)."""
    body = request.json()
    data = [
        {
            "object": "embedding",
            "index": i,
            "embedding": base64.b64encode(struct.pack(f"<{DIMS}f", *row)).decode(),
        }
        for i, row in enumerate(rows(len(body["inputs"])))
    ]
    usage = {"text_tokens": 5, "image_pixels": 2000, "total_tokens": 9}
    return Reply(json={"object": "list", "data": data, "model": body["model"], "usage": usage})


def bedrock_reply(request: RecordedRequest) -> Reply:
    """The AWS pages of Nova (``embeddings[].embedding``), Cohere Embed v4
    (``embeddings.float``) and Titan Multimodal G1 (``embedding``, ``inputTextTokenCount``)."""
    body = request.json()
    headers = {"content-type": "application/json", "x-amzn-bedrock-input-token-count": "3"}
    if "singleEmbeddingParams" in body:
        answer: dict[str, Any] = {
            "embeddings": [{"embeddingType": "IMAGE", "embedding": rows(1)[0]}]
        }
    elif "inputs" in body or "texts" in body:
        count = len(body.get("inputs") or body.get("texts"))
        answer = {"embeddings": {"float": rows(count)}, "response_type": "embeddings_by_type"}
    else:
        width = body.get("embeddingConfig", {}).get("outputEmbeddingLength", DIMS)
        answer = {"embedding": rows(1, width)[0], "inputTextTokenCount": 3}
    return Reply(json=answer, headers=headers)


def vertex_reply(request: RecordedRequest) -> Reply:
    """Google Cloud, "Get multimodal embeddings": ``predictions[].imageEmbedding`` or
    ``textEmbedding``."""
    (instance,) = request.json()["instances"]
    width = request.json().get("parameters", {}).get("dimension", DIMS)
    key = "imageEmbedding" if "image" in instance else "textEmbedding"
    return Reply(json={"predictions": [{key: rows(1, width)[0]}]})


@dataclass(frozen=True)
class MediaScenario:
    """One image-embedding call and the document its answer is written from."""

    name: str
    document: str
    provider: str
    model: str
    inputs: list[Any]
    reply: Callable[[RecordedRequest], Reply]
    call: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    dimensions: int = DIMS
    #: One InvokeModel / :predict call per input (recorded one at a time).
    one_per_call: bool = False

    @property
    def cassette(self) -> str:
        return f"embeddings/media_{self.name}.yaml"


VERTEX = {"project": "p", "location": "global"}

MEDIA_SCENARIOS: dict[str, MediaScenario] = {
    s.name: s
    for s in (
        MediaScenario(
            "cohere_v4",
            'Cohere API reference, "Embed API (v2)"',
            "cohere",
            "embed-v4.0",
            INPUTS,
            cohere_reply,
            settings={"api_key": "test-key"},
        ),
        MediaScenario(
            "voyage_multimodal",
            'Voyage AI API reference, "Multimodal embeddings"',
            "voyage",
            "voyage-multimodal-3.5",
            INPUTS,
            voyage_reply,
            {"input_type": "query"},
            {"api_key": "test-key"},
        ),
        MediaScenario(
            "bedrock_titan_image",
            'Amazon Bedrock User Guide, "Amazon Titan Multimodal Embeddings G1"',
            "bedrock",
            "amazon.titan-embed-image-v1",
            INPUTS[:2],
            bedrock_reply,
            {"dimensions": 256},
            dict(AWS),
            256,
            True,
        ),
        MediaScenario(
            "bedrock_nova_image",
            'Amazon Nova User Guide, "Complete embeddings request and response schema"',
            "bedrock",
            "amazon.nova-2-multimodal-embeddings-v1:0",
            [JPEG_IMAGE],
            bedrock_reply,
            settings=dict(AWS),
            one_per_call=True,
        ),
        MediaScenario(
            "bedrock_cohere_v4",
            'Amazon Bedrock User Guide, "Cohere Embed v4"',
            "bedrock",
            "cohere.embed-v4:0",
            INPUTS[:2],
            bedrock_reply,
            settings=dict(AWS),
        ),
        MediaScenario(
            "vertex_multimodal",
            'Google Cloud, "Get multimodal embeddings"',
            "gemini-vertex",
            "multimodalembedding@001",
            [IMAGE],
            vertex_reply,
            {"dimensions": 128},
            VERTEX,
            128,
            True,
        ),
    )
}
