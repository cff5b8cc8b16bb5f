"""Process entry points for the multi-process tests (importable by spawned children)."""

from __future__ import annotations

import time
import urllib.request
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
