"""The key-value store in Redis: ``RunContext.store`` and ``Runtime(embed_cache=...)``.

    rt = Runtime(embed_cache="redis://localhost:6379/0")   # vectors kept by content
    rt = Runtime(store=RedisKV.from_url("redis://localhost:6379/0"))

Each item is a Redis hash (``value``: the JSON text, ``updated``: seconds)
under ``{prefix}{member}``, where the member is the JSON of ``[namespace,
key]``; a sorted set ``{prefix}index`` holds every member by its ``updated``
time, so :meth:`RedisKV.search` walks the newest first, as the SQLite and
PostgreSQL stores do. A put or delete changes both in one transaction.

Redis down: a :class:`~llmport.errors.SessionStoreUnavailable` naming it
within ``?timeout=SECONDS`` (default 4), never a redis-py exception (the
embedding cache turns that into a miss, so a call never fails for it).

URL: any ``redis://``, ``rediss://`` or ``unix://`` URL redis-py takes, plus
``prefix=`` (default ``llmport:kv:``) and ``timeout=``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from llmport.errors import ConfigError, SessionStoreUnavailable, redact
from llmport.sessions.kv import (
    Item,
    Namespace,
    encode,
    namespace_of,
    search_limit,
    select,
    store_key,
)

from .connection import DEFAULT_TIMEOUT, bounded_client, service, split_url

__all__ = ["RedisKV"]

T = TypeVar("T")


class RedisKV:
    """A :class:`llmport.sessions.kv.Store` in Redis (thread-safe: one pooled client)."""

    def __init__(
        self, url: str, *, prefix: str = "llmport:kv:", timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        if not timeout > 0:
            raise ConfigError(f"RedisKV timeout must be > 0 seconds, got {timeout!r}")
        self.url = url
        self.prefix = prefix
        self.timeout = timeout
        self.service = service(url)
        self._client = bounded_client(url, timeout)

    @classmethod
    def from_url(cls, url: str) -> RedisKV:
        """``redis://host:6379/0?prefix=...&timeout=...``: ours leave the URL."""
        clean, ours = split_url(url, ("prefix", "timeout"))
        try:
            timeout = float(ours.get("timeout", DEFAULT_TIMEOUT))
        except ValueError:
            raise ConfigError(f"{service(url)}: timeout= must be seconds") from None
        return cls(clean, prefix=ours.get("prefix", "llmport:kv:"), timeout=timeout)

    def __repr__(self) -> str:
        return f"RedisKV({self.service!r}, prefix={self.prefix!r})"

    # -- the store ------------------------------------------------------------------------

    def get(self, namespace: Namespace | str, key: str) -> Item | None:
        ns, member = _member(namespace, key)
        value, updated = self._run(lambda r: r.hmget(self.prefix + member, "value", "updated"))
        if value is None:
            return None
        return Item(ns, key, json.loads(value), float(updated or 0))

    def get_many(self, namespace: Namespace | str, keys: Iterable[str]) -> dict[str, Item]:
        """``{key: Item}`` for the ``keys`` kept: one pipeline (one round trip)."""
        ns = namespace_of(namespace)
        members = {key: _member(ns, key)[1] for key in keys}
        if not members:
            return {}

        def read(r: Any) -> Any:
            pipe = r.pipeline(transaction=False)
            for member in members.values():
                pipe.hmget(self.prefix + member, "value", "updated")
            return pipe.execute()

        found = zip(members, self._run(read), strict=True)
        return {
            key: Item(ns, key, json.loads(value), float(updated or 0))
            for key, (value, updated) in found
            if value is not None
        }

    def put(self, namespace: Namespace | str, key: str, value: Any) -> None:
        self.put_many(namespace, {key: value})

    def put_many(self, namespace: Namespace | str, values: Mapping[str, Any]) -> None:
        """Keep every ``{key: value}``: one transaction (hashes and index), one round trip."""
        ns, now = namespace_of(namespace), time.time()
        rows = [(_member(ns, key)[1], encode(value)) for key, value in values.items()]
        if not rows:
            return

        def write(r: Any) -> Any:
            pipe = r.pipeline(transaction=True)
            for member, text in rows:
                pipe.hset(self.prefix + member, mapping={"value": text, "updated": repr(now)})
            pipe.zadd(self.prefix + "index", {member: now for member, _ in rows})
            return pipe.execute()

        self._run(write)

    def delete(self, namespace: Namespace | str, key: str) -> None:
        _, member = _member(namespace, key)

        def remove(r: Any) -> Any:
            pipe = r.pipeline(transaction=True)
            pipe.delete(self.prefix + member)
            pipe.zrem(self.prefix + "index", member)
            return pipe.execute()

        self._run(remove)

    def search(
        self,
        namespace_prefix: Namespace | str = (),
        *,
        filter: Mapping[str, Any] | None = None,
        limit: int = 10,
    ) -> list[Item]:
        prefix = namespace_of(namespace_prefix) if namespace_prefix else ()
        limit = search_limit(limit)
        members = self._run(lambda r: r.zrevrange(self.prefix + "index", 0, -1))
        return select(self._items(members, prefix), filter, limit)

    def _items(self, members: list[bytes], prefix: Namespace) -> Any:
        """The items of ``members`` (newest first) whose namespace starts with ``prefix``."""
        for raw in members:
            parts, key = json.loads(raw)
            ns = tuple(parts)
            if ns[: len(prefix)] != prefix:
                continue
            item = self.get(ns, key)
            if item is not None:  # deleted since the index was read
                yield item

    def close(self) -> None:
        """Close the client's connections."""
        self._client.close()

    def _run(self, operation: Callable[[Any], T]) -> T:
        """``operation(client)``; whatever Redis or the network raise is typed."""
        import redis

        try:
            return operation(self._client)
        except (redis.RedisError, OSError) as exc:
            detail = redact(f"{type(exc).__name__}: {exc}")
        raise SessionStoreUnavailable(self.service, detail)  # outside the handler: nothing chained


def _member(namespace: Namespace | str, key: str) -> tuple[Namespace, str]:
    """The namespace checked, and the index member of ``(namespace, key)``."""
    ns = namespace_of(namespace)
    return ns, json.dumps([list(ns), store_key(key)], ensure_ascii=False, separators=(",", ":"))
