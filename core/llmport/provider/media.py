"""Media checks both ways: what a model takes in, and the media a model answers with.

:func:`check_block` reads the model's capability table (input modalities,
accepted media types, URL support, size limits) and raises
:class:`~llmport.errors.UnsupportedContentError` with the reason before
anything is sent. Providers call it from ``prepare`` for every media block.

:func:`answered_media` reads an image (or audio) a vendor answered with into
a :class:`~llmport.messages.types.MediaBlock`: base64 that does not decode,
or bytes that contradict the type the vendor declared, are a
:class:`~llmport.errors.MalformedResponseError` (never a block that lies).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace
from typing import Literal

from ..errors import UnsupportedContentError
from ..messages.check import canonical_media_type, media_problem, sniff_media_type
from ..messages.types import MediaBlock, ModelCapabilities
from .translate import malformed

__all__ = ["answered_media", "check_block"]

_TO_STANDARD = str.maketrans("-_", "+/")


def answered_media(vendor: str, data: str | bytes, media_type: str | None) -> MediaBlock:
    """The media a model answered with, checked: ``data`` is base64 text or the bytes.

    ``media_type`` is what the vendor declared (``None``: told by the bytes,
    e.g. an OpenAI preview image). Base64 text is kept beside the bytes, so
    sending the block back in history does not encode it again.
    """
    encoded: str | None = None
    if isinstance(data, str):
        # URL-safe base64 made standard; the common standard text is not copied (20 MB images).
        encoded = data.translate(_TO_STANDARD) if "-" in data or "_" in data else data
        raw = _decoded(encoded)
        if raw is None:  # raised here, not in the except: no foreign __context__ (I1)
            raise malformed(vendor, "an answered image's base64 does not decode")
    else:
        raw = data
    if not raw:
        raise malformed(vendor, "an answered image has no bytes")
    sniffed = sniff_media_type(raw)
    declared = canonical_media_type(media_type) if media_type else sniffed
    if declared is None:
        raise malformed(vendor, "an answered image of no known type")
    problem = media_problem(declared, raw, sniffed)
    if problem is not None:
        raise malformed(vendor, f"an answered {declared}: {problem}")
    # The block keeps the vendor's parameters (Gemini speech: audio/L16;codec=pcm;rate=24000).
    declared = media_type or declared
    kind = declared.split("/", 1)[0]
    block_type: Literal["image", "audio", "file"] = (
        "image" if kind == "image" else "audio" if kind == "audio" else "file"
    )
    cached = [encoded] if encoded is not None else []
    return MediaBlock(block_type, declared, data=raw, _b64=cached)


def _decoded(encoded: str) -> bytes | None:
    """Strict base64 of ``encoded`` (None: it does not decode)."""
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None


def check_block(vendor: str, model: str, caps: ModelCapabilities, block: MediaBlock) -> None:
    """Raise UnsupportedContentError if ``caps`` rules ``block`` out.

    Text-like files are not rejected here: plugins inline them by the
    documented rule (:func:`llmport.messages.content.inline_text_file`).
    """
    if block.citations and not caps.citations:
        reason: str | None = "model returns no document citations"
    else:
        if block.type == "file" and block.media_type.startswith("image/"):
            block = _as_kind(block, "image")  # an image sent as a file is checked as an image
        reason = _refusal(caps, block)
    if reason is not None:
        raise UnsupportedContentError(vendor, model, block.describe(), reason)


def _refusal(caps: ModelCapabilities, block: MediaBlock) -> str | None:
    """Why ``caps`` rule ``block`` out (None: accepted), by the kind of content it carries."""
    if block.type == "image":
        return _image_refusal(caps, block)
    if block.type == "audio" or (block.type == "file" and block.media_type.startswith("audio/")):
        return _audio_refusal(caps, block)
    return _file_refusal(caps, block)


def _image_refusal(caps: ModelCapabilities, block: MediaBlock) -> str | None:
    mt = block.media_type
    # Source: Anthropic, "Vision"; OpenAI, "Images and vision"; Gemini API, "Image understanding";
    #   Bedrock Converse API reference, "ImageBlock": the vendor's vision page for each model (the
    #   capability table's input_modalities, image_types, image_urls, max_image_bytes).
    if "image" not in caps.input_modalities:
        return "model takes no images"
    if mt != "image/*" and mt not in caps.image_types:
        return f"image type {mt} not accepted (accepted: {', '.join(sorted(caps.image_types))})"
    if block.url is not None and not caps.image_urls:
        return "image URLs not accepted"
    if caps.max_image_bytes is not None and block.size > caps.max_image_bytes:
        return f"image is {block.size} bytes, over the vendor limit of {caps.max_image_bytes}"
    return None


def _audio_refusal(caps: ModelCapabilities, block: MediaBlock) -> str | None:
    mt = block.media_type
    # Source: OpenAI, "Audio" (input_audio wav/mp3 on audio models); Gemini API, "Audio
    #   understanding": the capability table's audio_types (Anthropic and Converse take no audio).
    if "audio" not in caps.input_modalities:
        return "model takes no audio input"
    if mt not in caps.audio_types:
        return (
            f"audio type {mt} not accepted "
            f"(accepted: {', '.join(sorted(caps.audio_types)) or 'none'})"
        )
    return None


def _file_refusal(caps: ModelCapabilities, block: MediaBlock) -> str | None:
    from ..messages.content import is_text_like

    mt = block.media_type
    # Source: Anthropic, "PDF support"; OpenAI, "File inputs"; Gemini API, "Document understanding";
    #   Bedrock Converse API reference, "DocumentBlock": the formats each takes (the capability
    #   table's file_types, native_text_files).
    if mt in caps.file_types:
        return None
    if is_text_like(mt):
        if block.send == "native" and mt not in caps.native_text_files:
            return (
                f'send="native": {mt} has no native document part here '
                f"(native: {', '.join(sorted(caps.native_text_files)) or 'none'})"
            )
        return None  # inlined as text by the plugin, or its native document part
    return (
        f"files of type {mt} are not accepted "
        f"(native: {', '.join(sorted(caps.file_types)) or 'none'}; "
        "text-like files are inlined)"
    )


def _as_kind(block: MediaBlock, kind: Literal["image", "audio", "file"]) -> MediaBlock:
    return replace(block, type=kind)
