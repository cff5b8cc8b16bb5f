"""Rate limits: the in-process limiter, its place in a run, and what vendors say."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from llmport import ConfigError, Limit, LimitWaitTimeout, RateLimitError, Runtime
from llmport.controls.limits import (
    Acquire,
    Gate,
    InProcessLimiter,
    RateInfo,
    acquire,
    make_limiter,
    match_limits,
    rate_info_from_headers,
)
from llmport.controls.retry import Backoff
from llmport.messages.types import Usage
from llmport.provider.config import Config, load_config
from llmport.testing import Script, fail, reply


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


KEY = (("k", Limit(rpm=60)),)


# --- the limiter alone -------------------------------------------------------------------


def test_rpm_spaces_requests_evenly() -> None:
    clock = FakeClock()
    limiter = InProcessLimiter(clock)
    first = limiter.try_acquire(KEY, 10)
    assert not isinstance(first, float)
    wait = limiter.try_acquire(KEY, 10)
    assert wait == pytest.approx(1.0)  # 60 rpm: one a second, no burst
    clock.now += 1.0
    assert not isinstance(limiter.try_acquire(KEY, 10), float)


def test_tpm_charges_the_estimate_then_corrects_with_real_usage() -> None:
    clock = FakeClock()
    limiter = InProcessLimiter(clock)
    limits = (("k", Limit(tpm=6000)),)  # 100 tokens a second
    permit = limiter.try_acquire(limits, 100)
    assert not isinstance(permit, float)
    assert limiter.try_acquire(limits, 100) == pytest.approx(1.0)
    permit.release(used_tokens=300)  # the reply used more than estimated
    assert limiter.try_acquire(limits, 100) == pytest.approx(3.0)


def test_concurrency_slots_are_held_until_release() -> None:
    limiter = InProcessLimiter()
    limits = (("k", Limit(concurrency=2)),)
    a = limiter.try_acquire(limits, 0)
    b = limiter.try_acquire(limits, 0)
    assert not isinstance(a, float) and not isinstance(b, float)
    assert isinstance(limiter.try_acquire(limits, 0), float)
    a.release()
    a.release()  # twice is once
    c = limiter.try_acquire(limits, 0)
    assert not isinstance(c, float)
    assert isinstance(limiter.try_acquire(limits, 0), float)


def test_every_matching_limit_applies_all_or_nothing() -> None:
    clock = FakeClock()
    limiter = InProcessLimiter(clock)
    limits = {"openai:*": Limit(rpm=600), "openai:gpt-4o": Limit(rpm=60), "anthropic:*": Limit()}
    matched = match_limits(limits, "openai:gpt-4o")
    assert [k for k, _ in matched] == ["openai:*", "openai:gpt-4o"]
    assert not isinstance(limiter.try_acquire(matched, 0), float)
    assert limiter.try_acquire(matched, 0) == pytest.approx(1.0)  # the tighter one
    # the broader bucket was charged once, not twice
    mini = match_limits(limits, "openai:gpt-4o-mini")
    clock.now += 0.1
    assert not isinstance(limiter.try_acquire(mini, 0), float)


def test_vendor_headers_pause_the_buckets() -> None:
    clock = FakeClock()
    limiter = InProcessLimiter(clock)
    permit = limiter.try_acquire((("k", Limit(rpm=6000, tpm=1e9)),), 1)
    assert not isinstance(permit, float)
    permit.release(None, RateInfo(retry_after=5.0))
    assert limiter.try_acquire((("k", Limit(rpm=6000, tpm=1e9)),), 1) == pytest.approx(5.0)


def test_openai_and_anthropic_rate_headers() -> None:
    openai = rate_info_from_headers(
        {
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-remaining-tokens": "15000",
            "x-ratelimit-reset-requests": "1m6s",
            "x-ratelimit-reset-tokens": "20ms",
        }
    )
    assert openai == RateInfo(0, 15000, 66.0, 0.02, None)
    assert openai.pause() == (66.0, 0.0)
    anthropic = rate_info_from_headers(
        {
            "anthropic-ratelimit-requests-remaining": "10",
            "anthropic-ratelimit-input-tokens-remaining": "0",
            "anthropic-ratelimit-input-tokens-reset": "2030-01-01T00:00:30Z",
            "retry-after": "7",
        },
        now_wall=1893456000.0,  # 2030-01-01T00:00:00Z
    )
    assert anthropic == RateInfo(10, 0, None, 30.0, 7.0)
    assert anthropic.pause() == (7.0, 30.0)
    assert rate_info_from_headers({"retry-after-ms": "1500"}) == RateInfo(retry_after=1.5)
    assert rate_info_from_headers({"content-type": "x"}) is None


def test_a_wait_past_the_deadline_raises_instead_of_sleeping() -> None:
    limiter = InProcessLimiter()
    gate = Gate(limiter, (("k", Limit(rpm=1)),), "openai:gpt-4o")
    slept: list[float] = []
    backoff = Backoff(sleep=slept.append)
    acquire(Acquire(gate, 1, backoff))
    with pytest.raises(LimitWaitTimeout, match="openai:gpt-4o"):
        acquire(Acquire(gate, 1, backoff, deadline=time.monotonic() + 5))
    assert slept == []


def test_limit_values_are_checked() -> None:
    for bad in ({"rpm": 0}, {"tpm": -1}, {"concurrency": 0}, {"concurrency": 1.5}, {"rpm": True}):
        with pytest.raises(ConfigError):
            Limit(**bad)
    with pytest.raises(ConfigError, match="unknown limit key"):
        Runtime(model="x:y", limits={"x:*": {"rps": 3}})


def test_unknown_limiter_scheme_names_the_plugin() -> None:
    with pytest.raises(ConfigError, match="llmport-redis"):
        make_limiter("redis://localhost", {})
    assert isinstance(make_limiter(None, {}), InProcessLimiter)
    shared = InProcessLimiter()
    assert make_limiter(shared, {}) is shared


# --- in a run ------------------------------------------------------------------------------


def test_no_matching_limit_costs_nothing() -> None:
    script = Script(["ok"])
    # A limiter that cannot be made: the run would raise if it made one at all.
    limits = {"openai:*": Limit(rpm=1)}
    rt = script.runtime(config=Config(), limits=limits, limiter="nosuch://x")
    assert rt.exec("hi") == "ok"
    assert rt.gate("scripted:test") is None
    with pytest.raises(ConfigError, match="no limiter for 'nosuch'"):
        rt.limiter  # noqa: B018 - made on first use, and only then


def test_in_process_rpm_holds_across_threads() -> None:
    """3000 rpm for 2 s: at most 105 requests, whatever the number of callers."""
    sent: list[float] = []

    def call(content: Any, model: str, response_format: Any) -> str:
        sent.append(time.monotonic())
        return "ok"

    rt = Runtime(call=call, model="test:m", limits={"test:*": Limit(rpm=3000)}, config=Config())
    stop = time.monotonic() + 2.0

    def worker() -> None:
        while time.monotonic() < stop:
            rt.exec("hi")

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    in_window = [t for t in sent if t < stop]
    # Never more than the bucket allows. The lower bound only shows the limiter does not
    # starve callers: a loaded machine runs the four threads' execs slowly (53 at load 10).
    assert 60 <= len(in_window) <= 105, len(in_window)


def test_concurrency_limit_holds_and_slots_come_back_after_errors() -> None:
    active = [0]
    peak = [0]
    lock = threading.Lock()
    calls = [0]

    def call(content: Any, model: str, response_format: Any) -> str:
        with lock:
            active[0] += 1
            calls[0] += 1
            peak[0] = max(peak[0], active[0])
            n = calls[0]
        time.sleep(0.03)
        with lock:
            active[0] -= 1
        if n % 3 == 0:
            raise ConnectionError("flaky")  # retried: its slot must come back
        return "ok"

    rt = Runtime(
        call=call,
        model="test:m",
        max_retries=5,
        backoff=Backoff.none(),
        limits={"test:*": Limit(concurrency=2)},
        config=Config(),
    )
    threads = [threading.Thread(target=rt.exec, args=("hi",)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 2
    assert not isinstance(rt.limiter.try_acquire(rt.gate("test:m").limits, 0), float)  # type: ignore[union-attr]


async def test_async_wait_does_not_block_other_tasks() -> None:
    script = Script(["one", "two"])
    rt = script.runtime(config=Config(), limits={"scripted:*": Limit(rpm=120)})  # 0.5 s apart
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    task = asyncio.create_task(ticker())
    started = time.monotonic()
    assert await rt.async_exec("a") == "one"
    assert await rt.async_exec("b") == "two"
    elapsed = time.monotonic() - started
    done.set()
    await task
    assert 0.45 <= elapsed < 1.5
    assert ticks >= 10  # the loop kept running while the second call waited (50 ticks if idle)


def test_429_retry_after_pauses_the_bucket_for_every_caller() -> None:
    script = Script(
        [fail(RateLimitError("429", status=429, retryable=True, retry_after=0.3)), "ok"]
    )
    slept: list[float] = []
    rt = script.runtime(
        config=Config(),
        limits={"scripted:*": Limit(rpm=60_000)},
        backoff=Backoff(initial=0.0, maximum=0.0, respect_retry_after=False, sleep=slept.append),
    )
    assert rt.exec("hi") == "ok"
    # the backoff did not wait (respect_retry_after=False), the bucket did
    waits = [s for s in slept if s > 0]
    # ~0.3 s less the time since the 429 (room for a loaded CI machine); never 0 or more
    assert waits and 0.1 <= waits[0] <= 0.31


def test_abandoned_stream_releases_its_slot() -> None:
    script = Script(["a long reply in several words", "again"])
    rt = script.runtime(config=Config(), limits={"scripted:*": Limit(concurrency=1)})
    stream = rt.stream("hi")
    next(stream)
    stream.close()
    assert rt.exec("hi") == "again"  # would wait forever if the slot leaked


def test_tpm_is_corrected_with_the_real_usage_in_a_run() -> None:
    script = Script([reply("ok", usage=Usage(1, 599, requests=1)), "again"])
    clock = FakeClock()
    limiter = InProcessLimiter(clock)
    rt = script.runtime(config=Config(), limits={"scripted:*": Limit(tpm=600)}, limiter=limiter)
    rt.exec("hi")
    gate = rt.gate("scripted:test")
    assert gate is not None
    assert limiter.try_acquire(gate.limits, 0) == pytest.approx(60.0)  # 600 tokens used of 600/min


def test_limits_from_configuration(tmp_path: Path) -> None:
    (tmp_path / "llmport.toml").write_text(
        'limiter = "memory"\n[limits."scripted:*"]\nrpm = 120\nconcurrency = 3\n'
    )
    config = load_config(tmp_path, env={})
    assert config.limits == {"scripted:*": Limit(rpm=120, concurrency=3)}
    assert config.limiter == "memory"
    rt = Script(["ok"]).runtime(config=config, limits={"other:*": Limit(rpm=1)})
    assert set(rt.limits) == {"scripted:*", "other:*"}
    assert rt.gate("scripted:test") is not None
    (tmp_path / "llmport.toml").write_text('[limits."x:*"]\nrpm = "fast"\n')
    with pytest.raises(ConfigError, match="rpm"):
        load_config(tmp_path, env={})
    assert "pw" not in repr(Config(limiter="redis://user:pw@host:6379/0"))


def test_a_vendors_rate_limit_headers_reach_the_limiter_through_the_plugin() -> None:
    """A real plugin's 429 keeps x-ratelimit-* on the error; the bucket waits for the reset."""
    from llmport.provider.translate import status_error
    from llmport.testing.loopback import LoopbackServer, Reply

    error = status_error(
        429,
        "slow down",
        provider="openai",
        headers={
            "X-RateLimit-Remaining-Requests": "0",
            "x-ratelimit-reset-requests": "0.4s",
            "content-type": "application/json",
        },
    )
    assert error.headers == {
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "0.4s",
    }
    ok = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    limited = Reply(
        status=429,
        headers={
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "0.4s",
            "x-should-retry": "true",
        },
        json={"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}},
    )
    slept: list[float] = []
    with LoopbackServer([limited, Reply(json=ok)]) as server:
        import llmport_openai.plugin

        rt = Runtime(
            model="openai:gpt-4o-mini",
            config=Config(),
            hooks=[llmport_openai.plugin],
            providers={"openai": {"api_key": "sk-fake-test", "base_url": server.url + "/v1"}},
            limits={"openai:*": Limit(rpm=60_000)},
            backoff=Backoff(
                initial=0.0, maximum=0.0, respect_retry_after=False, sleep=slept.append
            ),
        )
        assert rt.exec("hi") == "ok"
        assert len(server.requests) == 2
    waits = [s for s in slept if s > 0]
    # the bucket waited for the vendor's 0.4 s reset, less the time since the answer
    assert waits and 0.15 <= waits[0] <= 0.41
