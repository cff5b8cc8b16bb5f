"""Which contract targets generate images, and how their vendor answers.

:data:`IMAGE_TARGETS` maps a target id of ``wire.TARGETS`` to an
:class:`ImageTarget`: the image model the contract calls, the path its
request goes to and how the loopback "vendor" answers (``n`` PNGs in the
target's documented shape), of ``wire.TARGETS`` or ``wire.PROFILE_TARGETS``.
Every other target, of ``wire.TARGETS``,
``wire.PROFILE_TARGETS`` or ``wire.EMBED_ONLY_TARGETS``, is in
:data:`NO_IMAGES` with the reason it refuses typed. A vendor plugin that
gains an image endpoint adds its row here; the image contract
(test_contract_images) and the invariants and hostile tables
(``generate_image`` / ``agenerate_image``) then run on it.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass

from llmport.testing.loopback import RecordedRequest, Reply
from llmport.testing.scripted import scripted_png

__all__ = ["IMAGE_TARGETS", "NO_IMAGES", "PNG", "ImageTarget", "asked", "image_model"]

#: The image every loopback vendor answers with (a real 8x8 PNG).
PNG = scripted_png("contract")
_B64 = base64.b64encode(PNG).decode()


@dataclass(frozen=True)
class ImageTarget:
    """One target's image endpoint: model, request path, the vendor's answer."""

    model: str
    #: The end of the URL path the image request of this target goes to.
    path: str
    #: The vendor's success answer to one image request (as many images as it asked).
    answer: Callable[[RecordedRequest], Reply]


def asked(request: RecordedRequest) -> int:
    """How many images ``request`` asks for, whatever its vendor calls it."""
    body = request.json()
    if "n" in body:  # OpenAI
        return int(body["n"])
    if "parameters" in body:  # Imagen :predict
        return int(body["parameters"]["sampleCount"])
    return int(body["imageGenerationConfig"]["numberOfImages"])  # Bedrock TEXT_IMAGE


def _openai(request: RecordedRequest) -> Reply:
    data = [{"b64_json": _B64} for _ in range(asked(request))]
    usage = {"input_tokens": 5, "output_tokens": 272, "total_tokens": 277}
    return Reply(json={"created": 1, "data": data, "output_format": "png", "usage": usage})


def _xai(request: RecordedRequest) -> Reply:
    """xAI's answer as its guide shows it: each image a data URL in ``b64_json``."""
    data = [{"b64_json": f"data:image/png;base64,{_B64}"} for _ in range(asked(request))]
    return Reply(json={"data": data})


def _imagen(request: RecordedRequest) -> Reply:
    rows = [{"bytesBase64Encoded": _B64, "mimeType": "image/png"} for _ in range(asked(request))]
    return Reply(json={"predictions": rows})


def _bedrock(request: RecordedRequest) -> Reply:
    return Reply(json={"images": [_B64] * asked(request), "error": None})


IMAGE_TARGETS: dict[str, ImageTarget] = {
    "openai-chat": ImageTarget("openai:gpt-image-1", "/images/generations", _openai),
    "gemini-vertex": ImageTarget("gemini-vertex:imagen-4.0-generate-001", ":predict", _imagen),
    "bedrock": ImageTarget("bedrock:amazon.nova-canvas-v1:0", "/invoke", _bedrock),
    "xai": ImageTarget("xai:grok-2-image", "/images/generations", _xai),
}

_COMPAT = "llmport sends no image requests to this OpenAI-compatible service"
NO_IMAGES: dict[str, str] = {
    "openai-responses": "the Responses API makes images in a call (NativeTool), not here",
    "anthropic": "Anthropic has no image generation endpoint",
    "gemini": "the Developer API serves no Imagen (google-genai: Vertex AI only)",
    "anthropic-vertex": "Claude makes no images (gemini-vertex: has Imagen)",
    "callonly": "a call= function only chats",
    "callonly-stream": "a call= function only chats",
    "cohere": "Cohere's plugin embeds only",
    "voyage": "Voyage AI embeds only",
    **{
        name: _COMPAT
        for name in (
            "groq",
            "deepseek",
            "deepseek-responses",
            "ollama",
            "mistral",
            "openrouter",
            "vllm",
            "lmstudio",
            "together",
            "fireworks",
            "cerebras",
            "huggingface",
        )
    },
}


def image_model(wire_id: str) -> str:
    """The image model the contract calls on target ``wire_id``."""
    return IMAGE_TARGETS[wire_id].model
