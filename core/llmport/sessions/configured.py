"""The configured SQLite database, kept open while a runtime is used as a context manager.

A top-level agentic call outside any session records into a new session of
the configured database (``LLMPORT_SESSION`` or ``[session] path``). Opening
the file for each call and closing it after costs more than the call records:
closing the last connection checkpoints the WAL into the database and syncs
it to disk. Inside ``with Runtime(...) as rt:`` (or ``async with``), the
runtime holds one open store per configured file and closes it when the
block ends; each call still gets its own session, and every node is committed
when it is written, as before. Outside such a block nothing is held.

The holder lives in a context variable set by the ``with`` block: threads
and asyncio tasks started inside it share the store (its lock serialises
their writes, as a session's lock does for one session); a process forked
inside it opens its own. Only SQLite files are held: a store plugin
(PostgreSQL) pools its own connections.
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .dag import Node
    from .sqlite import SqliteStore
    from .stores import NodeRow

__all__ = ["ConfiguredStores", "HeldStore", "held_store"]

#: The holders of the ``with`` blocks the current context is in, innermost last.
_holders: contextvars.ContextVar[tuple[ConfiguredStores, ...]] = contextvars.ContextVar(
    "llmport_configured_stores", default=()
)


class HeldStore:
    """A store its holder keeps open across sessions: each call under one lock, ``close`` a no-op.

    It implements :class:`~llmport.sessions.stores.SessionStore` and the
    attachment methods; the holder closes the store it wraps.
    """

    __slots__ = ("_lock", "_store", "display")

    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self.display = store.display

    def attach(self, session_id: str | None, *, latest: bool = False) -> str:
        with self._lock:
            return self._store.attach(session_id, latest=latest)

    def load(self, session_id: str) -> Sequence[NodeRow | tuple[Any, ...]]:
        with self._lock:
            return self._store.load(session_id)

    def insert(self, session_id: str, node: Node) -> int:
        with self._lock:
            return self._store.insert(session_id, node)

    def complete(
        self,
        session_id: str,
        seq: int,
        status: str,
        end: int,
        duration: float,
        result: dict[str, Any],
    ) -> None:
        with self._lock:
            self._store.complete(session_id, seq, status, end, duration, result)

    def sessions(self) -> list[tuple[str, float, int]]:
        with self._lock:
            return self._store.sessions()

    def put_attachment(self, sha256: str, media_type: str, data: bytes) -> None:
        with self._lock:
            self._store.put_attachment(sha256, media_type, data)

    def attachment_size(self, sha256: str) -> int | None:
        with self._lock:
            return self._store.attachment_size(sha256)

    def attachment_data(self, sha256: str) -> bytes | None:
        with self._lock:
            return self._store.attachment_data(sha256)

    def close(self) -> None:
        """Nothing: a session ending does not close what its holder keeps open."""

    def release(self) -> None:
        """Close the connection (the holder's close; it reopens if used again)."""
        with self._lock:
            self._store.close()


class ConfiguredStores:
    """Open stores by configured SQLite path, for one runtime (see the module docs)."""

    __slots__ = ("_held", "_lock", "_replaced")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: (process id, path) -> (the file's identity when opened, its store).
        self._held: dict[tuple[int, str], tuple[tuple[int, int], HeldStore]] = {}
        #: Stores of files replaced since they were opened, with their process ids: a
        #: call still running on one ends its nodes there; closed with the others.
        self._replaced: list[tuple[int, HeldStore]] = []

    def store(self, path: str) -> HeldStore | None:
        """The open store for the SQLite file ``path`` (opened now if needed).

        None when ``path`` is a URL another store serves. A file replaced or
        removed since it was opened is opened again (as a call of its own
        would have), so the call records where the configuration points.
        """
        from .stores import split_target

        scheme, file = split_target(path)
        if scheme != "sqlite":
            return None
        key = (os.getpid(), path)  # a forked child never uses its parent's connection
        with self._lock:
            found = self._held.get(key)
            if found is not None and found[0] == _identity(file):
                return found[1]
            from .sqlite import SqliteStore

            opened = HeldStore(SqliteStore(file, durable=False, readonly=False))
            self._held[key] = (_identity(file), opened)
            if found is not None:
                self._replaced.append((key[0], found[1]))
            return opened

    def close(self) -> None:
        """Close every store this process opened here."""
        me = os.getpid()
        with self._lock:
            mine = [key for key in self._held if key[0] == me]
            stores = [self._held.pop(key)[1] for key in mine]
            stores += [store for pid, store in self._replaced if pid == me]
            self._replaced = [(pid, store) for pid, store in self._replaced if pid != me]
        for store in stores:
            store.release()

    def enter(self) -> None:
        """Hold the configured file for top-level agentic calls in the current context."""
        _holders.set((*_holders.get(), self))

    def leave(self) -> None:
        """Undo the innermost :meth:`enter` of this holder in the current context."""
        stack = list(_holders.get())
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is self:
                del stack[i]
                break
        _holders.set(tuple(stack))


def held_store(path: str) -> HeldStore | None:
    """The store the innermost holder keeps open for ``path``; None outside a holder's block."""
    stack = _holders.get()
    return stack[-1].store(path) if stack else None


def _identity(file: str) -> tuple[int, int]:
    """The file's device and inode (``(0, 0)`` when it does not exist)."""
    try:
        found = os.stat(file)
    except OSError:
        return (0, 0)
    return (found.st_dev, found.st_ino)
