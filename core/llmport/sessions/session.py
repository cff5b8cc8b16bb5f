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
import os
import threading
import time
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..errors import SessionStoreUnavailable
from ..messages.types import Usage
from ..observe.logs import logger
from .attachments import Attachments
from .configured import held_store
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
from .durable import adopt, current_recorder, node_marks
from .stores import (
    KNOWN_PACKAGES,
    MissingSessionStoreError,
    SessionError,
    SessionFileNotFoundError,
    SessionStore,
    UnknownSessionError,
    session_stores,
    split_target,
)

if TYPE_CHECKING:
    from ..provider.config import Config

__all__ = [
    "Session",
    "SessionError",
    "SessionFileNotFoundError",
    "SessionInfo",
    "UnknownSessionError",
    "bound_session",
    "list_sessions",
]


_bound: contextvars.ContextVar[tuple[Session, ...]] = contextvars.ContextVar(
    "llmport_sessions", default=()
)


def bound_session() -> Session | None:
    """The session of the innermost ``with session:`` block, if any."""
    stack = _bound.get()
    return stack[-1] if stack else None


def _new_id() -> str:
    """12 random hex digits (what ``uuid4().hex[:12]`` gave, without building a UUID)."""
    return os.urandom(6).hex()


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
        target = os.fspath(path) if path is not None else None
        if target is not None:
            store = open_store(target, durable=durable, readonly=readonly)
        elif readonly:
            raise ValueError("readonly=True needs a path")
        else:
            store = None
        self._start(
            target, store, id, latest=resume or (readonly and id is None), readonly=readonly
        )

    def _start(
        self,
        path: str | None,
        store: SessionStore | None,
        id: str | None,
        *,
        latest: bool,
        readonly: bool,
    ) -> None:
        """Set the session up on ``store`` (the store of ``path``; None: in memory)."""
        self.path = path
        self._target = self.path  # the path or URL as given (for the key-value store)
        self._kv: Any = None
        self.readonly = readonly
        # Re-entrant: reading a node's media (under the lock, while the reads are
        # walked) loads its attachment through the store, under the same lock.
        self._lock = threading.RLock()
        self._nodes: list[Node] = []
        #: Nodes a resumed durable run met complete (their steps came from its record).
        self._replayed: set[int] = set()
        self._clock = 0
        self._depth = 0
        self._store = store
        rows: Sequence[tuple[Any, ...]] = []
        if store is None:
            self.id = id or _new_id()
        else:
            self.path = store.display  # a URL is shown without its password
            self.id = store.attach(id, latest=latest)
            rows = store.load(self.id)
        self.root = Node(0, "session", self.id, None, 0, time.time(), {})
        self.root.attachments = Attachments(self._store, self._lock, readonly=readonly)
        if rows:
            self._load(rows)

    @classmethod
    def from_config(cls, config: Config | None = None) -> Session:
        """A new session in the configured database, else in memory.

        Inside ``with Runtime(...)`` the runtime keeps a configured SQLite file
        open across calls (:mod:`llmport.sessions.configured`).

        Without ``config``, only the session path is read from the files and the
        environment (:func:`~llmport.provider.config.configured_session_path`):
        a top-level agentic call asks on every call.
        """
        if config is None:
            from ..provider.config import configured_session_path

            path = configured_session_path()
        else:
            path = config.session_path
        if not path:
            return cls()
        held = held_store(path)  # inside `with Runtime(...)`: the file it keeps open
        if held is None:
            return cls(path)
        session = cls.__new__(cls)
        session._start(path, held, None, latest=False, readonly=False)
        return session

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
        """Tokens used by every exec (and embed or image call) recorded in this session."""
        total = Usage()
        for node in self.nodes():
            if (
                node.kind in ("llm", "summary", "embed", "image")
                and node.result
                and node.result.get("usage")
            ):
                total.add(Usage.from_dict(node.result["usage"]))
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
        """:func:`llmport.sessions.dag.select_reads` under the session lock (no clock tick)."""
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
    def attachments(self) -> Attachments:
        """The session's media, kept once per SHA-256 (see :mod:`llmport.sessions.attachments`)."""
        media = self.root.attachments
        assert media is not None  # set when the session is made
        return media

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
        """Append a running node (one transaction when stored).

        In a durable run resumed by another worker, the node the run's earlier
        attempt wrote at this point is returned instead (same id).
        """
        with self._lock:
            self._writable()
            if (earlier := adopt(kind, name, parent)) is not None:
                return earlier  # type: ignore[no-any-return]
            if marks := node_marks():  # a durable run: its workflow id on the node
                data = {**data, **marks}
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
        """Complete a running node (one transaction: an update of its own row).

        The node's work is done (a model answered): a store that is down does
        not lose it. The failure is logged, and recorded on the node in memory
        (``result["unsaved"]``); the stored row stays ``running``.
        """
        with self._lock:
            self._writable()
            if node.end is not None and current_recorder() is not None:
                self._replayed.add(node.seq)  # a resumed durable run met it complete
                return
            if self._replayed:
                result = {**result, **self._replayed_children(node)}
            if node.end is not None:
                raise RuntimeError(f"{node.id} is already complete")
            self._clock += 1
            if self._store is not None:
                try:
                    self._store.complete(self.id, node.seq, status, self._clock, duration, result)
                except SessionStoreUnavailable as exc:
                    result = {**result, "unsaved": str(exc)}
                    logger().warning(
                        "%s: the end of %s was not stored: %s",
                        self.id,
                        node.id,
                        exc,
                        extra={"llmport_event": "session_write_failed"},
                    )
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
        """Append an already complete node (a tool run) in one transaction.

        In a resumed durable run, the earlier attempt's node (marked replayed).
        """
        with self._lock:
            self._writable()
            if (earlier := adopt(kind, name, parent)) is not None:
                self._replayed.add(earlier.seq)  # complete already: its step is not run again
                return earlier  # type: ignore[no-any-return]
            if marks := node_marks():  # a durable run: its workflow id on the node
                data = {**data, **marks}
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

            current = dag.current_frame()
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

    @property
    def kv(self) -> Any:
        """The key-value store beside this session (:mod:`llmport.sessions.kv`), None in memory.

        Same SQLite file (table ``llmport_kv``) or same PostgreSQL database;
        opened on first use.
        """
        if self._target is None:
            return None
        if self._kv is None:
            from .kv import open_kv

            made = open_kv(self._target)
            with self._lock:
                if self._kv is None:
                    self._kv = made
        return self._kv

    def _replayed_children(self, node: Node) -> dict[str, Any]:
        """A resumed durable run ends ``node``: which of its children came from the record.

        A stored node never changes once complete, so the mark is on the
        parent, which the resumed run completes (``llmport session show`` reads it).
        """
        ids = [c.id for c in node.children or () if c.seq in self._replayed]
        return {"replayed": ids} if ids else {}

    def _next_seq(self) -> int:
        # In memory; a stored session's node takes the sequence number the database allocates.
        return self._nodes[-1].seq + 1 if self._nodes else 1

    def _writable(self) -> None:
        if self.readonly:
            raise RuntimeError(f"session {self.id} was opened read-only")

    # -- lifecycle -------------------------------------------------------------------

    def close(self) -> None:
        """Close the database connection (it reopens on the next write).

        A connection a runtime's ``with`` block holds for the configured file
        (:mod:`llmport.sessions.configured`) is closed by the runtime instead.
        """
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

    def _load(self, rows: Sequence[tuple[Any, ...]]) -> None:
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
                _decoded(start_data),
                expose or "full",
                status,
                end,
                duration,
                _decoded(end_data) if end_data is not None else None,
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


def open_store(target: str, *, readonly: bool, durable: bool) -> SessionStore:
    """The store for ``target`` (a path or a URL)."""
    scheme, rest = split_target(target)
    if scheme == "sqlite":
        from .sqlite import SqliteStore

        return SqliteStore(rest, durable=durable, readonly=readonly)
    factory = session_stores().get(scheme)
    if factory is None:
        package = KNOWN_PACKAGES.get(scheme)
        hint = f": pip install {package}" if package else " (no installed plugin registers it)"
        raise MissingSessionStoreError(f"no session store for {scheme}:// URLs is installed{hint}")
    return factory(target, readonly=readonly, durable=durable)


def _by_seq(node: Node) -> int:
    return node.seq


def _decoded(data: Any) -> Any:
    import json  # here, not at import: json costs ~2 ms of a script's start-up

    return json.loads(data) if isinstance(data, (str, bytes)) else data


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
    """The sessions stored in a database (a file path or a store URL), oldest first."""
    store = open_store(os.fspath(path), durable=False, readonly=True)
    try:
        return [SessionInfo(*row) for row in store.sessions()]
    finally:
        store.close()
