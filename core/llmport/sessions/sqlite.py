"""The embedded session store: one SQLite file (WAL), many sessions.

See :mod:`llmport.sessions.session` for the guarantees (append-only rows, crash
safety, many writers per session). ``Session("runs.sqlite")`` and
``Session("sqlite:///runs.sqlite")`` use it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import SessionStoreUnavailable
from .stores import (
    SessionError,
    SessionFileNotFoundError,
    UnknownSessionError,
    dump,
    parent_seq,
)

if TYPE_CHECKING:
    import sqlite3

    from .dag import Node

__all__ = ["SqliteStore", "sqlite_errors"]


def _new_id() -> str:
    import uuid

    return uuid.uuid4().hex[:12]


# The schema, made in one transaction that ends by stamping the file's user_version:
# a stamped file has every table and trigger, so a later open reads one header field
# instead of running the script (a top-level agentic call with a configured database
# opens it on every call). A file made before the stamp runs the script once more (its
# statements only create what is missing) and is stamped then.
_SCHEMA_VERSION = 1
_SCHEMA = f"""
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS llmport_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO llmport_meta(key, value) VALUES ('schema', '1');
CREATE TABLE IF NOT EXISTS sessions(id TEXT PRIMARY KEY, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS nodes(
    session TEXT NOT NULL REFERENCES sessions(id),
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    parent INTEGER,
    expose TEXT,
    start_clock INTEGER NOT NULL,
    started_at REAL NOT NULL,
    start_data TEXT NOT NULL,
    status TEXT NOT NULL,
    end_clock INTEGER,
    duration REAL,
    end_data TEXT,
    PRIMARY KEY (session, seq)
);
CREATE TABLE IF NOT EXISTS attachments(
    sha256 TEXT PRIMARY KEY,
    media_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE TRIGGER IF NOT EXISTS attachments_append_only BEFORE DELETE ON attachments
BEGIN SELECT RAISE(ABORT, 'llmport sessions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS attachments_written_once BEFORE UPDATE ON attachments
BEGIN SELECT RAISE(ABORT, 'llmport sessions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS sessions_append_only BEFORE DELETE ON sessions
BEGIN SELECT RAISE(ABORT, 'llmport sessions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS nodes_append_only BEFORE DELETE ON nodes
BEGIN SELECT RAISE(ABORT, 'llmport sessions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS nodes_complete_once BEFORE UPDATE ON nodes
WHEN OLD.end_clock IS NOT NULL OR OLD.status != 'running'
  OR NEW.session IS NOT OLD.session OR NEW.seq IS NOT OLD.seq OR NEW.kind IS NOT OLD.kind
  OR NEW.name IS NOT OLD.name OR NEW.parent IS NOT OLD.parent OR NEW.expose IS NOT OLD.expose
  OR NEW.start_clock IS NOT OLD.start_clock OR NEW.started_at IS NOT OLD.started_at
  OR NEW.start_data IS NOT OLD.start_data
BEGIN SELECT RAISE(ABORT, 'llmport sessions are append-only: a node is completed once'); END;
PRAGMA user_version = {_SCHEMA_VERSION};
COMMIT;
"""

_COLUMNS = (
    "seq, kind, name, parent, expose, start_clock, started_at, start_data, status, "
    "end_clock, duration, end_data"
)


# Waiting for another writer: SQLite's busy handler first (``busy_timeout``), then a
# bounded number of retries with a growing, jittered pause (a lock can also be refused
# without the busy handler, e.g. while another process recovers or checkpoints the WAL).
# No retry starts after _GIVE_UP seconds, so a database another process keeps locked is
# a SessionStoreUnavailable within about 5 s, never a raw sqlite3 error.
_BUSY_TIMEOUT_MS = 2_000
_RETRIES = 8
_PAUSE = 0.01  # seconds, doubled on each retry: about 2.5 s in all at most
_GIVE_UP = 3.0
_BLOB_CHUNK = 1 << 20  # bytes written to an attachment's blob at a time

_T = TypeVar("_T")

# A node's sequence number. A writer first claims the number after the last node it knows
# of (one plain INSERT: the whole cost when it is the only writer). The primary key makes
# that claim fail if another process took the number; from then on the store lets the
# database allocate: the INSERT below reads MAX(seq) + 1 inside its own write transaction
# (SQLite takes the write lock before the statement reads), so two processes never get
# the same number and the sequence stays dense. MAX(seq) is one probe of the key index.
_INSERT_AT = f"INSERT INTO nodes(session, {_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
_INSERT_NEXT = (
    f"INSERT INTO nodes(session, {_COLUMNS}) "
    "SELECT ?1, COALESCE(MAX(seq), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12 "
    "FROM nodes WHERE session = ?1"
)


def _busy(exc: Exception) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


@contextmanager
def sqlite_errors(path: str) -> Iterator[None]:
    """sqlite3's errors inside the block as llmport's, the driver's never chained.

    A database kept locked or busy past its timeout is a
    :class:`~llmport.SessionStoreUnavailable` naming the file; a file that is
    not a database, or another failure, is a :class:`~llmport.SessionError`.
    """
    import sqlite3

    try:
        yield
    except sqlite3.OperationalError as exc:
        if _busy(exc):
            raise SessionStoreUnavailable(f"SQLite at {path}", f"OperationalError: {exc}") from None
        raise SessionError(f"cannot use the SQLite database {path} ({exc})") from None
    except sqlite3.DatabaseError as exc:
        raise SessionError(f"{path} cannot be used as an llmport database ({exc})") from None


class SqliteStore:
    """The rows of one database file. Callers serialise access (the session lock)."""

    def __init__(self, path: str, *, durable: bool, readonly: bool) -> None:
        import sqlite3

        self.path = path
        self.display = path
        self.durable = durable
        self.readonly = readonly
        self._sqlite = sqlite3  # imported here: `import llmport` stays free of sqlite3
        self._db: sqlite3.Connection | None = None
        #: The session :meth:`attach` made just now (no rows yet), until it is loaded.
        self._new: str | None = None
        #: Sessions another writer appended to as well (a held store serves many sessions).
        self._shared: set[str] = set()
        if readonly and not Path(path).is_file():
            raise SessionFileNotFoundError(f"no session database at {path}")
        self._conn()

    def _retry(self, action: Callable[[], _T], started: float | None = None) -> _T:
        """``action()``, run again while another process holds the database locked.

        ``started``: ``time.monotonic()`` of a first try already made (its busy wait counts).
        """
        import sqlite3

        give_up = (time.monotonic() if started is None else started) + _GIVE_UP
        for attempt in range(_RETRIES + 1):
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if attempt == _RETRIES or not _busy(exc) or time.monotonic() > give_up:
                    raise
            time.sleep(_PAUSE * 2**attempt * (0.5 + random.random()))
        raise AssertionError("unreachable")  # pragma: no cover

    def _write(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        """Run one write statement (its own transaction), retried while the database is locked.

        Still locked, or the file cannot be written (disk I/O, a read-only
        file): :class:`~llmport.errors.SessionStoreUnavailable`.
        """
        db = self._conn()
        started = time.monotonic()
        try:
            try:
                return db.execute(sql, params)
            except self._sqlite.OperationalError as exc:
                if not _busy(exc):
                    raise
            return self._retry(lambda: db.execute(sql, params), started)
        except self._sqlite.OperationalError as exc:
            detail = f"{type(exc).__name__}: {exc}"
        raise self._unavailable(detail)  # outside the handler: nothing chained

    def _unavailable(self, detail: str) -> SessionStoreUnavailable:
        return SessionStoreUnavailable(f"SQLite at {self.path}", detail)

    def _conn(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        import sqlite3

        try:
            db = self._retry(self._open)
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise SessionError(f"cannot open session database {self.path} ({exc})") from None
            detail = f"{type(exc).__name__}: {exc}"
            raise self._unavailable(detail) from None
        except sqlite3.DatabaseError as exc:
            raise SessionError(f"{self.path} is not an llmport session database ({exc})") from None
        self._db = db
        return db

    def _open(self) -> sqlite3.Connection:
        import sqlite3

        if self.readonly:
            db = sqlite3.connect(
                Path(self.path).resolve().as_uri() + "?mode=ro",
                uri=True,
                isolation_level=None,
                check_same_thread=False,
                timeout=_BUSY_TIMEOUT_MS / 1000,
            )
            try:
                db.execute("SELECT value FROM llmport_meta WHERE key = 'schema'").fetchone()
            except sqlite3.OperationalError as exc:
                db.close()
                if _busy(exc):
                    raise
                raise sqlite3.DatabaseError(str(exc)) from exc
            except BaseException:
                db.close()
                raise
            return db
        # isolation_level=None: every statement is its own transaction.
        db = sqlite3.connect(
            self.path,
            isolation_level=None,
            check_same_thread=False,
            timeout=_BUSY_TIMEOUT_MS / 1000,
        )
        # connect(timeout=) is SQLite's busy_timeout; journal_mode comes before any
        # transaction (it cannot change inside one).
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={'FULL' if self.durable else 'NORMAL'}")
            if db.execute("PRAGMA user_version").fetchone()[0] < _SCHEMA_VERSION:
                db.executescript(_SCHEMA)
        except BaseException:
            db.close()
            raise
        return db

    def attach(self, session_id: str | None, *, latest: bool = False) -> str:
        db = self._conn()
        if session_id is None and latest:
            row = db.execute("SELECT id FROM sessions ORDER BY rowid DESC LIMIT 1").fetchone()
            if row is not None:
                return str(row[0])
        made = session_id is None
        session_id = session_id or _new_id()
        if self.readonly:
            if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
                raise UnknownSessionError(f"{self.path} has no session {session_id!r}")
        else:
            added = self._write(
                "INSERT OR IGNORE INTO sessions(id, created) VALUES (?, ?)",
                (session_id, time.time()),
            )
            # A new id only this store knows yet: loading it finds nothing (one query less
            # for each top-level agentic call recording into a configured file).
            self._new = session_id if made and added.rowcount == 1 else None
        return session_id

    def load(self, session_id: str) -> list[tuple[Any, ...]]:
        if session_id == self._new:
            self._new = None
            return []
        query = f"SELECT {_COLUMNS} FROM nodes WHERE session = ? ORDER BY seq"
        return self._conn().execute(query, (session_id,)).fetchall()

    def sessions(self) -> list[tuple[str, float, int]]:
        return (
            self._conn()
            .execute(
                "SELECT s.id, s.created, COUNT(n.seq) FROM sessions s "
                "LEFT JOIN nodes n ON n.session = s.id GROUP BY s.id ORDER BY s.rowid"
            )
            .fetchall()
        )

    def insert(self, session_id: str, node: Node) -> int:
        """Insert ``node``'s row; return its sequence number (``node.seq`` unless taken)."""
        parent = parent_seq(node)
        row = (
            node.kind,
            node.name,
            parent,
            node.expose if node.kind == "function" else None,
            node.start,
            node.started_at,
            dump(node.data),
            node.status,
            node.end,
            node.duration,
            dump(node.result),
        )
        if session_id not in self._shared:
            try:
                self._write(_INSERT_AT, (session_id, node.seq, *row))
                return node.seq
            except self._sqlite.IntegrityError as exc:
                if "UNIQUE" not in str(exc):
                    raise
                self._shared.add(session_id)  # another process appends to this session too
        rowid = self._write(_INSERT_NEXT, (session_id, *row)).lastrowid
        found = self._conn().execute("SELECT seq FROM nodes WHERE rowid = ?", (rowid,))
        return int(found.fetchone()[0])

    def complete(
        self,
        session_id: str,
        seq: int,
        status: str,
        end: int,
        duration: float,
        result: dict[str, Any],
    ) -> None:
        self._write(
            "UPDATE nodes SET status = ?, end_clock = ?, duration = ?, end_data = ? "
            "WHERE session = ? AND seq = ?",
            (status, end, duration, dump(result), session_id, seq),
        )

    # -- media bytes, once per hash (llmport.sessions.attachments) ---------------------
    # The bytes go in and out through SQLite's incremental blob I/O: bound as a
    # parameter, a 20 MB image would be copied twice more inside SQLite on the way in
    # (and once on the way out), past the memory bound media keep everywhere else.

    def put_attachment(self, sha256: str, media_type: str, data: bytes) -> None:
        """Store ``data`` under its hash (one transaction); a hash already stored is kept."""
        db = self._conn()

        def write() -> None:
            db.execute("BEGIN IMMEDIATE")
            try:
                cur = db.execute(
                    "INSERT OR IGNORE INTO attachments(sha256, media_type, size, data) "
                    "VALUES (?, ?, ?, zeroblob(?))",
                    (sha256, media_type, len(data), len(data)),
                )
                if cur.rowcount == 1 and cur.lastrowid is not None:
                    with db.blobopen("attachments", "data", cur.lastrowid) as blob:
                        view = memoryview(data)
                        for at in range(0, len(data), _BLOB_CHUNK):
                            blob.write(view[at : at + _BLOB_CHUNK])
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:  # BEGIN itself may be what failed (locked)
                    db.execute("ROLLBACK")
                raise

        try:
            self._retry(write)
            return
        except self._sqlite.OperationalError as exc:
            detail = f"{type(exc).__name__}: {exc}"
        raise self._unavailable(detail)  # outside the handler: nothing chained

    def attachment_size(self, sha256: str) -> int | None:
        """The length of the bytes stored under ``sha256`` (None: none, or no such table)."""
        row = self._attachment("SELECT length(data) FROM attachments WHERE sha256 = ?", sha256)
        return None if row is None else int(row[0])

    def attachment_data(self, sha256: str) -> bytes | None:
        """The bytes stored under ``sha256`` (a row holding text gives its UTF-8: checked later)."""
        sql = "SELECT rowid, typeof(data) FROM attachments WHERE sha256 = ?"
        row = self._attachment(sql, sha256)
        if row is None:
            return None
        if row[1] != "blob":
            text = self._attachment("SELECT data FROM attachments WHERE sha256 = ?", sha256)
            return None if text is None else str(text[0]).encode("utf-8", "replace")
        with (
            sqlite_errors(self.path),
            self._conn().blobopen("attachments", "data", int(row[0]), readonly=True) as blob,
        ):
            return blob.read()

    def _attachment(self, sql: str, sha256: str) -> tuple[Any, ...] | None:
        try:
            with sqlite_errors(self.path):
                found: tuple[Any, ...] | None = self._conn().execute(sql, (sha256,)).fetchone()
                return found
        except SessionError as exc:
            if "no such table" in str(exc):  # a database written before attachments
                return None
            raise

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
