"""Entry point of the Anthropic plugin: registers ``anthropic`` and ``anthropic-vertex``.

Nothing here imports the ``anthropic`` SDK: the provider class (and with it
the SDK) is imported by the factory on first use. Per-model facts live in
:mod:`llmport_anthropic.models`.
"""

from __future__ import annotations

from typing import Any

import llmport
from llmport.provider.contract import ProviderInfo

from .models import ALIASES, DEFAULT_FAMILY, VERTEX_ALIASES, caps, vertex_caps


def _factory(settings: dict[str, Any], info: ProviderInfo) -> llmport.Provider:
    from .provider import AnthropicProvider  # imports the SDK lazily (on first call)

    return AnthropicProvider(settings=settings, info=info)


def _vertex_factory(settings: dict[str, Any], info: ProviderInfo) -> llmport.Provider:
    from .vertex import AnthropicVertexProvider  # imports the SDK lazily (on first call)

    return AnthropicVertexProvider(settings=settings, info=info)


@llmport.hookimpl
def llmport_cassette_readers(register: Any) -> None:
    """Show recorded Messages exchanges in neutral types (``llmport cassette show``)."""
    from .recorded import read_messages  # the converters load only when a cassette is shown

    register(read_messages)


@llmport.hookimpl
def llmport_providers(register: Any) -> None:
    """Register ``anthropic:`` and ``anthropic-vertex:``, their aliases and capabilities."""
    register(
        ProviderInfo(
            prefix="anthropic",
            factory=_factory,
            description="Anthropic Messages API (Claude)",
            aliases=dict(ALIASES),
            models=caps(),
            default=DEFAULT_FAMILY.caps,
        )
    )
    register(
        ProviderInfo(
            prefix="anthropic-vertex",
            factory=_vertex_factory,
            description="Claude on Google Vertex AI (anthropic SDK's Vertex client)",
            aliases=dict(VERTEX_ALIASES),
            models=vertex_caps(),
            default=DEFAULT_FAMILY.caps,
        )
    )
