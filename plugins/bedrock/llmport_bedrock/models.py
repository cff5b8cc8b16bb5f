"""Bedrock's model facts: capability tables and model families, in one place.

Per-model facts live in :data:`FAMILIES` (from AWS's "Supported models and
model features" table for the Converse API): what llmport checks before any
request, plus what Converse needs per family (which ``toolChoice`` forms the
model takes, whether it takes a system prompt, S3 links, tool-result status).
Model ids may carry a cross-region prefix (``us.``, ``eu.``, ``apac.``,
``global.``) or be ARNs, so every pattern starts with ``*``.

Imported by the entry point (:mod:`llmport_bedrock.plugin`, for the
registration) and by the provider and the request conversion; it imports
neither of them, and no SDK.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fnmatch import fnmatchcase

from llmport.messages.types import ImageGeneration, ModelCapabilities

#: Converse takes at most 4 ``cachePoint`` checkpoints in one request.
MAX_CACHE_BREAKPOINTS = 4
#: Converse's per-image limit (3.75 MB) and per-document limit (4.5 MB).
MAX_IMAGE_BYTES = 3_750_000
MAX_DOCUMENT_BYTES = 4_500_000

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

#: Media type -> Converse ``document.format``.
DOCUMENT_FORMATS: dict[str, str] = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
}

ALL_CHOICES = frozenset({"auto", "any", "tool"})
AUTO_ONLY = frozenset({"auto"})


#: Text-like media types Converse takes as its own ``document`` part (txt, md, csv, html).
NATIVE_TEXT_FILES = frozenset({"text/plain", "text/markdown", "text/csv", "text/html"})

#: Reasoning styles: how ``Request.reasoning`` becomes ``additionalModelRequestFields``.
#: ``"claude"``: ``thinking: {type: enabled, budget_tokens}``; ``"nova"``:
#: ``reasoningConfig: {type: enabled, maxReasoningEffort}``.
CLAUDE_THINKING = "claude"
NOVA_REASONING = "nova"


@dataclass(slots=True, frozen=True)
class Family:
    """What llmport knows about one family of Bedrock models.

    ``tool_choices``: the Converse ``toolChoice`` forms the model takes
    (``auto`` always; ``any`` = llmport's "required"; ``tool`` = a named tool).
    ``system_prompt``: the model takes a ``system`` field. ``s3``: media may
    be given as ``s3://`` locations. ``tool_result_status``: the model takes
    ``toolResult.status`` (others get errors as text prefixed ``Error:``) and
    media inside tool results. ``reasoning``: the reasoning style
    (:data:`CLAUDE_THINKING`, :data:`NOVA_REASONING` or None). ``cache_ttl``:
    ``cachePoint.ttl`` (``5m`` / ``1h``) is documented for the model.
    """

    caps: ModelCapabilities
    tool_choices: frozenset[str] = ALL_CHOICES
    system_prompt: bool = True
    s3: bool = False
    tool_result_status: bool = True
    top_k: bool = False
    reasoning: str | None = None
    cache_ttl: bool = False


def _caps(
    *,
    vision: bool = True,
    documents: bool = True,
    tools: bool = True,
    structured: bool = False,
    window: int | None = None,
    max_out: int | None = None,
    reasoning: bool = False,
    caching: bool = False,
    citations: bool = False,
    native: frozenset[str] = frozenset(),
    count_tokens: bool = False,
) -> ModelCapabilities:
    return ModelCapabilities(
        input_modalities=frozenset({"text", "file", *(("image",) if vision else ())}),
        file_types=frozenset(DOCUMENT_FORMATS) if documents else frozenset(),
        image_types=IMAGE_TYPES if vision else frozenset(),
        audio_types=frozenset(),  # llmport sends no audio to Converse (see docs)
        native_tools=tools,
        native_structured_output=structured,
        streaming=True,
        parallel_tool_calls=False,  # Converse has no switch for it (see docs)
        tool_choice_none=True,  # "none" is sent as a request without tools (see docs)
        image_urls=False,  # only s3:// locations, checked by the plugin
        max_image_bytes=MAX_IMAGE_BYTES,
        context_window=window,
        max_output_tokens=max_out,
        reasoning=reasoning,
        caching=caching,
        max_cache_breakpoints=MAX_CACHE_BREAKPOINTS if caching else None,
        citations=citations,
        native_tool_kinds=native,
        native_text_files=NATIVE_TEXT_FILES if documents else frozenset(),
        count_tokens=count_tokens,
    )


def _s3_caps(caps: ModelCapabilities) -> ModelCapabilities:
    """``caps`` that let URL blocks through to the plugin, which accepts only ``s3://``."""
    return replace(caps, image_urls=True)


def _claude(
    max_out: int,
    *,
    structured: bool = False,
    thinking: bool = True,
    ttl: bool = False,
    vision: bool = True,
    caching: bool = True,
    citations: bool = True,
    count_tokens: bool = True,
) -> Family:
    caps = _caps(
        vision=vision,
        structured=structured,
        window=200_000,
        max_out=max_out,
        reasoning=thinking,
        caching=caching,
        citations=citations,
        count_tokens=count_tokens,
    )
    return Family(caps, top_k=True, reasoning=CLAUDE_THINKING if thinking else None, cache_ttl=ttl)


def _nova(
    window: int,
    max_out: int,
    *,
    vision: bool = True,
    documents: bool = True,
    reasoning: bool = False,
    native: frozenset[str] = frozenset(),
) -> Family:
    caps = _caps(
        vision=vision,
        documents=documents,
        window=window,
        max_out=max_out,
        reasoning=reasoning,
        caching=True,
        native=native,
    )
    return Family(
        _s3_caps(caps) if vision else caps,
        s3=vision,
        reasoning=NOVA_REASONING if reasoning else None,
    )


#: First matching pattern wins. Windows and output limits from AWS's model cards;
#: caching, citations, CountTokens and reasoning per AWS's feature tables (see docs).
FAMILIES: dict[str, Family] = {
    # Claude with native JSON-schema output (outputConfig.textFormat), thinking, 1h cache TTL.
    "*anthropic.claude-sonnet-4-5*": _claude(64_000, structured=True, ttl=True),
    "*anthropic.claude-haiku-4-5*": _claude(64_000, structured=True, ttl=True),
    "*anthropic.claude-opus-4-5*": _claude(64_000, structured=True, ttl=True),
    "*anthropic.claude-opus-4-6*": _claude(128_000, structured=True, ttl=True),
    "*anthropic.claude-sonnet-4-6*": _claude(64_000, structured=True, ttl=True),
    "*anthropic.claude-opus-4-7*": _claude(128_000, structured=True, ttl=True),
    # Other Claude 3 / 4: structured output through a forced tool.
    "*anthropic.claude-3-7-sonnet*": _claude(64_000),
    "*anthropic.claude-3-5-haiku*": _claude(8_192, thinking=False, vision=False, citations=False),
    "*anthropic.claude-3-5-sonnet*": _claude(8_192, thinking=False, caching=False),
    "*anthropic.claude-3*": _claude(
        4_096, thinking=False, caching=False, citations=False, count_tokens=False
    ),
    "*anthropic.claude-sonnet-4*": _claude(64_000),
    "*anthropic.claude-opus-4*": _claude(32_000),
    "*anthropic.claude-haiku-4*": _claude(64_000),
    # Claude 2 and Instant: no tools, no images.
    "*anthropic.claude-v2*": Family(_caps(vision=False, tools=False), AUTO_ONLY, top_k=True),
    "*anthropic.claude-instant*": Family(_caps(vision=False, tools=False), AUTO_ONLY, top_k=True),
    # A Claude the table does not know yet (a FALLBACKS rule): the newest Claude's facts.
    "*anthropic.claude-*": _claude(128_000, structured=True, ttl=True),
    # Nova 2: reasoningConfig and the nova_code_interpreter system tool.
    "*amazon.nova-2-lite*": _nova(
        1_000_000, 65_536, reasoning=True, native=frozenset({"code_execution"})
    ),
    "*amazon.nova-micro*": _nova(128_000, 10_000, vision=False, documents=False),
    "*amazon.nova-lite*": _nova(300_000, 10_000),
    "*amazon.nova-pro*": _nova(300_000, 10_000),
    "*amazon.nova-premier*": _nova(1_000_000, 32_000),
    "*amazon.nova*": Family(_s3_caps(_caps()), s3=True),
    "*amazon.titan*": Family(
        _caps(vision=False, tools=False), AUTO_ONLY, system_prompt=False, tool_result_status=False
    ),
    "*meta.llama3-2-11b*": Family(_caps(), AUTO_ONLY, tool_result_status=False),
    "*meta.llama3-2-90b*": Family(_caps(), AUTO_ONLY, tool_result_status=False),
    "*meta.llama4*": Family(_caps(), AUTO_ONLY, tool_result_status=False),
    "*meta.llama*": Family(_caps(vision=False), AUTO_ONLY, tool_result_status=False),
    "*mistral.mistral-large*": Family(
        _caps(vision=False), frozenset({"auto", "any"}), tool_result_status=False
    ),
    "*mistral.pixtral*": Family(_caps(), frozenset({"auto", "any"}), tool_result_status=False),
    "*mistral.mistral-7b*": Family(
        _caps(vision=False, tools=False), AUTO_ONLY, system_prompt=False, tool_result_status=False
    ),
    "*mistral.mixtral*": Family(
        _caps(vision=False, tools=False), AUTO_ONLY, system_prompt=False, tool_result_status=False
    ),
    "*cohere.command-r*": Family(_caps(vision=False), AUTO_ONLY, tool_result_status=False),
    "*cohere.command*": Family(
        _caps(vision=False, tools=False), AUTO_ONLY, system_prompt=False, tool_result_status=False
    ),
    "*ai21.jamba*": Family(_caps(vision=False), AUTO_ONLY, tool_result_status=False),
    "*deepseek.*": Family(_caps(vision=False, tools=False), AUTO_ONLY, tool_result_status=False),
}

#: Family rules for ids the table does not list: a model they match is sent with
#: the family's facts and warned about once (``llmport.UnknownModelWarning``).
FALLBACKS = frozenset({"*anthropic.claude-*", "*amazon.nova*"})

#: Unknown (newer) models: text, images, documents, every tool choice. If the
#: model cannot take something, Bedrock answers with a ValidationException.
DEFAULT_FAMILY = Family(_caps())


def family_for(model: str) -> Family:
    """The :class:`Family` of ``model`` (first matching pattern, else :data:`DEFAULT_FAMILY`)."""
    for pattern, family in FAMILIES.items():
        if fnmatchcase(model, pattern):
            return family
    return DEFAULT_FAMILY


ALIASES = {
    "bedrock-sonnet": "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "bedrock-haiku": "bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0",
    "nova-pro": "bedrock:us.amazon.nova-pro-v1:0",
    "nova-micro": "bedrock:us.amazon.nova-micro-v1:0",
    "nova-2-lite": "bedrock:us.amazon.nova-2-lite-v1:0",
}

#: Cross-region inference-profile prefixes (CountTokens takes the base model id).
PROFILE_PREFIXES = ("us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global.")


def base_model_id(model: str) -> str:
    """``us.anthropic.claude-...`` -> ``anthropic.claude-...`` (ARNs and base ids unchanged)."""
    for prefix in PROFILE_PREFIXES:
        if model.startswith(prefix):
            return model[len(prefix) :]
    return model


def names_no_model(model: str) -> bool:
    """An ARN none of whose text names a model llmport knows.

    Application inference profiles
    (``arn:aws:bedrock:us-east-1:123:application-inference-profile/abc``),
    provisioned and custom models hide the model behind an id; foundation
    model and system-defined inference profile ARNs
    (``...:inference-profile/us.anthropic.claude-...``) name it, and match
    the ``*``-prefixed patterns of :data:`FAMILIES`.
    """
    return model.startswith("arn:") and family_for(model) is DEFAULT_FAMILY


# -- embedding models (rt.embed; InvokeModel bodies in llmport_bedrock.embeddings) ---


def _embedder(
    size: int,
    input_tokens: int,
    *,
    per_request: int = 1,
    choices: frozenset[int] | None = None,
    input_types: bool = False,
    truncation: bool = False,
) -> ModelCapabilities:
    """An embedding model: text in, one vector of ``size`` values (or a chosen one) out."""
    return ModelCapabilities(
        input_modalities=frozenset({"text"}),
        image_types=frozenset(),
        native_tools=False,
        native_structured_output=False,
        streaming=False,
        parallel_tool_calls=False,
        embeddings=True,
        embedding_dimensions=size,
        embedding_dimension_choices=choices,
        flexible_dimensions=choices is not None,
        max_embed_inputs=per_request,
        max_embed_input_tokens=input_tokens,
        embed_input_types=input_types,
        embed_truncation=truncation,
    )


def _with_images(
    caps: ModelCapabilities, types: frozenset[str], *, max_bytes: int | None, blocks: int | None
) -> ModelCapabilities:
    """``caps`` embedding images of ``types`` too (inline bytes only), ``blocks`` fused at most."""
    return replace(
        caps,
        input_modalities=frozenset({"text", "image"}),
        image_types=types,
        image_urls=False,
        max_image_bytes=max_bytes,
        max_embed_blocks=blocks,
    )


#: Texts one Cohere Embed InvokeModel call may carry (AWS's Cohere Embed parameters page).
COHERE_MAX_TEXTS = 96

#: Embedding models, from AWS's model parameter pages (Titan Text Embeddings, Cohere
#: Embed v3/v4, Nova multimodal embeddings). Titan and Nova embed one text per
#: call, so the core splits a list into one call per text and sends them
#: concurrently; Cohere takes 96 texts per call. Titan has no input type and no
#: truncation switch (an over-long text is refused before the wire). The patterns
#: start with ``*`` for regional ids (``us.cohere.embed-v4:0``) and ARNs.
EMBEDDING_MODELS: dict[str, ModelCapabilities] = {
    "*amazon.titan-embed-text-v1*": _embedder(1536, 8192),
    "*amazon.titan-embed-text-v2*": _embedder(1024, 8192, choices=frozenset({256, 512, 1024})),
    "*cohere.embed-english-v3*": _embedder(
        1024, 512, per_request=COHERE_MAX_TEXTS, input_types=True, truncation=True
    ),
    "*cohere.embed-multilingual-v3*": _embedder(
        1024, 512, per_request=COHERE_MAX_TEXTS, input_types=True, truncation=True
    ),
    "*cohere.embed-v4*": _embedder(
        1536,
        128_000,
        per_request=COHERE_MAX_TEXTS,
        choices=frozenset({256, 512, 1024, 1536}),
        input_types=True,
        truncation=True,
    ),
    "*amazon.nova-2-multimodal-embed*": _with_images(
        _embedder(
            3072, 8192, choices=frozenset({256, 384, 1024, 3072}), input_types=True, truncation=True
        ),
        # Amazon Nova User Guide, "Complete embeddings request and response schema": one
        # text or one image (png, jpeg, gif, webp) per SINGLE_EMBEDDING call.
        frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"}),
        max_bytes=None,
        blocks=1,
    ),
    # Amazon Bedrock User Guide, "Amazon Titan Multimodal Embeddings G1 model": 256 text
    # tokens, PNG or JPEG images of 25 MB at most, a text and an image averaged in one call.
    "*amazon.titan-embed-image-v1*": _with_images(
        _embedder(1024, 256, choices=frozenset({256, 384, 1024})),
        frozenset({"image/png", "image/jpeg"}),
        max_bytes=25 * 1024 * 1024,
        blocks=2,
    ),
}


# -- image models (rt.generate_image; InvokeModel bodies in llmport_bedrock.images) ------


def _painter(images: ImageGeneration) -> ModelCapabilities:
    """An image model: a prompt in, base64 images out of InvokeModel; no chat."""
    return ModelCapabilities(
        input_modalities=frozenset({"text"}),
        image_types=frozenset(),
        native_tools=False,
        native_structured_output=False,
        streaming=False,
        images=images,
    )


# Source: Amazon Bedrock User Guide, "Amazon Titan Image Generator G1 models": numberOfImages
#   1-5; the listed width x height pairs; quality standard/premium; seed 0-2,147,483,646;
#   text 1-512 characters; PNG out.
TITAN_IMAGE_SIZES = frozenset(
    {
        "1024x1024", "768x768", "512x512", "768x1152", "384x576", "1152x768", "576x384",
        "768x1280", "384x640", "1280x768", "640x384", "896x1152", "448x576", "1152x896",
        "576x448", "768x1408", "384x704", "1408x768", "704x384", "640x1408", "320x704",
        "1408x640", "704x320", "1152x640", "1173x640",
    }
)  # fmt: skip
# Source: Amazon Nova User Guide, "Image generation access and usage": (Nova Canvas)
#   numberOfImages 1-5; width and height 320-4096, each divisible by 16, aspect ratio
#   between 1:4 and 4:1, at most 4,194,304 pixels; quality standard/premium; seed
#   0-858,993,459; text 1-1024 characters; PNG out.
IMAGE_MODELS: dict[str, ModelCapabilities] = {
    "*amazon.nova-canvas*": _painter(
        ImageGeneration(
            max_images=5,
            min_side=320,
            max_side=4096,
            side_step=16,
            max_pixels=4_194_304,
            max_ratio=4.0,
            qualities=frozenset({"medium", "high"}),
            max_seed=858_993_459,
            max_prompt_chars=1024,
        )
    ),
    "*amazon.titan-image-generator*": _painter(
        ImageGeneration(
            max_images=5,
            sizes=TITAN_IMAGE_SIZES,
            qualities=frozenset({"medium", "high"}),
            max_seed=2_147_483_646,
            max_prompt_chars=512,
        )
    ),
}
EMBEDDING_MODELS["*cohere.embed-v4*"] = _with_images(
    EMBEDDING_MODELS["*cohere.embed-v4*"],
    # Amazon Bedrock User Guide, "Cohere Embed v4" (images as data URLs, interleaved with
    # text in inputs[].content); 5 MB an image, Cohere's own limit for image embeddings.
    frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"}),
    max_bytes=5 * 1024 * 1024,
    blocks=None,
)
