"""Statements bounded by their operation's deadline, on the client's side.

A server that stops answering in the middle of a statement (a ``SIGSTOP``,
a frozen VM, a partition that keeps the TCP connection up) is not seen by
any timeout the driver has: the connection is open, the kernel acknowledges
what is sent, and ``statement_timeout`` is enforced by the very server that
stopped. The statement would wait forever.

A :class:`Watchdog` (one per connection pool) holds the connections whose
statements are running and the deadline of each; one daemon thread sleeps
until the earliest and shuts down the socket of a connection still running
then. The driver's wait wakes on the closed socket and raises its
``OperationalError`` on a broken connection, which the store turns into a
:class:`~llmport.errors.SessionStoreUnavailable` (the pool discards the
connection).

Arming and disarming is one dictionary entry, set and removed without a
lock and without waking anything: the thread looks every
:data:`POLL` seconds while statements are armed (a statement is cut at most
that long after its deadline) and sleeps on an event while none are. Waking
the thread for every statement cost each one a thread switch (~65 µs of CPU
a statement, a third of a node's write).
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["Watchdog"]


class Armed:
    """One running statement's watch: ``cut`` once the watchdog shut its connection."""

    __slots__ = ("conn", "cut", "deadline")

    def __init__(self, conn: Any, deadline: float) -> None:
        self.conn = conn
        self.deadline = deadline
        self.cut = False


#: How often the thread looks at the armed statements: the bound's slack.
POLL = 0.05


class Watchdog:
    """Shuts down the connections whose statements outlive their deadline (see the module)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._armed: dict[Armed, None] = {}
        self._busy = threading.Event()  # set while statements may be armed
        self._start = threading.Lock()
        self._thread: threading.Thread | None = None

    @contextlib.contextmanager
    def bounding(self, conn: Any, deadline: float) -> Iterator[Armed]:
        """Watch ``conn`` until the block ends: at ``deadline`` (``time.monotonic()``) its
        socket is shut down. The yielded watch says whether it was."""
        armed = Armed(conn, deadline)
        self._armed[armed] = None  # one dict operation: atomic, no lock needed
        if not self._busy.is_set():
            self._wake_thread()
        try:
            yield armed
        finally:
            self._armed.pop(armed, None)

    def _wake_thread(self) -> None:
        with self._start:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._watch, name=f"llmport-pg-watchdog-{self.name}", daemon=True
                )
                self._thread.start()
            self._busy.set()

    def _watch(self) -> None:
        while True:
            self._busy.wait()
            time.sleep(POLL)
            armed = self._armed.copy()  # one C call: safe beside the writers' set and pop
            if not armed:
                self._busy.clear()
                if self._armed:  # armed between the copy and the clear: keep looking
                    self._busy.set()
                continue
            now = time.monotonic()
            for watch in armed:
                if watch.deadline <= now and self._armed.pop(watch, 0) is None:
                    watch.cut = True
                    shut_down(watch.conn)


def shut_down(conn: Any) -> None:
    """Shut ``conn``'s socket down in both directions (its reader wakes on EOF)."""
    with contextlib.suppress(Exception):  # a connection closed meanwhile has no socket
        fd = os.dup(conn.pgconn.socket)
        with socket.socket(fileno=fd) as sock:
            sock.shutdown(socket.SHUT_RDWR)
