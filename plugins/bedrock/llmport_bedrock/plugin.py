"""Entry point of the Bedrock plugin: registers the ``bedrock`` provider.

Nothing here imports boto3: the factory imports the provider module, and the
provider imports boto3 when it first builds a client. The model facts
(families, capabilities, aliases) live in :mod:`llmport_bedrock.models`,
which the provider imports too; the provider never imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from llmport import hookimpl
from llmport.provider.contract import Provider, ProviderInfo

from .models import ALIASES, DEFAULT_FAMILY, EMBEDDING_MODELS, FALLBACKS, FAMILIES, IMAGE_MODELS


def _factory(
    settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None
) -> Provider:
    from .provider import BedrockProvider  # imports boto3 lazily (on first call)

    return BedrockProvider(settings, info)


def provider_info() -> ProviderInfo:
    """The ``bedrock`` registration (also handy for tests and docs).

    Embedding models come first: the ``*amazon.nova*`` family rule would match Nova's.
    """
    return ProviderInfo(
        prefix="bedrock",
        factory=_factory,
        description="AWS Bedrock Runtime Converse API (boto3)",
        aliases=dict(ALIASES),
        models={
            **IMAGE_MODELS,
            **EMBEDDING_MODELS,
            **{pattern: family.caps for pattern, family in FAMILIES.items()},
        },
        default=DEFAULT_FAMILY.caps,
        plugin="llmport-bedrock",
        fallbacks=FALLBACKS,
    )


@hookimpl
def llmport_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register the ``bedrock:`` prefix, its aliases and per-model capabilities."""
    register(provider_info())


@hookimpl
def llmport_cassette_readers(register: Callable[[Any], None]) -> None:
    """Show recorded Converse(Stream) and embedding exchanges (``llmport cassette show``)."""
    from .recorded import read_converse, read_embeddings  # loaded when a cassette is shown

    register(read_converse)
    register(read_embeddings)
