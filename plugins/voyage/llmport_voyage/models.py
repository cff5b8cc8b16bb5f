"""Voyage AI's text embedding models and their limits, from Voyage AI's "Text embeddings" docs.

Per request: at most 1,000 texts, and a total of 1M tokens for
``voyage-3.5-lite``, 320k for ``voyage-3.5`` and 120k for the others. Per
text: 32k tokens (16k for ``voyage-law-2`` / ``voyage-finance-2``). The
voyage-3.5 and voyage-3-large families choose their size (256, 512, 1024,
2048; default 1024). Voyage AI truncates only at the end of a text.

Imported by the entry point and by the provider; it imports neither, nor httpx2.
"""

from __future__ import annotations

from dataclasses import replace

from llmport.messages.types import ModelCapabilities

#: Texts per ``/v1/embeddings`` request (Voyage AI's documented maximum).
MAX_TEXTS = 1000
#: The sizes of the models that take ``output_dimension``.
SIZES = frozenset({256, 512, 1024, 2048})


def _embedder(
    request_tokens: int, input_tokens: int = 32_000, choices: frozenset[int] | None = SIZES
) -> ModelCapabilities:
    """An embedding-only model of 1,024 dimensions by default: no chat, no streaming."""
    return ModelCapabilities(
        input_modalities=frozenset({"text"}),
        image_types=frozenset(),
        native_tools=False,
        native_structured_output=False,
        streaming=False,
        embeddings=True,
        embedding_dimensions=1024,
        embedding_dimension_choices=choices,
        flexible_dimensions=choices is not None,
        max_embed_inputs=MAX_TEXTS,
        max_embed_request_tokens=request_tokens,
        max_embed_input_tokens=input_tokens,
        embed_input_types=True,
        embed_truncation=True,
    )


#: Voyage AI's multimodal models: images too (Voyage AI API reference, "Multimodal
#: embeddings": PNG, JPEG, WebP, GIF; 20 MB and 16 million pixels an image; 320k tokens a
#: request, 32k an input), text and images fused in one input.
MULTIMODAL_IMAGE_BYTES = 20 * 1024 * 1024


def _multimodal(choices: frozenset[int] | None) -> ModelCapabilities:
    return replace(
        _embedder(320_000, choices=choices),
        input_modalities=frozenset({"text", "image"}),
        image_types=frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"}),
        image_urls=False,
        max_image_bytes=MULTIMODAL_IMAGE_BYTES,
        max_embed_blocks=None,
    )


#: The models called at ``/v1/multimodalembeddings`` (every input of theirs, text too).
MULTIMODAL = frozenset({"voyage-multimodal-3", "voyage-multimodal-3.5"})

MODELS: dict[str, ModelCapabilities] = {
    "voyage-multimodal-3": _multimodal(None),
    "voyage-multimodal-3.5": _multimodal(SIZES),
    "voyage-3.5": _embedder(320_000),
    "voyage-3.5-lite": _embedder(1_000_000),
    "voyage-3-large": _embedder(120_000),
    "voyage-code-3": _embedder(120_000),
    "voyage-multilingual-2": _embedder(120_000, choices=None),
    "voyage-finance-2": _embedder(120_000, 16_000, None),
    "voyage-law-2": _embedder(120_000, 16_000, None),
}

#: A model the table does not list: it embeds; its size and limits are Voyage AI's to check.
DEFAULT = replace(
    _embedder(MAX_TEXTS),
    embedding_dimensions=None,
    embedding_dimension_choices=None,
    max_embed_request_tokens=None,
)
