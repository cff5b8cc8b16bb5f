"""The statement watchdog: a statement's deadline is kept without waking a thread per statement.

Arming and disarming is one dictionary entry; the watchdog's thread looks
every ``POLL`` seconds while statements are armed. Waking it for every
statement cost each write a thread switch (about a third of a node's CPU).
The stopped-server bound itself is tested against a real server in
``test_postgres_outages.py``.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

from llmport_postgres.watchdog import POLL, Watchdog


class _PgConn:
    def __init__(self, fd: int) -> None:
        self.socket = fd


class _Conn:
    """What the watchdog reads of a psycopg connection: ``pgconn.socket``."""

    def __init__(self, sock: socket.socket) -> None:
        self.pgconn = _PgConn(sock.fileno())


def _switches(thread: threading.Thread) -> int:
    """The thread's voluntary context switches so far (Linux's per-task status)."""
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    (line,) = [x for x in status.splitlines() if x.startswith("voluntary_ctxt_switches")]
    return int(line.split()[1])


def _watchdog_thread(name: str) -> threading.Thread:
    (thread,) = [t for t in threading.enumerate() if t.name == f"llmport-pg-watchdog-{name}"]
    return thread


def test_statements_do_not_wake_the_watchdog_thread_one_by_one() -> None:
    watchdog = Watchdog("switches")
    near, far = socket.socketpair()
    with near, far:
        conn = _Conn(near)
        with watchdog.bounding(conn, time.monotonic() + 60):
            pass  # starts the thread
        thread = _watchdog_thread("switches")
        before = _switches(thread)
        started = time.monotonic()
        for _ in range(2_000):
            with watchdog.bounding(conn, time.monotonic() + 60) as armed:
                time.sleep(0)  # the statement: gives the thread its chance to run
            assert not armed.cut
        looked = (time.monotonic() - started) / POLL
        # One look per POLL (and a sleep and a wake around each), not one per statement.
        assert _switches(thread) - before <= 3 * looked + 10 < 2_000


def test_a_statement_past_its_deadline_has_its_socket_shut_down() -> None:
    watchdog = Watchdog("cut")
    near, far = socket.socketpair()
    with near, far:
        with watchdog.bounding(_Conn(near), time.monotonic() + 0.1) as armed:
            near.settimeout(10)
            assert near.recv(1) == b""  # the shut-down socket reads as the end
        assert armed.cut
        with watchdog.bounding(_Conn(far), time.monotonic() + 60) as later:
            pass
        assert not later.cut  # the next statement is watched afresh
