"""A loopback TCP proxy in front of a PostgreSQL server's Unix socket, for fault tests.

``TcpProxy(socket_path)`` listens on 127.0.0.1 and forwards each connection
to the server. With ``drop_reply_to=b"INSERT INTO llmport_nodes"`` it forwards
the first client message holding those bytes, then closes both sides as soon
as the server's reply arrives (after ``hold`` seconds), without passing it
on: the statement ran and committed, the client never hears so (a connection
dropped after the commit). ``refuse_after_drop`` then closes every other
connection and turns new ones away, like a server that went down with it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any

__all__ = ["TcpProxy"]


class TcpProxy:
    """Forwards 127.0.0.1:``port`` to ``socket_path``; optionally drops one reply."""

    def __init__(
        self,
        socket_path: str,
        *,
        drop_reply_to: bytes | None = None,
        hold: float = 0.0,
        refuse_after_drop: bool = False,
    ) -> None:
        self.socket_path = socket_path
        self.drop_reply_to = drop_reply_to
        self.hold = hold
        self.refuse_after_drop = refuse_after_drop
        self.dropped = 0
        self._live: list[socket.socket] = []  # every forwarded socket, both sides
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port: int = self._listener.getsockname()[1]
        # The client socket whose connection carried the watched message: only the
        # reply on that connection is dropped (the pool's other connections, e.g. one
        # it opens meanwhile, pass untouched), and only once (the lock).
        self._armed: socket.socket | None = None
        self._lock = threading.Lock()
        self._claimed = False  # a reply was picked to be dropped (counted after ``hold``)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self.dropped and self.refuse_after_drop:
                client.close()
                continue
            server = socket.socket(socket.AF_UNIX)
            try:
                server.connect(self.socket_path)
            except OSError:
                client.close()  # the server is down: the client sees the connection closed
                continue
            self._live += [client, server]
            threading.Thread(target=self._up, args=(client, server), daemon=True).start()
            threading.Thread(target=self._down, args=(server, client), daemon=True).start()

    def _up(self, client: socket.socket, server: socket.socket) -> None:
        """Client to server; notes when the watched statement passes."""
        self._pump(client, server, watch=True)

    def _down(self, server: socket.socket, client: socket.socket) -> None:
        """Server to client; swallows the reply to the watched statement and hangs up."""
        self._pump(server, client, watch=False)

    def _pump(self, source: socket.socket, sink: socket.socket, *, watch: bool) -> None:
        try:
            while data := source.recv(65536):
                if watch and self.drop_reply_to is not None and self.drop_reply_to in data:
                    with self._lock:
                        if self._armed is None:
                            self._armed = source
                elif not watch and self._takes_the_drop(sink):
                    time.sleep(self.hold)
                    self.dropped += 1  # the statement committed; its reply is lost
                    if self.refuse_after_drop:
                        _close(*self._live)  # the "server" is gone for every connection
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            _close(source, sink)

    def _takes_the_drop(self, client: socket.socket) -> bool:
        """Whether this reply, going to ``client``, is the one to swallow (counted once)."""
        with self._lock:
            if self._armed is not client or self._claimed:
                return False
            self._claimed = True
            return True

    def close(self) -> None:
        self._listener.close()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _close(*sockets: socket.socket) -> None:
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()
