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

from llmport.messages.types import ModelCapabilities

__all__ = [
    "ALIASES",
    "DEFAULT_FAMILY",
    "DOCUMENT_TYPES",
    "FAMILIES",
    "IMAGE_TYPES",
    "MAX_IMAGE_BYTES",
    "MAX_REQUEST_BYTES",
    "NATIVE_TEXT_FILES",
    "Family",
    "caps",
    "family_for",
    "vertex_caps",
    "vertex_model_id",
]

#: Anthropic's per-image limit on the Messages API (5 MB each).
MAX_IMAGE_BYTES = 5 * 1024 * 1024
#: Anthropic's limit on a whole Messages API request (32 MB).
MAX_REQUEST_BYTES = 32 * 1024 * 1024
#: Anthropic refuses a request with more than 4 ``cache_control`` breakpoints.
MAX_CACHE_BREAKPOINTS = 4

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
#: Files taken natively as ``document`` blocks (PDF as base64/URL, plain text as a text source).
DOCUMENT_TYPES = frozenset({"application/pdf", "text/plain"})

Thinking = Literal["none", "budget", "adaptive", "both"]
Sampling = Literal["any", "exclusive", "none"]

#: Text-like files sent as a ``document`` with a ``text/plain`` source (``send="native"``;
#: ``"auto"`` picks it for text/plain, and for any of these when citations are asked for).
NATIVE_TEXT_FILES = frozenset(
    {
        "text/plain",
        "text/markdown",
        "text/x-markdown",
        "text/csv",
        "text/tab-separated-values",
        "text/html",
        "text/xml",
        "application/json",
        "application/xml",
        "application/x-yaml",
        "text/yaml",
    }
)

#: Short names for current models the SDK does not mark as deprecated.
ALIASES = {
    "sonnet": "anthropic:claude-sonnet-4-6",
    "haiku": "anthropic:claude-haiku-4-5",
    "opus": "anthropic:claude-opus-4-8",
}

#: Server-tool versions sent for ``NativeTool`` kinds (see docs/providers/anthropic.md).
WEB_SEARCH_TOOL = "web_search_20250305"
WEB_FETCH_TOOL = "web_fetch_20250910"
CODE_EXECUTION_CURRENT = "code_execution_20260120"
CODE_EXECUTION_LEGACY = "code_execution_20250825"


@dataclass(slots=True, frozen=True)
class Family:
    """What llmport knows about one family of Claude models.

    ``thinking``: ``"budget"`` takes ``thinking.budget_tokens`` (Claude 3.7 to
    4.5); ``"both"`` also takes adaptive thinking (Claude 4.6); ``"adaptive"``
    takes only that (Opus 4.7 and later). ``efforts``: the
    ``output_config.effort`` levels the model takes (with or without
    thinking); empty where the model has no effort parameter.
    ``effort_beta``: the beta header effort needs on that model (Opus 4.5).
    ``sampling``: ``"exclusive"`` means temperature and top_p may not be
    combined; ``"none"`` means the model rejects both. ``code_execution``: the
    code execution tool version the model runs (``None``: none).
    """

    caps: ModelCapabilities
    default_max_tokens: int
    thinking: Thinking
    sampling: Sampling
    efforts: tuple[str, ...] = ()
    effort_beta: str | None = None
    code_execution: str | None = None


def _caps(
    *,
    structured: bool,
    pdf: bool = True,
    window: int = 200_000,
    max_output: int,
    reasoning: bool,
    native: frozenset[str] = frozenset(
        {"web_search", "code_execution", "url_context", "tool_search"}
    ),
    editing: bool = True,
) -> ModelCapabilities:
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
        context_window=window,
        max_output_tokens=max_output,
        reasoning=reasoning,
        caching=True,
        max_cache_breakpoints=MAX_CACHE_BREAKPOINTS,
        citations=True,
        native_tool_kinds=native,
        native_text_files=NATIVE_TEXT_FILES,
        count_tokens=True,
        context_editing=editing,
    )


_ALL_EFFORTS = ("low", "medium", "high", "xhigh", "max")
_LATEST = Family(
    _caps(structured=True, window=1_000_000, max_output=128_000, reasoning=True),
    16384,
    "adaptive",
    "none",
    efforts=_ALL_EFFORTS,
    code_execution=CODE_EXECUTION_CURRENT,
)


def _budget(
    *, structured: bool, max_output: int, efforts: tuple[str, ...] = (), beta: str | None = None
) -> Family:
    """Claude 3.7 to 4.5: budget thinking (and effort on Opus 4.5)."""
    return Family(
        _caps(structured=structured, max_output=max_output, reasoning=True),
        16384,
        "budget",
        "exclusive" if structured else "any",
        efforts=efforts,
        effort_beta=beta,
        code_execution=CODE_EXECUTION_LEGACY,
    )


def _claude46(max_output: int) -> Family:
    return Family(
        _caps(structured=True, window=1_000_000, max_output=max_output, reasoning=True),
        16384,
        "both",
        "exclusive",
        efforts=("low", "medium", "high", "max"),
        code_execution=CODE_EXECUTION_CURRENT,
    )


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
    # Claude 4.6: adaptive or budget thinking, effort with or without thinking;
    # temperature or top_p, not both.
    "claude-opus-4-6*": _claude46(128_000),
    "claude-sonnet-4-6*": _claude46(64_000),
    # Claude 4.5 and Opus 4.1: native structured output, budget thinking
    # (Opus 4.5 also takes effort, behind a beta header).
    "claude-opus-4-5*": _budget(
        structured=True,
        max_output=64_000,
        efforts=("low", "medium", "high"),
        beta="effort-2025-11-24",
    ),
    "claude-sonnet-4-5*": _budget(structured=True, max_output=64_000),
    "claude-haiku-4-5*": _budget(structured=True, max_output=64_000),
    "claude-opus-4-1*": _budget(structured=True, max_output=32_000),
    # Claude 4.0 and 3.7: budget thinking, structured output through a forced tool.
    "claude-opus-4-0*": _budget(structured=False, max_output=32_000),
    "claude-opus-4-2025*": _budget(structured=False, max_output=32_000),
    "claude-sonnet-4-0*": _budget(structured=False, max_output=64_000),
    "claude-sonnet-4-2025*": _budget(structured=False, max_output=64_000),
    "claude-3-7-sonnet*": _budget(structured=False, max_output=64_000),
    # Claude 3.5 and 3: no thinking, web search only (3.5); Claude 3 (not 3.5) takes no PDFs.
    "claude-3-5-*": Family(
        _caps(
            structured=False,
            max_output=8192,
            reasoning=False,
            native=frozenset({"web_search"}),
            editing=False,
        ),
        8192,
        "none",
        "any",
    ),
    "claude-3-*": Family(
        _caps(
            structured=False,
            pdf=False,
            max_output=4096,
            reasoning=False,
            native=frozenset(),
            editing=False,
        ),
        4096,
        "none",
        "any",
    ),
}

#: Unknown (newer) models: the latest family's capabilities and request
#: shape (adaptive thinking for an effort), refusing nothing a newer model may take:
#: budget thinking too, every effort level, sampling options (the API decides).
DEFAULT_FAMILY = Family(
    _LATEST.caps,
    _LATEST.default_max_tokens,
    "both",
    "any",
    efforts=_ALL_EFFORTS,
    code_execution=CODE_EXECUTION_CURRENT,
)


def family_for(model: str) -> Family:
    """The :class:`Family` of ``model`` (first matching pattern, else :data:`DEFAULT_FAMILY`)."""
    for pattern, family in FAMILIES.items():
        if fnmatchcase(model, pattern):
            return family
    return DEFAULT_FAMILY


def caps() -> dict[str, ModelCapabilities]:
    """The per-pattern capabilities registered for the ``anthropic:`` prefix."""
    return {pattern: family.caps for pattern, family in FAMILIES.items()}


# -- Claude on Vertex AI ------------------------------------------------------------
# Vertex AI versions Claude ids with "@": claude-sonnet-4-5@20250929 is Anthropic's
# claude-sonnet-4-5-20250929, claude-opus-4@20250514 its claude-opus-4-20250514
# (Google's "Use Claude models" page lists them).

#: Short names for Claude on Vertex AI (ids from Google's "Use Claude models" page).
VERTEX_ALIASES = {
    "vertex-sonnet": "anthropic-vertex:claude-sonnet-4-5@20250929",
    "vertex-haiku": "anthropic-vertex:claude-haiku-4-5@20251001",
    "vertex-opus": "anthropic-vertex:claude-opus-4-5@20251101",
}


def vertex_model_id(model: str) -> str:
    """A Vertex AI Claude id as Anthropic names it: ``@`` read as ``-``."""
    return model.replace("@", "-")


def vertex_caps() -> dict[str, ModelCapabilities]:
    """The per-pattern capabilities of ``anthropic-vertex:``, its patterns in Vertex's form.

    Anthropic's dated-only patterns (``claude-opus-4-2025*``) are written with
    ``@`` (``claude-opus-4@2025*``); the others already match ``name@date``.
    """
    return {
        pattern.replace("-2025*", "@2025*"): family.caps for pattern, family in FAMILIES.items()
    }
