"""A loopback HTTP server that plays scripted replies and faults.

For tests and benchmarks: point a vendor plugin's ``base_url`` at
``server.url`` and script what the "vendor" does, request by request::

    from llmport.testing.loopback import LoopbackServer, Reply

    with LoopbackServer([
        Reply(status=429, headers={"retry-after": "0"}, json={"error": {"message": "slow down"}}),
        Reply(reset=True),                      # connection reset, no response
        Reply(delay=5.0, json={...}),           # slower than the client's timeout
        Reply(body=b'{"truncated'),             # malformed JSON
        Reply(sse=[{"event": "x", "data": {...}}], truncate=True),  # stream cut short
        Reply(body=b'{"id": ', stall=5.0),     # a body that never ends (silent for 5 s)
        Reply(sse=[...], gap=0.2),              # a stream arriving event by event, 0.2 s apart
        Reply(json={...}),                      # a good answer
    ]) as server:
        ...
        server.requests   # every request received: method, path, headers, body

With ``repeat`` the last reply is served forever (benchmarks). Only
127.0.0.1 is ever bound.

Waiting is never a plain sleep: a ``delay`` or a ``stall`` ends early when
the client hangs up or the server is stopped, and :meth:`LoopbackServer.stop`
returns at once (no polling interval), so a test pays for a timeout only what
the client under test waits.
"""

from __future__ import annotations

import json
import select
import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..slotted import dataclass


@dataclass(slots=True)
class Reply:
    """One scripted answer. ``json``/``body``/``sse`` give the payload."""

    status: int = 200
    json: Any = None
    body: bytes | None = None
    sse: list[dict[str, Any] | str] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    reset: bool = False
    truncate: bool = False
    #: Seconds to hold the connection open after the payload, promising more bytes that
    #: never come (a stream or body without an end; the client's timeout must end it).
    stall: float = 0.0
    #: Seconds between the events of a stream (SSE events, or the frames of an AWS
    #: event-stream body), each sent on its own: a stream that arrives over time.
    gap: float = 0.0
    handler: Callable[[RecordedRequest], Reply] | None = None


@dataclass(slots=True, frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


def sse_bytes(events: Iterable[dict[str, Any] | str]) -> bytes:
    """Encode events as Server-Sent Events.

    Each event is ``{"event": name, "data": obj}`` or a raw data string.
    """
    out = []
    for event in events:
        if isinstance(event, str):
            out.append(f"data: {event}\n\n")
            continue
        lines = []
        if event.get("event"):
            lines.append(f"event: {event['event']}")
        data = event.get("data")
        lines.append("data: " + (data if isinstance(data, str) else json.dumps(data)))
        out.append("\n".join(lines) + "\n\n")
    return "".join(out).encode()


def _payload(reply: Reply) -> tuple[bytes, str]:
    """The bytes a reply sends and their content type."""
    if reply.sse is not None:
        return sse_bytes(reply.sse), "text/event-stream"
    if reply.body is not None:
        return reply.body, "application/json"
    return json.dumps(reply.json if reply.json is not None else {}).encode(), "application/json"


def _events(payload: bytes, content_type: str) -> list[bytes]:
    """A stream's payload split into its events (SSE) or frames (AWS event stream)."""
    if "text/event-stream" in content_type:
        return [event + b"\n\n" for event in payload.split(b"\n\n") if event]
    if "vnd.amazon.eventstream" not in content_type:
        return [payload]
    frames, at = [], 0
    while at < len(payload):
        size = int.from_bytes(payload[at : at + 4], "big") or len(payload)
        frames.append(payload[at : at + size])
        at += size
    return frames


#: Seconds between two looks at a held connection (has the client hung up?).
_CHECK_EVERY = 0.02


class _ReplyHandler(BaseHTTPRequestHandler):
    """Answers each request with the next scripted :class:`Reply` of its server's loopback."""

    server: _Server
    protocol_version = "HTTP/1.1"
    # Headers and body are written separately: without TCP_NODELAY, Nagle plus
    # delayed ACK adds ~40 ms to every keep-alive exchange.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        recorded = RecordedRequest(self.command, self.path, dict(self.headers.items()), body)
        reply = self.server.loopback._next(recorded)
        if reply.handler is not None:
            reply = reply.handler(recorded)
        if reply.delay and not self._hold(reply.delay):
            self.close_connection = True  # the client left, or the server stops: no reply
            return
        if reply.reset:
            self._reset()
        else:
            self._send(reply)

    do_POST = do_GET = do_PUT = do_DELETE = _handle

    def _reset(self) -> None:
        # RST instead of FIN: SO_LINGER with a zero timeout.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def _send(self, reply: Reply) -> None:
        payload, ctype = _payload(reply)
        headers = {"content-type": ctype, **reply.headers}
        if reply.truncate:
            # Say the connection ends here, so pooled clients do not reuse it.
            headers["connection"] = "close"
            payload = payload[: max(1, len(payload) // 2)]
        self.send_response(reply.status)
        for k, v in headers.items():
            self.send_header(k, v)
        if reply.stall:
            self._stall(payload, reply.stall)
            return
        if reply.truncate and reply.sse is None:
            # Promise more than we send, then hang up.
            self.send_header("content-length", str(len(payload) * 2))
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
            self.close_connection = True
            return
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        if reply.gap:
            self._send_apart(_events(payload, headers["content-type"]), reply.gap)
        else:
            self.wfile.write(payload)
        if reply.truncate:
            self.close_connection = True

    def _send_apart(self, events: list[bytes], gap: float) -> None:
        """Send each event on its own, ``gap`` seconds after the one before."""
        for index, event in enumerate(events):
            if index:
                time.sleep(gap)
            self.wfile.write(event)
            self.wfile.flush()

    def _stall(self, payload: bytes, seconds: float) -> None:
        """Send ``payload``, promise a megabyte more, stay silent ``seconds``, hang up."""
        self.send_header("content-length", str(len(payload) + (1 << 20)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()
        self._hold(seconds)
        self.close_connection = True

    def _hold(self, seconds: float) -> bool:
        """Wait ``seconds`` unless the client hangs up or the server stops first.

        True if the whole wait passed (the client is still there).
        """
        stopping = self.server.loopback.stopping
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            if stopping.wait(min(left, _CHECK_EVERY)) or self._client_gone():
                return False
        return True

    def _client_gone(self) -> bool:
        """Whether the client closed its end (readable, and nothing to read)."""
        ready, _, _ = select.select([self.connection], [], [], 0)
        if not ready:
            return False
        try:
            waiting: bytes = self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return True
        return waiting == b""


class _Server(ThreadingHTTPServer):
    # Benchmarks open hundreds of connections at once; the default backlog is 5.
    request_queue_size = 2048
    daemon_threads = True

    def __init__(self, loopback: LoopbackServer) -> None:
        super().__init__(("127.0.0.1", 0), _ReplyHandler)
        self.loopback = loopback

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up mid-reply is what timeout and reset tests do: not news.
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class LoopbackServer:
    """Serves :class:`Reply` objects in order on 127.0.0.1 (threaded)."""

    def __init__(self, replies: Iterable[Reply] = (), *, repeat: bool = False) -> None:
        self.replies = list(replies)
        self.repeat = repeat
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._index = 0
        self._server = _Server(self)
        self._thread: threading.Thread | None = None
        #: Set by :meth:`stop`: held replies end, the accept loop returns.
        self.stopping = threading.Event()
        self._wake_read, self._wake_write = socket.socketpair()

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._index < len(self.replies):
                reply = self.replies[self._index]
                self._index += 1
                return reply
            if self.repeat and self.replies:
                return self.replies[-1]
        return Reply(status=599, json={"error": {"message": "loopback script exhausted"}})

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def unplayed(self) -> int:
        with self._lock:
            return len(self.replies) - self._index

    def start(self) -> LoopbackServer:
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        return self

    def _serve(self) -> None:
        """Accept connections until :meth:`stop` wakes this loop (no polling interval)."""
        with selectors.DefaultSelector() as selector:
            selector.register(self._server.socket, selectors.EVENT_READ)
            selector.register(self._wake_read, selectors.EVENT_READ)
            while not self.stopping.is_set():
                for key, _ in selector.select():
                    if key.fileobj is self._server.socket and not self.stopping.is_set():
                        self._server.handle_request()

    def stop(self) -> None:
        """Stop accepting, end held replies, close the listening socket (once)."""
        if self.stopping.is_set():
            return
        self.stopping.set()
        self._wake_write.send(b"x")
        if self._thread is not None:
            self._thread.join()
        self._server.server_close()
        self._wake_read.close()
        self._wake_write.close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
