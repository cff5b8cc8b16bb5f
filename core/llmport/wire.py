"""JSON request bodies serialized once, to ``bytes``, with media spliced in as bytes.

A plugin's converter puts a :class:`Splice` where a media block's base64 (or
data URL) goes; :func:`encode` serializes the rest of the body once (compact
separators, ``ensure_ascii=False``: what the vendor SDKs send) and keeps the
JSON pieces between the splices. :meth:`Body.bytes` joins those pieces with
each block's cached base64 bytes (:meth:`MediaBlock.base64_bytes`), so a
20 MB image exists once encoded, once in the body, and never as a ``str``.

Consumers that need plain JSON (batch files, token counting through an SDK)
take :func:`plain`, which puts the strings in. Imports nothing beyond the
standard library's ``json`` and ``os``: ``import llmport`` stays light.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .types import MediaBlock

__all__ = ["Body", "Splice", "base64_of", "data_url_of", "dumps", "encode", "plain"]


class Splice:
    """Where a media block's base64 goes in a JSON body: one string, ``prefix`` + base64.

    Compares equal to the string it stands for (so a converted body can be
    checked against plain JSON), and to another splice of the same block and
    prefix. Its ``repr`` never shows the bytes.
    """

    __slots__ = ("block", "prefix")

    def __init__(self, block: MediaBlock, prefix: str = "") -> None:
        self.block = block
        self.prefix = prefix

    def text(self) -> str:
        """The string this splice stands for (builds it: for plain JSON, not the wire)."""
        if self.prefix == f"data:{self.block.media_type};base64,":
            return self.block.data_url()
        return self.prefix + self.block.base64()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Splice):
            return other.block is self.block and other.prefix == self.prefix
        if isinstance(other, str):
            return other == self.text()
        return NotImplemented

    def __hash__(self) -> int:
        return hash((id(self.block), self.prefix))

    def __repr__(self) -> str:
        return f"Splice({self.block.describe()}, prefix={self.prefix!r})"


def base64_of(block: MediaBlock) -> Splice:
    """The block's standard base64, as a JSON string."""
    return Splice(block)


def data_url_of(block: MediaBlock) -> Splice:
    """``data:<media_type>;base64,...`` of the block, as a JSON string."""
    return Splice(block, f"data:{block.media_type};base64,")


class Body:
    """A JSON body serialized once: its UTF-8 JSON pieces and the media between them.

    ``pieces`` has one more item than ``media``; the body is ``pieces[0]``,
    ``media[0]``'s base64, ``pieces[1]``, ... Cheap to keep (the media are
    references to blocks); :meth:`bytes` builds the body for one send.
    """

    __slots__ = ("media", "pieces")

    def __init__(self, pieces: list[bytes], media: list[MediaBlock]) -> None:
        self.pieces = pieces
        self.media = media

    def bytes(self) -> bytes:
        """The whole body (one join; no copy at all when it holds no media)."""
        if not self.media:
            return self.pieces[0]
        parts = [self.pieces[0]]
        for block, piece in zip(self.media, self.pieces[1:], strict=True):
            parts.append(block.base64_bytes())
            parts.append(piece)
        return b"".join(parts)

    def __len__(self) -> int:
        """The body's size in bytes (without building it)."""
        size = sum(len(p) for p in self.pieces)
        return size + sum(4 * ((b.size + 2) // 3) for b in self.media)

    def __repr__(self) -> str:
        return f"Body({len(self)} bytes, {len(self.media)} media)"


def encode(body: Any) -> Body:
    """Serialize ``body`` once, as the SDKs would (compact, UTF-8, no NaN), splices kept apart."""
    token = f"llmport-splice-{os.urandom(8).hex()}"
    media: list[MediaBlock] = []

    def default(value: Any) -> Any:
        if isinstance(value, Splice):
            media.append(value.block)
            return value.prefix + token
        return _jsonable(value)

    text = json.dumps(
        body, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=default
    )
    data = text.encode()
    pieces = data.split(token.encode()) if media else [data]
    if len(pieces) != len(media) + 1:  # the token turned up elsewhere: cannot happen by chance
        raise ValueError("a JSON string in the body holds the splice marker")
    return Body(pieces, media)


def dumps(body: Any) -> bytes:
    """``body`` as the UTF-8 JSON bytes sent on the wire, media spliced in as bytes."""
    return encode(body).bytes()


def plain(value: Any) -> Any:
    """``value`` with every :class:`Splice` replaced by its string (for plain-JSON consumers)."""
    if isinstance(value, Splice):
        return value.text()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _jsonable(value: Any) -> Any:
    # What the SDKs' encoders also accept beyond plain JSON types.
    if callable(getattr(value, "isoformat", None)):  # dates and datetimes
        return value.isoformat()
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Iterable) and not isinstance(value, str | bytes | bytearray):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
