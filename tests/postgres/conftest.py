"""A real PostgreSQL 16 for the tests, started once from the ``pgserver`` wheel.

The server runs from a temporary directory for the whole test session and
is stopped at the end; each test gets a database of its own. Nothing has
to be installed beside ``uv run pytest``.

Under pytest-xdist each worker is a session, so each starts its own server in
its own data directory, listening only on a Unix socket inside it: workers
share no port, no files and no databases (pgserver serialises their start and
stop with its own inter-process lock).

``own_pg`` is a server of one test module's own, for the outage tests to stop
and start (the shared one stays up).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_counter = itertools.count()


@pytest.fixture(scope="session")
def pg_server(worker_id: str) -> Iterator[Any]:
    # Not under pytest's tmp dir: as root, pgserver runs PostgreSQL as its own user,
    # which must be able to reach the data directory (pytest-of-root is mode 700).
    folder = tempfile.mkdtemp(prefix=f"llmport-pg-{worker_id}-")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR is not set
        import pgserver  # its import asks platformdirs too

        server = pgserver.get_server(folder, cleanup_mode="stop")
    try:
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: Any, monkeypatch: pytest.MonkeyPatch,
           isolated_from_host: None) -> str:
    """A fresh database on the test server; the postgres plugin enabled (and only it)."""
    import psycopg

    name = f"t{next(_counter)}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    monkeypatch.setenv("LLMPORT_PLUGINS", "postgres")
    return str(pg_server.get_uri(name))


class OwnServer:
    """A dedicated pgserver: ``stop``, ``start`` and ``restart`` it at will."""

    def __init__(self) -> None:
        import pgserver

        self.folder = tempfile.mkdtemp(prefix="llmport-pg-own-")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.server = pgserver.get_server(self.folder, cleanup_mode="stop")

    def ctl(self, *args: str) -> None:
        import pgserver

        pgserver.pg_ctl(["-w", *args], pgdata=self.server.pgdata, user=self.server.system_user)

    def stop(self) -> None:
        self.ctl("-m", "fast", "stop")

    def start(self) -> None:
        self.ctl("restart")  # starts a stopped server with the options it last ran with

    def restart(self) -> None:
        self.ctl("-m", "fast", "restart")

    def url(self, name: str) -> str:
        return str(self.server.get_uri(name))

    def processes(self) -> list[int]:
        """The postmaster and every process under it (the backends serving connections)."""
        postmaster = int(Path(self.server.pgdata, "postmaster.pid").read_text().split()[0])
        found, parents = [postmaster], {postmaster}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended meanwhile
            if int(fields[1]) in parents:
                found.append(int(stat.parent.name))
        return found

    def freeze(self) -> list[int]:
        """SIGSTOP the server: its connections stay open and never answer (returns the pids)."""
        pids = self.processes()
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        return pids

    @staticmethod
    def thaw(pids: list[int]) -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


@pytest.fixture(scope="module")
def own_pg() -> Iterator[OwnServer]:
    server = OwnServer()
    try:
        yield server
    finally:
        from llmport_postgres import close_pools

        close_pools()  # the server stops at once, with no client left
        # pgserver knows the first postmaster only: stop the one the tests restarted
        # (immediate: the data is deleted next, no shutdown checkpoint needed).
        server.ctl("-m", "immediate", "stop")
        server.server.cleanup()
        shutil.rmtree(server.folder, ignore_errors=True)
