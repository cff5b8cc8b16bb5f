"""The image-generation half of the provider contract: checks and defaults.

A provider generates images in one of two styles, as it chats and embeds:

* **prepare/send**: :meth:`~llmport.provider.contract.Provider.prepare_image`
  checks one :class:`~llmport.messages.images.ImageRequest` against the
  model's :class:`~llmport.messages.types.ImageGeneration` (:func:`check_image`)
  and builds the vendor body once (no I/O);
  :meth:`~llmport.provider.contract.Provider.send_image` / ``asend_image``
  send it (a retry resends the same :class:`PreparedImage`).
* **plain**: a plugin writes only ``_generate_image(request)`` and
  ``_async_generate_image(request)``; the default ``prepare_image`` only
  checks and the default ``send_image`` / ``asend_image`` call them.

A provider or model without an image endpoint refuses with
:class:`~llmport.errors.UnsupportedFeatureError` (feature :data:`IMAGES`)
before any request. Every answer is held to its request
(:func:`check_answer`): as many images as asked, each of the asked format;
the bytes themselves are checked against their media type where the plugin
reads them (:func:`answered_image`). None of these is retried: each try
would make, and bill, the images again.
"""

from __future__ import annotations

from math import gcd
from typing import Any, Protocol

from ..errors import ContentError, MalformedResponseError, OptionError, UnsupportedFeatureError
from ..messages.images import ImageRequest, ImageResponse
from ..messages.types import ImageGeneration, MediaBlock, ModelCapabilities
from ..observe.redaction import redact_echoes
from ..slotted import dataclass
from .media import answered_media

__all__ = [
    "IMAGES",
    "ImageMaker",
    "PreparedImage",
    "answered_image",
    "aspect_ratio",
    "check_answer",
    "check_image",
    "check_image_options",
    "generates_images",
    "media_type_of",
    "no_images",
]

#: The feature of the :class:`UnsupportedFeatureError` a provider without images raises.
IMAGES = "image generation"

_QUALITIES = ("low", "medium", "high")
_FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}
#: Longest prompt llmport sends when the model's table names no limit (no vendor takes more).
_MAX_PROMPT_CHARS = 100_000


class ImageMaker(Protocol):
    """What the checks read of a provider (:class:`~llmport.provider.contract.Provider` is one)."""

    name: str
    images_hint: str

    @property
    def info(self) -> Any: ...

    @property
    def implements_images(self) -> bool: ...

    def capabilities(self, model: str) -> ModelCapabilities: ...


@dataclass(slots=True)
class PreparedImage:
    """An image request checked and converted once; every attempt resends it.

    ``payload`` is what the plugin sends (the JSON body or SDK arguments);
    ``limits`` the model's image table the check used.
    """

    request: ImageRequest
    payload: Any = None
    limits: ImageGeneration | None = None


def generates_images(provider: ImageMaker, model: str) -> bool:
    """True if ``provider`` has an image endpoint for ``model``.

    The model table says so (``ModelCapabilities.images``); a provider
    registered without a model table (a third-party plugin) generates when its
    class implements ``_generate_image`` or ``send_image``.
    """
    if provider.capabilities(model).images is not None:
        return True
    info = provider.info
    return provider.implements_images and (info is None or not info.models)


def no_images(provider: ImageMaker, model: str) -> UnsupportedFeatureError:
    """The typed refusal of a provider/model without an image endpoint (names where to go)."""
    hint = provider.images_hint or "it is not an image generation model"
    return UnsupportedFeatureError(provider.name, model, IMAGES, hint)


def check_image_options(
    prompt: Any, n: Any, size: Any, quality: Any, output_format: Any, seed: Any
) -> None:
    """Typed errors for values no model takes (wrong types, empty prompt, n < 1, a bad size)."""
    if not isinstance(prompt, str):
        raise ContentError(0, f"an image prompt must be a string, got {type(prompt).__name__}")
    if not prompt.strip():
        raise ContentError(0, "an empty prompt makes no image")
    if len(prompt) > _MAX_PROMPT_CHARS:
        raise ContentError(0, f"a prompt of {len(prompt):,} characters is over any image model's")
    if type(n) is not int or n < 1:
        raise OptionError(f"n must be a whole number >= 1, got {n!r}")
    if size is not None and _dimensions(size) is None:
        raise OptionError(f'size must be "WIDTHxHEIGHT" (e.g. "1024x1024"), got {size!r}')
    if quality is not None and quality not in _QUALITIES:
        raise OptionError(f"quality must be 'low', 'medium', 'high' or None, got {quality!r}")
    if output_format is not None and output_format not in _FORMATS:
        raise OptionError(
            f"output_format must be 'png', 'jpeg', 'webp' or None, got {output_format!r}"
        )
    if seed is not None and (type(seed) is not int or seed < 0):
        raise OptionError(f"seed must be a whole number >= 0, got {seed!r}")


def check_image(provider: ImageMaker, request: ImageRequest) -> ImageRequest:
    """Raise typed errors for what ``request``'s model cannot make; the request to send.

    Refuses a model without an image endpoint, a prompt over its length, more
    images than one request makes, a size, quality, format or seed it does not
    take (each naming what it does take).
    """
    model = request.model
    if not generates_images(provider, model):
        raise no_images(provider, model)
    check_image_options(
        request.prompt,
        request.n,
        request.size,
        request.quality,
        request.output_format,
        request.seed,
    )
    limits = provider.capabilities(model).images
    if limits is None:  # a third-party plugin without a model table: its own checks
        return request
    vendor = provider.name
    most = limits.max_prompt_chars
    if most is not None and len(request.prompt) > most:
        raise ContentError(0, f"{vendor}:{model} takes prompts of at most {most:,} characters")
    if request.n > limits.max_images:
        raise UnsupportedFeatureError(
            vendor, model, f"n={request.n}", f"at most {limits.max_images} images per request"
        )
    if request.size is not None:
        _check_size(vendor, model, limits, request.size)
    _check_choice(vendor, model, "quality", request.quality, limits.qualities)
    _check_choice(vendor, model, "output_format", request.output_format, limits.formats)
    if request.seed is not None:
        if limits.max_seed is None:
            raise UnsupportedFeatureError(
                vendor, model, "seed=", "its image endpoint takes no seed"
            )
        if request.seed > limits.max_seed:
            raise UnsupportedFeatureError(
                vendor, model, f"seed={request.seed}", f"at most {limits.max_seed}"
            )
    return request


def media_type_of(output_format: str | None) -> str | None:
    """The media type of a neutral ``output_format`` (None: whatever the vendor makes)."""
    return None if output_format is None else _FORMATS[output_format]


def check_answer(vendor: str, request: ImageRequest, answer: ImageResponse) -> ImageResponse:
    """``answer`` if it holds ``request.n`` images of the asked format; else malformed."""
    if not isinstance(answer, ImageResponse):
        raise TypeError(f"{vendor} returned {type(answer).__name__}, not ImageResponse")
    got = len(answer.images)
    if got != request.n:
        raise _bad(vendor, f"image answer: {got} images for n={request.n}")
    wanted = media_type_of(request.output_format)
    for block in answer.images:
        if block.type != "image":
            raise _bad(vendor, f"image answer: a {block.media_type} is not an image")
        if wanted is not None and block.media_type != wanted:
            raise _bad(vendor, f"image answer: {block.media_type}, asked {wanted}")
    if any(block.url for block in answer.images):
        return _links_masked(answer)
    return answer


def _links_masked(answer: ImageResponse) -> ImageResponse:
    """``answer`` with a key of the caller's echoed into an image link masked.

    Only the caller's secrets: the link's own signature (``sig=``) is what
    makes a signed download link usable. Logs and the DAG redact it whole.
    """
    from dataclasses import replace  # here: not on start-up's path

    images = tuple(
        replace(block, url=redact_echoes(block.url)) if block.url else block
        for block in answer.images
    )
    return replace(answer, images=images)


def answered_image(vendor: str, data: str | bytes, media_type: str | None) -> MediaBlock:
    """One generated image, checked as :func:`~llmport.provider.media.answered_media` checks
    an answered one; base64 that does not decode or bytes that contradict their type are not
    retried here (each try makes, and bills, the images again)."""
    try:
        return answered_media(vendor, data, media_type)
    except MalformedResponseError as exc:
        exc.retryable = False
        error = exc
    raise error from None


def _bad(vendor: str, what: str) -> MalformedResponseError:
    """A 2xx image answer that is not what was asked: not retried (each try makes images)."""
    return MalformedResponseError(
        f"{vendor}: the answer is not the documented success shape ({what})",
        provider=vendor,
        retryable=False,
    )


def _dimensions(size: Any) -> tuple[int, int] | None:
    """``"WxH"`` as two positive whole numbers (None: not that form)."""
    if not isinstance(size, str):
        return None
    width, sep, height = size.partition("x")
    if not sep or not width.isdigit() or not height.isdigit():
        return None
    w, h = int(width), int(height)
    return (w, h) if w > 0 and h > 0 else None


def _check_size(vendor: str, model: str, limits: ImageGeneration, size: str) -> None:
    if limits.sizes is not None:
        if not limits.sizes:
            raise UnsupportedFeatureError(
                vendor, model, f"size={size!r}", "it takes no size (the vendor picks it)"
            )
        if size not in limits.sizes:
            offered = ", ".join(sorted(limits.sizes, key=lambda s: _dimensions(s) or (0, 0)))
            raise UnsupportedFeatureError(vendor, model, f"size={size!r}", f"offered: {offered}")
        return
    problem = _size_problem(limits, *(_dimensions(size) or (0, 0)))
    if problem:
        raise UnsupportedFeatureError(vendor, model, f"size={size!r}", problem)


def _size_problem(limits: ImageGeneration, width: int, height: int) -> str:
    """Why a free size breaks ``limits``' rule (empty: it does not)."""
    low, high, step = limits.min_side, limits.max_side, limits.side_step
    if not all(low <= side <= high and side % step == 0 for side in (width, height)):
        return f"each side {low}-{high} pixels, a multiple of {step}"
    if limits.max_pixels is not None and width * height > limits.max_pixels:
        return f"at most {limits.max_pixels:,} pixels"
    ratio = max(width, height) / min(width, height)
    if limits.max_ratio is not None and ratio > limits.max_ratio:
        return f"an aspect ratio within {limits.max_ratio:g}:1"
    return ""


def _check_choice(
    vendor: str, model: str, name: str, value: str | None, offered: frozenset[str]
) -> None:
    if value is not None and value not in offered:
        takes = ", ".join(sorted(offered)) if offered else "none: leave it unset"
        raise UnsupportedFeatureError(vendor, model, f"{name}={value!r}", f"offered: {takes}")


def aspect_ratio(size: str) -> str:
    """``"WxH"`` as its reduced ``"W:H"`` ratio (``"1792x1024"`` → ``"7:4"``)."""
    dims = _dimensions(size)
    if dims is None:
        raise OptionError(f"size must be 'WIDTHxHEIGHT', got {size!r}")
    divisor = gcd(*dims)
    return f"{dims[0] // divisor}:{dims[1] // divisor}"
