"""The PostgreSQL session store.

Four tables, created on first use (under an advisory lock, so many workers
starting at once do not race):

* ``llmport_sessions(id, created, next_seq, ord)``: one row per session;
  ``next_seq`` is the session's counter.
* ``llmport_nodes``: one row per node, INSERTed when it starts. Its
  sequence number comes from the counter in the same statement::

      WITH s AS (UPDATE llmport_sessions SET next_seq = next_seq + 1
                 WHERE id = $1 RETURNING next_seq)
      INSERT INTO llmport_nodes (...) SELECT $1, s.next_seq, ... FROM s

  The UPDATE locks the session's counter row until the statement commits,
  so concurrent writers of one session are serialised for one short
  statement each, never collide, and leave no gaps (a failed INSERT rolls
  its increment back). Other sessions are not blocked. A node can only be
  written through its session's counter row, so no node lacks its session.
* ``llmport_node_ends``: a node's completion is a second row, INSERTed once
  (its primary key refuses a second completion) and only if its node is
  stored (the INSERT selects from the node's row). The two rules above take
  the place of foreign keys: a foreign key check locks the row it refers to
  (a WAL record and a dirtied page per write, inside the counter lock when
  it is the session row); without them, 8 processes running these
  statements into one session wrote about a fifth more nodes per second.
  Tables made by earlier versions keep their foreign keys and work the
  same. Nothing is ever updated or deleted in either table (triggers
  refuse it): the store is append-only in the strict sense, a role with
  INSERT and SELECT only can run it, and a worker killed mid-run leaves
  every committed row intact (its running nodes simply have no end row).
* ``llmport_attachments(sha256, media_type, size, data)``: media bytes,
  one row per SHA-256 whatever the number of nodes and sessions that name
  them (``ON CONFLICT DO NOTHING``); nodes hold the hash
  (:mod:`llmport.sessions.attachments`). Append-only like the others.

Every statement runs in autocommit mode on a connection from a
``psycopg_pool.ConnectionPool`` shared per process and URL, through the one
cursor each connection keeps (:mod:`llmport_postgres.connection`). As with the
SQLite store, ``durable=False`` (the default) does not wait for the WAL
flush at commit (``synchronous_commit=off``: nothing is lost when a worker
or a server process crashes, a power loss of the database host may drop
the last fraction of a second); ``Session(url, durable=True)`` waits. JSON columns
use ``json`` (not ``jsonb``) so argument order survives a reload, which
keeps rendered context byte-identical after reopening.

Outages: a database that does not answer is a
:class:`llmport.SessionStoreUnavailable` naming it within ``timeout``
seconds (``?timeout=SECONDS`` in the URL, default 5), never a driver
exception. The bound is one deadline per operation: waiting for a pooled
connection and the retry on a fresh one both come out of it (the driver's
import on first use in a process is not waiting for the database, and is
done before the clock starts). After a server restart the pool's dead
connections are replaced and the statement runs once more on a fresh one,
so a restart mid-run loses nothing and usually shows nothing.

A connection can also drop after the server committed a statement but
before its reply arrived: the retry must not store the node twice. Each
node INSERT carries a key made by the writer (``write_key``, unique per
session); a retry finds the row its first try committed and returns its
``seq`` instead of appending another (``ON CONFLICT DO NOTHING`` keeps even
a concurrent duplicate out), and a completion written twice is kept once.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from llmport.errors import SessionStoreUnavailable, redact
from llmport.observe.redaction import redact_url
from llmport.sessions.stores import (
    SessionError,
    SessionFileNotFoundError,
    UnknownSessionError,
    dump,
    parent_seq,
)

from .watchdog import Armed, Watchdog

if TYPE_CHECKING:
    from llmport.sessions.dag import Node
    from psycopg_pool import ConnectionPool

    from .connection import StoreConnection

_T = TypeVar("_T")

#: Seconds within which an unreachable database is a SessionStoreUnavailable.
DEFAULT_TIMEOUT = 5.0

__all__ = ["PostgresStore", "close_pools"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS llmport_sessions(
    id TEXT PRIMARY KEY,
    created DOUBLE PRECISION NOT NULL,
    next_seq BIGINT NOT NULL DEFAULT 0,
    ord BIGSERIAL
);
CREATE TABLE IF NOT EXISTS llmport_nodes(
    session TEXT NOT NULL,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    parent BIGINT,
    expose TEXT,
    start_clock BIGINT NOT NULL,
    started_at DOUBLE PRECISION NOT NULL,
    start_data JSON NOT NULL,
    PRIMARY KEY (session, seq)
);
CREATE TABLE IF NOT EXISTS llmport_node_ends(
    session TEXT NOT NULL,
    seq BIGINT NOT NULL,
    status TEXT NOT NULL,
    end_clock BIGINT NOT NULL,
    duration DOUBLE PRECISION,
    end_data JSON,
    PRIMARY KEY (session, seq)
);
CREATE OR REPLACE FUNCTION llmport_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'llmport sessions are append-only';
END $$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS llmport_nodes_append_only ON llmport_nodes;
CREATE TRIGGER llmport_nodes_append_only BEFORE UPDATE OR DELETE ON llmport_nodes
    FOR EACH ROW EXECUTE FUNCTION llmport_append_only();
DROP TRIGGER IF EXISTS llmport_node_ends_append_only ON llmport_node_ends;
CREATE TRIGGER llmport_node_ends_append_only BEFORE UPDATE OR DELETE ON llmport_node_ends
    FOR EACH ROW EXECUTE FUNCTION llmport_append_only();
"""

# Media bytes, once per hash (llmport.sessions.attachments); added to databases made before.
ATTACHMENTS = """
CREATE TABLE IF NOT EXISTS llmport_attachments(
    sha256 TEXT PRIMARY KEY,
    media_type TEXT NOT NULL,
    size BIGINT NOT NULL,
    data BYTEA NOT NULL
);
DROP TRIGGER IF EXISTS llmport_attachments_append_only ON llmport_attachments;
CREATE TRIGGER llmport_attachments_append_only BEFORE UPDATE OR DELETE ON llmport_attachments
    FOR EACH ROW EXECUTE FUNCTION llmport_append_only();
"""

# The writer's key of each node (see the module docs); added to tables made before it.
WRITE_KEYS = """
ALTER TABLE llmport_nodes ADD COLUMN IF NOT EXISTS write_key TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS llmport_nodes_write_key ON llmport_nodes(session, write_key);
"""

#: pg_advisory_xact_lock key for creating the schema ("llmport" in ASCII).
_SCHEMA_LOCK = 0x6C6C6D706F7274

_NODE_COLUMNS = "kind, name, parent, expose, start_clock, started_at, start_data"

# A retry of a write that committed finds its row by write key: no second row, no counter
# bump (the UPDATE only runs when the key is new), the first try's seq returned.
_EARLIER = """
earlier AS (
    SELECT seq FROM llmport_nodes WHERE session = %(session)s AND write_key = %(key)s
), s AS (
    UPDATE llmport_sessions SET next_seq = next_seq + 1
    WHERE id = %(session)s AND NOT EXISTS (SELECT 1 FROM earlier)
    RETURNING next_seq
)"""

_INSERT = f"""
WITH {_EARLIER}, n AS (
    INSERT INTO llmport_nodes (session, seq, write_key, {_NODE_COLUMNS})
    SELECT %(session)s, s.next_seq, %(key)s, %(kind)s, %(name)s, %(parent)s, %(expose)s,
           %(start)s, %(started_at)s, %(data)s::json
    FROM s
    ON CONFLICT (session, write_key) DO NOTHING
    RETURNING seq
)
SELECT seq FROM n UNION ALL SELECT seq FROM earlier
"""

# A node that is complete when appended (a tool run, a summary): both rows in one statement.
_INSERT_DONE = f"""
WITH {_EARLIER}, n AS (
    INSERT INTO llmport_nodes (session, seq, write_key, {_NODE_COLUMNS})
    SELECT %(session)s, s.next_seq, %(key)s, %(kind)s, %(name)s, %(parent)s, %(expose)s,
           %(start)s, %(started_at)s, %(data)s::json
    FROM s
    ON CONFLICT (session, write_key) DO NOTHING
    RETURNING session, seq
), e AS (
    INSERT INTO llmport_node_ends (session, seq, status, end_clock, duration, end_data)
    SELECT n.session, n.seq, %(status)s, %(end)s, %(duration)s, %(result)s::json FROM n
    RETURNING seq
)
SELECT seq FROM e UNION ALL SELECT seq FROM earlier
"""

# Only a stored node is completed (what a foreign key would check, without its row lock).
# A retry whose first try committed finds the end row already there (the statement's
# snapshot never shows the row its own INSERT adds, so nothing is returned twice).
_COMPLETE = """
WITH e AS (
    INSERT INTO llmport_node_ends (session, seq, status, end_clock, duration, end_data)
    SELECT session, seq, %(status)s, %(end)s, %(duration)s, %(result)s::json
    FROM llmport_nodes WHERE session = %(session)s AND seq = %(seq)s
    ON CONFLICT (session, seq) DO NOTHING
    RETURNING seq
)
SELECT seq FROM e UNION ALL
SELECT seq FROM llmport_node_ends WHERE session = %(session)s AND seq = %(seq)s
"""

_LOAD = """
SELECT n.seq, n.kind, n.name, n.parent, n.expose, n.start_clock, n.started_at, n.start_data,
       COALESCE(e.status, 'running'), e.end_clock, e.duration, e.end_data
FROM llmport_nodes n
LEFT JOIN llmport_node_ends e ON e.session = n.session AND e.seq = n.seq
WHERE n.session = %s
ORDER BY n.seq
"""

_pools: dict[tuple[int, str, bool, float], ConnectionPool[StoreConnection]] = {}
_pools_lock = threading.Lock()
#: Each pool's statement watchdog (gone with its pool).
_watchdogs: weakref.WeakKeyDictionary[ConnectionPool[StoreConnection], Watchdog] = (
    weakref.WeakKeyDictionary()
)
_schema_ready: set[tuple[int, str]] = set()


def split_options(url: str) -> tuple[str, float]:
    """``(url without llmport's options, timeout)`` from ``postgresql://...?timeout=2``."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    timeout = DEFAULT_TIMEOUT
    for key, value in query:
        if key == "timeout":
            timeout = float(value)
    if not any(key == "timeout" for key, _ in query):
        return url, timeout
    rest = urlencode([(k, v) for k, v in query if k != "timeout"])
    return urlunsplit(parts._replace(query=rest)), timeout


def _pool(
    url: str, durable: bool, timeout: float = DEFAULT_TIMEOUT
) -> ConnectionPool[StoreConnection]:
    """The connection pool of this process for ``url`` (created on first use)."""
    # a forked child must not share its parent's connections
    key = (os.getpid(), url, durable, timeout)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            from psycopg_pool import ConnectionPool

            from .connection import StoreConnection

            size = int(os.environ.get("LLMPORT_PG_POOL_SIZE", "4"))
            # libpq's connect_timeout counts whole seconds, at least 2.
            kwargs: dict[str, Any] = {
                "autocommit": True,
                "connect_timeout": max(2, math.ceil(timeout)),
            }
            if not durable:
                # Like SQLite's synchronous=NORMAL: a commit is acknowledged before
                # its WAL record is flushed to disk. Survives any client crash and a
                # server process crash; a power loss of the server may drop the last
                # fraction of a second. Writers of one session queue on their
                # counter row for one commit each, so this is their throughput.
                kwargs["options"] = "-c synchronous_commit=off"
            pool = ConnectionPool(
                url,
                connection_class=StoreConnection,
                min_size=1,
                max_size=max(1, size),
                kwargs=kwargs,
                open=True,
                name="llmport",
                timeout=timeout,  # waiting for a connection: the outage bound
            )
            _pools[key] = pool
        return pool


def cut(watch: Armed | None) -> bool:
    """Whether the watchdog gave the statement up at its deadline."""
    return watch is not None and watch.cut


def watchdog_of(pool: ConnectionPool[StoreConnection]) -> Watchdog:
    """The watchdog of ``pool``'s statements (made with its first statement)."""
    with _pools_lock:
        watchdog = _watchdogs.get(pool)
        if watchdog is None:
            watchdog = _watchdogs[pool] = Watchdog(pool.name)
        return watchdog


def close_pools() -> None:
    """Close this process's connection pools (also done at exit)."""
    with _pools_lock:
        mine = [k for k in _pools if k[0] == os.getpid()]
        pools = [_pools.pop(k) for k in mine]
    for pool in pools:
        pool.close()


atexit.register(close_pools)


def with_connection(
    pool: ConnectionPool[StoreConnection],
    display: str,
    action: Callable[[StoreConnection], _T],
    deadline: float,
) -> _T:
    """``action(conn)`` on a pooled connection; an unreachable database is typed.

    A connection the server closed (a restart: ``AdminShutdown``, a dropped
    socket) is dropped: the pool's idle connections are checked and the
    action runs once more on a fresh one (a write that committed before the
    drop is found again by its key, see the module docs). What still fails,
    or no connection by ``deadline`` (``time.monotonic()``: both tries share
    it), is a :class:`~llmport.errors.SessionStoreUnavailable` naming the
    database.
    """
    import psycopg
    import psycopg_pool

    detail = ""
    watchdog = watchdog_of(pool)
    for attempt in (1, 2):
        watch = None
        try:
            with pool.connection(timeout=max(0.0, deadline - time.monotonic())) as conn:
                try:
                    # A server that stops mid-statement is cut at the deadline (see watchdog).
                    with watchdog.bounding(conn, deadline) as watch:
                        return action(conn)
                except psycopg.OperationalError:
                    if attempt == 2 or not conn.broken or cut(watch):
                        raise
        except (psycopg.OperationalError, psycopg_pool.PoolClosed) as exc:
            detail = redact(f"{type(exc).__name__}: {exc}")
            if cut(watch):
                detail = "no answer to a statement within the timeout (the server stopped)"
            break
        pool.check()  # dispose of the other connections the restart broke
    raise SessionStoreUnavailable(f"PostgreSQL at {display}", detail)  # nothing chained


def display_url(url: str) -> str:
    """``url`` without its secrets (``postgresql://user:***@host/db?password=***``)."""
    return redact_url(url)


class PostgresStore:
    """The rows of llmport sessions in one PostgreSQL database (see the module docs)."""

    def __init__(self, url: str, *, readonly: bool = False, durable: bool = False) -> None:
        # durable=True: every commit waits for its WAL flush (synchronous_commit=on).
        self.url, self.timeout = split_options(url)
        self.display = display_url(self.url)
        self.readonly = readonly
        self._pool = _pool(self.url, durable, self.timeout)  # imports the driver
        if not readonly:
            self._ensure_schema(time.monotonic() + self.timeout)

    def _ensure_schema(self, deadline: float) -> None:
        key = (os.getpid(), self.url)
        if key in _schema_ready:
            return

        def create(conn: StoreConnection) -> None:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                sql = "SELECT to_regclass('llmport_node_ends') IS NOT NULL"
                exists = conn.execute(sql).fetchone()
                if not (exists and exists[0]):
                    conn.execute(SCHEMA)
                # Checked first: ALTER TABLE would lock the table out even when it has the column.
                keyed = conn.execute(
                    "SELECT 1 FROM pg_attribute WHERE attrelid = 'llmport_nodes'::regclass "
                    "AND attname = 'write_key' AND NOT attisdropped"
                ).fetchone()
                if not keyed:
                    conn.execute(WRITE_KEYS)
                media = conn.execute("SELECT to_regclass('llmport_attachments') IS NOT NULL")
                found = media.fetchone()
                if not (found and found[0]):
                    conn.execute(ATTACHMENTS)

        with_connection(self._pool, self.display, create, deadline)
        _schema_ready.add(key)

    def _query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        import psycopg

        deadline = time.monotonic() + self.timeout
        try:
            return with_connection(
                self._pool,
                self.display,
                lambda conn: conn.rows(sql, params),
                deadline,
            )
        except psycopg.errors.UndefinedTable as exc:
            raise SessionFileNotFoundError(f"{self.display} holds no llmport sessions yet") from exc

    def attach(self, session_id: str | None, *, latest: bool = False) -> str:
        if session_id is None and latest:
            rows = self._query("SELECT id FROM llmport_sessions ORDER BY ord DESC LIMIT 1")
            if rows:
                return str(rows[0][0])
        if self.readonly:
            if session_id is None:
                raise UnknownSessionError(f"{self.display} has no sessions")
            if not self._query("SELECT 1 FROM llmport_sessions WHERE id = %s", (session_id,)):
                raise UnknownSessionError(f"{self.display} has no session {session_id!r}")
            return session_id
        session_id = session_id or uuid.uuid4().hex[:12]
        self._query(
            "INSERT INTO llmport_sessions (id, created) VALUES (%s, %s) "
            "ON CONFLICT (id) DO NOTHING RETURNING id",
            (session_id, time.time()),
        )
        return session_id

    def load(self, session_id: str) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in self._query(_LOAD, (session_id,))]

    def sessions(self) -> list[tuple[str, float, int]]:
        rows = self._query("SELECT id, created, next_seq FROM llmport_sessions ORDER BY ord")
        return [(str(i), float(c), int(n)) for i, c, n in rows]

    def insert(self, session_id: str, node: Node) -> int:
        params: dict[str, Any] = {
            "session": session_id,
            "key": uuid.uuid4().hex,  # this write's own: its retry finds it (module docs)
            "kind": node.kind,
            "name": node.name,
            "parent": parent_seq(node),
            "expose": node.expose if node.kind == "function" else None,
            "start": node.start,
            "started_at": node.started_at,
            "data": dump(node.data),
        }
        sql = _INSERT
        if node.end is not None:
            sql = _INSERT_DONE
            params.update(
                status=node.status,
                end=node.end,
                duration=node.duration,
                result=dump(node.result),
            )
        rows = self._query(sql, params)
        if not rows:
            raise SessionError(f"{self.display} has no session {session_id!r}")
        return int(rows[0][0])

    def complete(
        self,
        session_id: str,
        seq: int,
        status: str,
        end: int,
        duration: float,
        result: dict[str, Any],
    ) -> None:
        # A retry after a drop that followed the commit finds the end row there: kept once.
        params = {
            "session": session_id,
            "seq": seq,
            "status": status,
            "end": end,
            "duration": duration,
            "result": dump(result),
        }
        if not self._query(_COMPLETE, params):
            raise SessionError(f"{self.display} has no node {seq} in session {session_id!r}")

    # -- media bytes, once per hash (llmport.sessions.attachments) ---------------------

    def put_attachment(self, sha256: str, media_type: str, data: bytes) -> None:
        """Store ``data`` under its hash; a hash already stored is left as it is."""
        self._query(
            "INSERT INTO llmport_attachments (sha256, media_type, size, data) "
            "VALUES (%s, %s, %s, %b) ON CONFLICT (sha256) DO NOTHING RETURNING sha256",
            (sha256, media_type, len(data), data),
        )

    def attachment_size(self, sha256: str) -> int | None:
        """The length of the bytes stored under ``sha256`` (None: none, or no such table)."""
        rows = self._attachment(
            "SELECT octet_length(data) FROM llmport_attachments WHERE sha256 = %s", sha256
        )
        return int(rows[0][0]) if rows else None

    def attachment_data(self, sha256: str) -> bytes | None:
        """The bytes stored under ``sha256`` (None: no such attachment)."""
        sql = "SELECT data FROM llmport_attachments WHERE sha256 = %s"
        rows = self._attachment(sql, sha256, binary=True)
        return bytes(rows[0][0]) if rows else None

    def _attachment(self, sql: str, sha256: str, *, binary: bool = False) -> list[Any]:
        # Bytes travel in binary form both ways (%b, binary=True): as text a bytea is
        # hex, twice its size, and decoded into a third copy.
        import psycopg

        try:
            return with_connection(
                self._pool,
                self.display,
                lambda conn: conn.execute(sql, (sha256,), binary=binary).fetchall(),
                time.monotonic() + self.timeout,
            )
        except psycopg.errors.UndefinedTable:  # a database written before attachments
            return []

    def close(self) -> None:
        """Nothing to release per session: connections go back to the shared pool."""


# --- the run context's key-value store (llmport.sessions.kv) ------------------------------------

_KV_SCHEMA = """
CREATE TABLE IF NOT EXISTS llmport_kv(
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    updated DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (namespace, key)
)
"""


class PostgresKV:
    """``RunContext.store`` beside a PostgreSQL session: table ``llmport_kv``, same database."""

    def __init__(self, url: str) -> None:
        self.url, self.timeout = split_options(url)
        self.display = display_url(self.url)
        self._pool = _pool(self.url, False, self.timeout)

        def create(conn: StoreConnection) -> None:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK + 1,))
                conn.execute(_KV_SCHEMA)

        with_connection(self._pool, self.display, create, time.monotonic() + self.timeout)

    def _run(self, sql: str, params: Sequence[Any]) -> list[Any]:
        def run(conn: StoreConnection) -> list[Any]:
            cur = conn.execute(sql, params)
            return cur.fetchall() if cur.description is not None else []

        return with_connection(self._pool, self.display, run, time.monotonic() + self.timeout)

    def get(self, namespace: Any, key: str) -> Any:
        from llmport.sessions.kv import SEPARATOR, Item, namespace_of

        ns = namespace_of(namespace)
        rows = self._run(
            "SELECT value, updated FROM llmport_kv WHERE namespace = %s AND key = %s",
            (SEPARATOR.join(ns), _kv_key(key)),
        )
        return Item(ns, key, json.loads(rows[0][0]), rows[0][1]) if rows else None

    def get_many(self, namespace: Any, keys: Iterable[str]) -> dict[str, Any]:
        """``{key: Item}`` for the ``keys`` kept: one query (``key = ANY(%s)``)."""
        from llmport.sessions.kv import SEPARATOR, Item, namespace_of

        ns, wanted = namespace_of(namespace), list(dict.fromkeys(_kv_key(k) for k in keys))
        if not wanted:
            return {}
        rows = self._run(
            "SELECT key, value, updated FROM llmport_kv WHERE namespace = %s AND key = ANY(%s)",
            (SEPARATOR.join(ns), wanted),
        )
        return {k: Item(ns, k, json.loads(v), at) for k, v, at in rows}

    def put(self, namespace: Any, key: str, value: Any) -> None:
        self.put_many(namespace, {key: value})

    def put_many(self, namespace: Any, values: Mapping[str, Any]) -> None:
        """Keep every ``{key: value}``: one transaction, the rows sent in one pipeline."""
        from llmport.sessions.kv import SEPARATOR, encode, namespace_of

        ns, now = namespace_of(namespace), time.time()
        rows = [(SEPARATOR.join(ns), _kv_key(k), encode(v), now) for k, v in values.items()]
        if not rows:
            return

        def write(conn: StoreConnection) -> None:
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO llmport_kv(namespace, key, value, updated) "
                    "VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (namespace, key) DO UPDATE SET value = EXCLUDED.value, "
                    "updated = EXCLUDED.updated",
                    rows,
                )

        with_connection(self._pool, self.display, write, time.monotonic() + self.timeout)

    def delete(self, namespace: Any, key: str) -> None:
        from llmport.sessions.kv import SEPARATOR, namespace_of

        ns = namespace_of(namespace)
        self._run(
            "DELETE FROM llmport_kv WHERE namespace = %s AND key = %s",
            (SEPARATOR.join(ns), _kv_key(key)),
        )

    def search(
        self,
        namespace_prefix: Any = (),
        *,
        filter: Any = None,
        limit: int = 10,
    ) -> list[Any]:
        from llmport.sessions.kv import SEPARATOR, Item, namespace_of, select

        prefix = namespace_of(namespace_prefix) if namespace_prefix else ()
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            from llmport.errors import OptionError

            raise OptionError(f"limit must be an integer >= 1, got {limit!r}")
        joined = SEPARATOR.join(prefix)
        sql = "SELECT namespace, key, value, updated FROM llmport_kv"
        params: tuple[Any, ...] = ()
        if prefix:
            sql += " WHERE namespace = %s OR left(namespace, %s) = %s"
            params = (joined, len(joined) + 1, joined + SEPARATOR)
        sql += " ORDER BY updated DESC"
        rows = self._run(sql, params)
        items = (Item(tuple(ns.split(SEPARATOR)), k, json.loads(v), at) for ns, k, v, at in rows)
        return select(items, filter, limit)


def _kv_key(key: Any) -> str:
    if not isinstance(key, str) or not key:
        from llmport.errors import OptionError

        raise OptionError(f"a store key is a non-empty string, got {key!r}")
    return key
