"""Entry point of the OpenAI plugin: registers two providers.

* ``openai:MODEL`` — the Chat Completions API (the default: every
  OpenAI-compatible server speaks it, Ollama and vLLM included).
* ``openai-responses:MODEL`` — the Responses API (OpenAI and Azure only).

Nothing here imports the ``openai`` SDK: the factories import the provider
module, and the provider imports the SDK when it first builds a client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from llmport import hookimpl
from llmport.provider import Provider, ProviderInfo
from llmport.types import ModelCapabilities

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
PDF = frozenset({"application/pdf"})
#: ``input_audio`` takes exactly these two formats.
AUDIO_TYPES = frozenset({"audio/wav", "audio/mpeg"})

VISION = ModelCapabilities(
    input_modalities=frozenset({"text", "image", "file"}),
    file_types=PDF,
    image_types=IMAGE_TYPES,
)
TEXT_ONLY = ModelCapabilities(input_modalities=frozenset({"text", "file"}), image_types=frozenset())
AUDIO_CHAT = ModelCapabilities(
    input_modalities=frozenset({"text", "audio", "file"}),
    image_types=frozenset(),
    audio_types=AUDIO_TYPES,
)

# Patterns are tried in order (first match wins), so the specific ones come first.
CHAT_MODELS: dict[str, ModelCapabilities] = {
    "gpt-4o-audio-preview*": AUDIO_CHAT,
    "gpt-4o-mini-audio-preview*": AUDIO_CHAT,
    "gpt-audio*": AUDIO_CHAT,
    "gpt-3.5*": TEXT_ONLY,
    "o1-mini*": TEXT_ONLY,
    "o3-mini*": TEXT_ONLY,
    "gpt-4o*": VISION,
    "gpt-4.1*": VISION,
    "gpt-4-turbo*": VISION,
    "gpt-5*": VISION,
    "o1*": VISION,
    "o3*": VISION,
    "o4*": VISION,
    "chatgpt-4o*": VISION,
}

# The Responses API takes no audio input; otherwise the same table.
RESPONSES_MODELS: dict[str, ModelCapabilities] = {
    pattern: (TEXT_ONLY if caps is AUDIO_CHAT else caps) for pattern, caps in CHAT_MODELS.items()
}

ALIASES = {"gpt-4o-mini": "openai:gpt-4o-mini", "gpt-4o": "openai:gpt-4o"}


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
            # Unknown names (new OpenAI models, local models behind base_url) get the
            # common case: text, images and PDF files.
            default=VISION,
            plugin="llmport-openai",
        ),
        ProviderInfo(
            prefix="openai-responses",
            factory=_lazy("OpenAIResponsesProvider"),
            description="OpenAI Responses API",
            models=dict(RESPONSES_MODELS),
            default=VISION,
            plugin="llmport-openai",
        ),
    ]


@hookimpl
def llmport_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register ``openai`` (Chat Completions) and ``openai-responses``."""
    for info in provider_infos():
        register(info)
