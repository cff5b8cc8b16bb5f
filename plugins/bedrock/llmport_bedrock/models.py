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

from llmport.types import ModelCapabilities

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


@dataclass(slots=True, frozen=True)
class Family:
    """What llmport knows about one family of Bedrock models.

    ``tool_choices``: the Converse ``toolChoice`` forms the model takes
    (``auto`` always; ``any`` = llmport's "required"; ``tool`` = a named tool).
    ``system_prompt``: the model takes a ``system`` field. ``s3``: media may
    be given as ``s3://`` locations. ``tool_result_status``: the model takes
    ``toolResult.status`` (others get errors as text prefixed ``Error:``).
    """

    caps: ModelCapabilities
    tool_choices: frozenset[str] = ALL_CHOICES
    system_prompt: bool = True
    s3: bool = False
    tool_result_status: bool = True
    top_k: bool = False


def _caps(
    *,
    vision: bool = True,
    documents: bool = True,
    tools: bool = True,
    structured: bool = False,
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
    )


def _s3_caps(caps: ModelCapabilities) -> ModelCapabilities:
    """``caps`` that let URL blocks through to the plugin, which accepts only ``s3://``."""
    return replace(caps, image_urls=True)


_CLAUDE_NATIVE = Family(_caps(structured=True), top_k=True)
_CLAUDE = Family(_caps(), top_k=True)
_NOVA = Family(_s3_caps(_caps()), s3=True)

#: First matching pattern wins.
FAMILIES: dict[str, Family] = {
    # Claude with native JSON-schema output (outputConfig.textFormat).
    "*anthropic.claude-sonnet-4-5*": _CLAUDE_NATIVE,
    "*anthropic.claude-haiku-4-5*": _CLAUDE_NATIVE,
    "*anthropic.claude-opus-4-5*": _CLAUDE_NATIVE,
    "*anthropic.claude-opus-4-6*": _CLAUDE_NATIVE,
    "*anthropic.claude-sonnet-4-6*": _CLAUDE_NATIVE,
    "*anthropic.claude-opus-4-7*": _CLAUDE_NATIVE,
    # Other Claude 3 / 4: structured output through a forced tool.
    "*anthropic.claude-3-5-haiku*": Family(_caps(vision=False), top_k=True),
    "*anthropic.claude-3*": _CLAUDE,
    "*anthropic.claude-sonnet-4*": _CLAUDE,
    "*anthropic.claude-opus-4*": _CLAUDE,
    "*anthropic.claude-haiku-4*": _CLAUDE,
    # Claude 2 and Instant: no tools, no images.
    "*anthropic.claude*": Family(_caps(vision=False, tools=False), AUTO_ONLY, top_k=True),
    "*amazon.nova-micro*": Family(_caps(vision=False, documents=False)),
    "*amazon.nova*": _NOVA,
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
}
