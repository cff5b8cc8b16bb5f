"""``Runtime(embed_cache=...)``: vectors kept by content on the key-value store.

A vector is kept under the namespace ``("llmport-embed", provider, model,
dimensions, input type)`` and the key ``sha256(input)``, so re-embedding a
corpus where 1% changed sends only that 1%: the same text with another
model, size or input type is another entry. The value is the vector's
little-endian float32 bytes as base64 (the stores keep JSON).

``embed_cache`` is a :class:`~llmport.sessions.kv.Store` (``MemoryStore``,
``SqliteKV``, ``llmport-postgres``'s or ``llmport-redis``'s store), a path or URL opened with
:func:`~llmport.sessions.kv.open_kv` (a path is SQLite; ``postgresql://``
and ``redis://`` through the plugins that register a key-value store for them), or ``True``
for SQLite in :data:`DEFAULT_PATH` of the working directory.

The cache never fails a call: a store that cannot be read is a miss and one
that cannot be written loses only the entry (both are logged), so an answer
already received is always returned.
"""

from __future__ import annotations

import binascii
import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import OptionError
from ..messages.embeddings import EmbedInput
from ..observe.logs import logger
from ..sessions.kv import MemoryStore, SqliteKV, Store, get_many, open_kv, put_many

__all__ = ["DEFAULT_PATH", "NAMESPACE", "EmbedCache", "input_hash"]

#: Where ``embed_cache=True`` keeps its vectors (SQLite, in the working directory).
DEFAULT_PATH = "llmport-embeddings.sqlite"
#: The first part of every namespace the cache writes.
NAMESPACE = "llmport-embed"


def input_hash(item: EmbedInput) -> str:
    """The key of one input: the SHA-256 of its UTF-8 text (hex); of content blocks,
    :meth:`~llmport.messages.embeddings.EmbedContent.digest` (each media block by the
    hash of its bytes and its media type)."""
    if isinstance(item, str):
        return hashlib.sha256(item.encode("utf-8", "surrogatepass")).hexdigest()
    return item.digest()


class EmbedCache:
    """Vectors by (provider, model, dimensions, input type, input hash) on one store."""

    __slots__ = ("store",)

    def __init__(self, store: Store) -> None:
        self.store = store

    @classmethod
    def of(cls, value: Any) -> EmbedCache | None:
        """The cache ``Runtime(embed_cache=value)`` asks for (None: no cache)."""
        if value is None or value is False:
            return None
        if value is True:
            return cls(SqliteKV(DEFAULT_PATH))
        if isinstance(value, EmbedCache):
            return value
        if isinstance(value, str):
            return cls(open_kv(value))
        if all(callable(getattr(value, name, None)) for name in ("get", "put")):
            return cls(value)
        raise OptionError(
            "embed_cache must be True, a path or URL, or a key-value store "
            f"(llmport.sessions.kv), got {type(value).__name__}"
        )

    @classmethod
    def memory(cls) -> EmbedCache:
        """A cache in this process only (tests, short scripts)."""
        return cls(MemoryStore())

    @staticmethod
    def namespace(
        provider: str, model: str, dimensions: int | None, input_type: str | None
    ) -> tuple[str, ...]:
        return (NAMESPACE, provider, model, str(dimensions or "default"), input_type or "none")

    def lookup(self, namespace: tuple[str, ...], hashes: Sequence[str]) -> dict[int, bytes]:
        """``{index: vector bytes}`` for the inputs already kept; a store failure is a miss.

        One batched read for the whole call (:func:`~llmport.sessions.kv.get_many`):
        a 10,000-input corpus is one query on SQLite's or PostgreSQL's store, one
        pipeline on Redis, not 10,000 round trips.
        """
        try:
            items = get_many(self.store, namespace, hashes)
        except Exception:  # the cache never fails a call (module docstring)
            logger().warning("embedding cache: the store could not be read; embedding instead")
            return {}
        vectors = {key: _vector(item.value) for key, item in items.items()}
        return {
            index: vector
            for index, key in enumerate(hashes)
            if (vector := vectors.get(key)) is not None
        }

    def keep(
        self, namespace: tuple[str, ...], rows: Iterable[tuple[str, bytes | bytearray]]
    ) -> None:
        """Keep each ``(hash, vector bytes)`` in one batched write; a failure is logged only."""
        values = {key: {"f32": binascii.b2a_base64(v, newline=False).decode()} for key, v in rows}
        try:
            put_many(self.store, namespace, values)
        except Exception:  # the answer is already in hand: never lost to the cache
            logger().warning("embedding cache: the store could not be written; vectors not kept")


def _vector(value: Any) -> bytes | None:
    """The float32 bytes of a kept value (None: not one of ours, or damaged)."""
    raw = value.get("f32") if isinstance(value, dict) else None
    if not isinstance(raw, str):
        return None
    try:
        vector = binascii.a2b_base64(raw)
    except (binascii.Error, ValueError):
        return None
    return vector if vector and len(vector) % 4 == 0 else None
