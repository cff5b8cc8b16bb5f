"""Cohere's embedding models and their limits, from Cohere's "Embed" model docs.

Per request: at most 96 texts (``/v2/embed``). Per text: 512 tokens on the v3
models, 128k on ``embed-v4.0``. ``embed-v4.0`` is the one with a choice of
sizes (256, 512, 1024, 1536; default 1536), and the one that embeds images here
(``inputs`` of text and ``image_url`` parts: PNG, JPEG, WebP or GIF, at most 5 MB
each, per Cohere's changelog "Embed v3.0 Models are now Multimodal"; the v3 models
take one image per request under ``input_type: image``, not offered here). Every
model takes an input type and truncates itself (``truncate: START|END``).

Imported by the entry point and by the provider; it imports neither, nor httpx2.
"""

from __future__ import annotations

from dataclasses import replace

from llmport.messages.types import ModelCapabilities

#: Texts per ``/v2/embed`` request (Cohere's documented maximum).
MAX_TEXTS = 96


def _embedder(
    size: int, input_tokens: int, choices: frozenset[int] | None = None
) -> ModelCapabilities:
    """An embedding-only model: no chat, no streaming, no tools."""
    return ModelCapabilities(
        input_modalities=frozenset({"text"}),
        image_types=frozenset(),
        native_tools=False,
        native_structured_output=False,
        streaming=False,
        embeddings=True,
        embedding_dimensions=size,
        embedding_dimension_choices=choices,
        flexible_dimensions=choices is not None,
        max_embed_inputs=MAX_TEXTS,
        max_embed_input_tokens=input_tokens,
        embed_input_types=True,
        embed_truncation=True,
    )


#: The largest image Cohere embeds (its changelog "Embed v3.0 Models are now Multimodal").
MAX_IMAGE_BYTES = 5 * 1024 * 1024
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})


def _with_images(caps: ModelCapabilities) -> ModelCapabilities:
    """``caps`` embedding images too, fused with text in one input (data URLs only)."""
    return replace(
        caps,
        input_modalities=frozenset({"text", "image"}),
        image_types=IMAGE_TYPES,
        image_urls=False,
        max_image_bytes=MAX_IMAGE_BYTES,
        max_embed_blocks=None,
    )


V3_TOKENS = 512
MODELS: dict[str, ModelCapabilities] = {
    "embed-v4.0": _with_images(_embedder(1536, 128_000, frozenset({256, 512, 1024, 1536}))),
    "embed-english-v3.0": _embedder(1024, V3_TOKENS),
    "embed-multilingual-v3.0": _embedder(1024, V3_TOKENS),
    "embed-english-light-v3.0": _embedder(384, V3_TOKENS),
    "embed-multilingual-light-v3.0": _embedder(384, V3_TOKENS),
}

#: A model the table does not list: it embeds; its size and limits are Cohere's to check.
DEFAULT = replace(
    _embedder(0, 0),
    embedding_dimensions=None,
    max_embed_input_tokens=None,
    flexible_dimensions=True,
)
