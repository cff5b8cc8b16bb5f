"""Limiter outages, in the core: a limiter that is down is typed, or let through with "allow"."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from llmport import ConfigError, Limit, LimiterUnavailable
from llmport.controls.limits import Permit
from llmport.provider.config import Config
from llmport.testing import Script


class Down:
    """A limiter whose backing service refuses every connection (as a driver would say)."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error or ConnectionRefusedError("Error 111 connecting to 10.0.0.5:6379")

    def try_acquire(self, limits: Any, tokens: int) -> Permit | float:
        raise self.error

    async def atry_acquire(self, limits: Any, tokens: int) -> Permit | float:
        raise self.error

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return "Down(10.0.0.5)"


def test_a_limiter_that_is_down_raises_limiter_unavailable_before_any_request() -> None:
    script = Script(["ok"])
    rt = script.runtime(config=Config(), limits={"scripted:*": Limit(rpm=60)}, limiter=Down())
    with pytest.raises(LimiterUnavailable) as caught:
        rt.exec("hi")
    err = caught.value
    assert err.service == "Down(10.0.0.5)"
    assert "ConnectionRefusedError" in err.detail and "10.0.0.5:6379" in err.detail
    assert err.__cause__ is None and err.__context__ is None  # no driver error inside
    assert isinstance(err, ConnectionError)
    assert script.requests == []


def test_a_limiters_own_typed_error_passes_as_it_is() -> None:
    own = LimiterUnavailable("Redis at 10.0.0.5:6379", "timed out")
    rt = Script(["ok"]).runtime(
        config=Config(), limits={"scripted:*": Limit(concurrency=1)}, limiter=Down(own)
    )
    with pytest.raises(LimiterUnavailable) as caught:
        rt.exec("hi")
    assert caught.value is own


def test_on_unavailable_allow_sends_without_the_limit_and_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    script = Script(["ok", "again"])
    limit = Limit(concurrency=1, on_unavailable="allow")
    rt = script.runtime(config=Config(), limits={"scripted:*": limit}, limiter=Down())
    with caplog.at_level(logging.WARNING, logger="llmport"):
        assert rt.exec("hi") == "ok"
        assert asyncio.run(rt.async_exec("hi")) == "again"
    warned = [r for r in caplog.records if "on_unavailable='allow'" in r.getMessage()]
    assert len(warned) == 2


def test_every_matching_limit_must_allow() -> None:
    limits = {
        "scripted:*": Limit(rpm=60, on_unavailable="allow"),
        "scripted:test": Limit(concurrency=2),  # "fail", the default
    }
    rt = Script(["ok"]).runtime(config=Config(), limits=limits, limiter=Down())
    with pytest.raises(LimiterUnavailable):
        rt.exec("hi")


async def test_async_runs_get_the_typed_error_too() -> None:
    rt = Script(["ok"]).runtime(
        config=Config(), limits={"scripted:*": Limit(rpm=60)}, limiter=Down()
    )
    with pytest.raises(LimiterUnavailable):
        await rt.async_exec("hi")


def test_on_unavailable_is_checked_and_configurable_as_a_table() -> None:
    with pytest.raises(ConfigError, match="on_unavailable"):
        Limit(concurrency=1, on_unavailable="maybe")  # type: ignore[arg-type]
    assert Limit.of({"concurrency": 2, "on_unavailable": "allow"}).on_unavailable == "allow"
    assert Limit(rpm=1).on_unavailable == "fail"
