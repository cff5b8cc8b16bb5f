"""The Voyage AI provider: embeddings through ``POST /v1/embeddings`` on httpx2.

Settings (``Runtime(providers={"voyage": {...}})`` or ``[providers.voyage]``):
``api_key`` (default ``VOYAGE_API_KEY``), ``base_url`` (default
:data:`BASE_URL`), ``timeout`` (seconds per request).

:meth:`VoyageProvider.prepare_embed` checks a request (the core's
:func:`~llmport.provider.embedding.check_embed`; ``truncate="start"`` refused
typed, Voyage AI cuts only the end) and serializes its body once
(:mod:`.embeddings`); ``send_embed`` / ``asend_embed`` post it
(:class:`llmport.provider.jsonhttp.JsonEndpoint`) behind the vendor boundary
and decode the base64 float32 vectors once. An error answer is FastAPI's
``{"detail": ...}``, read by :func:`.embeddings.error_message`. Chat is
refused typed: Voyage AI has no chat models.
"""

from __future__ import annotations

import json
from typing import Any

from llmport.errors import UnsupportedFeatureError
from llmport.messages.embeddings import EmbedRequest, EmbedResponse
from llmport.provider.contract import PreparedEmbed
from llmport.provider.embedding import check_embed
from llmport.provider.jsonhttp import JsonEmbeddingProvider
from llmport.provider.translate import vendor_boundary

from . import embeddings, models

BASE_URL = "https://api.voyageai.com"
KEY_VARIABLE = "VOYAGE_API_KEY"


class VoyageProvider(JsonEmbeddingProvider):
    """``voyage:<model>``: Voyage AI's embedding models."""

    name = "voyage"
    label = "Voyage AI"
    base_url = BASE_URL
    key_variable = KEY_VARIABLE
    error_message = staticmethod(embeddings.error_message)

    # -- embeddings -------------------------------------------------------------------

    def prepare_embed(self, request: EmbedRequest) -> PreparedEmbed:
        """Check ``request`` and serialize its ``/v1/embeddings`` body once (no I/O)."""
        checked = check_embed(self, request)
        if checked.truncate == "start":
            raise UnsupportedFeatureError(
                self.name, checked.model, 'truncate="start"', "Voyage AI cuts only the end"
            )
        options: dict[str, Any] = {
            "input_type": checked.input_type,
            "dimensions": checked.dimensions,
            "truncate": checked.truncate == "end",
        }
        if checked.model in models.MULTIMODAL:
            path = embeddings.MULTIMODAL_PATH
            body = embeddings.multimodal_body(checked.model, checked.inputs, **options)
        else:
            path = embeddings.TEXT_PATH
            body = embeddings.embed_body(checked.model, checked.texts, **options)
        body.update(checked.options)
        payload = (path, json.dumps(body).encode())
        return PreparedEmbed(checked, payload, self.capabilities(checked.model))

    @vendor_boundary
    def send_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        """One call to the model's endpoint; the vectors read (their size is the core's check)."""
        path, body = prepared.payload
        return self._answer(self.endpoint.post(path, body), prepared)

    @vendor_boundary
    async def asend_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        """Async :meth:`send_embed` on the event loop's client."""
        path, body = prepared.payload
        return self._answer(await self.endpoint.apost(path, body), prepared)

    def _answer(self, data: Any, prepared: PreparedEmbed) -> EmbedResponse:
        return embeddings.answer(data, prepared.request.model, self.name)
