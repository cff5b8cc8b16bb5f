"""What each OpenAI model takes: the capability tables of both providers.

Imported by :mod:`llmport_openai.plugin` (the registration) and by
:mod:`llmport_openai.convert_in`; it imports nothing but llmport's types,
so neither the ``openai`` SDK nor the provider module is loaded with it.
"""

from __future__ import annotations

from llmport.types import ModelCapabilities

__all__ = [
    "ALIASES",
    "AUDIO_CHAT",
    "AUDIO_FORMATS",
    "AUDIO_TYPES",
    "CHAT_MODELS",
    "DEFAULT",
    "IMAGE_TYPES",
    "PDF",
    "RESPONSES_MODELS",
    "TEXT_ONLY",
    "VISION",
]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
PDF = frozenset({"application/pdf"})
#: ``input_audio`` takes exactly these two formats (media type -> its ``format`` value).
AUDIO_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3"}
AUDIO_TYPES = frozenset(AUDIO_FORMATS)

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
#: Unknown names (new OpenAI models, local models behind ``base_url``) get the
#: common case: text, images and PDF files.
DEFAULT = VISION

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

#: The Responses API takes no audio input; otherwise the same table.
RESPONSES_MODELS: dict[str, ModelCapabilities] = {
    pattern: (TEXT_ONLY if caps is AUDIO_CHAT else caps) for pattern, caps in CHAT_MODELS.items()
}

ALIASES = {"gpt-4o-mini": "openai:gpt-4o-mini", "gpt-4o": "openai:gpt-4o"}
