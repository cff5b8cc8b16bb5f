"""A cached conversation continued turn by turn (the cache-breakpoint tests of each vendor)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from llmport import Runtime, Tool
from llmport.errors import OptionError
from llmport.testing.loopback import LoopbackServer, Reply
from support.api_modes import run_via

LOOKUP = Tool("lookup", "Look a term up.", {"type": "object", "properties": {}}, lambda: "...")
#: Five explicit marks in one turn: one more than Anthropic and Bedrock take.
FIVE_MARKS = [{"type": "text", "text": f"doc {i}", "cache": True} for i in range(5)]


async def continue_cached(mode: str, rt: Runtime, turns: int, *, stream: bool) -> None:
    """``turns`` turns, each prompt marked, ``cache="auto"``, continued with ``history=``."""
    history: list[Any] = []
    for i in range(turns):
        prompt = [{"type": "text", "text": f"question {i}", "cache": True}]
        result = await run_via(
            mode,
            rt,
            prompt,
            history=history,
            system="Be brief.",
            tools=[LOOKUP],
            cache="auto",
            stream=stream,
        )
        history = result.messages


async def cached_bodies(
    mode: str, replies: list[Reply], runtime: Callable[[LoopbackServer], Runtime], *, stream: bool
) -> list[Any]:
    """The request bodies of a cached conversation of ``len(replies)`` turns."""
    with LoopbackServer(replies) as server:
        await continue_cached(mode, runtime(server), len(replies), stream=stream)
        bodies = [r.json() for r in server.requests]
    assert len(bodies) == len(replies)
    return bodies


async def assert_five_marks_refused(
    mode: str, runtime: Callable[[LoopbackServer], Runtime]
) -> None:
    """Five explicit marks: an ``OptionError`` naming the model and the limit, and nothing sent."""
    with LoopbackServer([]) as server:
        refused = r"^\w+:.+: 5 cache breakpoints in one request, over the limit of 4$"
        with pytest.raises(OptionError, match=refused):
            await run_via(mode, runtime(server), FIVE_MARKS)
        assert server.requests == []  # refused before anything was sent
