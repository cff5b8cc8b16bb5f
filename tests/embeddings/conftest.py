"""Fixtures for the embedding tests: isolation from the host, a third-party embedder.

:class:`TableEmbedder` is what a third-party plugin writes to add an
embedding vendor: ``_embed`` / ``_async_embed`` only. Each input's vector
is derived from the input (its length and a stable hash), so a test can tell
which input a vector belongs to wherever it ends up.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Callable
from typing import Any

import pytest
from llmport import Runtime, hookimpl
from llmport.controls.retry import Backoff
from llmport.messages.embeddings import EmbedRequest, EmbedResponse
from llmport.messages.types import ModelCapabilities, Usage
from llmport.provider.contract import Provider, ProviderInfo

DIMS = 4


#: The vendor plugins whose embeddings are tested here (entry-point names).
VENDOR_PLUGINS = "openai,anthropic,gemini,bedrock"


@pytest.fixture(autouse=True)
def isolated(isolated_from_host: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Isolated from the host (tests/conftest.py), with the vendor plugins and no vendor keys."""
    for key in list(os.environ):
        if key.startswith(("OPENAI_", "AZURE_OPENAI_", "MISTRAL_", "OLLAMA_", "LMSTUDIO_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("LLMPORT_PLUGINS", VENDOR_PLUGINS)


def vector_of(text: str) -> list[float]:
    """The vector :class:`TableEmbedder` gives ``text``: identifiable, exact in float32."""
    digest = hashlib.sha256(text.encode()).digest()
    return [float(len(text)), float(digest[0]), float(digest[1]), 1.0][:DIMS]


class TableEmbedder(Provider):
    """A plain-style embedding plugin: ``_embed`` and ``_async_embed`` only."""

    name = "table"

    def __init__(self, settings: Any = None, info: ProviderInfo | None = None) -> None:
        super().__init__(settings, info)
        self.requests: list[EmbedRequest] = []

    def _answer(self, request: EmbedRequest) -> EmbedResponse:
        self.requests.append(request)
        rows = [vector_of(text) for text in request.inputs]
        usage = Usage(input_tokens=sum(len(t) for t in request.inputs), requests=1)
        return EmbedResponse.from_rows(
            rows, expected=len(request.inputs), usage=usage, model=request.model
        )

    def _embed(self, request: EmbedRequest) -> EmbedResponse:
        return self._answer(request)

    async def _async_embed(self, request: EmbedRequest) -> EmbedResponse:
        await asyncio.sleep(0)
        return self._answer(request)


EMBED_CAPS = ModelCapabilities(
    embeddings=True,
    embedding_dimensions=DIMS,
    max_embed_inputs=3,
    max_embed_input_tokens=50,
    embed_input_types=True,
)


class TablePlugin:
    """Registers :class:`TableEmbedder`: ``table:embed`` embeds, ``table:chat`` does not."""

    def __init__(self, factory: Callable[..., Provider] = TableEmbedder) -> None:
        self.providers: list[Provider] = []
        self.factory = factory

    def make(self, settings: Any = None, info: ProviderInfo | None = None) -> Provider:
        provider = self.factory(settings, info)
        self.providers.append(provider)
        return provider

    @hookimpl
    def llmport_providers(self, register: Callable[[ProviderInfo], None]) -> None:
        register(
            ProviderInfo(
                prefix="table",
                factory=self.make,
                models={"embed": EMBED_CAPS, "chat": ModelCapabilities()},
            )
        )


@pytest.fixture
def table() -> TablePlugin:
    return TablePlugin()


@pytest.fixture
def rt(table: TablePlugin) -> Runtime:
    return Runtime(model="table:embed", hooks=[table], backoff=Backoff.none())
