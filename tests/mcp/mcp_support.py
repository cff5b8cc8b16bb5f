"""Helpers for the MCP tests: the demo server, free ports, waiting for processes.

``tests/mcp/servers/demo_server.py`` is launched with this interpreter: over
stdio by :class:`llmport_mcp.MCPServer` itself, over streamable HTTP as a
subprocess listening on a free loopback port.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from llmport_mcp import MCPServer

SERVERS = Path(__file__).parent / "servers"
DEMO = SERVERS / "demo_server.py"


def demo(name: str = "demo", **kwargs: Any) -> MCPServer:
    """A new stdio MCPServer for the demo server (not connected yet)."""
    kwargs.setdefault("timeout", 10)
    # Starting it imports the SDK (seconds on a loaded machine): more than the default 5 s.
    kwargs.setdefault("connect_timeout", 20)
    return MCPServer(name, command=[sys.executable, str(DEMO)], **kwargs)


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
