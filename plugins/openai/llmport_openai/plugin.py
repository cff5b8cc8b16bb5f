"""Entry point of the OpenAI plugin: registers OpenAI's providers and the compatible services.

* ``openai:MODEL`` — the Chat Completions API (the default: every
  OpenAI-compatible server speaks it, Ollama and vLLM included).
* ``openai-responses:MODEL`` — the Responses API (OpenAI and Azure only).
* ``groq:``, ``ollama:``, ``deepseek:``... — OpenAI-compatible services
  (:mod:`llmport_openai.profiles`).

Nothing here imports the ``openai`` SDK or the provider module: the
capability tables live in :mod:`llmport_openai.models`, and the factories
import :mod:`llmport_openai.provider` when a provider is first needed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from llmport import hookimpl
from llmport.provider.contract import Provider, ProviderInfo

from .models import (
    ALIASES,
    CHAT_MODELS,
    DEFAULT,
    EMBEDDING_MODELS,
    IMAGE_MODELS,
    RESPONSES_DEFAULT,
    RESPONSES_MODELS,
)
from .profiles import PROFILES, Profile


def _lazy(class_name: str) -> Callable[..., Provider]:
    def factory(
        settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None
    ) -> Provider:
        from . import provider

        cls: type[Provider] = getattr(provider, class_name)
        return cls(settings, info)

    factory.__name__ = f"create_{class_name}"
    return factory


def _profile_factory(profile: Profile) -> Callable[..., Provider]:
    def factory(
        settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None
    ) -> Provider:
        from . import compat  # the SDK-facing module, loaded on first use

        return compat.make_provider(profile, settings, info)

    factory.__name__ = f"create_{profile.prefix.replace('-', '_')}"
    return factory


def profile_info(profile: Profile, plugin: str = "llmport-openai") -> ProviderInfo:
    """The registration of an OpenAI-compatible service: register it from ``llmport_providers``.

    How a plugin outside this package ships its own profile.
    """
    default = (
        replace(profile.default, embeddings=True) if profile.embed_any_model else profile.default
    )
    return ProviderInfo(
        prefix=profile.prefix,
        factory=_profile_factory(profile),
        description=profile.description,
        aliases=dict(profile.aliases),
        # A service hosts any model: its table refines some, "*" is every other (no
        # unknown-model warning for a model the service serves and llmport never listed).
        # A profile's own "*" row (every model embeds there, say) is kept.
        models={**profile.image_models, **profile.embed_models, **profile.models, "*": default}
        if "*" not in profile.embed_models and "*" not in profile.models
        else {**profile.image_models, **profile.embed_models, **profile.models},
        default=default,
        plugin=plugin,
    )


def provider_infos() -> list[ProviderInfo]:
    """OpenAI's two registrations, then one per built-in OpenAI-compatible profile."""
    return [
        ProviderInfo(
            prefix="openai",
            factory=_lazy("OpenAIChatProvider"),
            description="OpenAI Chat Completions (and any OpenAI-compatible server via base_url)",
            aliases=dict(ALIASES),
            models={**IMAGE_MODELS, **EMBEDDING_MODELS, **CHAT_MODELS},
            default=DEFAULT,
            plugin="llmport-openai",
        ),
        ProviderInfo(
            prefix="openai-responses",
            factory=_lazy("OpenAIResponsesProvider"),
            description="OpenAI Responses API",
            models=dict(RESPONSES_MODELS),
            default=RESPONSES_DEFAULT,
            plugin="llmport-openai",
        ),
        *(profile_info(p) for p in PROFILES.values()),
    ]


@hookimpl
def llmport_cassette_readers(register: Callable[[Any], None]) -> None:
    """Show recorded Chat, Responses and Embeddings exchanges (``llmport cassette show``)."""
    from .recorded import read_chat, read_embeddings, read_responses  # loaded when shown

    register(read_chat)
    register(read_responses)
    register(read_embeddings)


@hookimpl
def llmport_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register ``openai`` (Chat Completions), ``openai-responses`` and the profiles."""
    for info in provider_infos():
        register(info)
