"""Entry point of the Gemini plugin: registers ``gemini`` and ``gemini-vertex``.

Nothing here imports ``google-genai``: the provider class (and with it the
SDK) is imported by the factory on first use. The capability tables live in
:mod:`.models`, shared with the provider.
"""

from __future__ import annotations

from typing import Any

import llmport
from llmport.provider.contract import ProviderInfo

from .models import (
    ALIASES,
    DEFAULT_FAMILY,
    EMBEDDING_MODELS,
    FAMILIES,
    VERTEX_EMBEDDING_MODELS,
    VERTEX_IMAGEN_MODELS,
)


def _factory(settings: dict[str, Any], info: ProviderInfo) -> llmport.Provider:
    from .provider import GeminiProvider  # imports the SDK lazily (on first call)

    return GeminiProvider(settings=settings, info=info)


def _vertex_factory(settings: dict[str, Any], info: ProviderInfo) -> llmport.Provider:
    from .vertex import GeminiVertexProvider  # imports the SDK lazily (on first call)

    return GeminiVertexProvider(settings=settings, info=info)


@llmport.hookimpl
def llmport_cassette_readers(register: Any) -> None:
    """Show recorded generateContent and embedding exchanges (``llmport cassette show``)."""
    from .recorded import read_embeddings, read_generate  # loaded when a cassette is shown

    register(read_generate)
    register(read_embeddings)


@llmport.hookimpl
def llmport_providers(register: Any) -> None:
    """Register ``gemini:`` and ``gemini-vertex:``, their aliases and capabilities.

    Embedding models come first: ``gemini-*`` chat patterns would match them too.
    """
    models = {pattern: family.caps for pattern, family in FAMILIES.items()}
    register(
        ProviderInfo(
            prefix="gemini",
            factory=_factory,
            description="Google Gemini API (google-genai; Vertex AI optional)",
            aliases=dict(ALIASES),
            models={**EMBEDDING_MODELS, **models},
            default=DEFAULT_FAMILY.caps,
        )
    )
    register(
        ProviderInfo(
            prefix="gemini-vertex",
            factory=_vertex_factory,
            description="Gemini on Google Vertex AI (google-genai)",
            aliases={},
            models={**VERTEX_IMAGEN_MODELS, **VERTEX_EMBEDDING_MODELS, **models},
            default=DEFAULT_FAMILY.caps,
        )
    )
