"""Fixtures for the tool-loop tests: every behaviour runs through exec and async_exec."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def run(mode: str) -> Callable[..., Any]:
    """``run(rt, content, **kw)`` -> RunResult, through Runtime.run or Runtime.arun."""

    def go(rt: Any, *args: Any, **kwargs: Any) -> Any:
        if mode == "sync":
            return rt.run(*args, **kwargs)
        return asyncio.run(rt.arun(*args, **kwargs))

    return go


@pytest.fixture
def execute(mode: str) -> Callable[..., Any]:
    """``execute(rt, content, **kw)`` -> what exec / async_exec return."""

    def go(rt: Any, *args: Any, **kwargs: Any) -> Any:
        if mode == "sync":
            return rt.exec(*args, **kwargs)
        return asyncio.run(rt.async_exec(*args, **kwargs))

    return go
