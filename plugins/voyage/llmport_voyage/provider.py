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
from collections.abc import Mapping
from typing import Any

from llmport.errors import ConfigError, UnsupportedFeatureError
from llmport.messages.embeddings import EmbedRequest, EmbedResponse
from llmport.messages.types import Request, Usage
from llmport.provider.contract import Prepared, PreparedEmbed, Provider, ProviderInfo
from llmport.provider.embedding import check_embed
from llmport.provider.jsonhttp import JsonEndpoint
from llmport.provider.translate import translating, vendor_boundary, wrong_size

from . import embeddings

BASE_URL = "https://api.voyageai.com"
KEY_VARIABLE = "VOYAGE_API_KEY"
SETTINGS = frozenset({"api_key", "base_url", "timeout"})


class VoyageProvider(Provider):
    """``voyage:<model>``: Voyage AI's embedding models."""

    name = "voyage"

    def __init__(self, settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None):
        super().__init__(settings, info)
        unknown = sorted(set(self.settings) - SETTINGS)
        if unknown:
            raise ConfigError(
                f"voyage: unknown setting(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(SETTINGS))}"
            )
        self.endpoint = JsonEndpoint(
            self.name,
            str(self.settings.get("base_url") or BASE_URL),
            self.settings.get("api_key") or self.environment_key(KEY_VARIABLE),
            make_client=self._client,
            message=embeddings.error_message,
            missing_key=f"no Voyage AI API key: set {KEY_VARIABLE} or the api_key setting",
        )

    def secrets(self) -> tuple[str, ...]:
        """The configured secrets and the key in use (from the environment too)."""
        key = self.endpoint.key
        return (*super().secrets(), *((key,) if key else ()))

    def translating(self) -> translating:
        return translating(self.name, None, self.secrets())

    def _client(self, is_async: bool) -> Any:
        import httpx2

        timeout = self.settings.get("timeout")
        return httpx2.AsyncClient(timeout=timeout) if is_async else httpx2.Client(timeout=timeout)

    def close(self) -> None:
        self.endpoint.close()

    async def aclose(self) -> None:
        await self.endpoint.aclose()

    def prepare(self, request: Request) -> Prepared:
        """Voyage AI has no chat models: refused before any request."""
        raise UnsupportedFeatureError(
            self.name, request.model, "chat", "Voyage AI only embeds (rt.embed)"
        )

    # -- embeddings -------------------------------------------------------------------

    def prepare_embed(self, request: EmbedRequest) -> PreparedEmbed:
        """Check ``request`` and serialize its ``/v1/embeddings`` body once (no I/O)."""
        checked = check_embed(self, request)
        if checked.truncate == "start":
            raise UnsupportedFeatureError(
                self.name, checked.model, 'truncate="start"', "Voyage AI cuts only the end"
            )
        body = embeddings.embed_body(
            checked.model,
            checked.inputs,
            input_type=checked.input_type,
            dimensions=checked.dimensions,
            truncate=checked.truncate == "end",
        )
        body.update(checked.options)
        return PreparedEmbed(checked, json.dumps(body).encode(), self.capabilities(checked.model))

    @vendor_boundary
    def send_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        """One ``/v1/embeddings`` call; the vectors checked against the request."""
        return self._answer(self.endpoint.post("/v1/embeddings", prepared.payload), prepared)

    @vendor_boundary
    async def asend_embed(self, prepared: PreparedEmbed) -> EmbedResponse:
        """Async :meth:`send_embed` on the event loop's client."""
        data = await self.endpoint.apost("/v1/embeddings", prepared.payload)
        return self._answer(data, prepared)

    def _answer(self, data: Any, prepared: PreparedEmbed) -> EmbedResponse:
        request = prepared.request
        items, tokens = embeddings.read_embed(data, self.name)
        vectors = EmbedResponse.from_base64(
            items,
            expected=len(request.inputs),
            usage=Usage(input_tokens=tokens or 0, requests=1),
            model=request.model,
        )
        if request.dimensions is not None and vectors.dimensions != request.dimensions:
            raise wrong_size(self.name, vectors.dimensions, request.dimensions)
        return vectors
