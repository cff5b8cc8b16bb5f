"""A ``generate_content`` span per rt.generate_image / rt.agenerate_image call.

The GenAI semantic conventions name no image operation; ``generate_content``
(multimodal content generation) with ``gen_ai.output.type="image"`` is the nearest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from llmport import Runtime, hookimpl
from llmport.errors import BadRequestError
from llmport.messages.images import ImageRequest, ImageResponse
from llmport.messages.types import ImageGeneration, MediaBlock, ModelCapabilities, Usage
from llmport.provider.contract import Provider, ProviderInfo
from llmport.testing.scripted import scripted_png
from llmport_otel import OpenTelemetry
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class Painter(Provider):
    name = "painter"

    def _generate_image(self, request: ImageRequest) -> ImageResponse:
        if request.prompt == "fail":
            raise BadRequestError("refused", provider="painter", status=400)
        block = MediaBlock("image", "image/png", data=scripted_png(request.prompt))
        usage = Usage(input_tokens=5, output_tokens=272 * request.n, requests=1)
        return ImageResponse((block,) * request.n, usage, request.model)


class Plugin:
    @hookimpl
    def llmport_providers(self, register: Callable[[ProviderInfo], None]) -> None:
        caps = ModelCapabilities(images=ImageGeneration(max_images=4, min_side=1, max_side=2048))
        register(ProviderInfo(prefix="painter", factory=Painter, models={"*": caps}))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_image_call_is_one_generate_content_span(
    provider: TracerProvider, exporter: InMemorySpanExporter, mode: str
) -> None:
    rt = Runtime(model="painter:p1", hooks=[Plugin(), OpenTelemetry(provider)])
    if mode == "sync":
        rt.generate_image("a fox", n=2, size="512x512")
    else:
        asyncio.run(rt.agenerate_image("a fox", n=2, size="512x512"))
    (span,) = exporter.get_finished_spans()
    attrs: dict[str, Any] = dict(span.attributes or {})
    assert span.name == "generate_content p1"
    assert attrs["gen_ai.operation.name"] == "generate_content"
    assert attrs["gen_ai.output.type"] == "image"
    assert attrs["gen_ai.request.choice.count"] == 2
    assert (attrs["gen_ai.usage.input_tokens"], attrs["gen_ai.usage.output_tokens"]) == (5, 544)
    assert attrs["llmport.image.count"] == 2 and attrs["llmport.image.size"] == "512x512"


def test_a_failed_image_call_marks_its_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    rt = Runtime(model="painter:p1", hooks=[Plugin(), OpenTelemetry(provider)])
    with pytest.raises(BadRequestError):
        rt.generate_image("fail")
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code.name == "ERROR"
    assert (span.attributes or {})["error.type"] == "BadRequestError"
