"""Helpers shared by the core tests (``from support.core_helpers import ...``)."""

from __future__ import annotations

import asyncio
from typing import Any

from llmport import Runtime
from llmport.controls.retry import Backoff
from llmport.provider.config import Config
from llmport.testing import Script


class Driver:
    """Runs the same call through the sync or the async API of a Runtime."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.is_async = mode == "async"

    def __repr__(self) -> str:
        return self.mode

    def exec(self, rt: Runtime, *args: Any, **kwargs: Any) -> Any:
        if self.is_async:
            return asyncio.run(rt.async_exec(*args, **kwargs))
        return rt.exec(*args, **kwargs)

    def run(self, rt: Runtime, *args: Any, **kwargs: Any) -> Any:
        if self.is_async:
            return asyncio.run(rt.arun(*args, **kwargs))
        return rt.run(*args, **kwargs)

    def stream(self, rt: Runtime, *args: Any, **kwargs: Any) -> list[Any]:
        if self.is_async:

            async def collect() -> list[Any]:
                return [event async for event in rt.astream(*args, **kwargs)]

            return asyncio.run(collect())
        return list(rt.stream(*args, **kwargs))


def scripted(script: Script, **settings: Any) -> Runtime:
    """A runtime wired to ``script``, with empty configuration and no sleeping."""
    settings.setdefault("config", Config())
    settings.setdefault("backoff", Backoff.none())
    return script.runtime(**settings)


def make_tool(fn: Any, **properties: dict[str, Any]) -> Any:
    """A Tool built by hand, so these core tests do not depend on schema generation."""
    from llmport.tools.tool import Tool

    schema = {"type": "object", "properties": properties, "required": sorted(properties)}
    return Tool(name=fn.__name__, description=fn.__doc__ or "", parameters=schema, fn=fn)
