"""Fixtures for the MCP tests: real MCP servers (``mcp``'s MCPServer) over stdio and HTTP.

``tests/mcp/servers/demo_server.py`` is launched with this interpreter: over
stdio by :class:`llmport_mcp.MCPServer` itself, over streamable HTTP as a
subprocess listening on a free loopback port. Starting a server costs about a
second (importing the ``mcp`` SDK), so tests that only call tools share one
server per module; tests that stop, crash or change a server get their own.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llmport_mcp import MCPServer

SERVERS = Path(__file__).parent / "servers"
DEMO = SERVERS / "demo_server.py"


@pytest.fixture(autouse=True)
def isolated(isolated_from_host: None) -> None:
    """No host configuration or entry-point plugins (see tests/conftest.py)."""


def demo(name: str = "demo", **kwargs: Any) -> MCPServer:
    """A new stdio MCPServer for the demo server (not connected yet)."""
    kwargs.setdefault("timeout", 10)
    return MCPServer(name, command=[sys.executable, str(DEMO)], **kwargs)


@pytest.fixture(scope="module")
def stdio_server() -> Iterator[MCPServer]:
    """One demo server over stdio, shared by a module's tests."""
    server = demo()
    yield server
    server.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], deadline: float = 20.0) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {deadline} s")


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


def process_gone(pid: int, deadline: float = 10.0) -> bool:
    """Whether process ``pid`` has exited (and been reaped) within ``deadline`` seconds."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False
