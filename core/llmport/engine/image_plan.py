"""One image call planned before its request (``rt.generate_image`` / ``rt.agenerate_image``).

:func:`plan_image` checks every option (typed errors, no I/O), routes the
model (no fallback: the model named, as ``rt.embed`` does), and has the
provider check and prepare the request, so a bad input or a model without an
image endpoint fails before any request. The :class:`ImagePlan` it returns
is what the step machine (:mod:`.request_steps`) reads: how to send, how to
check an answer (:func:`~llmport.provider.imaging.check_answer`), how to price it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from ..controls.limits import Gate  # limits
from ..controls.retry import Attempts, Backoff
from ..errors import OptionError, UnsupportedFeatureError
from ..messages.estimate import text_tokens
from ..messages.images import ImageRequest, ImageResponse
from ..messages.types import Usage
from ..provider.deadline import aimage_within, image_within
from ..provider.image_prices import image_cost
from ..provider.imaging import (
    IMAGES,
    PreparedImage,
    check_answer,
    check_image_options,
    generates_images,
    no_images,
)
from ..slotted import dataclass
from .embed_plan import request_timeout
from .inputs import deadline_setting
from .settings import RunSettings

if TYPE_CHECKING:
    from ..controls.budget import Ledger
    from ..provider.contract import Provider

__all__ = ["ImagePart", "ImagePlan", "plan_image"]


@dataclass(slots=True, frozen=True)
class ImagePart:
    """The one request of an image call (the step machine's part)."""

    prepared: PreparedImage
    tokens: int


@dataclass(slots=True)
class ImagePlan:
    """Everything decided before the request of one image call."""

    provider: Provider
    model: str
    qualified: str
    part: ImagePart
    max_attempts: int
    backoff: Backoff
    gate: Gate | None = None
    deadline: float | None = None
    deadline_seconds: float | None = None
    #: Seconds the request may wait for its answer (``Runtime(timeout=)``), or None.
    timeout: float | None = None
    attempts: list[Attempts] = field(default_factory=list)
    ledger: Ledger | None = None
    started: float = 0.0

    @property
    def request(self) -> ImageRequest:
        """The checked request every attempt sends."""
        return self.part.prepared.request

    def send(self, prepared: PreparedImage, cut_at: float | None) -> ImageResponse:
        """The request, given up at ``cut_at``."""
        return image_within(self.provider, prepared, cut_at)

    async def asend(self, prepared: PreparedImage, cut_at: float | None) -> ImageResponse:
        """Async :meth:`send`."""
        return await aimage_within(self.provider, prepared, cut_at)

    def checked(self, answer: Any) -> ImageResponse:
        """``answer`` if it holds the images asked (count, format); a typed error otherwise."""
        return check_answer(self.provider.name, self.request, answer)

    def priced(self, answer: ImageResponse) -> Usage:
        """The answer's usage, one request, priced as the model.

        A model billed per image (its image table declares ``per_image``) costs
        its price times the images made; any other is priced by its tokens
        (cost read on demand), so an unpriced model's cost stays ``None``.
        """
        usage = answer.usage.copy()
        usage.requests = usage.requests or 1
        cost = image_cost(self.part.prepared.limits, self.request, len(answer.images))
        if cost is not None:
            usage.cost = cost
            return usage
        return usage.priced_as(self.provider.price_name, answer.model or self.model)


def plan_image(
    settings: RunSettings,
    prompt: Any,
    *,
    model: str | None = None,
    size: str | None = None,
    n: int = 1,
    quality: Any = None,
    output_format: Any = None,
    seed: int | None = None,
    vendor: Mapping[str, Mapping[str, Any]] | None = None,
    deadline: float | None = None,
) -> ImagePlan:
    """Check, route and prepare one image call (no I/O)."""
    started = time.monotonic()
    check_image_options(prompt, n, size, quality, output_format, seed)
    runtime = settings.options
    if deadline is None:
        deadline = runtime.get("deadline")  # Runtime(deadline=): every call's default
    seconds = deadline_setting(deadline)
    timeout = request_timeout(runtime.get("timeout"))
    if vendor is not None and not isinstance(vendor, Mapping):
        raise OptionError(f"vendor must be a dict of provider -> fields, got {vendor!r}")
    provider, name, qualified, _, plain = settings.route(model)
    if plain:
        raise UnsupportedFeatureError(
            "call", name, IMAGES, "a call= function only chats; name an image model"
        )
    if not generates_images(provider, name):
        raise no_images(provider, name)
    options = dict((vendor or {}).get(provider.name, {}))
    request = ImageRequest(name, prompt, n, size, quality, output_format, seed, options)
    part = ImagePart(provider.prepare_image(request), text_tokens(prompt))
    return ImagePlan(
        provider=provider,
        model=name,
        qualified=qualified,
        part=part,
        max_attempts=settings.max_retries,
        backoff=settings.backoff,
        gate=settings.gate(qualified),
        deadline=None if seconds is None else started + seconds,
        deadline_seconds=seconds,
        timeout=timeout,
        ledger=settings.ledger,
        started=started,
    )
