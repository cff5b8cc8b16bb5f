"""Imagen on the wire (``rt.generate_image``): request bodies and answers, as pure functions.

Built from Vertex AI's "Imagen on Vertex AI" API reference
(https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/imagen-api),
no recording of this endpoint exists yet: ``POST
publishers/google/models/{model}:predict`` with ``instances: [{prompt}]`` and
``parameters: {sampleCount, aspectRatio, sampleImageSize, seed, addWatermark,
outputOptions: {mimeType}}`` (a seed requires ``addWatermark: false``). The
Gemini Developer API is not served: google-genai's ``generate_images`` is
Vertex AI only (3.x), so ``gemini:`` refuses before any request.

The answer is ``predictions: [{bytesBase64Encoded, mimeType}]`` (a prediction
filtered by the safety filter carries ``raiFilteredReason`` instead: llmport
says so in the error). The neutral ``size`` is one of the documented output
sizes, sent as its ``aspectRatio`` (and ``sampleImageSize: "2K"`` for the 2K
sizes). This is the body google-genai's ``models.generate_images`` posts; the
provider sends it through the SDK's API client as it sends embeddings.

Nothing here does I/O or imports google-genai.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmport.errors import MalformedResponseError
from llmport.messages.images import ImageRequest, ImageResponse
from llmport.messages.types import Usage
from llmport.observe.redaction import redact
from llmport.provider.imaging import answered_image, aspect_ratio, media_type_of

from .models import IMAGEN_2K

__all__ = ["image_answer", "image_payload"]

PREDICT = ":predict"
#: Imagen's aspect ratios as the sizes above reduce to them.
_RATIOS = {"1:1": "1:1", "7:10": "3:4", "10:7": "4:3", "6:11": "9:16", "11:6": "16:9"}


def image_payload(request: ImageRequest, *, vertex: bool) -> dict[str, Any]:
    """What the provider posts for ``request``: ``path`` and ``body`` (no I/O).

    ``vertex`` is False only for a ``gemini:`` provider whose own model table lists
    an Imagen model (a plugin's): the Developer API's ``models/{model}`` path then.
    """
    name = request.model.removeprefix("models/")
    parameters: dict[str, Any] = {"sampleCount": request.n}
    if request.size is not None:
        parameters["aspectRatio"] = _RATIOS[aspect_ratio(request.size)]
        if request.size in IMAGEN_2K:
            parameters["sampleImageSize"] = "2K"
    if request.seed is not None:  # Vertex only (the check refused it elsewhere)
        parameters["seed"] = request.seed
        parameters["addWatermark"] = False
    if request.output_format is not None and vertex:
        parameters["outputOptions"] = {"mimeType": media_type_of(request.output_format)}
    parameters.update(request.options)
    path = f"publishers/google/models/{name}" if vertex else f"models/{name}"
    body = {"instances": [{"prompt": request.prompt}], "parameters": parameters}
    return {"path": path + PREDICT, "body": body}


def image_answer(data: Any, request: ImageRequest, provider: str) -> ImageResponse:
    """The images of one ``:predict`` answer, each decoded and checked against its mimeType."""
    predictions = data.get("predictions") if isinstance(data, Mapping) else None
    if not isinstance(predictions, list):
        raise _malformed(data, provider)
    images = tuple(_image(item, provider) for item in predictions)
    return ImageResponse(images, Usage(requests=1), request.model)


def _image(item: Any, provider: str) -> Any:
    if not isinstance(item, Mapping):
        raise _bad(provider, "predictions hold something other than objects")
    encoded = item.get("bytesBase64Encoded")
    if not isinstance(encoded, str):
        reason = item.get("raiFilteredReason")
        if isinstance(reason, str):
            raise _bad(provider, f"an image was filtered: {redact(reason)}")
        raise _bad(provider, "a prediction has no bytesBase64Encoded")
    media_type = item.get("mimeType")
    return answered_image(provider, encoded, media_type if isinstance(media_type, str) else None)


def _bad(provider: str, what: str) -> MalformedResponseError:
    return MalformedResponseError(f"image answer: {what}", provider=provider, retryable=False)


def _malformed(data: Any, provider: str) -> MalformedResponseError:
    error = data.get("error") if isinstance(data, Mapping) else None
    if isinstance(error, Mapping):  # a 200 carrying an error object
        return _bad(provider, f"an error object: {redact(str(error.get('message') or 'error'))}")
    if isinstance(data, Mapping) and not data:
        return _bad(provider, "no predictions (every image filtered, or none made)")
    return _bad(provider, f"no 'predictions' list (got a {type(data).__name__})")
