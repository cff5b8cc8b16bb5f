"""A fast loopback HTTP server in its own process, for benchmarks (stdlib only).

The client under test and the server no longer share one interpreter (GIL,
allocator, tracemalloc): the server is a child process answering every
request from an asyncio loop, keep-alive, ``TCP_NODELAY``, one write per
answer. Replies cycle in order (request 1 gets reply 1, ...), so a tool loop
can be scripted: ``[tool_call, tool_call, final]``.

    with ServerProcess([{"json": {...}}, {"json": {...}}]) as server:
        server.url  # http://127.0.0.1:PORT

A reply is ``{"json": obj}``, ``{"body": str, "content_type": str}``
(e.g. server-sent events) or ``{"body_b64": str, "content_type": str}``
(binary frames). Nothing here imports llmport or an SDK, so the
separate benchmark environment (``nox -s bench``) runs it as it is.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
from typing import Any

__all__ = ["ServerProcess"]


def _encode(reply: dict[str, Any]) -> bytes:
    if "json" in reply:
        body = json.dumps(reply["json"]).encode()
        ctype = "application/json"
    elif "body_b64" in reply:  # binary frames (AWS event-stream)
        body = base64.b64decode(reply["body_b64"])
        ctype = reply["content_type"]
    else:
        body = reply["body"].encode()
        ctype = reply.get("content_type", "text/event-stream")
    head = (
        f"HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\n"
        f"x-amzn-requestid: bench\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _serve_forever(replies: list[bytes]) -> None:
    counter = [0]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                # Big bodies (a 20 MB image) are read and dropped in pieces.
                while length:
                    chunk = await reader.read(min(length, 1 << 20))
                    if not chunk:
                        raise ConnectionError
                    length -= len(chunk)
                writer.write(replies[counter[0] % len(replies)])
                counter[0] += 1
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=4096)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


class ServerProcess:
    """The server above, started in a child process for the ``with`` block."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = replies
        self.port = 0
        self._proc: subprocess.Popen[str] | None = None
        self._file = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ServerProcess:
        fd, self._file = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(self.replies, f)
        self._proc = subprocess.Popen(
            [sys.executable, __file__, self._file], stdout=subprocess.PIPE, text=True
        )
        assert self._proc.stdout is not None
        self.port = int(self._proc.stdout.readline())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=5)
        if self._file:
            os.unlink(self._file)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        encoded = [_encode(r) for r in json.load(f)]
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_forever(encoded))
