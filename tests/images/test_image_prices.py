"""The cost of images billed per image: the model rows' per-image prices, times the images made.

Each expected figure is written out from the vendor's pricing page (the same page the
model row cites), not computed by the code under test. The OpenAI calls go through the
real plugin against the loopback server; a third-party plugin gets the same pricing by
declaring rows in its model table. Each call runs sync and async.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from image_scenarios import png
from llmport import Images, Runtime, hookimpl
from llmport.messages.images import ImageRequest, ImageResponse
from llmport.messages.types import (
    ImageGeneration,
    ImagePrice,
    ImagePricing,
    MediaBlock,
    ModelCapabilities,
    Usage,
)
from llmport.provider.contract import Provider, ProviderInfo
from llmport.testing.loopback import LoopbackServer, Reply

KEY = "sk-fake-prices-0123456789abcdef"
PNG = png("prices", 0)
IMAGE = {"b64_json": base64.b64encode(PNG).decode()}


def generate(rt: Runtime, mode: str, prompt: str, **kw: Any) -> Images:
    if mode == "sync":
        return rt.generate_image(prompt, **kw)
    return asyncio.run(rt.agenerate_image(prompt, **kw))


def openai_images(mode: str, model: str, n: int, **kw: Any) -> Images:
    """``n`` images of ``model`` from OpenAI's Images API (the loopback server answering)."""
    answer = Reply(200, json={"created": 1, "data": [IMAGE] * n})
    with LoopbackServer([answer]) as server:
        rt = Runtime(providers={"openai": {"api_key": KEY, "base_url": server.url}})
        images = generate(rt, mode, "a lighthouse", model=f"openai:{model}", n=n, **kw)
        rt.close()
    return images


# OpenAI API docs, model page "dall-e-2": $0.016, $0.018, $0.02 per image (256, 512, 1024).
@pytest.mark.parametrize(
    ("size", "usd"), [("256x256", "0.016"), ("512x512", "0.018"), ("1024x1024", "0.02")]
)
def test_dall_e_2_costs_its_documented_price_per_size(mode: str, size: str, usd: str) -> None:
    images = openai_images(mode, "dall-e-2", 1, size=size)
    assert images.usage.cost == Decimal(usd)
    assert images.usage.requests == 1


def test_n_images_cost_n_times_one(mode: str) -> None:
    images = openai_images(mode, "dall-e-2", 3, size="512x512")
    assert len(images) == 3
    assert images.usage.cost == Decimal("0.054")  # 3 x $0.018


def test_a_call_naming_no_size_or_quality_costs_the_vendor_default(mode: str) -> None:
    # dall-e-2 and dall-e-3 make 1024x1024 when no size is named; dall-e-3's default
    # quality is standard: the dall-e-2 page's comparison gives DALL·E 3 at $0.04.
    assert openai_images(mode, "dall-e-2", 1).usage.cost == Decimal("0.02")
    assert openai_images(mode, "dall-e-3", 1).usage.cost == Decimal("0.04")
    standard = openai_images(mode, "dall-e-3", 1, size="1024x1024", quality="medium")
    assert standard.usage.cost == Decimal("0.04")


@pytest.mark.parametrize(
    "call", [{"quality": "high"}, {"size": "1792x1024"}, {"size": "1024x1792", "quality": "high"}]
)
def test_a_size_or_quality_no_page_prices_stays_unknown(mode: str, call: dict[str, str]) -> None:
    images = openai_images(mode, "dall-e-3", 1, **call)
    assert images.usage.cost is None


# -- a third-party plugin declares its prices ----------------------------------------------

PAINT = ImageGeneration(
    max_images=4,
    min_side=256,
    max_side=2048,
    qualities=frozenset({"medium", "high"}),
    per_image=ImagePricing(
        rows=(
            ImagePrice("0.04", max_pixels=1024 * 1024, quality="medium"),
            ImagePrice("0.06", max_pixels=1024 * 1024, quality="high"),
            ImagePrice("0.06", max_pixels=2048 * 2048, quality="medium"),
            ImagePrice("0.08", max_pixels=2048 * 2048, quality="high"),
        ),
        default_quality="medium",
    ),
)
SKETCH = ImageGeneration(max_images=4)  # no price rows: priced by tokens, unknown here


class Easel(Provider):
    """A plain-style image plugin: ``easel:paint`` declares prices, ``easel:sketch`` none."""

    name = "easel"

    def _generate_image(self, request: ImageRequest) -> ImageResponse:
        images = tuple(MediaBlock("image", "image/png", data=PNG) for _ in range(request.n))
        return ImageResponse(images, Usage(), request.model)

    async def _async_generate_image(self, request: ImageRequest) -> ImageResponse:
        return self._generate_image(request)


class EaselPlugin:
    @hookimpl
    def llmport_providers(self, register: Callable[[ProviderInfo], None]) -> None:
        register(
            ProviderInfo(
                prefix="easel",
                factory=Easel,
                models={
                    "paint": ModelCapabilities(streaming=False, images=PAINT),
                    "sketch": ModelCapabilities(streaming=False, images=SKETCH),
                },
            )
        )


def easel() -> Runtime:
    return Runtime(model="easel:paint", hooks=[EaselPlugin()])


@pytest.mark.parametrize(
    ("call", "usd"),
    [
        ({}, "0.04"),  # 1024x1024 at the default quality
        ({"size": "512x768"}, "0.04"),  # smaller than 1024x1024: the 1024 row
        ({"size": "1024x1024", "quality": "high"}, "0.06"),
        ({"size": "2048x1024", "quality": "medium"}, "0.06"),  # over 1024x1024: the 2048 row
        ({"size": "2048x2048", "quality": "high"}, "0.08"),
    ],
)
def test_a_third_party_plugin_is_priced_by_its_rows(
    mode: str, call: dict[str, str], usd: str
) -> None:
    images = generate(easel(), mode, "a pear", model="easel:paint", **call)
    assert images.usage.cost == Decimal(usd)


def test_three_images_of_a_plugin_cost_three_times_one(mode: str) -> None:
    images = generate(easel(), mode, "a pear", model="easel:paint", n=3, quality="high")
    assert images.usage.cost == Decimal("0.18")  # 3 x $0.06


def test_a_model_without_rows_stays_unpriced(mode: str) -> None:
    images = generate(easel(), mode, "a pear", model="easel:sketch", n=2)
    assert images.usage.cost is None


def test_the_runtime_total_adds_image_costs(mode: str) -> None:
    rt = easel()
    generate(rt, mode, "a pear", model="easel:paint", n=2)  # 2 x $0.04
    generate(rt, mode, "a plum", model="easel:paint", quality="high")  # $0.06
    assert rt.usage.cost == Decimal("0.14")
    assert rt.usage.requests == 2


def test_a_cost_budget_counts_image_prices(mode: str) -> None:
    from llmport import Budget
    from llmport.errors import BudgetExceeded

    rt = Runtime(model="easel:paint", hooks=[EaselPlugin()], budget=Budget(cost_usd="0.10"))
    generate(rt, mode, "a pear", n=2)  # 2 x $0.04 = $0.08: within
    with pytest.raises(BudgetExceeded):  # + $0.04 = $0.12: over, found when charged
        generate(rt, mode, "a plum")
    assert rt.ledger is not None and rt.ledger.used.cost == Decimal("0.12")


def test_the_price_rows_round_trip_through_json() -> None:
    import json
    from dataclasses import asdict

    pricing = PAINT.per_image
    assert pricing is not None
    loaded = json.loads(json.dumps(asdict(pricing)))
    rebuilt = ImagePricing(
        rows=tuple(ImagePrice(**row) for row in loaded["rows"]),
        default_size=loaded["default_size"],
        default_quality=loaded["default_quality"],
    )
    assert rebuilt == pricing
