"""Entry point of the Anthropic plugin: registers the ``anthropic`` provider.

Nothing here imports the ``anthropic`` SDK: the provider class (and with it
the SDK) is imported by the factory on first use. Per-model facts live in
:mod:`llmport_anthropic.models`.
"""

from __future__ import annotations

from typing import Any

import llmport
from llmport.provider.contract import ProviderInfo

from .models import ALIASES, DEFAULT_FAMILY, caps


def _factory(settings: dict[str, Any], info: ProviderInfo) -> llmport.Provider:
    from .provider import AnthropicProvider  # imports the SDK lazily (on first call)

    return AnthropicProvider(settings=settings, info=info)


@llmport.hookimpl
def llmport_providers(register: Any) -> None:
    """Register the ``anthropic:`` prefix, its aliases and per-model capabilities."""
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
