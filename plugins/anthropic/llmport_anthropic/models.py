"""What llmport knows about each Claude model: capabilities and family rules.

:data:`FAMILIES` maps model-name patterns to a :class:`Family`: the
capabilities llmport checks before any request, plus what the Messages API
needs per family (default ``max_tokens``, which thinking form, which
sampling options). The plugin entry point registers these capabilities;
the provider and the request conversion read the family rules. No SDK here.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from llmport.types import ModelCapabilities

__all__ = [
    "ALIASES",
    "DEFAULT_FAMILY",
    "DOCUMENT_TYPES",
    "FAMILIES",
    "IMAGE_TYPES",
    "MAX_IMAGE_BYTES",
    "MAX_REQUEST_BYTES",
    "Family",
    "caps",
    "family_for",
]

#: Anthropic's per-image limit on the Messages API (5 MB each).
MAX_IMAGE_BYTES = 5 * 1024 * 1024
#: Anthropic's limit on a whole Messages API request (32 MB).
MAX_REQUEST_BYTES = 32 * 1024 * 1024

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
#: Files taken natively as ``document`` blocks (PDF as base64/URL, plain text as a text source).
DOCUMENT_TYPES = frozenset({"application/pdf", "text/plain"})

Thinking = Literal["none", "budget", "adaptive", "both"]
Sampling = Literal["any", "exclusive", "none"]

#: Short names for current models the SDK does not mark as deprecated.
ALIASES = {
    "sonnet": "anthropic:claude-sonnet-4-6",
    "haiku": "anthropic:claude-haiku-4-5",
    "opus": "anthropic:claude-opus-4-8",
}


@dataclass(slots=True, frozen=True)
class Family:
    """What llmport knows about one family of Claude models.

    ``thinking``: ``"budget"`` takes ``thinking.budget_tokens`` (Claude 3.7 to
    4.5); ``"both"`` also takes adaptive thinking with ``output_config.effort``
    (Claude 4.6); ``"adaptive"`` takes only that (Opus 4.7 and later).
    ``sampling``: ``"exclusive"`` means temperature and top_p may not be
    combined; ``"none"`` means the model rejects both.
    """

    caps: ModelCapabilities
    default_max_tokens: int
    thinking: Thinking
    sampling: Sampling


def _caps(*, structured: bool, pdf: bool = True) -> ModelCapabilities:
    return ModelCapabilities(
        input_modalities=frozenset({"text", "image", "file"}),
        file_types=DOCUMENT_TYPES if pdf else frozenset({"text/plain"}),
        image_types=IMAGE_TYPES,
        audio_types=frozenset(),  # the Messages API has no audio input
        native_tools=True,
        native_structured_output=structured,
        streaming=True,
        parallel_tool_calls=True,
        tool_choice_none=True,
        image_urls=True,
        max_image_bytes=MAX_IMAGE_BYTES,
        max_request_bytes=MAX_REQUEST_BYTES,
    )


_LATEST = Family(_caps(structured=True), 16384, "adaptive", "none")

#: First matching pattern wins (``fnmatch``, so dated ids match too).
FAMILIES: dict[str, Family] = {
    # Opus 4.7+, Mythos, Fable and generation 5: adaptive thinking only, no sampling options.
    "claude-opus-4-7*": _LATEST,
    "claude-opus-4-8*": _LATEST,
    "claude-mythos-*": _LATEST,
    "claude-fable-*": _LATEST,
    "claude-opus-5*": _LATEST,
    "claude-sonnet-5*": _LATEST,
    "claude-haiku-5*": _LATEST,
    # Claude 4.6: adaptive or budget thinking; temperature or top_p, not both.
    "claude-opus-4-6*": Family(_caps(structured=True), 16384, "both", "exclusive"),
    "claude-sonnet-4-6*": Family(_caps(structured=True), 16384, "both", "exclusive"),
    # Claude 4.5 and Opus 4.1: native structured output, budget thinking.
    "claude-opus-4-5*": Family(_caps(structured=True), 16384, "budget", "exclusive"),
    "claude-sonnet-4-5*": Family(_caps(structured=True), 16384, "budget", "exclusive"),
    "claude-haiku-4-5*": Family(_caps(structured=True), 16384, "budget", "exclusive"),
    "claude-opus-4-1*": Family(_caps(structured=True), 16384, "budget", "exclusive"),
    # Claude 4.0 and 3.7: budget thinking, structured output through a forced tool.
    "claude-opus-4-0*": Family(_caps(structured=False), 16384, "budget", "any"),
    "claude-opus-4-2025*": Family(_caps(structured=False), 16384, "budget", "any"),
    "claude-sonnet-4-0*": Family(_caps(structured=False), 16384, "budget", "any"),
    "claude-sonnet-4-2025*": Family(_caps(structured=False), 16384, "budget", "any"),
    "claude-3-7-sonnet*": Family(_caps(structured=False), 16384, "budget", "any"),
    # Claude 3.5 and 3: no thinking; Claude 3 (not 3.5) takes no PDFs.
    "claude-3-5-*": Family(_caps(structured=False), 8192, "none", "any"),
    "claude-3-*": Family(_caps(structured=False, pdf=False), 4096, "none", "any"),
}

#: Unknown (newer) models are assumed to behave like the latest family.
DEFAULT_FAMILY = _LATEST


def family_for(model: str) -> Family:
    """The :class:`Family` of ``model`` (first matching pattern, else the latest family)."""
    for pattern, family in FAMILIES.items():
        if fnmatchcase(model, pattern):
            return family
    return DEFAULT_FAMILY


def caps() -> dict[str, ModelCapabilities]:
    """The per-pattern capabilities registered for the ``anthropic:`` prefix."""
    return {pattern: family.caps for pattern, family in FAMILIES.items()}
