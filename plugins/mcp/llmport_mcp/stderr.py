"""What a stdio MCP server writes to its stderr: kept and logged, never printed.

A server's stderr is its own log (the Python SDK prints a full traceback
for every tool that raises): passed through, it floods the terminal of the
program that launched it. Instead the server gets a pipe, and a daemon
thread reads it line by line: each line is logged at DEBUG on the
``llmport.mcp`` logger (so ``logging.getLogger("llmport.mcp")`` at DEBUG
shows it, redacted like every llmport record) and the last lines are kept
for :attr:`llmport_mcp.MCPServer.stderr`.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from typing import TextIO

from llmport.observe.logs import logger
from llmport.observe.redaction import redact

__all__ = ["StderrCapture"]

log = logger().getChild("mcp")  # llmport.mcp, under llmport's NullHandler

#: How many of a server's last stderr lines are kept.
KEEP_LINES = 200


class StderrCapture:
    """A pipe for one server process's stderr, drained by a thread into ``lines``.

    ``file`` is what the process is started with (``errlog=``); :meth:`close`
    closes this side's copy once the process has gone, so the thread sees
    the end of the pipe and stops. ``lines`` may be shared between
    captures (one per connection of the same server).
    """

    def __init__(self, name: str, lines: deque[str]) -> None:
        self.name = name
        self.lines = lines
        read_fd, write_fd = os.pipe()
        self.file: TextIO = os.fdopen(write_fd, "w", encoding="utf-8")
        reader = os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")
        self._thread = threading.Thread(
            target=self._drain, args=(reader,), name=f"llmport-mcp-{name}-stderr", daemon=True
        )
        self._thread.start()

    def _drain(self, reader: TextIO) -> None:
        with reader:
            for raw in reader:
                line = redact(raw.rstrip("\n"))
                self.lines.append(line)
                log.debug("MCP server %r stderr: %s", self.name, line)

    def close(self) -> None:
        """Close this side's write end (the reader ends with the server's own copy)."""
        self.file.close()

    def last_line(self, wait: float) -> str | None:
        """The last non-empty line, once the server's end closed (waiting up to ``wait`` s)."""
        self._thread.join(wait)
        return next((line.strip() for line in reversed(self.lines) if line.strip()), None)


def new_lines() -> deque[str]:
    """An empty buffer of the last :data:`KEEP_LINES` lines."""
    return deque(maxlen=KEEP_LINES)
