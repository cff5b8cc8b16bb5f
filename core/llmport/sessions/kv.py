"""The run context's key-value store: namespaced JSON values (``RunContext.store``).

::

    @tool
    def remember(fact: str, ctx: RunContext[None]) -> str:
        ctx.store.put(("users", "ada"), "facts", {"likes": fact})
        return "noted"

    store.get(("users", "ada"), "facts")          # an Item, or None
    store.search(("users",), filter={"likes": "tea"}, limit=10)
    store.delete(("users", "ada"), "facts")
    get_many(store, ("users", "ada"), ["facts", "prefs"])   # {key: Item} for the keys kept
    put_many(store, ("users", "ada"), {"facts": {...}, "prefs": {...}})

A namespace is a tuple of strings (a string is a one-part namespace);
values are JSON (checked on ``put``). ``search(prefix)`` finds the items
whose namespace starts with ``prefix``; ``filter`` keeps items whose value
(a JSON object) has each given key equal to the given value.

Which store a run uses: ``Runtime(store=...)`` if given; else, inside an
agentic function whose session is stored, a store beside the session (same
SQLite file, own table ``llmport_kv``; same PostgreSQL database with
``llmport-postgres``); else the runtime's own in-memory store. Stores are a
hook family like session stores::

    @hookimpl
    def llmport_kv_stores(register):
        register("postgresql", PostgresKV)        # factory(url) -> Store
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol

from ..errors import OptionError
from ..slotted import dataclass
from .sqlite import sqlite_errors
from .stores import MissingSessionStoreError, split_target, storable

__all__ = [
    "Item",
    "LazyStore",
    "MemoryStore",
    "SqliteKV",
    "Store",
    "get_many",
    "kv_stores",
    "namespace_of",
    "open_kv",
    "put_many",
    "search_limit",
    "store_key",
]

Namespace = tuple[str, ...]
SEPARATOR = "\x1f"
#: Keys one SQLite statement reads: under the 999 host parameters the oldest SQLite
#: builds allow (``SQLITE_MAX_VARIABLE_NUMBER``), with room for the namespace.
SQLITE_KEYS_PER_QUERY = 900


@dataclass(slots=True, frozen=True)
class Item:
    """One stored value and where it is."""

    namespace: Namespace
    key: str
    value: Any
    updated: float


class Store(Protocol):
    """A namespaced JSON key-value store (thread-safe).

    A store may also offer ``get_many(namespace, keys) -> {key: Item}`` and
    ``put_many(namespace, {key: value})``, one round trip for many keys (every
    store here does); :func:`get_many` and :func:`put_many` call them, and
    loop over ``get`` / ``put`` for a store without them.
    """

    def get(self, namespace: Namespace | str, key: str) -> Item | None: ...

    def put(self, namespace: Namespace | str, key: str, value: Any) -> None: ...

    def delete(self, namespace: Namespace | str, key: str) -> None: ...

    def search(
        self,
        namespace_prefix: Namespace | str = (),
        *,
        filter: Mapping[str, Any] | None = None,
        limit: int = 10,
    ) -> list[Item]: ...


def get_many(store: Store, namespace: Namespace | str, keys: Iterable[str]) -> dict[str, Item]:
    """``{key: Item}`` for those of ``keys`` kept in ``namespace`` (absent keys left out).

    One batched read where ``store`` has ``get_many``; else one ``get`` per key.
    """
    batched = getattr(store, "get_many", None)
    if callable(batched):
        found: dict[str, Item] = batched(namespace, keys)
        return found
    items = ((key, store.get(namespace, key)) for key in dict.fromkeys(keys))
    return {key: item for key, item in items if item is not None}


def put_many(store: Store, namespace: Namespace | str, values: Mapping[str, Any]) -> None:
    """Keep every ``{key: value}`` in ``namespace``: one batched write where ``store`` has one."""
    batched = getattr(store, "put_many", None)
    if callable(batched):
        batched(namespace, values)
        return
    for key, value in values.items():
        store.put(namespace, key, value)


def chunks(keys: Iterable[str], size: int) -> Iterator[list[str]]:
    """``keys`` without repeats, ``size`` at a time (a statement's parameter limit)."""
    unique = list(dict.fromkeys(keys))
    for start in range(0, len(unique), size):
        yield unique[start : start + size]


def namespace_of(value: Any) -> Namespace:
    """``value`` as a namespace tuple (a string is one part); OptionError otherwise."""
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, (tuple, list)) or not all(
        isinstance(p, str) and p and SEPARATOR not in p for p in value
    ):
        raise OptionError(f"a namespace is a tuple of non-empty strings, got {value!r}")
    return tuple(value)


def store_key(key: Any) -> str:
    """``key`` if it is a store key (a non-empty string); OptionError otherwise."""
    if not isinstance(key, str) or not key:
        raise OptionError(f"a store key is a non-empty string, got {key!r}")
    return key


def encode(value: Any) -> str:
    """The JSON text of ``value`` (OptionError if it is not JSON)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"store values must be JSON: {exc}") from None
    return storable(text)


def search_limit(limit: Any) -> int:
    """``limit`` if it is a search limit (an integer >= 1); OptionError otherwise."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise OptionError(f"limit must be an integer >= 1, got {limit!r}")
    return limit


def matches(value: Any, filter: Mapping[str, Any] | None) -> bool:
    """Whether ``value`` (a JSON object) has every ``filter`` key equal to its value."""
    if not filter:
        return True
    return isinstance(value, dict) and all(k in value and value[k] == v for k, v in filter.items())


def select(items: Iterable[Item], filter: Mapping[str, Any] | None, limit: int) -> list[Item]:
    """The first ``limit`` of ``items`` whose value matches ``filter``."""
    out: list[Item] = []
    for item in items:
        if matches(item.value, filter):
            out.append(item)
            if len(out) >= limit:
                break
    return out


class MemoryStore:
    """The default store: in memory, one per Runtime (lost when the process ends)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: dict[tuple[Namespace, str], tuple[str, float]] = {}

    def get(self, namespace: Namespace | str, key: str) -> Item | None:
        ns, k = namespace_of(namespace), store_key(key)
        with self._lock:
            found = self._data.get((ns, k))
        return Item(ns, k, json.loads(found[0]), found[1]) if found is not None else None

    def get_many(self, namespace: Namespace | str, keys: Iterable[str]) -> dict[str, Item]:
        """``{key: Item}`` for the ``keys`` kept (one lock for all)."""
        ns, wanted = namespace_of(namespace), [store_key(k) for k in keys]
        with self._lock:
            found = {k: row for k in wanted if (row := self._data.get((ns, k))) is not None}
        return {k: Item(ns, k, json.loads(text), at) for k, (text, at) in found.items()}

    def put(self, namespace: Namespace | str, key: str, value: Any) -> None:
        ns, k, text = namespace_of(namespace), store_key(key), encode(value)
        with self._lock:
            self._data[(ns, k)] = (text, time.time())

    def put_many(self, namespace: Namespace | str, values: Mapping[str, Any]) -> None:
        """Keep every ``{key: value}`` (all encoded before any is kept)."""
        ns, now = namespace_of(namespace), time.time()
        rows = {(ns, store_key(k)): (encode(v), now) for k, v in values.items()}
        with self._lock:
            self._data.update(rows)

    def delete(self, namespace: Namespace | str, key: str) -> None:
        ns, k = namespace_of(namespace), store_key(key)
        with self._lock:
            self._data.pop((ns, k), None)

    def search(
        self,
        namespace_prefix: Namespace | str = (),
        *,
        filter: Mapping[str, Any] | None = None,
        limit: int = 10,
    ) -> list[Item]:
        prefix = namespace_of(namespace_prefix) if namespace_prefix else ()
        limit = search_limit(limit)
        with self._lock:
            rows = sorted(
                ((ns, k, v) for (ns, k), v in self._data.items() if ns[: len(prefix)] == prefix),
                key=lambda r: -r[2][1],
            )
        items = (Item(ns, k, json.loads(text), at) for ns, k, (text, at) in rows)
        return select(items, filter, limit)


_KV_SCHEMA = """
CREATE TABLE IF NOT EXISTS llmport_kv(
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (namespace, key)
);
"""


class SqliteKV:
    """A store in a SQLite file (the session's file: own table ``llmport_kv``)."""

    def __init__(self, path: str) -> None:
        import sqlite3

        self.path = path
        self._lock = threading.Lock()
        with sqlite_errors(path):
            self._db = sqlite3.connect(
                path, check_same_thread=False, timeout=10, isolation_level=None
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_KV_SCHEMA)

    def get(self, namespace: Namespace | str, key: str) -> Item | None:
        ns, k = namespace_of(namespace), store_key(key)
        with self._lock, sqlite_errors(self.path):
            row = self._db.execute(
                "SELECT value, updated FROM llmport_kv WHERE namespace = ? AND key = ?",
                (SEPARATOR.join(ns), k),
            ).fetchone()
        return Item(ns, k, json.loads(row[0]), row[1]) if row is not None else None

    def get_many(self, namespace: Namespace | str, keys: Iterable[str]) -> dict[str, Item]:
        """``{key: Item}`` for the ``keys`` kept: one ``IN (...)`` query per
        :data:`SQLITE_KEYS_PER_QUERY` keys."""
        ns, wanted = namespace_of(namespace), [store_key(k) for k in keys]
        joined, found = SEPARATOR.join(ns), dict[str, tuple[str, float]]()
        with self._lock, sqlite_errors(self.path):
            for chunk in chunks(wanted, SQLITE_KEYS_PER_QUERY):
                marks = ", ".join("?" * len(chunk))
                found.update(
                    (k, (v, at))
                    for k, v, at in self._db.execute(
                        "SELECT key, value, updated FROM llmport_kv "
                        f"WHERE namespace = ? AND key IN ({marks})",
                        (joined, *chunk),
                    )
                )
        return {k: Item(ns, k, json.loads(v), at) for k, (v, at) in found.items()}

    def put(self, namespace: Namespace | str, key: str, value: Any) -> None:
        self.put_many(namespace, {key: value})

    def put_many(self, namespace: Namespace | str, values: Mapping[str, Any]) -> None:
        """Keep every ``{key: value}`` in one transaction (one fsync, not one per key)."""
        ns, now = namespace_of(namespace), time.time()
        joined = SEPARATOR.join(ns)
        rows = [(joined, store_key(k), encode(v), now) for k, v in values.items()]
        with self._lock, sqlite_errors(self.path):
            self._db.execute("BEGIN")  # autocommit connection: one explicit transaction
            with self._db:  # committed, or rolled back on an error
                self._db.executemany(
                    "INSERT INTO llmport_kv(namespace, key, value, updated) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(namespace, key) DO UPDATE SET value = excluded.value, "
                    "updated = excluded.updated",
                    rows,
                )

    def delete(self, namespace: Namespace | str, key: str) -> None:
        ns, k = namespace_of(namespace), store_key(key)
        with self._lock, sqlite_errors(self.path):
            self._db.execute(
                "DELETE FROM llmport_kv WHERE namespace = ? AND key = ?", (SEPARATOR.join(ns), k)
            )

    def search(
        self,
        namespace_prefix: Namespace | str = (),
        *,
        filter: Mapping[str, Any] | None = None,
        limit: int = 10,
    ) -> list[Item]:
        prefix = namespace_of(namespace_prefix) if namespace_prefix else ()
        limit = search_limit(limit)
        joined = SEPARATOR.join(prefix)
        sql = "SELECT namespace, key, value, updated FROM llmport_kv"
        args: tuple[Any, ...] = ()
        if prefix:
            sql += " WHERE namespace = ? OR substr(namespace, 1, ?) = ?"
            args = (joined, len(joined) + 1, joined + SEPARATOR)
        sql += " ORDER BY updated DESC"
        with self._lock, sqlite_errors(self.path):
            rows = self._db.execute(sql, args).fetchall()
        items = (Item(tuple(ns.split(SEPARATOR)), k, json.loads(v), at) for ns, k, v, at in rows)
        return select(items, filter, limit)

    def close(self) -> None:
        with self._lock, sqlite_errors(self.path):
            self._db.close()


class LazyStore:
    """A store opened on first use (a run in a stored session that never uses it opens nothing)."""

    __slots__ = ("_open", "_store")

    def __init__(self, open: Callable[[], Store]) -> None:
        self._open = open
        self._store: Store | None = None

    def _get(self) -> Store:
        if self._store is None:
            self._store = self._open()
        return self._store

    def get(self, namespace: Namespace | str, key: str) -> Item | None:
        return self._get().get(namespace, key)

    def put(self, namespace: Namespace | str, key: str, value: Any) -> None:
        self._get().put(namespace, key, value)

    def get_many(self, namespace: Namespace | str, keys: Iterable[str]) -> dict[str, Item]:
        return get_many(self._get(), namespace, keys)

    def put_many(self, namespace: Namespace | str, values: Mapping[str, Any]) -> None:
        put_many(self._get(), namespace, values)

    def delete(self, namespace: Namespace | str, key: str) -> None:
        self._get().delete(namespace, key)

    def search(
        self,
        namespace_prefix: Namespace | str = (),
        *,
        filter: Mapping[str, Any] | None = None,
        limit: int = 10,
    ) -> list[Item]:
        return self._get().search(namespace_prefix, filter=filter, limit=limit)


KVFactory = Callable[[str], Store]


def kv_stores() -> dict[str, KVFactory]:
    """scheme -> factory, from every ``llmport_kv_stores`` hook (cached per process)."""
    from ..plugins.host import url_schemes

    return url_schemes("llmport_kv_stores")


def open_kv(target: str) -> Store:
    """The store beside the session database ``target`` (a path or a URL)."""
    scheme, rest = split_target(target)
    if scheme == "sqlite":
        return SqliteKV(rest)
    factory = kv_stores().get(scheme)
    if factory is None:
        raise MissingSessionStoreError(f"no key-value store for {scheme}:// URLs is installed")
    return factory(target)
