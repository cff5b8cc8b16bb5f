"""Shared by the agent tests: scripted runtimes and the ways to run."""

from __future__ import annotations

from typing import Any

from llmport import Runtime
from llmport.controls.retry import Backoff
from llmport.provider.config import Config
from llmport.testing import Script
from support.api_modes import events_via, run_via

#: (mode, stream): run/arun and stream/astream.
WAYS = [("sync", False), ("async", False), ("sync", True), ("async", True)]
WAY_IDS = ["run", "arun", "stream", "astream"]


def runtime(*scripts: Script, model: str | None = None, **settings: Any) -> Runtime:
    settings.setdefault("config", Config())
    settings.setdefault("backoff", Backoff.none())
    first = scripts[0]
    return Runtime(model=model or f"{first.prefix}:test", hooks=list(scripts), **settings)


async def run(way: tuple[str, bool], rt: Runtime, *args: Any, **kwargs: Any) -> Any:
    mode, stream = way
    return await run_via(mode, rt, *args, stream=stream, **kwargs)


__all__ = ["WAYS", "WAY_IDS", "events_via", "run", "runtime"]
