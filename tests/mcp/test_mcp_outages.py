"""MCP servers down: typed errors naming the server, in bounded time, unchained.

Each case uses a real failure: a command that does not exist, a process that
never speaks MCP, a port nobody listens on, a loopback socket that accepts
and never answers, a real MCP server (``mcp``'s) killed mid-session. The
bounds asserted are the configured timeout plus a generous 3 s; the
measured figure is printed (``pytest -s`` shows it).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mcp  # noqa: F401  (imported up front: the bounds measure the server, not the SDK's import)
import pytest
from llmport.testing import Script
from llmport_mcp import MCPConnectionError, MCPServer, MCPServerError, MCPTimeoutError
from mcp_support import DEMO, demo, free_port, process_gone, wait_for_port

#: Slack on top of a configured timeout before a bounded-time assertion fails.
SLACK = 3.0


def timed_error(action: Callable[[], Any]) -> tuple[BaseException, float]:
    """The exception ``action`` raises, and how long it took to raise it (printed)."""
    started = time.monotonic()
    with pytest.raises(MCPServerError) as caught:
        action()
    took = time.monotonic() - started
    print(f"{type(caught.value).__name__} after {took:.2f} s")
    return caught.value, took


def assert_typed(error: BaseException, kind: type[MCPServerError], server: MCPServer) -> None:
    """``error`` is ``kind``, names ``server``, and chains nothing from the SDK or transport."""
    assert type(error) is kind, repr(error)
    assert isinstance(error, MCPServerError)
    assert error.service == server.service and repr(server.name) in error.service
    assert repr(server.name) in str(error)
    assert error.detail
    assert error.__cause__ is None and error.__context__ is None


def stuck_command(pid_file: Path) -> list[str]:
    """A process that starts at once (a shell, not Python), writes its pid, and never speaks MCP."""
    return ["sh", "-c", f"echo $$ > '{pid_file}'; exec sleep 60"]


@pytest.fixture
def mute_url(mute_port: int) -> str:
    """An MCP endpoint on a loopback port that accepts connections and never answers."""
    return f"http://127.0.0.1:{mute_port}/mcp"


def test_the_default_connect_timeout_is_at_most_five_seconds() -> None:
    assert MCPServer("a", command=["x"]).connect_timeout <= 5
    # A long tool-call timeout no longer stretches the connect bound.
    assert MCPServer("b", command=["x"], timeout=120).connect_timeout <= 5
    assert MCPServer("c", url="http://127.0.0.1:9/mcp", connect_timeout=1.5).connect_timeout == 1.5


def test_a_command_that_does_not_exist_is_a_typed_connection_error() -> None:
    with MCPServer("missing", command=["/nonexistent/llmport-mcp-server"], connect_timeout=2) as s:
        error, took = timed_error(s.connect)
    assert_typed(error, MCPConnectionError, s)
    assert "FileNotFoundError" in error.detail
    assert took < 2 + SLACK


def test_a_stdio_server_that_never_answers_times_out_and_its_process_is_stopped(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pid"
    server = MCPServer("stuck", command=stuck_command(pid_file), connect_timeout=1)
    try:
        error, took = timed_error(server.connect)
        assert_typed(error, MCPTimeoutError, server)
        assert took < 1 + SLACK
        pid = int(pid_file.read_text())
        # The lease is given back without close(): the timed-out connect stops its process.
        assert process_gone(pid), "the process of a timed-out connect outlived it"
    finally:
        server.close()


def test_close_right_after_a_timed_out_connect_waits_for_its_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    server = MCPServer("stuck", command=stuck_command(pid_file), connect_timeout=1)
    timed_error(server.connect)
    server.close()  # returns once the stopping connection has ended
    assert process_gone(int(pid_file.read_text()), deadline=0.5)


def test_a_connect_cancelled_by_its_caller_stops_the_process_too(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    server = MCPServer("stuck", command=stuck_command(pid_file), connect_timeout=30)

    async def give_up() -> None:  # the caller gives up once the process runs
        connecting = asyncio.create_task(server.aconnect())
        for _ in range(400):
            if pid_file.exists() and pid_file.read_text():
                break
            await asyncio.sleep(0.05)
        connecting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await connecting

    try:
        asyncio.run(give_up())
        assert process_gone(int(pid_file.read_text())), "a cancelled connect left its process"
    finally:
        server.close()


def test_an_http_server_that_is_down_is_a_typed_connection_error() -> None:
    with MCPServer("down", url=f"http://127.0.0.1:{free_port()}/mcp", connect_timeout=2) as s:
        error, took = timed_error(s.connect)
    assert_typed(error, MCPConnectionError, s)
    assert took < 2 + SLACK


def test_an_http_server_that_never_answers_times_out(mute_url: str, mode: str) -> None:
    server = MCPServer("mute", url=mute_url, connect_timeout=1)
    try:
        if mode == "sync":
            error, took = timed_error(server.connect)
        else:
            error, took = timed_error(lambda: asyncio.run(server.aconnect()))
        assert_typed(error, MCPTimeoutError, server)
        assert took < 1 + SLACK
        assert not server.connected
    finally:
        server.close()


@pytest.fixture
def own_http_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A demo server over HTTP that the test may kill: (its URL, its process)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(DEMO), "--http", str(port)])
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_an_http_server_that_dies_mid_session_is_a_typed_error(
    own_http_server: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, proc = own_http_server
    # A generous connect bound for the first connection (a loaded machine); the call after
    # the kill meets a closed port, which is refused at once.
    with MCPServer("web", url=url, connect_timeout=20, timeout=3) as server:
        assert server.call_tool("add", {"a": 1, "b": 2}) == "3"
        proc.kill()
        proc.wait(timeout=10)
        error, took = timed_error(lambda: server.call_tool("add", {"a": 1, "b": 2}))
        assert isinstance(error, (MCPConnectionError, MCPTimeoutError)), repr(error)
        assert_typed(error, type(error), server)
        assert took < 3 + SLACK  # a refused reconnect, or the call's own timeout


def test_a_stdio_server_that_dies_mid_call_is_a_typed_error_and_the_session_is_dropped() -> None:
    with demo("fragile", connect_timeout=20) as server:
        pid = int(server.call_tool("pid"))
        error, took = timed_error(lambda: server.call_tool("crash"))
        assert_typed(error, MCPConnectionError, server)
        assert took < server.timeout + SLACK
        assert not server.connected
        assert process_gone(pid)


def test_a_server_down_fails_the_run_with_the_typed_error(mode: str) -> None:
    server = MCPServer("down", url=f"http://127.0.0.1:{free_port()}/mcp", connect_timeout=2)
    rt = Script(["never"]).runtime()
    try:
        if mode == "sync":
            error, took = timed_error(lambda: rt.exec("x", tools=[server]))
        else:
            error, took = timed_error(lambda: asyncio.run(rt.async_exec("x", tools=[server])))
        assert_typed(error, MCPConnectionError, server)
        assert took < 2 + SLACK
    finally:
        rt.close()
        server.close()
