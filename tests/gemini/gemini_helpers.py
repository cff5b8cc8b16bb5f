"""Shared helpers of the Gemini plugin tests: isolation, runtimes, a sync/async driver."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from llmport import RunResult, Runtime
from llmport.testing import recording_backoff
from support.api_modes import events_via, run_via

#: The three client paths: sync (httpx2), async on aiohttp, async on httpx2.
PATHS = [
    pytest.param(("sync", None), id="sync"),
    pytest.param(("async", "aiohttp"), id="async-aiohttp"),
    pytest.param(("async", "httpx"), id="async-httpx"),
]
STREAMED = [pytest.param(False, id="whole"), pytest.param(True, id="stream")]


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No host keys, Vertex switches or llmport configuration leak into a test."""
    for key in list(os.environ):
        if key.startswith(("LLMPORT_", "GEMINI_", "GOOGLE_")):
            monkeypatch.delenv(key)
    yield


def runtime(
    model: str, delays: list[float] | None = None, max_retries: int = 3, **settings: Any
) -> Runtime:
    """A Runtime whose backoff records its delays instead of sleeping."""
    recorded = delays if delays is not None else []

    return Runtime(
        model=model,
        max_retries=max_retries,
        backoff=recording_backoff(recorded, jitter=False, initial=0.25),
        providers={"gemini": {"api_key": "test-key", **settings}},
    )


async def closing(mode: str, rt: Runtime) -> None:
    """Close ``rt`` as its API mode does (``close()`` / ``await aclose()``)."""
    if mode == "sync":
        rt.close()
    else:
        await rt.aclose()


async def run(mode: str, rt: Runtime, *, close: bool = True, **kwargs: Any) -> RunResult:
    """One call through the sync or async API; then the runtime's clients are closed."""
    try:
        return await run_via(mode, rt, **kwargs)
    finally:
        if close:
            await closing(mode, rt)


async def stream(mode: str, rt: Runtime, *, close: bool = True, **kwargs: Any) -> list[Any]:
    """Every event of one streamed call; then the runtime's clients are closed."""
    try:
        return await events_via(mode, rt, **kwargs)
    finally:
        if close:
            await closing(mode, rt)
