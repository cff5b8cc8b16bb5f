"""One ``rt.generate_image`` call per image vendor, with the request and answer its document shows.

Each :class:`Scenario` is read twice: by ``make_image_cassettes.py``, which
writes the cassette (the request body and the documented answer), and by
``test_image_vendors.py``, which makes the call through the real plugin and
checks the images, their media type and the usage that come back.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from llmport.testing.scripted import scripted_png

#: Bedrock credentials for replays (fake, never sent anywhere real).
AWS = {
    "region": "us-east-1",
    "aws_access_key_id": "AKIAFAKEFAKEFAKEFAKE",
    "aws_secret_access_key": "fake-secret-for-tests",
}
#: A JPEG stub: JPEG's magic bytes, a JFIF header and the end marker (not a viewable image).
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
OPENAI_DOC = "OpenAI API reference, Images > Create image (POST /v1/images/generations)"
VERTEX_DOC = "Vertex AI, Imagen API reference (publishers/google/models/*:predict)"
NOVA_DOC = "Amazon Nova User Guide, Image generation access and usage (Nova Canvas)"
TITAN_DOC = "Amazon Bedrock User Guide, Amazon Titan Image Generator G1 models"
XAI_DOC = "xAI, Image generation guide (POST /v1/images/generations)"


def png(name: str, index: int) -> bytes:
    """The made image ``index`` of scenario ``name`` (a real 8x8 PNG of its own colour)."""
    return scripted_png(f"{name}-{index}")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@dataclass(frozen=True)
class Scenario:
    name: str
    provider: str
    model: str
    prompt: str
    call: dict[str, Any]
    settings: dict[str, Any]
    uri: str
    request: dict[str, Any]
    answer: Callable[[], dict[str, Any]]
    doc: str
    media_type: str = "image/png"
    usage: tuple[int, int] = (0, 0)
    images: list[bytes] = field(default_factory=list)

    @property
    def cassette(self) -> str:
        return f"images/{self.name}.yaml"


def _scenarios() -> dict[str, Scenario]:
    gpt = [png("openai_gpt_image", i) for i in range(2)]
    dalle = [png("openai_dall_e_3", 0)]
    nova = [png("bedrock_nova_canvas", i) for i in range(2)]
    titan = [png("bedrock_titan_image", 0)]
    return {
        s.name: s
        for s in [
            Scenario(
                "openai_gpt_image",
                "openai",
                "gpt-image-1",
                "A watercolor fox in the snow",
                {"n": 2, "size": "1024x1024", "quality": "low", "output_format": "png"},
                {"api_key": "sk-test-not-a-key"},
                "https://api.openai.com/v1/images/generations",
                {
                    "model": "gpt-image-1",
                    "prompt": "A watercolor fox in the snow",
                    "n": 2,
                    "size": "1024x1024",
                    "quality": "low",
                    "output_format": "png",
                },
                lambda: {
                    "created": 1764374400,
                    "background": "opaque",
                    "output_format": "png",
                    "quality": "low",
                    "size": "1024x1024",
                    "data": [{"b64_json": b64(image)} for image in gpt],
                    "usage": {
                        "input_tokens": 12,
                        "input_tokens_details": {"image_tokens": 0, "text_tokens": 12},
                        "output_tokens": 544,
                        "total_tokens": 556,
                    },
                },
                OPENAI_DOC,
                usage=(12, 544),
                images=gpt,
            ),
            Scenario(
                "openai_dall_e_3",
                "openai",
                "dall-e-3",
                "A lighthouse at dusk",
                {
                    "size": "1792x1024",
                    "quality": "high",
                    "vendor": {"openai": {"style": "natural"}},
                },
                {"api_key": "sk-test-not-a-key"},
                "https://api.openai.com/v1/images/generations",
                {
                    "model": "dall-e-3",
                    "prompt": "A lighthouse at dusk",
                    "n": 1,
                    "size": "1792x1024",
                    "quality": "hd",
                    "response_format": "b64_json",
                    "style": "natural",
                },
                lambda: {
                    "created": 1764374400,
                    "data": [
                        {
                            "b64_json": b64(dalle[0]),
                            "revised_prompt": "A lighthouse on a rocky shore at dusk.",
                        }
                    ],
                },
                OPENAI_DOC,
                images=dalle,
            ),
            Scenario(
                "xai_grok_image",
                "xai",
                "grok-2-image",
                "A cat in a tree",
                {"n": 2, "vendor": {"xai": {"aspect_ratio": "16:9"}}},
                {"api_key": "xai-test-not-a-key"},
                "https://api.x.ai/v1/images/generations",
                {
                    "model": "grok-2-image",
                    "prompt": "A cat in a tree",
                    "n": 2,
                    "response_format": "b64_json",
                    "aspect_ratio": "16:9",
                },
                # The guide shows each image as a data URL saying PNG; its images are JPEG.
                lambda: {
                    "data": [
                        {
                            "b64_json": f"data:image/png;base64,{b64(JPEG)}",
                            "revised_prompt": "A gray cat on a branch of a leafy tree.",
                        }
                        for _ in range(2)
                    ]
                },
                XAI_DOC,
                media_type="image/jpeg",
                images=[JPEG, JPEG],
            ),
            Scenario(
                "vertex_imagen",
                "gemini-vertex",
                "imagen-4.0-generate-001",
                "A lighthouse at dawn",
                {"size": "2048x2048", "output_format": "jpeg", "seed": 42},
                {"project": "pydantic-ai", "location": "global", "api_version": "v1beta1"},
                "https://aiplatform.googleapis.com/v1beta1/projects/pydantic-ai/locations/global/"
                "publishers/google/models/imagen-4.0-generate-001:predict",
                {
                    "instances": [{"prompt": "A lighthouse at dawn"}],
                    "parameters": {
                        "sampleCount": 1,
                        "aspectRatio": "1:1",
                        "sampleImageSize": "2K",
                        "seed": 42,
                        "addWatermark": False,
                        "outputOptions": {"mimeType": "image/jpeg"},
                    },
                },
                lambda: {
                    "predictions": [{"bytesBase64Encoded": b64(JPEG), "mimeType": "image/jpeg"}]
                },
                VERTEX_DOC,
                media_type="image/jpeg",
                images=[JPEG],
            ),
            Scenario(
                "bedrock_nova_canvas",
                "bedrock",
                "amazon.nova-canvas-v1:0",
                "A stylized picture of a cute old steampunk robot",
                {
                    "n": 2,
                    "size": "1280x720",
                    "quality": "high",
                    "seed": 42,
                    "vendor": {"bedrock": {"negativeText": "blurry", "cfgScale": 6.5}},
                },
                AWS,
                "https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-canvas-v1%3A0/invoke",
                {
                    "taskType": "TEXT_IMAGE",
                    "textToImageParams": {
                        "text": "A stylized picture of a cute old steampunk robot",
                        "negativeText": "blurry",
                    },
                    "imageGenerationConfig": {
                        "numberOfImages": 2,
                        "width": 1280,
                        "height": 720,
                        "quality": "premium",
                        "seed": 42,
                        "cfgScale": 6.5,
                    },
                },
                lambda: {"images": [b64(image) for image in nova], "error": None},
                NOVA_DOC,
                images=nova,
            ),
            Scenario(
                "bedrock_titan_image",
                "bedrock",
                "amazon.titan-image-generator-v2:0",
                "A green teapot",
                {"size": "512x512", "quality": "medium"},
                AWS,
                "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
                "amazon.titan-image-generator-v2%3A0/invoke",
                {
                    "taskType": "TEXT_IMAGE",
                    "textToImageParams": {"text": "A green teapot"},
                    "imageGenerationConfig": {
                        "numberOfImages": 1,
                        "width": 512,
                        "height": 512,
                        "quality": "standard",
                    },
                },
                lambda: {"images": [b64(titan[0])], "error": None},
                TITAN_DOC,
                images=titan,
            ),
        ]
    }


SCENARIOS = _scenarios()
