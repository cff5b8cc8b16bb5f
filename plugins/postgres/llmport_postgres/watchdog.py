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
connection). Arming and disarming is a dictionary entry under a lock: no
thread or timer per statement.
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


class Watchdog:
    """Shuts down the connections whose statements outlive their deadline (see the module)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._wake = threading.Condition()
        self._armed: set[Armed] = set()
        self._thread: threading.Thread | None = None

    @contextlib.contextmanager
    def bounding(self, conn: Any, deadline: float) -> Iterator[Armed]:
        """Watch ``conn`` until the block ends: at ``deadline`` (``time.monotonic()``) its
        socket is shut down. The yielded watch says whether it was."""
        armed = Armed(conn, deadline)
        with self._wake:
            self._armed.add(armed)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._watch, name=f"llmport-pg-watchdog-{self.name}", daemon=True
                )
                self._thread.start()
            self._wake.notify()
        try:
            yield armed
        finally:
            with self._wake:
                self._armed.discard(armed)

    def _watch(self) -> None:
        with self._wake:
            while True:
                now = time.monotonic()
                for armed in [a for a in self._armed if a.deadline <= now]:
                    self._armed.discard(armed)
                    armed.cut = True
                    shut_down(armed.conn)
                earliest = min((a.deadline for a in self._armed), default=None)
                self._wake.wait(None if earliest is None else max(0.0, earliest - now))


def shut_down(conn: Any) -> None:
    """Shut ``conn``'s socket down in both directions (its reader wakes on EOF)."""
    with contextlib.suppress(Exception):  # a connection closed meanwhile has no socket
        fd = os.dup(conn.pgconn.socket)
        with socket.socket(fileno=fd) as sock:
            sock.shutdown(socket.SHUT_RDWR)
