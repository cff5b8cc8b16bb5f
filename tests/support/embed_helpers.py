"""Helpers of the embedding tests: a third-party embedder, identifiable vectors, both modes.

:func:`embed` calls ``rt.embed`` or ``rt.aembed`` as the test's ``mode`` says.

:class:`TableEmbedder` is what a third-party plugin writes to add an
embedding vendor: ``_embed`` / ``_async_embed`` only. Each input's vector
is derived from the input (its length and a stable hash), so a test can tell
which input a vector belongs to wherever it ends up.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import struct
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from llmport import Embeddings, Runtime, hookimpl
from llmport.controls.retry import Backoff
from llmport.messages.embeddings import EmbedRequest, EmbedResponse
from llmport.messages.types import ModelCapabilities, Usage
from llmport.provider.contract import Provider, ProviderInfo

DIMS = 4


def embed(rt: Runtime, mode: str, inputs: Any, **kw: Any) -> Embeddings:
    """``rt.embed(inputs, **kw)``, or ``rt.aembed`` in a fresh event loop (``mode="async"``)."""
    if mode == "sync":
        return rt.embed(inputs, **kw)
    return asyncio.run(rt.aembed(inputs, **kw))


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


# -- the loopback vendor speaking OpenAI's wire --------------------------------------------


def identifiable(text: str) -> list[float]:
    """The loopback vendor's vector of ``text-N``: ``[N, len, 1, -N]`` (whose input it is)."""
    n = float(text.split("-")[1])
    return [n, float(len(text)), 1.0, -n]


def answer(body: dict[str, Any], *, b64: bool = True) -> dict[str, Any]:
    rows = [identifiable(t) for t in body["input"]]
    data = [
        {
            "object": "embedding",
            "index": i,
            "embedding": base64.b64encode(struct.pack("<4f", *row)).decode() if b64 else row,
        }
        for i, row in enumerate(rows)
    ]
    usage = {"prompt_tokens": len(body["input"]), "total_tokens": len(body["input"])}
    return {"object": "list", "data": data, "model": body["model"], "usage": usage}


def hundred_runtime(url: str, *, embed_cache: Any = None, **caps: Any) -> Runtime:
    """A compatible service at ``url`` whose embedding model takes 100 inputs per request."""
    from llmport_openai.plugin import profile_info
    from llmport_openai.profiles import EMBED, Profile

    profile = Profile(
        "hundred",
        url,
        "HUNDRED_API_KEY",
        key_required=False,
        embed_models={"embed*": replace(EMBED, max_embed_inputs=100, **caps)},
        embed_base64=True,
    )

    class Plugin:
        @hookimpl
        def llmport_providers(self, register: Callable[[Any], None]) -> None:
            register(profile_info(profile, plugin="tests"))

    return Runtime(hooks=[Plugin()], backoff=Backoff.none(), max_retries=3, embed_cache=embed_cache)
