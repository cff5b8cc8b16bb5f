"""MCP tool results as neutral llmport content.

Every MCP content item becomes a :class:`~llmport.messages.types.TextBlock` or a
:class:`~llmport.messages.types.MediaBlock`, and a line of text for the model:

* text → the text;
* image / audio → a ``MediaBlock`` (bytes decoded from base64) and, in the
  text, ``[image image/png, 1234 bytes]``;
* an embedded resource → its text (``[resource URI]`` then the text), or a
  ``MediaBlock`` for a blob;
* a resource link → ``[resource link URI (name, media type)]``;
* ``structuredContent`` → its JSON text, when the content carries no text
  (a server that returns structured content should also send it as text, as
  the MCP specification asks; then that text is what the model reads).

The text is returned as an :class:`MCPOutput`, a ``str`` that also carries
the blocks (``.blocks``) and the structured content (``.structured``), so no
content is lost even where only text goes back to the model today.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any

from llmport.messages.types import Block, MediaBlock, TextBlock
from llmport.observe.redaction import redact, redact_data

__all__ = ["MCPOutput", "convert_content", "convert_result"]


class MCPOutput(str):
    """The text the model reads, carrying the neutral blocks it was made from.

    ``blocks`` holds every content item as a ``TextBlock`` / ``MediaBlock``
    (media bytes included); ``structured`` the tool's ``structuredContent``
    (or ``None``); ``is_error`` whether the server flagged the result.
    """

    blocks: tuple[Block, ...]
    structured: Any
    is_error: bool

    def __new__(
        cls,
        text: str,
        blocks: Sequence[Block] = (),
        structured: Any = None,
        is_error: bool = False,
    ) -> MCPOutput:
        made = super().__new__(cls, text)
        made.blocks = tuple(blocks)
        made.structured = structured
        made.is_error = is_error
        return made


def _media_kind(media_type: str) -> Any:
    major = media_type.split("/", 1)[0]
    return major if major in ("image", "audio") else "file"


def _decode(data: str, what: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"the server sent {what} whose data is not valid base64") from exc


def _filename(uri: str) -> str | None:
    tail = uri.rstrip("/").rsplit("/", 1)[-1]
    return tail or None


def convert_content(item: Any) -> tuple[str, Block]:
    """One MCP content item -> (text for the model, neutral block)."""
    kind = getattr(item, "type", None)
    if kind == "text":
        return item.text, TextBlock(item.text)
    if kind in ("image", "audio"):
        data = _decode(item.data, f"an {kind}" if kind == "image" else "audio")
        block = MediaBlock(kind, item.mime_type, data=data)
        return f"[{kind} {item.mime_type}, {len(data)} bytes]", block
    if kind == "resource":
        res = item.resource
        uri = str(res.uri)
        if hasattr(res, "text"):
            text = f"[resource {uri}]\n{res.text}"
            return text, TextBlock(text)
        media_type = res.mime_type or "application/octet-stream"
        data = _decode(res.blob, f"resource {uri}")
        block = MediaBlock(_media_kind(media_type), media_type, data=data, filename=_filename(uri))
        return f"[resource {uri}: {block.type} {media_type}, {len(data)} bytes]", block
    if kind == "resource_link":
        details = ", ".join(str(x) for x in (item.name, item.mime_type) if x)
        text = f"[resource link {item.uri}" + (f" ({details})" if details else "") + "]"
        if item.description:
            text += f": {item.description}"
        return text, TextBlock(text)
    # A content type this SDK version does not know: keep it, as JSON.
    dump = item.model_dump(mode="json", by_alias=True) if hasattr(item, "model_dump") else item
    text = json.dumps(dump, ensure_ascii=False, default=str)
    return text, TextBlock(text)


def convert_result(result: Any) -> MCPOutput:
    """A ``CallToolResult`` -> :class:`MCPOutput` (text plus blocks), redacted.

    A server may echo a secret it was given (its ``env``, a header): every
    text and the structured content pass the redactor here, the one way in.
    """
    texts: list[str] = []
    blocks: list[Block] = []
    has_text = False
    for item in result.content:
        text, block = convert_content(item)
        text = redact(text)
        if isinstance(block, TextBlock):
            has_text = True
            block = TextBlock(text)
        texts.append(text)
        blocks.append(block)
    structured = redact_data(result.structured_content)
    if structured is not None and not has_text:
        text = json.dumps(structured, ensure_ascii=False, default=str)
        texts.insert(0, text)
        blocks.insert(0, TextBlock(text))
    return MCPOutput("\n".join(texts), blocks, structured, bool(result.is_error))
