"""Entry point of the Voyage AI plugin: registers the ``voyage`` provider (embeddings).

Nothing here imports httpx2: the factory imports the provider module, which
makes its HTTP clients on first use. The model table lives in :mod:`.models`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from llmport import hookimpl
from llmport.provider.contract import Provider, ProviderInfo

from .models import DEFAULT, MODELS


def _factory(
    settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None
) -> Provider:
    from .provider import VoyageProvider

    return VoyageProvider(settings, info)


def provider_info() -> ProviderInfo:
    """The ``voyage`` registration."""
    return ProviderInfo(
        prefix="voyage",
        factory=_factory,
        description="Voyage AI embeddings (POST /v1/embeddings over httpx2)",
        models=dict(MODELS),
        default=DEFAULT,
        plugin="llmport-voyage",
    )


@hookimpl
def llmport_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register the ``voyage:`` prefix and its embedding models."""
    register(provider_info())


@hookimpl
def llmport_cassette_readers(register: Callable[[Any], None]) -> None:
    """Show recorded embedding exchanges in neutral types (``llmport cassette show``)."""
    from .recorded import read_embeddings  # loaded when a cassette is shown

    register(read_embeddings)
