"""Helpers for the OpenAI plugin tests (importable as ``openai_helpers``)."""

from __future__ import annotations

import asyncio
from typing import Any

import llmport_openai.plugin
from llmport import Backoff, Runtime
from llmport.messages.types import StreamEvent
from llmport.plugins.host import PluginHost
from llmport.testing import recording_backoff

__all__ = ["Delays", "Driver", "make_runtime", "request_json"]
from support.cassette_support import request_json
from support.openai_scenarios import FAKE_KEY


class Delays(list[float]):
    """Records the backoff delays instead of sleeping."""

    def backoff(self) -> Backoff:
        return recording_backoff(self, initial=0.001, maximum=0.001)


def make_runtime(model: str, delays: Delays, *, max_retries: int = 3, **settings: Any) -> Runtime:
    prefix = model.split(":", 1)[0]
    host = PluginHost(extra=[llmport_openai.plugin], load_entry_points=False)
    return Runtime(
        model=model,
        plugins=host,
        backoff=delays.backoff(),
        max_retries=max_retries,
        providers={prefix: {"api_key": FAKE_KEY, **settings}},
    )


class Driver:
    """The same call through the sync or the async API."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.is_async = mode == "async"

    def __repr__(self) -> str:
        return self.mode

    def run(self, rt: Runtime, **kwargs: Any) -> Any:
        if self.is_async:
            return asyncio.run(rt.arun(**kwargs))
        return rt.run(**kwargs)

    def stream(self, rt: Runtime, **kwargs: Any) -> list[StreamEvent]:
        if self.is_async:

            async def collect() -> list[StreamEvent]:
                return [event async for event in rt.astream(**kwargs)]

            return asyncio.run(collect())
        return list(rt.stream(**kwargs))
