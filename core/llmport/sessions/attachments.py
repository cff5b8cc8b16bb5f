"""A session's media attachments: bytes kept once per SHA-256, given back on read.

A node never holds media bytes. Its stored block is small JSON::

    {"type": "image", "media_type": "image/png", "size": 20971520,
     "sha256": "9f86d0...", "filename": "shot.png"}

and the bytes live beside the rows, once per hash (SQLite: table
``attachments``; PostgreSQL: ``llmport_attachments``). A block sent on
every turn of a loop, or read by every later exec, is written once and
held once: :class:`Attachments` keeps the block it was given (or the one it
loaded) under its hash, and every read of that hash gets that same block.

Reading an attachment checks it before anything is sent anywhere: the
bytes must have the hash they are stored under, the size the node recorded
and a media type they do not contradict, and be at most
:data:`MAX_ATTACHMENT_BYTES`; otherwise an
:class:`~llmport.errors.AttachmentError`. An attachment that is not there
(a row deleted by hand, a store that keeps none) reads as a marked text
placeholder, so the rest of the session can still be used.

URL media carry no bytes: their stored block keeps the URL, redacted.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, runtime_checkable

from ..errors import AttachmentError
from ..messages.check import canonical_media_type, media_problem, sniff_media_type
from ..messages.types import Block, MediaBlock, TextBlock
from ..observe.redaction import redact
from ..patterns import pattern

__all__ = [
    "MAX_ATTACHMENT_BYTES",
    "AttachmentStore",
    "Attachments",
    "media_summary",
]

#: The largest attachment a session gives back (a bigger size, stored or claimed, is refused).
MAX_ATTACHMENT_BYTES = 256 * 1024 * 1024

_HEX64 = pattern(r"[0-9a-f]{64}")
_KINDS = ("image", "audio", "file")


@runtime_checkable
class AttachmentStore(Protocol):
    """What a session store implements to keep media bytes (SQLite and PostgreSQL do).

    A store without these methods keeps no bytes: its sessions read media
    back as placeholders.
    """

    def put_attachment(self, sha256: str, media_type: str, data: bytes) -> None:
        """Store ``data`` under ``sha256`` unless a row for it exists (one row per hash)."""
        ...

    def attachment_size(self, sha256: str) -> int | None:
        """The stored size of the bytes under ``sha256`` (None: no such attachment)."""
        ...

    def attachment_data(self, sha256: str) -> bytes | None:
        """The bytes stored under ``sha256`` (None: no such attachment)."""
        ...


def media_summary(block: MediaBlock) -> dict[str, Any]:
    """A media block's stored form without its bytes: type, media type, size, name, URL."""
    out: dict[str, Any] = {"type": block.type, "media_type": block.media_type, "size": block.size}
    if block.filename:
        out["filename"] = block.filename
    if block.url:
        out["url"] = redact(block.url)  # a signed or keyed URL is never recorded
    return out


class Attachments:
    """The media of one session by hash: what was kept, and what a store holds.

    ``lock`` is the session's (re-entrant) lock: the store's connection is
    used under it, as for every other write. A ``readonly`` session writes
    nothing (its writes are refused when its node is appended).
    """

    __slots__ = ("_blocks", "_lock", "_readonly", "_store")

    def __init__(
        self, store: object | None, lock: threading.RLock, *, readonly: bool = False
    ) -> None:
        # No store (an in-memory session) skips the protocol check, slow for a miss.
        self._store = store if store is not None and isinstance(store, AttachmentStore) else None
        self._lock = lock
        self._readonly = readonly
        self._blocks: dict[str, MediaBlock] = {}

    def keep(self, block: MediaBlock) -> dict[str, Any]:
        """``block``'s stored form; its bytes written to the store once per hash."""
        out = media_summary(block)
        if not block.inline:
            return out
        digest = block.sha256()
        out["sha256"] = digest
        with self._lock:
            if digest not in self._blocks:
                if self._store is not None and not self._readonly:
                    data = block.data
                    assert data is not None  # inline
                    self._store.put_attachment(digest, block.media_type, data)
                self._blocks[digest] = block
        return out

    def block(self, stored: dict[str, Any]) -> Block:
        """The block a stored media form stands for: its bytes back, or a marked placeholder."""
        digest = stored.get("sha256")
        if digest is None:
            return placeholder(stored)
        kind, media_type, size = _checked_form(stored)
        with self._lock:
            known = self._blocks.get(digest)
            if known is None:
                data = self._load(digest, size)
                if data is None:
                    return placeholder(stored, f"attachment sha256:{digest[:12]} is missing")
                known = _verified(kind, media_type, size, digest, data, stored.get("filename"))
                self._blocks[digest] = known
        return known

    def _load(self, digest: str, size: int) -> bytes | None:
        if self._store is None:
            return None
        stored_size = self._store.attachment_size(digest)
        if stored_size is None:
            return None
        if stored_size != size:
            raise AttachmentError(digest, f"the store holds {stored_size} bytes, not {size}")
        return self._store.attachment_data(digest)


def placeholder(stored: dict[str, Any], why: str | None = None) -> TextBlock:
    """The text later readers see for media whose bytes are not given back (and ``why``)."""
    where = stored.get("filename") or stored.get("url") or f"{stored.get('size', 0)} bytes"
    text = f"[{stored.get('type')}: {where} ({stored.get('media_type')})"
    return TextBlock(f"{text}; {why}]" if why else f"{text}]")


def _checked_form(stored: dict[str, Any]) -> tuple[str, str, int]:
    """The kind, media type and size of a stored form; hostile fields are refused typed."""
    digest = stored.get("sha256")
    if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
        raise AttachmentError(str(digest)[:80], "the hash is not 64 lowercase hex digits")
    kind, media_type, size = stored.get("type"), stored.get("media_type"), stored.get("size")
    if kind not in _KINDS:
        raise AttachmentError(digest, f"unknown media kind {str(kind)[:40]!r}")
    if not isinstance(media_type, str) or "/" not in media_type:
        raise AttachmentError(digest, f"media type {str(media_type)[:80]!r} is not a type/subtype")
    if kind != "file" and not media_type.startswith(f"{kind}/"):
        raise AttachmentError(digest, f"an {kind} block cannot be {media_type[:80]}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise AttachmentError(digest, f"size {str(size)[:40]!r} is not a byte count")
    if size > MAX_ATTACHMENT_BYTES:
        raise AttachmentError(digest, f"size {size:,} is over {MAX_ATTACHMENT_BYTES:,} bytes")
    return kind, media_type, size


def _verified(
    kind: str, media_type: str, size: int, digest: str, data: bytes, filename: Any
) -> MediaBlock:
    """A block of ``data`` once its size, hash and media type check out."""
    if len(data) != size:
        raise AttachmentError(digest, f"{len(data)} bytes were read, the node recorded {size}")
    import hashlib  # here, on a read: it loads OpenSSL, ~2 ms of a script's start-up

    if hashlib.sha256(data).hexdigest() != digest:
        raise AttachmentError(digest, "the bytes do not have the hash they are stored under")
    canonical = canonical_media_type(media_type)
    problem = media_problem(canonical, data, sniff_media_type(data))
    if problem is not None:
        raise AttachmentError(digest, f"declared {media_type} but {problem}")
    name = filename if isinstance(filename, str) else None
    return MediaBlock(kind, media_type, data=data, filename=name)  # type: ignore[arg-type]
