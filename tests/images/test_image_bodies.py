"""The image request builders as pure functions: every documented size and option mapped.

Each builder names its document (the vendors' API references); these tests pin the
mappings the cassettes exercise one case of.
"""

from __future__ import annotations

import json

import pytest
from llmport.messages.images import ImageRequest
from llmport_bedrock.images import image_body as bedrock_body
from llmport_gemini.images import image_payload
from llmport_gemini.models import IMAGEN_1K, IMAGEN_2K
from llmport_openai.images import image_body as openai_body

#: Vertex AI "Imagen API": the output size of each aspect ratio, at 1K and 2K.
RATIOS = {
    "1024x1024": "1:1",
    "896x1280": "3:4",
    "1280x896": "4:3",
    "768x1408": "9:16",
    "1408x768": "16:9",
    "2048x2048": "1:1",
    "1792x2560": "3:4",
    "2560x1792": "4:3",
    "1536x2816": "9:16",
    "2816x1536": "16:9",
}


def test_every_documented_imagen_size_is_one_aspect_ratio() -> None:
    assert set(RATIOS) == IMAGEN_1K | IMAGEN_2K
    for size, ratio in RATIOS.items():
        payload = image_payload(
            ImageRequest("imagen-4.0-generate-001", "x", size=size), vertex=True
        )
        parameters = payload["body"]["parameters"]
        assert parameters["aspectRatio"] == ratio
        assert parameters.get("sampleImageSize") == ("2K" if size in IMAGEN_2K else None)
    assert payload["path"] == "publishers/google/models/imagen-4.0-generate-001:predict"


def test_imagen_seed_turns_the_watermark_off_and_vendor_fields_join_the_parameters() -> None:
    request = ImageRequest(
        "imagen-4.0-generate-001", "x", seed=7, output_format="jpeg",
        options={"personGeneration": "dont_allow"},
    )  # fmt: skip
    parameters = image_payload(request, vertex=True)["body"]["parameters"]
    assert parameters == {
        "sampleCount": 1,
        "seed": 7,
        "addWatermark": False,
        "outputOptions": {"mimeType": "image/jpeg"},
        "personGeneration": "dont_allow",
    }


@pytest.mark.parametrize(
    ("model", "quality", "sent"),
    [("gpt-image-1", "low", "low"), ("dall-e-3", "medium", "standard"), ("dall-e-3", "high", "hd")],
)
def test_openai_quality_is_each_model_own_word(model: str, quality: str, sent: str) -> None:
    body = openai_body(ImageRequest(model, "x", quality=quality))  # type: ignore[arg-type]
    assert body["quality"] == sent
    assert ("response_format" in body) == model.startswith("dall-e")  # GPT image: always base64


def test_openai_vendor_fields_come_last_and_may_override() -> None:
    request = ImageRequest("dall-e-2", "x", options={"response_format": "url", "user": "u1"})
    assert openai_body(request)["response_format"] == "url"
    assert openai_body(request)["user"] == "u1"


def test_bedrock_vendor_fields_go_where_the_document_puts_them() -> None:
    request = ImageRequest(
        "amazon.nova-canvas-v1:0", "x", n=3, size="1024x512", quality="medium", seed=1,
        options={"negativeText": "fog", "style": "PHOTOREALISM", "cfgScale": 8.0,
                 "colorGuidedGenerationParams": None},
    )  # fmt: skip
    body = json.loads(bedrock_body(request))
    assert body["textToImageParams"] == {
        "text": "x",
        "negativeText": "fog",
        "style": "PHOTOREALISM",
    }
    assert body["imageGenerationConfig"] == {
        "numberOfImages": 3,
        "width": 1024,
        "height": 512,
        "quality": "standard",
        "seed": 1,
        "cfgScale": 8.0,
    }
    assert body["taskType"] == "TEXT_IMAGE" and "colorGuidedGenerationParams" in body
