"""Entry point of the OpenAI plugin: registers two providers.

* ``openai:MODEL`` — the Chat Completions API (the default: every
  OpenAI-compatible server speaks it, Ollama and vLLM included).
* ``openai-responses:MODEL`` — the Responses API (OpenAI and Azure only).

Nothing here imports the ``openai`` SDK or the provider module: the
capability tables live in :mod:`llmport_openai.models`, and the factories
import :mod:`llmport_openai.provider` when a provider is first needed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from llmport import hookimpl
from llmport.provider.contract import Provider, ProviderInfo

from .models import ALIASES, CHAT_MODELS, DEFAULT, RESPONSES_DEFAULT, RESPONSES_MODELS


def _lazy(class_name: str) -> Callable[..., Provider]:
    def factory(
        settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None
    ) -> Provider:
        from . import provider

        cls: type[Provider] = getattr(provider, class_name)
        return cls(settings, info)

    factory.__name__ = f"create_{class_name}"
    return factory


def provider_infos() -> list[ProviderInfo]:
    """The two registrations (also handy for tests and docs)."""
    return [
        ProviderInfo(
            prefix="openai",
            factory=_lazy("OpenAIChatProvider"),
            description="OpenAI Chat Completions (and any OpenAI-compatible server via base_url)",
            aliases=dict(ALIASES),
            models=dict(CHAT_MODELS),
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
    ]


@hookimpl
def llmport_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register ``openai`` (Chat Completions) and ``openai-responses``."""
    for info in provider_infos():
        register(info)
