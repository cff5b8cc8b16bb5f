"""OpenAI's Images API (``POST /v1/images/generations``) to and from llmport's neutral types.

Built from OpenAI's API reference, "Images > Create image"
(https://platform.openai.com/docs/api-reference/images/create): no recording
of this endpoint exists yet.

* :func:`image_body` builds the JSON body of one
  :class:`~llmport.messages.images.ImageRequest`: ``model``, ``prompt``,
  ``n``, ``size``; ``quality`` mapped per model (the GPT image models take
  ``low`` / ``medium`` / ``high`` as they are, dall-e-3 ``standard`` / ``hd``);
  ``output_format`` (GPT image models only); ``response_format: "b64_json"``
  for dall-e (the GPT image models always answer base64); then the caller's
  vendor fields (``background``, ``moderation``, ``output_compression``,
  ``style``, ``user``, ...), which may override.
* :func:`image_answer` reads the answer: ``data[].b64_json`` decoded and
  checked against its media type (``output_format`` of the answer, else the
  bytes say), or ``data[].url`` (dall-e with ``response_format: "url"``)
  kept as a URL block, redacted; ``usage`` (GPT image models: input and
  output tokens). A 2xx without ``data`` (an error object, garbage) or with
  items of the wrong shape is a :class:`~llmport.errors.MalformedResponseError`.

Imports nothing of the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmport.errors import MalformedResponseError
from llmport.messages.images import ImageRequest, ImageResponse
from llmport.messages.types import MediaBlock, Usage
from llmport.observe.redaction import redact
from llmport.provider.imaging import answered_image

__all__ = ["image_answer", "image_body"]

#: dall-e-3's own words for the neutral qualities (dall-e-2 takes none but "standard").
_DALLE3_QUALITY = {"medium": "standard", "high": "hd"}
_COUNTS = ("input_tokens", "output_tokens")
_MEDIA_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}


def _dalle(model: str) -> bool:
    return model.startswith("dall-e")


def image_body(request: ImageRequest) -> dict[str, Any]:
    """The JSON body of ``request`` (``vendor=`` fields last, so they may override)."""
    body: dict[str, Any] = {"model": request.model, "prompt": request.prompt, "n": request.n}
    if request.size is not None:
        body["size"] = request.size
    dalle = _dalle(request.model)
    if request.quality is not None:
        body["quality"] = _DALLE3_QUALITY[request.quality] if dalle else request.quality
    if request.output_format is not None and not dalle:
        body["output_format"] = request.output_format
    if dalle:
        body["response_format"] = "b64_json"
    body.update(request.options)
    return body


def image_answer(answer: Any, request: ImageRequest, provider: str) -> ImageResponse:
    """The images of ``answer`` (the parsed JSON body) for ``request``, in order."""
    if not isinstance(answer, Mapping) or not isinstance(answer.get("data"), list):
        raise _malformed_answer(answer, provider)
    declared = _declared_type(answer.get("output_format"), request, provider)
    images = tuple(_image(item, declared, provider) for item in answer["data"])
    return ImageResponse(images, _usage(answer.get("usage"), provider), request.model)


def _declared_type(answered: Any, request: ImageRequest, provider: str) -> str | None:
    """The media type the answer declares (its ``output_format``, else the one asked)."""
    name = answered if answered is not None else request.output_format
    if name is None:
        return None  # dall-e: PNG, told by the bytes
    if name not in _MEDIA_TYPES:
        raise _bad(provider, f"output_format {name!r} is not png, jpeg or webp")
    return _MEDIA_TYPES[name]


def _image(item: Any, declared: str | None, provider: str) -> MediaBlock:
    if not isinstance(item, Mapping):
        raise _bad(provider, "data holds something other than objects")
    encoded = item.get("b64_json")
    if isinstance(encoded, str):
        if encoded.startswith("data:") and ";base64," in encoded[:100]:
            # xAI's guide shows a data URL here: its bytes say what they are (JPEG, said PNG).
            return answered_image(provider, encoded.split(";base64,", 1)[1], declared)
        return answered_image(provider, encoded, declared)
    url = item.get("url")
    if isinstance(url, str) and url.startswith("https://"):
        # A signed link, valid for an hour: kept whole (the core's answer check masks a key
        # of the caller's echoed into it, never the link's own signature).
        return MediaBlock("image", declared or "image/png", url=url)
    raise _bad(provider, "an image has neither b64_json nor an https url")


def _usage(raw: Any, provider: str) -> Usage:
    """``usage.input_tokens`` / ``output_tokens`` (GPT image models); dall-e has none."""
    if raw is None:
        return Usage(requests=1)
    counts = [raw.get(name, 0) for name in _COUNTS] if isinstance(raw, Mapping) else None
    if counts is None or not all(type(c) is int and c >= 0 for c in counts):
        raise _bad(provider, "usage is not whole numbers of tokens")
    return Usage(input_tokens=counts[0], output_tokens=counts[1], requests=1)


def _bad(provider: str, what: str) -> MalformedResponseError:
    return MalformedResponseError(f"image answer: {what}", provider=provider, retryable=False)


def _malformed_answer(answer: Any, provider: str) -> MalformedResponseError:
    error = answer.get("error") if isinstance(answer, Mapping) else None
    if isinstance(error, Mapping):  # a 200 carrying an error object
        message = redact(str(error.get("message") or error.get("type") or "error"))
        return _bad(provider, f"an error object: {message}")
    return _bad(provider, f"no 'data' list (got a {type(answer).__name__})")
