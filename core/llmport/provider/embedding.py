"""The embedding half of the provider contract: checks and defaults.

A provider embeds in one of two styles, as it chats:

* **prepare/send**: :meth:`~llmport.provider.contract.Provider.prepare_embed`
  checks one :class:`~llmport.messages.embeddings.EmbedRequest` against the
  model's capabilities (:func:`check_embed`) and builds the vendor body once
  (no I/O); :meth:`~llmport.provider.contract.Provider.send_embed` /
  ``asend_embed`` send it (a retry resends the same :class:`PreparedEmbed`).
* **plain**: a plugin writes only ``_embed(request)`` and
  ``_async_embed(request)``; the default ``prepare_embed`` only checks and the
  default ``send_embed`` / ``asend_embed`` call them.

A provider whose model does not embed refuses with
:class:`~llmport.errors.UnsupportedFeatureError` (feature :data:`EMBEDDINGS`)
before any request. Splitting, concurrency, retries, caching and joining are
the core's (:mod:`llmport.engine.embed`): a plugin converts one request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

from ..errors import ContentError, UnsupportedContentError, UnsupportedFeatureError
from ..messages.embeddings import EmbedContent, EmbedInput, EmbedRequest
from ..messages.estimate import block_tokens, text_tokens
from ..messages.types import MediaBlock, ModelCapabilities, TextBlock
from ..slotted import dataclass
from .media import check_block

__all__ = [
    "EMBEDDINGS",
    "MAX_EMBED_INPUT_CHARS",
    "Embedder",
    "PreparedEmbed",
    "check_embed",
    "check_embed_inputs",
    "embeds",
    "input_tokens",
    "no_embeddings",
]

#: The feature of the :class:`UnsupportedFeatureError` a provider without embeddings raises.
EMBEDDINGS = "embeddings"

#: The longest input llmport sends to any embedding model, whatever ``truncate=`` says:
#: no vendor embeds more than ~32k tokens of one input (Voyage AI's limit, the largest),
#: so a text this long is a mistake (a whole file read by accident), not a document.
MAX_EMBED_INPUT_CHARS = 1_000_000
#: The largest media block llmport reads for an embedding (each vendor's own limit, lower,
#: is checked against the model's ``max_image_bytes``): Titan Multimodal's 25 MB is the largest.
MAX_EMBED_MEDIA_BYTES = 25 * 1024 * 1024


class Embedder(Protocol):
    """What the checks read of a provider (:class:`~llmport.provider.contract.Provider` is one)."""

    name: str
    embeddings_hint: str

    @property
    def info(self) -> Any: ...

    @property
    def implements_embed(self) -> bool: ...

    def capabilities(self, model: str) -> ModelCapabilities: ...


@dataclass(slots=True)
class PreparedEmbed:
    """An embed request checked and converted once; every attempt resends it.

    ``payload`` is what the plugin sends (the JSON body or SDK arguments);
    ``caps`` the model's capabilities the check used.
    """

    request: EmbedRequest
    payload: Any = None
    caps: ModelCapabilities | None = None


def embeds(provider: Embedder, model: str) -> bool:
    """True if ``provider`` can embed with ``model``.

    The model table says so (``ModelCapabilities.embeddings``); a provider
    registered without a model table (a third-party plugin) embeds when its
    class implements ``_embed`` or ``send_embed``.
    """
    if provider.capabilities(model).embeddings:
        return True
    info = provider.info
    return provider.implements_embed and (info is None or not info.models)


def no_embeddings(provider: Embedder, model: str) -> UnsupportedFeatureError:
    """The typed refusal of a provider/model that does not embed (names where to go)."""
    hint = provider.embeddings_hint or "it is not an embedding model"
    return UnsupportedFeatureError(provider.name, model, EMBEDDINGS, hint)


def check_embed(provider: Embedder, request: EmbedRequest) -> EmbedRequest:
    """Raise typed input errors for what ``request``'s model cannot take; the request to send.

    Refuses a model that does not embed, ``dimensions=`` where the size is
    fixed or not offered, more inputs than one request may carry, and an
    input over the model's token limit when ``truncate`` is None (naming its
    index and estimated tokens). ``input_type`` is dropped where the vendor
    has none, and ``truncate`` where the vendor cannot cut (the check above
    has made sure no input needs it).
    """
    model = request.model
    if not embeds(provider, model):
        raise no_embeddings(provider, model)
    caps = provider.capabilities(model)
    check_embed_inputs(request.inputs)
    if request.has_media:
        _check_media(provider.name, model, caps, request.inputs)
    _check_dimensions(provider.name, model, caps, request.dimensions)
    _check_count(provider.name, model, caps, len(request.inputs))
    if request.truncate is None or not caps.embed_truncation:
        _check_lengths(provider.name, model, caps, request.inputs)
    if request.input_type is not None and not caps.embed_input_types:
        request = replace(request, input_type=None)
    if request.truncate is not None and not caps.embed_truncation:
        request = replace(request, truncate=None)
    return request


def _check_media(
    vendor: str, model: str, caps: ModelCapabilities, inputs: tuple[EmbedInput, ...]
) -> None:
    """Typed refusals of content a model cannot embed: media on a text model (naming it),
    a type or size it does not take, more blocks fused or media per request than it takes."""
    media = 0
    for item in inputs:
        if isinstance(item, str):
            continue
        # A model table's embedding model says it embeds images; a chat model's modalities
        # (a plugin embedding through a plain _embed) say nothing of its embeddings.
        if not caps.embeddings or "image" not in caps.input_modalities:
            block = item.blocks[0]
            raise UnsupportedContentError(
                vendor,
                model,
                block.describe() if isinstance(block, MediaBlock) else "content blocks",
                "it embeds text only",
            )
        limit = caps.max_embed_blocks
        if limit is not None and len(item.blocks) > limit:
            raise UnsupportedContentError(
                vendor, model, f"{len(item.blocks)} blocks in one input", f"at most {limit}"
            )
        for block in item.media:
            check_block(vendor, model, caps, block)
        media += len(item.media)
    most = caps.max_embed_media
    if most is not None and media > most:
        raise UnsupportedFeatureError(
            vendor, model, f"{media} images in one request", f"at most {most} per request"
        )


def check_embed_inputs(inputs: Any) -> tuple[EmbedInput, ...]:
    """The inputs as texts and :class:`EmbedContent`; a typed :class:`ContentError` otherwise.

    An input is a string; or, for a model that embeds media, a media block (a dict
    as ``exec``'s content takes it, ``{"type": "image", "path": ...}``, or a loaded
    :class:`~llmport.messages.types.MediaBlock`), or a list of strings and blocks
    embedded as one vector. Each block is loaded and its bytes checked against its
    media type (the chat content checks) here, before any request. Refuses an empty
    list, an item of another type (bytes, None, a number), an empty or blank string, a
    text over :data:`MAX_EMBED_INPUT_CHARS` and media over :data:`MAX_EMBED_MEDIA_BYTES`,
    each naming its index. Whether the model takes media is :func:`check_embed`'s.
    """
    if isinstance(inputs, (str, EmbedContent, MediaBlock, Mapping)):
        inputs = (inputs,)
    elif isinstance(inputs, (bytes, bytearray, memoryview)) or not _is_sequence(inputs):
        raise ContentError(
            0, f"embed inputs must be a string or a list of strings, got {type(inputs).__name__}"
        )
    if not inputs:
        raise ContentError(0, "embed inputs are empty: give at least one string")
    return tuple(_embed_input(index, item) for index, item in enumerate(inputs))


def _embed_input(index: int, item: Any) -> EmbedInput:
    if isinstance(item, str):
        _check_text(index, item)
        return item
    if isinstance(item, EmbedContent):
        return item
    parts = item if _is_sequence(item) else (item,)
    if not parts or not all(isinstance(p, (str, Mapping, TextBlock, MediaBlock)) for p in parts):
        raise ContentError(
            index, f"embed inputs must be strings or content blocks, got {_kind(item)}"
        )
    blocks = tuple(_embed_block(index, part) for part in parts)
    return EmbedContent(blocks)


def _embed_block(index: int, part: Any) -> TextBlock | MediaBlock:
    """One block of an input, loaded and checked (its bytes against its media type)."""
    from ..messages.content import load_block

    if isinstance(part, str):
        _check_text(index, part)
        return TextBlock(part)
    block = load_block(part, index, max_bytes=MAX_EMBED_MEDIA_BYTES)
    if isinstance(block, TextBlock):
        _check_text(index, block.text)
        return block
    if not isinstance(block, MediaBlock):
        raise ContentError(index, f"a {block.type} block has no embedding")
    if block.size > MAX_EMBED_MEDIA_BYTES:
        raise ContentError(
            index,
            f"{block.describe()} is over the {MAX_EMBED_MEDIA_BYTES:,} bytes llmport embeds",
        )
    return block


def _check_text(index: int, text: str) -> None:
    if not text.strip():
        raise ContentError(index, "an empty string has no embedding")
    if len(text) > MAX_EMBED_INPUT_CHARS:
        raise ContentError(
            index,
            f"a text of {len(text):,} characters is over the {MAX_EMBED_INPUT_CHARS:,} "
            "llmport embeds (no vendor embeds that much of one input)",
        )


def input_tokens(item: EmbedInput) -> int:
    """The estimated tokens of one input: its text, and each media block by its size."""
    if isinstance(item, str):
        return text_tokens(item)
    return sum(block_tokens(block) for block in item.blocks)


def _kind(value: Any) -> str:
    """What an input that is neither text nor content blocks is."""
    return type(value).__name__


def _is_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def _check_dimensions(vendor: str, model: str, caps: ModelCapabilities, dims: int | None) -> None:
    if dims is None:
        return
    # Source: each vendor's embedding page; OpenAI API reference, "Create embeddings" (dimensions:
    #   text-embedding-3 and later only): the capability table's flexible_dimensions and
    #   embedding_dimension_choices.
    if not caps.flexible_dimensions:
        size = (
            f" (it always answers {caps.embedding_dimensions})" if caps.embedding_dimensions else ""
        )
        raise UnsupportedFeatureError(vendor, model, "dimensions=", f"the size is fixed{size}")
    choices = caps.embedding_dimension_choices
    if choices is not None and dims not in choices:
        offered = ", ".join(str(n) for n in sorted(choices))
        raise UnsupportedFeatureError(vendor, model, f"dimensions={dims}", f"offered: {offered}")
    top = caps.embedding_dimensions
    if choices is None and top is not None and dims > top:
        raise UnsupportedFeatureError(vendor, model, f"dimensions={dims}", f"at most {top}")


def _check_count(vendor: str, model: str, caps: ModelCapabilities, count: int) -> None:
    limit = caps.max_embed_inputs
    if limit is not None and count > limit:
        raise UnsupportedFeatureError(
            vendor, model, f"{count} inputs in one request", f"at most {limit} per request"
        )


def _check_lengths(
    vendor: str, model: str, caps: ModelCapabilities, inputs: tuple[EmbedInput, ...]
) -> None:
    limit = caps.max_embed_input_tokens
    if limit is None:
        return
    for index, item in enumerate(inputs):
        texts = (item,) if isinstance(item, str) else item.texts  # media: the vendor's to size
        tokens = sum(map(text_tokens, texts))
        if tokens > limit:
            raise ContentError(
                index,
                f"~{tokens:,} tokens (estimated) is over {vendor}:{model}'s {limit:,} per input; "
                'pass truncate="end" (or "start") to let the vendor cut it'
                if caps.embed_truncation
                else f"~{tokens:,} tokens (estimated) is over {vendor}:{model}'s {limit:,} per "
                "input, and the vendor cannot cut it: shorten or split it",
            )
