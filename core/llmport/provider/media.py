"""Media refusal checks: whether a model takes an image, audio or file block.

:func:`check_block` reads the model's capability table (input modalities,
accepted media types, URL support, size limits) and raises
:class:`~llmport.errors.UnsupportedContentError` with the reason before
anything is sent. Providers call it from ``prepare`` for every media block.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from ..errors import UnsupportedContentError
from ..messages.types import MediaBlock, ModelCapabilities

__all__ = ["check_block"]


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
    # Source: the capability table (input_modalities, image_types, image_urls, max_image_bytes): the
    #   vendor's vision page for each model (Anthropic "Vision", OpenAI "Images and vision", Gemini
    #   "Image understanding", Bedrock "ImageBlock").
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
    # Source: the capability table (audio_types): OpenAI "Audio" (input_audio wav/mp3 on audio
    #   models), Gemini "Audio understanding"; Anthropic and Converse take no audio.
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
    # Source: the capability table (file_types, native_text_files): Anthropic "PDF support", OpenAI
    #   "File inputs", Gemini "Document understanding", Converse "DocumentBlock" formats.
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
