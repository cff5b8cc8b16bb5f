"""Fixtures for the MCP tests: real MCP servers (``mcp``'s MCPServer) over stdio and HTTP.

Starting a server costs about a second (importing the ``mcp`` SDK), so tests
that only call tools share one server per module; tests that stop, crash or
change a server get their own (helpers in ``mcp_support.py``).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from llmport_mcp import MCPServer
from mcp_support import DEMO, demo, free_port, wait_for_port


@pytest.fixture(autouse=True)
def isolated(isolated_from_host: None) -> None:
    """No host configuration or entry-point plugins (see tests/conftest.py)."""


@pytest.fixture(scope="module")
def stdio_server() -> Iterator[MCPServer]:
    """One demo server over stdio, shared by a module's tests."""
    server = demo()
    yield server
    server.close()


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """The demo server over streamable HTTP on a loopback port: its endpoint URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(DEMO), "--http", str(port)])
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def run(mode: str) -> Callable[..., Any]:
    """``run(rt, content, **kw)`` -> RunResult, through Runtime.run or Runtime.arun."""

    def go(rt: Any, *args: Any, **kwargs: Any) -> Any:
        if mode == "sync":
            return rt.run(*args, **kwargs)
        return asyncio.run(rt.arun(*args, **kwargs))

    return go
