"""Leases and outages for the limiters: leases come back on every exit, outages are typed."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from llmport import ConfigError, InProcessLimiter, Limit, LimiterUnavailable, Runtime
from llmport.controls.limits import Limiter, Permit
from llmport.provider.config import Config
from llmport_redis import RedisLimiter
from redis_workers import RedisServer, plugins

CONC = (("k", Limit(concurrency=1)),)


class Recording:
    """A limiter that passes every ask to ``inner`` and keeps its answers (waits are floats)."""

    def __init__(self, inner: Limiter) -> None:
        self.inner = inner
        self.answers: list[Permit | float] = []

    def try_acquire(self, limits: Any, tokens: int) -> Permit | float:
        got = self.inner.try_acquire(limits, tokens)
        self.answers.append(got)
        return got

    async def atry_acquire(self, limits: Any, tokens: int) -> Permit | float:
        got = await self.inner.atry_acquire(limits, tokens)
        self.answers.append(got)
        return got

    def close(self) -> None:
        self.inner.close()

    def waits(self) -> list[float]:
        return [a for a in self.answers if isinstance(a, float)]


def runtime(limiter: Any, call: Any, limit: Limit | None = None) -> Runtime:
    return Runtime(
        call=call,
        model="test:m",
        limits={"test:*": limit or Limit(concurrency=1)},
        limiter=limiter,
        config=Config(),
        plugins=plugins(),
    )


def url(redis_url: str, prefix: str, extra: str = "") -> str:
    return f"{redis_url}?prefix={prefix}{extra}"


def make(kind: str, redis_url: str, prefix: str) -> Limiter:
    if kind == "memory":
        return InProcessLimiter()
    return RedisLimiter.from_url(url(redis_url, prefix))


def answer(content: Any, model: str, response_format: Any) -> str:
    return "ok"


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_200_asyncio_runs_in_a_row_never_wait_for_a_lease(
    redis_url: str, prefix: str, kind: str
) -> None:
    inner = make(kind, redis_url, prefix)
    limiter = Recording(inner)
    rt = runtime(limiter, answer)
    for _ in range(200):  # each loop ends right after its call: its release must not need it
        assert asyncio.run(rt.async_exec("hi", deadline=5)) == "ok"
    assert len(limiter.answers) == 200
    assert limiter.waits() == []  # not one ask was told to wait for the slot
    assert rt.exec("hi") == "ok"  # a sync caller of the same limiter
    if kind == "redis":  # and another process sharing the Redis
        other = RedisLimiter.from_url(url(redis_url, prefix))
        permit = other.try_acquire((("test:*", Limit(concurrency=1)),), 0)
        assert not isinstance(permit, float)
        permit.release()
        other.close()
    assert limiter.waits() == []
    rt.close()



def test_a_killed_holders_slot_frees_when_its_lease_runs_out(
    redis_url: str, prefix: str, tmp_path: Path
) -> None:
    lease = 1.0
    ready = tmp_path / "ready"
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import redis_workers;"
        "redis_workers.hold_forever(sys.argv[2], sys.argv[3])"
    )
    holder_url = url(redis_url, prefix, f"&lease={lease}")
    here = str(Path(__file__).parent)
    holder = subprocess.Popen([sys.executable, "-c", code, here, holder_url, str(ready)])
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert holder.poll() is None and time.monotonic() < deadline, "holder did not start"
            time.sleep(0.02)
        probe = RedisLimiter.from_url(url(redis_url, prefix))
        time.sleep(2.5 * lease)  # alive: its heartbeat keeps the lease past its first expiry
        assert isinstance(probe.try_acquire(CONC, 0), float)
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(10)
        killed = time.monotonic()
        while isinstance(got := probe.try_acquire(CONC, 0), float):
            assert time.monotonic() - killed < 30, "the dead holder's slot never came back"
            time.sleep(0.05)
        freed = time.monotonic() - killed
        assert freed <= lease + 0.5, freed
        got.release()
        probe.close()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(10)


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_a_cancelled_call_gives_its_slot_back(
    redis_url: str, prefix: str, kind: str
) -> None:
    inner = make(kind, redis_url, prefix)
    started = asyncio.Event()

    async def forever(content: Any, model: str, response_format: Any) -> str:
        started.set()
        await asyncio.sleep(3600)
        return "never"

    rt = runtime(inner, forever)
    task = asyncio.create_task(rt.async_exec("hi"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    bucket = (("test:*", Limit(concurrency=1)),)
    permit = await inner.atry_acquire(bucket, 0)  # the same limiter: its release landed first
    assert not isinstance(permit, float)
    permit.release()
    rt.close()


# --- outages ----------------------------------------------------------------------------


def test_redis_down_is_a_typed_error_naming_it_within_the_bound(
    own_redis: RedisServer, prefix: str
) -> None:
    rt = runtime(url(own_redis.url, prefix, "&timeout=1"), answer)
    assert rt.exec("hi") == "ok"
    own_redis.stop()
    started = time.monotonic()
    with pytest.raises(LimiterUnavailable) as caught:
        rt.exec("hi")
    assert time.monotonic() - started < 2.5  # timeout=1, and room for a loaded machine
    err = caught.value
    assert err.service == f"Redis at 127.0.0.1:{own_redis.port}"
    assert err.__cause__ is None and err.__context__ is None  # no redis exception inside
    own_redis.start()  # restarted: the same runtime works again
    assert rt.exec("hi") == "ok"
    rt.close()


def test_redis_that_never_answers_is_unavailable_within_the_timeout(prefix: str) -> None:
    with socket.socket() as mute:  # accepts connections (the backlog), never says a word
        mute.bind(("127.0.0.1", 0))
        mute.listen(8)
        port = mute.getsockname()[1]
        limiter = RedisLimiter.from_url(f"redis://127.0.0.1:{port}/0?timeout=1")
        started = time.monotonic()
        with pytest.raises(LimiterUnavailable):
            limiter.try_acquire(CONC, 0)
        assert time.monotonic() - started < 2.5  # timeout=1, and room for a loaded machine
        limiter.close()


async def test_redis_down_async_is_typed_too(own_redis: RedisServer, prefix: str) -> None:
    rt = runtime(url(own_redis.url, prefix, "&timeout=1"), answer)
    own_redis.stop()
    with pytest.raises(LimiterUnavailable):
        await rt.async_exec("hi")
    await rt.aclose()


def test_on_unavailable_allow_sends_unlimited_and_warns(
    own_redis: RedisServer, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    limit = Limit(concurrency=1, on_unavailable="allow")
    rt = runtime(url(own_redis.url, prefix, "&timeout=1"), answer, limit)
    own_redis.stop()
    with caplog.at_level(logging.WARNING, logger="llmport"):
        assert rt.exec("hi") == "ok"
    assert any("on_unavailable='allow'" in r.getMessage() for r in caplog.records)
    rt.close()


def test_an_answer_received_before_redis_died_is_returned(
    own_redis: RedisServer, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    def answers_then_redis_dies(content: Any, model: str, response_format: Any) -> str:
        own_redis.stop()
        return "the answer"

    limiter = RedisLimiter.from_url(url(own_redis.url, prefix, "&timeout=1"))
    rt = runtime(limiter, answers_then_redis_dies)
    with caplog.at_level(logging.WARNING, logger="llmport"):
        assert rt.exec("hi") == "the answer"
    assert [e.service for e in limiter.failed_releases] == [f"Redis at 127.0.0.1:{own_redis.port}"]
    assert any("release failed" in r.getMessage() for r in caplog.records)
    rt.close()


async def test_a_permit_granted_after_its_acquire_was_cancelled_is_given_back(
    redis_url: str, prefix: str
) -> None:
    limiter = RedisLimiter.from_url(url(redis_url, prefix, "&lease=60"))  # only a release frees it
    for _ in range(20):  # cancel while the worker thread is asking Redis
        task = asyncio.create_task(limiter.atry_acquire(CONC, 0))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        deadline = time.monotonic() + 2
        while isinstance(got := limiter.try_acquire(CONC, 0), float):
            assert time.monotonic() < deadline, "the cancelled acquire kept its slot"
            await asyncio.sleep(0.01)
        got.release()
    limiter.close()


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_renews_and_releases_its_own_leases(redis_url: str, prefix: str) -> None:
    limiter = RedisLimiter.from_url(url(redis_url, prefix, "&lease=1"))
    held = limiter.try_acquire(CONC, 0)  # the parent starts its heartbeat thread
    assert not isinstance(held, float)
    held.release()
    pid = os.fork()
    if pid == 0:  # the child: its lease must outlive one expiry (its own heartbeat renews it)
        code = 1
        try:
            permit = limiter.try_acquire(CONC, 0)
            time.sleep(1.6)
            taken = RedisLimiter.from_url(url(redis_url, prefix)).try_acquire(CONC, 0)
            if not isinstance(permit, float) and isinstance(taken, float):
                permit.release()
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    again = limiter.try_acquire(CONC, 0)
    assert not isinstance(again, float)
    again.release()
    limiter.close()


async def test_a_closed_limiter_can_be_used_again(redis_url: str, prefix: str) -> None:
    limiter = RedisLimiter.from_url(url(redis_url, prefix))
    for _ in range(2):
        permit = await limiter.atry_acquire(CONC, 0)
        assert not isinstance(permit, float)
        permit.release()  # on the loop: handed to the releaser thread
        limiter.close()  # waits for it
        again = limiter.try_acquire(CONC, 0)
        assert not isinstance(again, float)
        again.release()


@pytest.mark.parametrize("option", ["lease=0", "timeout=-1"])
def test_lease_and_timeout_must_be_positive(redis_url: str, option: str) -> None:
    with pytest.raises(ConfigError, match=option.split("=")[0]):
        RedisLimiter.from_url(f"{redis_url}?{option}")
