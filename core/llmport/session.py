"""Sessions: where the DAG of ``@agentic_function`` calls is kept.

A :class:`Session` is in memory unless given a path; with a path it is also
written to SQLite as it grows::

    from llmport import Session

    with Session("runs.sqlite") as session:     # a new session in the file (created if absent)
        main("find the bug")                    # top-level agentic calls record here
    print(session.id, len(session), session.usage())

    Session("runs.sqlite", id=session.id)       # continue that session (created if absent)
    Session("runs.sqlite", resume=True)         # continue the latest session in the file

Which session a top-level agentic call records into, first match wins:
``@agentic_function(session=...)``; the innermost ``with session:``; the
configured database (``LLMPORT_SESSION`` or ``[session] path``, a new
session per top-level call); else a new in-memory session for that call.
Nested calls always record into their caller's session.

SQLite storage (one database may hold many sessions):

* WAL mode, ``synchronous=NORMAL``: every committed node survives a crash
  of the process (``durable=True`` uses ``FULL`` to survive power loss too).
* Append-only: a node is one row, INSERTed (one transaction) when it starts
  and completed by one UPDATE of its own row that only fills its end
  columns. Triggers reject deleting a row and changing a completed one, so
  nothing already written is lost. A node whose process died stays
  ``running``.
* One connection per session object, serialised by the session's lock, so
  the threads of one process can record concurrently.
* Many processes (or several ``Session`` objects) may append to one
  session at once, and nothing is lost: a node's sequence number is settled
  by the INSERT that writes it (the primary key refuses a number another
  writer took; the store then lets the database allocate ``MAX(seq) + 1``
  inside the inserting statement's write transaction), so the sequence
  stays dense, ids (``n12``) are the same in memory and on disk, and each
  process's nodes keep their order. A locked database is waited for
  (``busy_timeout``), then retried with a bounded backoff. A
  :class:`Session` object holds the nodes it loaded and the nodes it
  appended; nodes other processes append appear when the session is opened
  again. Clock ticks are per process.
* Reopening loads the nodes and continues the sequence and the clock, so
  earlier nodes are readable as context.
* Provider settings (API keys) and HTTP headers are never written: nodes
  hold content, replies and metadata only, and every stored string goes
  through :func:`llmport.errors.redact` (``sk-...``, ``Bearer ...``, AWS
  and Google keys, ``api_key=...``) before it reaches the disk.
"""

from __future__ import annotations

import contextvars
import json
import os
import random
import threading
import time
import uuid
from bisect import bisect_left
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from .dag import (
    Expose,
    Node,
    NodeKind,
    Status,
    attach_child,
    index_finished,
    node_seq,
    select_reads,
    walk_reads,
)
from .errors import ConfigError, redact
from .types import Usage

if TYPE_CHECKING:
    import sqlite3

    from .config import Config

__all__ = [
    "Session",
    "SessionError",
    "SessionFileNotFoundError",
    "SessionInfo",
    "UnknownSessionError",
    "bound_session",
    "list_sessions",
]


class SessionError(ConfigError):
    """A session database or session the caller named cannot be used.

    Also raised for a file that is not an llmport session database.
    """


class SessionFileNotFoundError(SessionError, FileNotFoundError):
    """No session database at the path given (opening read-only, listing, showing)."""


class UnknownSessionError(SessionError, KeyError):
    """A session id (or prefix) names no session, or several, in the database."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""

_bound: contextvars.ContextVar[tuple[Session, ...]] = contextvars.ContextVar(
    "llmport_sessions", default=()
)


def bound_session() -> Session | None:
    """The session of the innermost ``with session:`` block, if any."""
    stack = _bound.get()
    return stack[-1] if stack else None


def _new_id() -> str:
    return uuid.uuid4().hex[:12]


class Session:
    """A session DAG: in memory, or also in SQLite when ``path`` is given.

    A path starts a **new** session in the file (earlier runs in it are not
    read as context) unless ``id=`` names the session to continue (created
    if absent) or ``resume=True`` asks for the latest one. ``readonly=True``
    opens an existing file for reading only (without ``id``: its latest
    session). ``durable=True`` makes every write survive power loss
    (slower). ``new=True`` is accepted for compatibility (it is the default).

    ``with session:`` makes top-level agentic calls inside the block record
    here (it nests; leaving the outermost block closes the database
    connection, which reopens on the next write).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        id: str | None = None,
        resume: bool = False,
        new: bool = False,
        readonly: bool = False,
        durable: bool = False,
    ) -> None:
        if resume and (new or id is not None):
            raise ValueError("resume=True continues the latest session: give no id= or new=True")
        self.path = os.fspath(path) if path is not None else None
        self.readonly = readonly
        self._lock = threading.Lock()
        self._nodes: list[Node] = []
        self._clock = 0
        self._depth = 0
        self._store: _SqliteStore | None = None
        rows: list[tuple[Any, ...]] = []
        if self.path is None:
            if readonly:
                raise ValueError("readonly=True needs a path")
            self.id = id or _new_id()
        else:
            self._store = _SqliteStore(self.path, durable=durable, readonly=readonly)
            self.id = self._store.attach(id, latest=resume or (readonly and id is None))
            rows = self._store.load(self.id)
        self.root = Node(0, "session", self.id, None, 0, time.time(), {})
        if rows:
            self._load(rows)

    @classmethod
    def from_config(cls, config: Config | None = None) -> Session:
        """A new session in the configured database, else in memory."""
        if config is None:
            from .config import load_config

            config = load_config()
        if config.session_path:
            return cls(config.session_path)
        return cls()

    # -- reading ---------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._nodes)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes())

    def nodes(self) -> list[Node]:
        """Every node, in sequence order."""
        with self._lock:
            return list(self._nodes)

    def node(self, node_id: str | int) -> Node:
        """The node with this id (``"n12"``) or sequence number."""
        seq = node_seq(node_id)
        nodes = self._nodes
        # Sequence numbers ascend; they are dense unless other processes appended too.
        if 1 <= seq <= len(nodes) and nodes[seq - 1].seq == seq:
            return nodes[seq - 1]
        i = bisect_left(nodes, seq, key=_by_seq)
        if i < len(nodes) and nodes[i].seq == seq:
            return nodes[i]
        extra = " (nodes other processes appended show when it is reopened)" if self.path else ""
        raise KeyError(f"session {self.id} has no node {node_id!r}{extra}")

    def roots(self) -> list[Node]:
        """The top-level calls, in order."""
        with self._lock:
            return list(self.root.children or [])

    def usage(self) -> Usage:
        """Tokens used by every exec recorded in this session."""
        total = Usage()
        for node in self.nodes():
            if node.kind in ("llm", "summary") and node.result and node.result.get("usage"):
                total.add(Usage(**node.result["usage"]))
        return total

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, "nodes": [n.to_dict() for n in self.nodes()]}

    def reads(
        self,
        frame: Node,
        cutoff: int,
        callers: int | None,
        subcalls: int | None,
        tokens: int | None = None,
    ) -> list[Node]:
        """:func:`llmport.dag.select_reads` under the session lock (no clock tick)."""
        with self._lock:
            return select_reads(frame, cutoff, callers, subcalls, tokens)

    def context(
        self,
        frame: Node,
        callers: int | None,
        subcalls: int | None,
        tokens: int | None = None,
    ) -> tuple[list[Node], int, int]:
        """What an exec starting now in ``frame`` reads, the clock tick it reads at, and
        the estimated tokens of what it reads.

        ``tokens`` bounds the estimated tokens read, newest first (None: no bound).
        """
        with self._lock:
            self._clock += 1
            nodes, spent = walk_reads(frame, self._clock, callers, subcalls, tokens)
            return nodes, self._clock, spent

    @property
    def clock(self) -> int:
        """The last clock tick taken."""
        return self._clock

    # -- writing (used by agentic functions and the runtime) -----------------------------

    def begin(
        self,
        kind: NodeKind,
        name: str,
        parent: Node,
        data: dict[str, Any],
        *,
        expose: Expose = "full",
    ) -> Node:
        """Append a running node (one transaction when stored)."""
        with self._lock:
            self._writable()
            self._clock += 1
            node = Node(
                self._next_seq(), kind, name, parent, self._clock, time.time(), data, expose
            )
            if self._store is not None:
                node.seq = self._store.insert(self.id, node)
            self._nodes.append(node)
            attach_child(parent, node)
            return node

    def end(self, node: Node, status: Status, result: dict[str, Any], duration: float) -> None:
        """Complete a running node (one transaction: an update of its own row)."""
        with self._lock:
            self._writable()
            if node.end is not None:
                raise RuntimeError(f"{node.id} is already complete")
            self._clock += 1
            if self._store is not None:
                self._store.complete(self.id, node.seq, status, self._clock, duration, result)
            node.status = status
            node.result = result
            node.duration = duration
            node.end = self._clock  # last: readers test `end` first
            index_finished(node)

    def record(
        self,
        kind: NodeKind,
        name: str,
        parent: Node,
        data: dict[str, Any],
        status: Status,
        result: dict[str, Any],
        duration: float,
    ) -> Node:
        """Append an already complete node (a tool run) in one transaction."""
        with self._lock:
            self._writable()
            self._clock += 1
            node = Node(
                self._next_seq(),
                kind,
                name,
                parent,
                self._clock,
                time.time() - duration,
                data,
                "full",
                status,
                self._clock,
                duration,
                result,
            )
            if self._store is not None:
                node.seq = self._store.insert(self.id, node)
            self._nodes.append(node)
            attach_child(parent, node)
            if kind == "summary":
                index_finished(node)
            return node

    def add_summary(
        self,
        covers: int | str | Node,
        text: str,
        usage: Usage | None = None,
        *,
        frame: Node | str | None = None,
        model: str | None = None,
    ) -> Node:
        """Record a ``summary`` node: ``text`` stands for the nodes up to ``covers``.

        Later execs in ``frame`` (a function node or its id; default: the
        running agentic call of this session, else the session root) and in
        the calls below it read the newest such summary in place of every
        entry up to sequence number ``covers`` (a node, its id or its
        number), and nothing older. ``usage`` is what writing the summary
        cost (counted by :meth:`usage`); ``model`` who wrote it. The frame's
        and its callers' own calls are still read.
        """
        upto = covers.seq if isinstance(covers, Node) else node_seq(covers)
        if frame is None:
            from . import dag

            current = dag._current.get()
            mine = getattr(current, "session", None) is self
            owner = getattr(current, "node", None) if mine else None
            parent = owner if isinstance(owner, Node) else self.root
        else:
            parent = frame if isinstance(frame, Node) else self.node(frame)
        if parent.kind not in ("function", "session"):
            raise ValueError(f"a summary belongs to a function node, not a {parent.kind} node")
        data: dict[str, Any] = {"covers": upto, "text": text, "model": model}
        result: dict[str, Any] = {"usage": usage.to_dict() if usage is not None else None}
        return self.record("summary", model or "summary", parent, data, "ok", result, 0.0)

    def _next_seq(self) -> int:
        # In memory; a stored session's node takes the sequence number the database allocates.
        return self._nodes[-1].seq + 1 if self._nodes else 1

    def _writable(self) -> None:
        if self.readonly:
            raise RuntimeError(f"session {self.id} was opened read-only")

    # -- lifecycle -------------------------------------------------------------------

    def close(self) -> None:
        """Close the database connection (it reopens on the next write)."""
        with self._lock:
            if self._store is not None:
                self._store.close()

    def __enter__(self) -> Session:
        with self._lock:
            self._depth += 1
        _bound.set((*_bound.get(), self))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack = list(_bound.get())
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is self:
                del stack[i]
                break
        _bound.set(tuple(stack))
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._store is not None:
                self._store.close()

    async def __aenter__(self) -> Session:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    def __repr__(self) -> str:
        where = self.path or "memory"
        return f"Session({self.id!r}, {where}, {len(self._nodes)} nodes)"

    # -- loading ---------------------------------------------------------------------

    def _load(self, rows: list[tuple[Any, ...]]) -> None:
        clock = 0
        by_seq: dict[int, Node] = {}
        for (
            seq,
            kind,
            name,
            parent,
            expose,
            start,
            started_at,
            start_data,
            status,
            end,
            duration,
            end_data,
        ) in rows:
            owner = by_seq.get(parent) if parent else self.root
            if owner is None:
                raise RuntimeError(f"session {self.id}: node {seq} has no parent {parent}")
            node = Node(
                seq,
                kind,
                name,
                owner,
                start,
                started_at,
                json.loads(start_data),
                expose or "full",
                status,
                end,
                duration,
                json.loads(end_data) if end_data is not None else None,
            )
            self._nodes.append(node)
            by_seq[seq] = node
            attach_child(owner, node)
            clock = max(clock, start, end or 0)
        # Finished-children indexes are in the order nodes finished (clock ticks are per
        # process: ties between processes keep the sequence order).
        finished = [
            n for n in self._nodes if n.end is not None and n.kind in ("llm", "function", "summary")
        ]
        finished.sort(key=lambda n: n.end or 0)
        for node in finished:
            index_finished(node)
        self._clock = clock


def _by_seq(node: Node) -> int:
    return node.seq


class SessionInfo:
    """One session stored in a database file (see :func:`list_sessions`)."""

    __slots__ = ("created", "id", "nodes")

    def __init__(self, id: str, created: float, nodes: int) -> None:
        self.id = id
        self.created = created
        self.nodes = nodes

    def __repr__(self) -> str:
        return f"SessionInfo({self.id!r}, nodes={self.nodes})"


def list_sessions(path: str | os.PathLike[str]) -> list[SessionInfo]:
    """The sessions stored in a database file, oldest first."""
    store = _SqliteStore(os.fspath(path), durable=False, readonly=True)
    try:
        return [SessionInfo(*row) for row in store.sessions()]
    finally:
        store.close()


# --- SQLite -------------------------------------------------------------------------------

_SCHEMA = """
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
"""

_COLUMNS = (
    "seq, kind, name, parent, expose, start_clock, started_at, start_data, status, "
    "end_clock, duration, end_data"
)


def _dump(data: dict[str, Any] | None) -> str | None:
    if data is None:
        return None
    return json.dumps(_redacted(data), ensure_ascii=False, separators=(",", ":"), default=repr)


def _redacted(value: Any) -> Any:
    # String by string, before encoding: a pattern never cuts through JSON escapes.
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted(v) for v in value]
    return value


# Waiting for another writer: SQLite's busy handler first (``busy_timeout``), then a
# bounded number of retries with a growing, jittered pause (a lock can also be refused
# without the busy handler, e.g. while another process recovers or checkpoints the WAL).
_BUSY_TIMEOUT_MS = 10_000
_RETRIES = 8
_PAUSE = 0.01  # seconds, doubled on each retry: about 2.5 s in all at most

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


class _SqliteStore:
    """The rows of one database file. Callers serialise access (the session lock)."""

    def __init__(self, path: str, *, durable: bool, readonly: bool) -> None:
        import sqlite3

        self.path = path
        self.durable = durable
        self.readonly = readonly
        self._sqlite = sqlite3  # imported here: `import llmport` stays free of sqlite3
        self._db: sqlite3.Connection | None = None
        self._shared = False  # True once another writer appended to this store's session
        if readonly and not Path(path).is_file():
            raise SessionFileNotFoundError(f"no session database at {path}")
        self._conn()

    def _retry(self, action: Callable[[], _T]) -> _T:
        """``action()``, run again while another process holds the database locked."""
        import sqlite3

        for attempt in range(_RETRIES + 1):
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if attempt == _RETRIES or not _busy(exc):
                    raise
            time.sleep(_PAUSE * 2**attempt * (0.5 + random.random()))
        raise AssertionError("unreachable")  # pragma: no cover

    def _write(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        """Run one write statement (its own transaction), retried while the database is locked."""
        db = self._conn()
        try:
            return db.execute(sql, params)
        except self._sqlite.OperationalError as exc:
            if not _busy(exc):
                raise
        return self._retry(lambda: db.execute(sql, params))

    def _conn(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        import sqlite3

        try:
            db = self._retry(self._open)
        except sqlite3.OperationalError as exc:
            if _busy(exc):
                raise
            raise SessionError(f"cannot open session database {self.path} ({exc})") from exc
        except sqlite3.DatabaseError as exc:
            raise SessionError(f"{self.path} is not an llmport session database ({exc})") from exc
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
        try:
            db.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={'FULL' if self.durable else 'NORMAL'}")
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
        session_id = session_id or _new_id()
        if self.readonly:
            if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
                raise UnknownSessionError(f"{self.path} has no session {session_id!r}")
        else:
            self._write(
                "INSERT OR IGNORE INTO sessions(id, created) VALUES (?, ?)",
                (session_id, time.time()),
            )
        return session_id

    def load(self, session_id: str) -> list[tuple[Any, ...]]:
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
        owner = node.parent
        parent = owner.seq if owner is not None and owner.kind != "session" else None
        row = (
            node.kind,
            node.name,
            parent,
            node.expose if node.kind == "function" else None,
            node.start,
            node.started_at,
            _dump(node.data),
            node.status,
            node.end,
            node.duration,
            _dump(node.result),
        )
        if not self._shared:
            try:
                self._write(_INSERT_AT, (session_id, node.seq, *row))
                return node.seq
            except self._sqlite.IntegrityError as exc:
                if "UNIQUE" not in str(exc):
                    raise
                self._shared = True  # another process appends to this session too
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
            (status, end, duration, _dump(result), session_id, seq),
        )

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
