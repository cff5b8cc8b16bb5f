"""Bedrock image models on the wire (``rt.generate_image``): InvokeModel bodies and answers.

Built from the Amazon Bedrock documentation, no recording of these calls
exists yet: Amazon Nova User Guide, "Image generation access and usage"
(Nova Canvas request and response), and the Amazon Bedrock User Guide,
"Amazon Titan Image Generator G1 models" (text-to-image parameters). Both
models take the same text-to-image body::

    {"taskType": "TEXT_IMAGE",
     "textToImageParams": {"text": PROMPT, "negativeText"?: ...},
     "imageGenerationConfig": {"numberOfImages", "width", "height", "quality",
                               "cfgScale"?, "seed"?}}

and answer ``{"images": [BASE64 PNG, ...], "error"?: ...}``. The neutral
``quality`` maps ``"medium"`` to ``"standard"`` and ``"high"`` to
``"premium"``. Vendor fields go where the documents put them:
``negativeText`` / ``style`` into ``textToImageParams``, ``cfgScale`` into
``imageGenerationConfig``, anything else at the top of the body.

Nothing here does I/O or imports boto3.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from llmport.errors import MalformedResponseError
from llmport.messages.images import ImageRequest, ImageResponse
from llmport.messages.types import Usage
from llmport.observe.redaction import redact
from llmport.provider.imaging import answered_image

__all__ = ["image_answer", "image_body"]

_QUALITY = {"medium": "standard", "high": "premium"}
_TEXT_FIELDS = frozenset({"negativeText", "style"})
_CONFIG_FIELDS = frozenset({"cfgScale"})


def image_body(request: ImageRequest) -> bytes:
    """The InvokeModel body of ``request`` (vendor fields merged where they belong)."""
    text: dict[str, Any] = {"text": request.prompt}
    config: dict[str, Any] = {"numberOfImages": request.n}
    if request.size is not None:
        width, height = request.dimensions or (0, 0)
        config.update(width=width, height=height)
    if request.quality is not None:
        config["quality"] = _QUALITY[request.quality]
    if request.seed is not None:
        config["seed"] = request.seed
    body: dict[str, Any] = {"taskType": "TEXT_IMAGE"}
    for name, value in request.options.items():
        where = text if name in _TEXT_FIELDS else config if name in _CONFIG_FIELDS else body
        where[name] = value
    body.update(textToImageParams=text, imageGenerationConfig=config)
    return json.dumps(body).encode()


def image_answer(data: Any, request: ImageRequest, provider: str) -> ImageResponse:
    """The images of one InvokeModel answer, each decoded and checked as a PNG."""
    if not isinstance(data, Mapping):
        raise _bad(provider, f"not an object (got a {type(data).__name__})")
    error = data.get("error")
    if isinstance(error, str) and error:  # some images blocked by the content filter
        raise _bad(provider, f"the model said: {redact(error)}")
    encoded = data.get("images")
    if not isinstance(encoded, list) or not all(isinstance(item, str) for item in encoded):
        raise _bad(provider, "no 'images' list of base64 strings")
    images = tuple(answered_image(provider, item, "image/png") for item in encoded)
    return ImageResponse(images, Usage(requests=1), request.model)


def _bad(provider: str, what: str) -> MalformedResponseError:
    return MalformedResponseError(f"image answer: {what}", provider=provider, retryable=False)
