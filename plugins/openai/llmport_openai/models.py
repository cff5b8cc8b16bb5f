"""What each OpenAI model takes: the capability tables of both providers.

Imported by :mod:`llmport_openai.plugin` (the registration) and by
:mod:`llmport_openai.convert_in`; it imports nothing but llmport's types,
so neither the ``openai`` SDK nor the provider module is loaded with it.

Each row says what a model family takes: modalities, window and output
limit, reasoning, caching (OpenAI caches every prompt prefix implicitly, so
cache marks are accepted everywhere; explicit breakpoints only on the
families in :data:`EXPLICIT_CACHE`), citations, provider-native tools,
native text files and token counting. docs/providers/openai.md shows the
same tables.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from fnmatch import fnmatchcase

from llmport.messages.types import ImageGeneration, ImagePrice, ImagePricing, ModelCapabilities

__all__ = [
    "ALIASES",
    "AUDIO_CHAT",
    "AUDIO_FORMATS",
    "AUDIO_TYPES",
    "CHAT_MODELS",
    "DEFAULT",
    "EFFORT_FAMILIES",
    "EMBEDDING_MODELS",
    "EXPLICIT_CACHE",
    "IMAGE_MODELS",
    "IMAGE_TYPES",
    "MAX_IMAGE_BYTES",
    "PDF",
    "RESPONSES_DEFAULT",
    "RESPONSES_MODELS",
    "RESPONSES_TEXT_FILES",
    "TEXT_ONLY",
    "VISION",
    "efforts_for",
    "explicit_cache",
    "reasoning_family",
]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
PDF = frozenset({"application/pdf"})
#: ``input_audio`` takes exactly these two formats (media type -> its ``format`` value).
AUDIO_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3"}
AUDIO_TYPES = frozenset(AUDIO_FORMATS)
#: Text-like files the Responses API takes as an ``input_file`` part (file_data).
RESPONSES_TEXT_FILES = frozenset(
    {"text/plain", "text/markdown", "text/csv", "text/html", "application/json"}
)
#: Provider-native tools of the Responses API (``url_context`` has no OpenAI equivalent).
#: ``tool_search`` is documented for gpt-5.4 and later; older models are left to the API.
RESPONSES_NATIVE = frozenset({"web_search", "code_execution", "file_search", "tool_search"})
# Source: OpenAI, "Image generation" (Responses API): the image_generation tool is supported on
#   gpt-4o, gpt-4o-mini, gpt-4.1 (mini, nano), o3 and the gpt-5 family.
IMAGE_GENERATION_MODELS = ("gpt-4o", "gpt-4.1", "o3", "gpt-5")

#: OpenAI, "Images and vision", "Image input requirements": up to 20 MB per image (and,
#: per request, up to 500 images and 50 MB of image bytes in all: not checked here).
MAX_IMAGE_BYTES = 20 * 1024 * 1024

VISION = ModelCapabilities(
    input_modalities=frozenset({"text", "image", "file"}),
    file_types=PDF,
    image_types=IMAGE_TYPES,
    caching=True,
    max_image_bytes=MAX_IMAGE_BYTES,
)
TEXT_ONLY = ModelCapabilities(
    input_modalities=frozenset({"text", "file"}), image_types=frozenset(), caching=True
)
AUDIO_CHAT = ModelCapabilities(
    input_modalities=frozenset({"text", "audio", "file"}),
    image_types=frozenset(),
    audio_types=AUDIO_TYPES,
    caching=True,
    context_window=128_000,
    max_output_tokens=16_384,
)


def _r(base: ModelCapabilities, window: int, output: int, **more: object) -> ModelCapabilities:
    return replace(base, context_window=window, max_output_tokens=output, **more)  # type: ignore[arg-type]


GPT4O = _r(VISION, 128_000, 16_384)
GPT41 = _r(VISION, 1_047_576, 32_768)
GPT5 = _r(VISION, 400_000, 128_000, reasoning=True)
GPT5_CHAT = _r(VISION, 128_000, 16_384)
O_VISION = _r(VISION, 200_000, 100_000, reasoning=True)
O_TEXT = _r(TEXT_ONLY, 200_000, 100_000, reasoning=True)
GPT35 = _r(TEXT_ONLY, 16_385, 4_096)
GPT4_TURBO = _r(VISION, 128_000, 4_096)
#: Chat's search models: web search through ``web_search_options``, url citations, no tools.
SEARCH = _r(
    TEXT_ONLY,
    128_000,
    16_384,
    citations=True,
    native_tool_kinds=frozenset({"web_search"}),
    native_tools=False,
)

#: Unknown names (new OpenAI models, local models behind ``base_url``) get the
#: common case: text, images and PDF files; reasoning efforts are passed through.
DEFAULT = replace(VISION, reasoning=True)

# Patterns are tried in order (first match wins), so the specific ones come first.
CHAT_MODELS: dict[str, ModelCapabilities] = {
    "gpt-4o-audio-preview*": AUDIO_CHAT,
    "gpt-4o-mini-audio-preview*": AUDIO_CHAT,
    "gpt-audio*": AUDIO_CHAT,
    "gpt-4o-search*": SEARCH,
    "gpt-4o-mini-search*": SEARCH,
    "gpt-5-search-api*": SEARCH,
    "gpt-3.5*": GPT35,
    "o1-mini*": O_TEXT,
    "o3-mini*": O_TEXT,
    "gpt-4o*": GPT4O,
    "gpt-4.1*": GPT41,
    "gpt-4-turbo*": GPT4_TURBO,
    "gpt-5-chat*": GPT5_CHAT,
    "gpt-5*": GPT5,
    "o1*": O_VISION,
    "o3*": O_VISION,
    "o4*": O_VISION,
    "chatgpt-4o*": GPT4O,
}


def _responses(pattern: str, caps: ModelCapabilities) -> ModelCapabilities:
    """The Responses row of a Chat row: no audio; native tools, text files, token counting."""
    if caps.audio_types:
        caps = replace(caps, input_modalities=frozenset({"text", "file"}), audio_types=frozenset())
    if caps is SEARCH:  # search models are Chat-only: plain text here
        return replace(
            TEXT_ONLY, context_window=128_000, max_output_tokens=16_384, count_tokens=True
        )
    native = (
        frozenset()
        if pattern.startswith(("gpt-3.5", "gpt-4o-audio", "gpt-audio"))
        else (RESPONSES_NATIVE)
    )
    if native and pattern.startswith(IMAGE_GENERATION_MODELS) and "image" in caps.input_modalities:
        native |= {"image_generation"}  # (not o3-mini: a text-only model)
    return replace(
        caps,
        citations=bool(native),
        native_tool_kinds=native,
        native_text_files=RESPONSES_TEXT_FILES,
        count_tokens=True,
    )


#: The Responses API: no audio input; hosted tools, ``input_file`` text files, token counting.
RESPONSES_MODELS: dict[str, ModelCapabilities] = {
    pattern: _responses(pattern, caps) for pattern, caps in CHAT_MODELS.items()
}
RESPONSES_DEFAULT = replace(
    DEFAULT,
    citations=True,
    native_tool_kinds=RESPONSES_NATIVE | {"image_generation"},
    native_text_files=RESPONSES_TEXT_FILES,
    count_tokens=True,
)

#: Reasoning efforts each family takes (first match wins); unknown reasoning models take any.
EFFORT_FAMILIES: tuple[tuple[str, frozenset[str]], ...] = (
    ("o*", frozenset({"low", "medium", "high"})),
    ("gpt-5.1-codex-max*", frozenset({"none", "low", "medium", "high", "xhigh"})),
    ("gpt-5.1*", frozenset({"none", "low", "medium", "high"})),
    ("gpt-5-*", frozenset({"minimal", "low", "medium", "high"})),
    ("gpt-5", frozenset({"minimal", "low", "medium", "high"})),
    ("codex-*", frozenset({"low", "medium", "high"})),
    ("gpt-5.*", frozenset({"none", "low", "medium", "high", "xhigh"})),
)
OPENAI_EFFORTS = frozenset({"none", "minimal", "low", "medium", "high", "xhigh"})


@functools.lru_cache(maxsize=256)
def reasoning_family(model: str) -> bool:
    """True for OpenAI's reasoning families (o-series, gpt-5 except the chat models)."""
    if fnmatchcase(model, "gpt-5-chat*"):
        return False
    return any(fnmatchcase(model, pattern) for pattern, _ in EFFORT_FAMILIES)


def efforts_for(model: str) -> frozenset[str]:
    """The reasoning efforts ``model`` takes (OpenAI's whole set for unknown names)."""
    for pattern, efforts in EFFORT_FAMILIES:
        if fnmatchcase(model, pattern):
            return efforts
    return OPENAI_EFFORTS


#: Families with explicit prompt-cache breakpoints (``prompt_cache_breakpoint`` on
#: content parts, ``prompt_cache_options``); every other model caches implicitly only.
EXPLICIT_CACHE: tuple[str, ...] = ("gpt-5.6*",)


@functools.lru_cache(maxsize=256)
def explicit_cache(model: str) -> bool:
    return any(fnmatchcase(model, pattern) for pattern in EXPLICIT_CACHE)


# -- embeddings (https://platform.openai.com/docs/guides/embeddings) -------------------------
# text-embedding-3-*: "dimensions" shortens the vector (any size up to the default);
# ada-002 has a fixed size. The API reference of POST /v1/embeddings: at most 2048 inputs
# per request, 8192 tokens per input ("8192 tokens for all embedding models") and 300,000
# tokens per request, all inputs together.
_EMBEDDING = ModelCapabilities(
    input_modalities=frozenset({"text"}),
    image_types=frozenset(),
    native_tools=False,
    native_structured_output=False,
    streaming=False,
    embeddings=True,
    max_embed_inputs=2048,
    max_embed_request_tokens=300_000,
    max_embed_input_tokens=8192,
)
EMBEDDING_MODELS: dict[str, ModelCapabilities] = {
    "text-embedding-3-small*": replace(
        _EMBEDDING, embedding_dimensions=1536, flexible_dimensions=True
    ),
    "text-embedding-3-large*": replace(
        _EMBEDDING, embedding_dimensions=3072, flexible_dimensions=True
    ),
    "text-embedding-ada-002*": replace(_EMBEDDING, embedding_dimensions=1536),
}

# -- image generation (POST /v1/images/generations) -----------------------------------------
# Source: OpenAI API reference, "Create image": prompt at most 32000 characters
# for the GPT image models, 4000 for dall-e-3, 1000 for dall-e-2; n 1-10 (dall-e-3: 1);
# size 1024x1024, 1536x1024, 1024x1536 (GPT image), 1024x1024, 1792x1024, 1024x1792
# (dall-e-3), 256x256, 512x512, 1024x1024 (dall-e-2); quality low/medium/high (GPT
# image), standard/hd (dall-e-3), standard only (dall-e-2); output_format png/jpeg/webp on
# the GPT image models only (dall-e answers PNG); no seed on any of them.
# Per-image prices. Source: OpenAI API docs, model page "dall-e-2"
#   (developers.openai.com/api/docs/models/dall-e-2, read 2026-11-29): DALL·E 2, standard,
#   $0.016 / $0.018 / $0.02 per image, smallest size to largest (256x256, 512x512, 1024x1024:
#   the page's size labels are the GPT image sizes, its three prices are dall-e-2's three);
#   its "Quick comparison" gives DALL·E 3 at 1024x1024 (standard, the default) $0.04. No
#   OpenAI page in reach gave dall-e-3's HD or wide sizes: those stay unpriced (cost None).
#   gpt-image-1 is billed by tokens (genai-prices), not here.
_DALLE2_PRICES = ImagePricing(
    rows=(
        ImagePrice("0.016", max_pixels=256 * 256),
        ImagePrice("0.018", max_pixels=512 * 512),
        ImagePrice("0.02", max_pixels=1024 * 1024),
    )
)
_DALLE3_PRICES = ImagePricing(
    rows=(ImagePrice("0.04", max_pixels=1024 * 1024, quality="medium"),),
    default_quality="medium",  # dall-e-3's default quality is "standard"
)
_IMAGE = ModelCapabilities(
    input_modalities=frozenset({"text"}),
    image_types=frozenset(),
    native_tools=False,
    native_structured_output=False,
    streaming=False,
)
IMAGE_MODELS: dict[str, ModelCapabilities] = {
    "gpt-image-1*": replace(
        _IMAGE,
        images=ImageGeneration(
            max_images=10,
            sizes=frozenset({"1024x1024", "1536x1024", "1024x1536"}),
            qualities=frozenset({"low", "medium", "high"}),
            formats=frozenset({"png", "jpeg", "webp"}),
            max_prompt_chars=32_000,
        ),
    ),
    "dall-e-3*": replace(
        _IMAGE,
        images=ImageGeneration(
            max_images=1,
            sizes=frozenset({"1024x1024", "1792x1024", "1024x1792"}),
            qualities=frozenset({"medium", "high"}),
            max_prompt_chars=4000,
            per_image=_DALLE3_PRICES,
        ),
    ),
    "dall-e-2*": replace(
        _IMAGE,
        images=ImageGeneration(
            max_images=10,
            sizes=frozenset({"256x256", "512x512", "1024x1024"}),
            max_prompt_chars=1000,
            per_image=_DALLE2_PRICES,
        ),
    ),
}

ALIASES = {"gpt-4o-mini": "openai:gpt-4o-mini", "gpt-4o": "openai:gpt-4o"}
