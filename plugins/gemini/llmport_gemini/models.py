"""What llmport knows about each Gemini model family: capabilities and API quirks.

Imported by :mod:`.plugin` (registration) and by :mod:`.provider` /
:mod:`.convert_in` (checks and conversion); it imports neither of them, nor
``google-genai``.

Per-model facts live in :data:`FAMILIES`: the capabilities llmport checks
before any request, plus what the Gemini API needs per model family (which
thinking control it takes, whether tools and a JSON response schema can be
combined in one request).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from typing import Literal

from llmport.messages.types import ImageGeneration, ModelCapabilities

__all__ = [
    "ALIASES",
    "AUDIO_TYPES",
    "DEFAULT_FAMILY",
    "FAMILIES",
    "FILE_TYPES",
    "IMAGEN_1K",
    "IMAGEN_2K",
    "IMAGE_TYPES",
    "MAX_REQUEST_BYTES",
    "NATIVE_TEXT_FILES",
    "VERTEX_IMAGEN_MODELS",
    "VIDEO_TYPES",
    "Family",
    "Thinking",
    "family_for",
]

#: Gemini's limit on a whole request with inline data (20 MB); larger files go
#: through the Files API and are passed as ``gs://`` / Files API URLs.
MAX_REQUEST_BYTES = 20 * 1024 * 1024

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"})
AUDIO_TYPES = frozenset(
    {"audio/wav", "audio/mpeg", "audio/aiff", "audio/aac", "audio/ogg", "audio/flac"}
)
VIDEO_TYPES = frozenset(
    {
        "video/mp4",
        "video/mpeg",
        "video/quicktime",
        "video/x-msvideo",
        "video/x-flv",
        "video/webm",
        "video/x-ms-wmv",
        "video/3gpp",
    }
)
#: Files sent natively as inline data (text-like files are inlined as text instead).
FILE_TYPES = frozenset({"application/pdf"}) | VIDEO_TYPES

#: Text-like files Gemini reads as inline data (``send="native"``; ``"auto"`` picks it):
#: the plain-text document types of Google's document-understanding guide. Other
#: text-like types (JSON, markdown as ``text/markdown``) are inlined as text.
NATIVE_TEXT_FILES = frozenset(
    {
        "text/plain",
        "text/html",
        "text/css",
        "text/csv",
        "text/xml",
        "text/rtf",
        "text/md",
        "text/javascript",
        "application/x-javascript",
        "text/x-python",
        "application/x-python",
    }
)
#: Provider-native tools of the Gemini API (``NativeTool`` kinds).
ALL_NATIVE = frozenset({"web_search", "url_context", "code_execution", "file_search"})

#: Model aliases the plugin registers (configuration aliases win over these).
ALIASES = {
    "gemini-flash": "gemini:gemini-2.5-flash",
    "gemini-pro": "gemini:gemini-2.5-pro",
}

Thinking = Literal["none", "budget", "budget_always", "level"]


@dataclass(slots=True, frozen=True)
class Family:
    """What llmport knows about one family of Gemini models.

    ``thinking``: ``"budget"`` takes ``thinking_budget`` and may switch thinking
    off (2.5 Flash / Flash-Lite); ``"budget_always"`` takes a budget but cannot
    switch thinking off (2.5 Pro); ``"level"`` takes ``thinking_level``
    (Gemini 3); ``"none"`` has no thinking. ``tools_with_schema``: function
    calling and a JSON response schema may be combined in one request.
    ``caps`` carries the neutral capability table (window, output limit,
    reasoning, caching, citations, native tools, native text files, token
    counting) that ``llmport models`` and the core's checks read.
    """

    caps: ModelCapabilities
    thinking: Thinking
    tools_with_schema: bool
    #: ``thinkingLevel`` values the model takes (``"level"`` families).
    levels: tuple[str, ...] = ()
    #: Smallest and largest ``thinkingBudget`` (``"budget"`` families; 0 and -1 aside).
    budget_range: tuple[int, int] = (0, 0)
    #: Provider-native tools may be offered beside function declarations (Gemini 3).
    native_with_functions: bool = False
    #: ``functionResponse.parts`` (media returned by a tool) are taken (Gemini 3).
    media_in_tool_results: bool = False


def _caps(
    *,
    audio: bool = True,
    window: int = 1_048_576,
    output: int = 65_536,
    reasoning: bool = True,
    native: frozenset[str] = ALL_NATIVE,
    grounding: bool = True,
    images_out: bool = False,
) -> ModelCapabilities:
    return ModelCapabilities(
        output_modalities=frozenset({"text", "image"} if images_out else {"text"}),
        input_modalities=frozenset({"text", "image", "file", *(("audio",) if audio else ())}),
        file_types=FILE_TYPES,
        image_types=IMAGE_TYPES,
        audio_types=AUDIO_TYPES if audio else frozenset(),
        native_tools=True,
        native_structured_output=True,
        streaming=True,
        # Gemini has no switch for one call per turn: every call of a turn is kept
        # and llmport runs them one at a time when asked (docs/providers/gemini.md).
        parallel_tool_calls=False,
        tool_choice_none=True,
        image_urls=True,  # Files API / gs:// URIs only; convert_in checks the URL
        max_request_bytes=MAX_REQUEST_BYTES,
        context_window=window,
        max_output_tokens=output,
        reasoning=reasoning,
        # Implicit caching: cache marks are accepted, cached tokens reported.
        caching=grounding,
        # Grounding citations (web search, URL context, file search); never document ones.
        citations=grounding,
        native_tool_kinds=native,
        native_text_files=NATIVE_TEXT_FILES,
        count_tokens=True,
    )


_LEVELS = ("minimal", "low", "medium", "high")
_GEMINI_3 = Family(
    _caps(),
    "level",
    True,
    levels=_LEVELS,
    native_with_functions=True,
    media_in_tool_results=True,
)
_NO_FILE_SEARCH = ALL_NATIVE - {"file_search"}
_CODE_ONLY = frozenset({"code_execution"})

#: First matching pattern wins (``fnmatch``).
FAMILIES: dict[str, Family] = {
    # Source: Gemini API, "Image generation" (Nano Banana): these models answer with images
    #   (responseModalities TEXT and IMAGE, or IMAGE alone); the recordings are
    #   gemini-3-pro-image(-preview) and gemini-2.5-flash-image.
    "gemini-3-pro-image*": Family(
        _caps(images_out=True), "level", True, levels=("low", "high"), media_in_tool_results=True
    ),
    "gemini-2.5-flash-image*": Family(_caps(images_out=True, reasoning=False), "none", False),
    "gemini-2.0-flash-preview-image*": Family(
        _caps(output=8_192, reasoning=False, native=frozenset(), images_out=True), "none", False
    ),
    # Gemini 3 Pro takes only "low" and "high" thinking levels.
    "gemini-3-pro*": Family(
        _caps(),
        "level",
        True,
        levels=("low", "high"),
        native_with_functions=True,
        media_in_tool_results=True,
    ),
    "gemini-3*": _GEMINI_3,
    "gemini-2.5-pro*": Family(_caps(), "budget_always", False, budget_range=(128, 32_768)),
    "gemini-2.5-flash-lite*": Family(
        _caps(native=_NO_FILE_SEARCH), "budget", False, budget_range=(512, 24_576)
    ),
    "gemini-2.5-*": Family(_caps(), "budget", False, budget_range=(1, 24_576)),
    "gemini-2.0-*": Family(
        _caps(output=8_192, reasoning=False, native=_NO_FILE_SEARCH), "none", False
    ),
    "gemini-1.5-pro*": Family(
        _caps(window=2_097_152, output=8_192, reasoning=False, native=_CODE_ONLY), "none", False
    ),
    "gemini-1.5-*": Family(_caps(output=8_192, reasoning=False, native=_CODE_ONLY), "none", False),
    "gemma-*": Family(
        _caps(
            audio=False,
            window=131_072,
            output=8_192,
            reasoning=False,
            native=frozenset(),
            grounding=False,
        ),
        "none",
        False,
    ),
}

#: Unknown (newer) models are assumed to behave like the latest family.
DEFAULT_FAMILY = _GEMINI_3


def family_for(model: str) -> Family:
    """The :class:`Family` of ``model`` (first matching pattern, else the latest family)."""
    name = model.removeprefix("models/")
    for pattern, family in FAMILIES.items():
        if fnmatchcase(name, pattern):
            return family
    return DEFAULT_FAMILY


# -- embedding models (rt.embed; sent by llmport_gemini.embeddings) -----------------


def _embedder(
    size: int,
    input_tokens: int,
    *,
    per_request: int,
    request_tokens: int | None = None,
    truncation: bool = False,
) -> ModelCapabilities:
    """An embedding model: text in, one vector of up to ``size`` values out; no chat."""
    return ModelCapabilities(
        input_modalities=frozenset({"text"}),
        image_types=frozenset(),
        native_tools=False,
        native_structured_output=False,
        streaming=False,
        parallel_tool_calls=False,
        embeddings=True,
        embedding_dimensions=size,
        flexible_dimensions=True,  # outputDimensionality: any size up to the default
        max_embed_inputs=per_request,
        max_embed_request_tokens=request_tokens,
        max_embed_input_tokens=input_tokens,
        embed_input_types=True,
        embed_truncation=truncation,
    )


#: Requests one ``batchEmbedContents`` call may carry (the Developer API's limit).
MAX_BATCH_EMBED = 100

#: Developer API embedding models (Google's "Embeddings" guide: 3,072 dimensions by
#: default, ``outputDimensionality`` below that; 2,048 input tokens on
#: gemini-embedding-001, 8,192 on gemini-embedding-2). The Developer API has no
#: truncation switch, so an over-long input is refused before the wire.
EMBEDDING_MODELS: dict[str, ModelCapabilities] = {
    "gemini-embedding-001": _embedder(3072, 2048, per_request=MAX_BATCH_EMBED),
    "gemini-embedding-2*": _embedder(3072, 8192, per_request=MAX_BATCH_EMBED),
}

#: Vertex AI ``:predict`` embedding models (Google Cloud's "Get text embeddings":
#: gemini-embedding-001 takes one input per request; text-embedding-005 and
#: text-multilingual-embedding-002 take 250 inputs and 20,000 tokens per request,
#: 768 dimensions). ``autoTruncate`` cuts the end of an over-long input.
VERTEX_EMBEDDING_MODELS: dict[str, ModelCapabilities] = {
    "gemini-embedding-001": _embedder(3072, 2048, per_request=1, truncation=True),
    "text-embedding-005": _embedder(
        768, 2048, per_request=250, request_tokens=20_000, truncation=True
    ),
    "text-multilingual-embedding-002": _embedder(
        768, 2048, per_request=250, request_tokens=20_000, truncation=True
    ),
    # Google Cloud's "Get multimodal embeddings": one text (32 tokens) or one image (BMP,
    # GIF, JPG, PNG; 20 MB base64) per instance, 1408 dimensions (128, 256, 512 asked by
    # parameters.dimension); a text and an image in one instance are two vectors, so one
    # input is one or the other. No task type.
    "multimodalembedding@001": replace(
        _embedder(1408, 32, per_request=1),
        input_modalities=frozenset({"text", "image"}),
        image_types=frozenset({"image/bmp", "image/gif", "image/jpeg", "image/png"}),
        image_urls=False,
        max_image_bytes=20 * 1024 * 1024,
        flexible_dimensions=True,
        embedding_dimension_choices=frozenset({128, 256, 512, 1408}),
        embed_input_types=False,
    ),
}


# -- Imagen (rt.generate_image; sent by llmport_gemini.images) -----------------------------


#: The output sizes of each aspect ratio (Imagen's documented 1K and 2K sizes).
IMAGEN_1K = frozenset({"1024x1024", "896x1280", "1280x896", "768x1408", "1408x768"})
IMAGEN_2K = frozenset({"2048x2048", "1792x2560", "2560x1792", "1536x2816", "2816x1536"})


def _imagen(*, most: int, two_k: bool) -> ModelCapabilities:
    """An Imagen model on Vertex AI: a prompt in, images out of ``:predict``; no chat."""
    images = ImageGeneration(
        max_images=most,
        sizes=IMAGEN_1K | IMAGEN_2K if two_k else IMAGEN_1K,
        formats=frozenset({"png", "jpeg"}),
        max_seed=2_147_483_647,
    )
    return ModelCapabilities(
        input_modalities=frozenset({"text"}),
        image_types=frozenset(),
        native_tools=False,
        native_structured_output=False,
        streaming=False,
        parallel_tool_calls=False,
        images=images,
    )


# The Gemini Developer API registers no Imagen model: google-genai's generate_images (3.x) is
# Vertex AI only ("only supported in ... Agent Platform mode, not in Gemini Developer API
# mode"), so gemini: refuses rt.generate_image and points to gemini-vertex:.
# Source: Vertex AI, "Imagen API": sampleCount 1-4 (Ultra: 1), sampleImageSize 1K or 2K
#   (Fast: 1K), seed (with addWatermark false), outputOptions.mimeType image/png or image/jpeg.
VERTEX_IMAGEN_MODELS: dict[str, ModelCapabilities] = {
    "imagen-4.0-ultra-generate-*": _imagen(most=1, two_k=True),
    "imagen-4.0-fast-generate-*": _imagen(most=4, two_k=False),
    "imagen-4.0-generate-*": _imagen(most=4, two_k=True),
    "imagen-3.0-generate-*": _imagen(most=4, two_k=False),
}
