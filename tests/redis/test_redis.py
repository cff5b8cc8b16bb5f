"""llmport-redis against a real redis-server: shared buckets across processes."""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from llmport import ConfigError, Limit, Runtime
from llmport.controls.limits import RateInfo
from llmport.plugins.host import PluginHost
from llmport.provider.config import Config
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from llmport_redis import RedisLimiter
from llmport_redis import plugin as redis_plugin
from redis_workers import hold_slots, plugins, send_for


def limiter_url(redis_url: str, prefix: str) -> str:
    return f"{redis_url}?prefix={prefix}"


def test_four_processes_share_one_bucket_of_600_rpm(
    redis_url: str, prefix: str, tmp_path: Path
) -> None:
    """4 processes, 600 rpm, 10 s: the loopback server sees at most 105 requests in the window."""
    arrived: list[float] = []

    def count(request: RecordedRequest) -> Reply:
        arrived.append(time.time())
        return Reply(json={"ok": True})

    with LoopbackServer([Reply(handler=count)], repeat=True) as server:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(4) as pool:
            args = (limiter_url(redis_url, prefix), server.url, 10.0, 600, str(tmp_path))
            results = [pool.apply_async(send_for, args) for _ in range(4)]
            deadline = time.monotonic() + 60
            while len(list(tmp_path.glob("ready-*"))) < 4:  # all four imported and connected
                assert time.monotonic() < deadline, "the worker processes did not start"
                time.sleep(0.05)
            start_at = time.time() + 0.5
            (tmp_path / "go.tmp").write_text(repr(start_at))
            (tmp_path / "go.tmp").rename(tmp_path / "go")
            counts = [r.get(timeout=60) for r in results]
    assert all(c > 5 for c in counts), counts  # every process got its share
    in_window = [t for t in arrived if start_at <= t < start_at + 10.0]
    # Never more than the bucket allows; at least most of it, even when a loaded machine
    # is slow to run the four processes (the lower bound failed at load 10 with 95).
    assert 85 <= len(in_window) <= 105, (len(in_window), counts)


def test_concurrency_holds_across_processes(redis_url: str, prefix: str) -> None:
    active = [0]
    peak = [0]
    lock = threading.Lock()

    def slow(request: RecordedRequest) -> Reply:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.2)
        with lock:
            active[0] -= 1
        return Reply(json={"ok": True})

    with LoopbackServer([Reply(handler=slow)], repeat=True) as server:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(3) as pool:
            args = (limiter_url(redis_url, prefix), server.url, 4)
            done = [pool.apply_async(hold_slots, args) for _ in range(3)]
            assert [d.get(timeout=60) for d in done] == [4, 4, 4]
        assert len(server.requests) == 12
        assert peak[0] == 2


def test_same_buckets_as_in_process(redis_url: str, prefix: str) -> None:
    limiter = RedisLimiter.from_url(limiter_url(redis_url, prefix))
    limits = (("k", Limit(rpm=60, tpm=6000, concurrency=1)),)
    permit = limiter.try_acquire(limits, 100)
    assert not isinstance(permit, float)
    wait = limiter.try_acquire(limits, 100)
    assert isinstance(wait, float) and 0.9 < wait <= 1.0
    permit.release(used_tokens=400)  # 300 more tokens than charged: +3 s on the token bucket
    wait = limiter.try_acquire(limits, 100)
    assert isinstance(wait, float) and 3.8 < wait <= 4.0
    limiter.close()


def test_rate_info_pauses_the_shared_bucket(redis_url: str, prefix: str) -> None:
    limiter = RedisLimiter.from_url(limiter_url(redis_url, prefix))
    limits = (("k", Limit(rpm=60_000)),)
    permit = limiter.try_acquire(limits, 1)
    assert not isinstance(permit, float)
    permit.release(None, RateInfo(retry_after=2.0))
    other = RedisLimiter.from_url(limiter_url(redis_url, prefix))  # another "process"
    wait = other.try_acquire(limits, 1)
    assert isinstance(wait, float) and 1.9 < wait <= 2.0
    limiter.close()
    other.close()


async def test_async_runs_share_the_bucket_without_blocking_the_loop(
    redis_url: str, prefix: str
) -> None:
    calls: list[float] = []

    async def call(content: Any, model: str, response_format: Any) -> str:
        calls.append(time.monotonic())
        return "ok"

    rt = Runtime(
        call=call,
        model="test:m",
        limits={"test:*": Limit(rpm=300, concurrency=2)},  # 0.2 s apart
        limiter=limiter_url(redis_url, prefix),
        config=Config(),
        plugins=plugins(),
    )
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    task = asyncio.create_task(ticker())
    await asyncio.gather(*(rt.async_exec("hi") for _ in range(4)))
    done.set()
    await task
    assert len(calls) == 4
    gaps = [b - a for a, b in itertools.pairwise(calls)]
    assert all(g > 0.15 for g in gaps), gaps
    assert ticks >= 40
    await rt.aclose()


def test_the_plugin_registers_its_url_schemes(redis_url: str, prefix: str) -> None:
    host = PluginHost([redis_plugin], load_entry_points=False)
    assert set(host.limiters()) >= {"redis", "rediss", "unix"}
    rt = Runtime(
        call=lambda c, m, r: "ok",
        model="test:m",
        limits={"test:*": Limit(rpm=6000)},
        limiter=limiter_url(redis_url, prefix),
        plugins=host,
        config=Config(),
    )
    assert isinstance(rt.limiter, RedisLimiter)
    assert rt.exec("hi") == "ok"
    assert "prefix" not in rt.limiter.url
    rt.close()


def test_without_the_plugin_a_redis_url_names_it() -> None:
    rt = Runtime(
        call=lambda c, m, r: "ok",
        model="test:m",
        limits={"test:*": Limit(rpm=60)},
        limiter="redis://localhost:1/0",
        config=Config(),
    )
    with pytest.raises(ConfigError, match="llmport-redis"):
        rt.exec("hi")
