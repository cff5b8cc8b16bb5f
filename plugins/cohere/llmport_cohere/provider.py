"""The Cohere provider: embeddings through ``POST /v2/embed`` on httpx2.

Settings (``Runtime(providers={"cohere": {...}})`` or ``[providers.cohere]``):
``api_key`` (default ``CO_API_KEY``, the variable Cohere's SDK reads),
``base_url`` (default :data:`BASE_URL`), ``timeout`` (seconds per request).

:meth:`CohereProvider.prepare_embed` checks a request (the core's
:func:`~llmport.provider.embedding.check_embed`) and serializes its body once
(:mod:`.embeddings`); ``send_embed`` / ``asend_embed`` post it
(:class:`llmport.provider.jsonhttp.JsonEndpoint`) behind the vendor boundary. The key is
sent as ``Authorization: Bearer`` and masked in every error. Chat is
refused typed: this plugin registers Cohere for embeddings only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from llmport.messages.embeddings import EmbedRequest, EmbedResponse
from llmport.provider.contract import PreparedEmbed
from llmport.provider.embedding import check_embed
from llmport.provider.jsonhttp import JsonEmbeddingProvider
from llmport.provider.translate import vendor_boundary

from . import embeddings

BASE_URL = "https://api.cohere.com"
KEY_VARIABLE = "CO_API_KEY"


def error_message(data: Any) -> str | None:
    """Cohere's error body: ``{"message": ...}`` (``id`` beside it on v2)."""
    message = data.get("message") if isinstance(data, Mapping) else None
    return message if isinstance(message, str) else None


class CohereProvider(JsonEmbeddingProvider):
    """``cohere:<model>``: Cohere's embedding models."""

    name = "cohere"
    label = "Cohere"
    base_url = BASE_URL
    key_variable = KEY_VARIABLE
    error_message = staticmethod(error_message)

    # -- embeddings -------------------------------------------------------------------

    def prepare_embed(self, request: EmbedRequest) -> PreparedEmbed:
        """Check ``request`` and serialize its ``/v2/embed`` body once (no I/O)."""
        checked = check_embed(self, request)
        body = embeddings.embed_body(
            checked.model,
            checked.inputs,
            input_type=checked.input_type,
            dimensions=checked.dimensions,
            truncate=checked.truncate,
        )
        body.update(checked.options)
        return PreparedEmbed(checked, json.dumps(body).encode(), self.capabilities(checked.model))

    @vendor_boundary
    def send_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        """One ``/v2/embed`` call; the vectors read (their size is the core's check)."""
        data = self.endpoint.post("/v2/embed", prepared.payload)
        return self._answer(data, prepared.request)

    @vendor_boundary
    async def asend_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        """Async :meth:`send_embed` on the event loop's client."""
        data = await self.endpoint.apost("/v2/embed", prepared.payload)
        return self._answer(data, prepared.request)

    def _answer(self, data: Any, request: EmbedRequest) -> EmbedResponse:
        return embeddings.answer(data, request.model, self.name)

    @vendor_boundary
    def tokenize(self, model: str, text: str) -> int:
        """How many tokens ``model`` makes of ``text`` (``POST /v1/tokenize``)."""
        body = json.dumps(embeddings.tokenize_body(model, text)).encode()
        data = self.endpoint.post("/v1/tokenize", body)
        return embeddings.read_tokenize(data, self.name)
