"""The cost of images billed per image (dall-e, Imagen, Nova Canvas, Titan Image, grok-2-image).

The token price table has no per-image prices, so a model billed per image
declares them in its image table (:class:`~llmport.messages.types.ImagePricing`
on ``ImageGeneration.per_image``) and :func:`image_cost` prices a call from
the size and quality it asked, times the images made. A third-party plugin
gets the same pricing by declaring rows; a model without rows is priced by
its tokens, as a chat is.
"""

from __future__ import annotations

from decimal import Decimal

from ..messages.images import ImageRequest
from ..messages.types import ImageGeneration, ImagePrice, ImagePricing

__all__ = ["image_cost", "per_image_price"]


def per_image_price(pricing: ImagePricing, size: str | None, quality: str | None) -> Decimal | None:
    """USD for one image of ``size`` and ``quality`` (``None``: no row prices it)."""
    pixels = _pixels(size or pricing.default_size)
    wanted = quality if quality is not None else pricing.default_quality
    fitting = [row for row in pricing.rows if _prices(row, pixels, wanted)]
    if pixels is None or not fitting:
        return None
    return Decimal(min(fitting, key=lambda row: row.max_pixels).usd)


def image_cost(limits: ImageGeneration | None, request: ImageRequest, made: int) -> Decimal | None:
    """USD for ``made`` images of ``request`` on a model billed per image, else ``None``."""
    if limits is None or limits.per_image is None:
        return None
    price = per_image_price(limits.per_image, request.size, request.quality)
    return None if price is None else price * made


def _prices(row: ImagePrice, pixels: int | None, quality: str | None) -> bool:
    """True if ``row`` covers an image of ``pixels`` at ``quality``."""
    fits = pixels is not None and pixels <= row.max_pixels
    return fits and (row.quality is None or row.quality == quality)


def _pixels(size: str) -> int | None:
    """``"WxH"`` as its pixel count (``None``: not that form)."""
    width, sep, height = size.partition("x")
    if not sep or not width.isdigit() or not height.isdigit():
        return None
    return int(width) * int(height)
