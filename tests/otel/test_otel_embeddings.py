"""An ``embeddings`` span per rt.embed / rt.aembed call (GenAI conventions)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from llmport import Runtime, hookimpl
from llmport.errors import BadRequestError
from llmport.messages.embeddings import EmbedRequest, EmbedResponse
from llmport.messages.types import ModelCapabilities, Usage
from llmport.provider.contract import Provider, ProviderInfo
from llmport_otel import OpenTelemetry
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class Vectors(Provider):
    name = "vectors"

    def _embed(self, request: EmbedRequest) -> EmbedResponse:
        if "fail" in request.inputs:
            raise BadRequestError("refused", provider="vectors", status=400)
        rows = [[float(len(t)), 1.0, 2.0] for t in request.inputs]
        usage = Usage(input_tokens=len(request.inputs) * 3, requests=1)
        return EmbedResponse.from_rows(rows, usage=usage, model=request.model)


class Plugin:
    @hookimpl
    def llmport_providers(self, register: Callable[[ProviderInfo], None]) -> None:
        caps = ModelCapabilities(embeddings=True, max_embed_inputs=2)
        register(ProviderInfo(prefix="vectors", factory=Vectors, models={"*": caps}))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_embed_call_is_one_embeddings_span(
    provider: TracerProvider, exporter: InMemorySpanExporter, mode: str
) -> None:
    rt = Runtime(model="vectors:v1", hooks=[Plugin(), OpenTelemetry(provider)])
    texts = ["a", "bb", "ccc"]
    if mode == "sync":
        rt.embed(texts)
    else:
        asyncio.run(rt.aembed(texts))
    (span,) = exporter.get_finished_spans()
    attrs: dict[str, Any] = dict(span.attributes or {})
    assert span.name == "embeddings v1"
    assert attrs["gen_ai.operation.name"] == "embeddings"
    assert attrs["gen_ai.request.model"] == "v1"
    assert attrs["gen_ai.usage.input_tokens"] == 9
    assert attrs["gen_ai.embeddings.dimension.count"] == 3
    assert attrs["llmport.embed.inputs"] == 3 and attrs["llmport.embed.requests"] == 2


def test_a_failed_embed_call_marks_its_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    rt = Runtime(model="vectors:v1", hooks=[Plugin(), OpenTelemetry(provider)])
    with pytest.raises(BadRequestError):
        rt.embed(["fail"])
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code.name == "ERROR"
    assert (span.attributes or {})["error.type"] == "BadRequestError"
