"""What every vendor benchmark shares: timing llmport against the raw SDK, and the report.

A vendor script supplies only its answer body, the raw SDK calls and the
llmport runtime; this module times them the same way for every vendor:

* sync: interleaved rounds of ``calls`` calls each (drift hits both sides
  equally), median per-call time, after a warm-up of both;
* async: ``concurrency`` concurrent calls gathered, median of rounds, plus the
  process's peak RSS.

Targets (docs/performance.md): sync and sequential async ratios <= 1.00; ``per_call`` /
``aper_call`` time one function alone (a plugin's ``send``) with its cProfile call count.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import resource
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

SYNC_TARGET = 1.00
ASYNC_TARGET = 1.00


def per_call(
    fn: Callable[[], Any], calls: int, rounds: int = 5, warmup: int = 50
) -> tuple[float, float]:
    """(median µs per call of ``fn`` over ``rounds`` of ``calls``, cProfile calls per call)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(100):
        fn()
    profile.disable()
    return statistics.median(times) * 1e6, pstats.Stats(profile).total_calls / 100  # type: ignore[attr-defined]


async def aper_call(
    fn: Callable[[], Awaitable[Any]], calls: int, rounds: int = 5, warmup: int = 50
) -> tuple[float, float]:
    """:func:`per_call` for a coroutine function, inside the running loop."""
    for _ in range(warmup):
        await fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            await fn()
        times.append((time.perf_counter() - start) / calls)
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(100):
        await fn()
    profile.disable()
    return statistics.median(times) * 1e6, pstats.Stats(profile).total_calls / 100  # type: ignore[attr-defined]


def rss_mb() -> float:
    """Peak resident memory of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def arguments(doc: str | None, **extra: int) -> argparse.Namespace:
    """``--calls`` and ``--concurrency`` (plus any vendor-specific integer options)."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=500)
    for name, default in extra.items():
        parser.add_argument(f"--{name}", type=int, default=default)
    return parser.parse_args()


def compare_sync(
    ours: Callable[[], Any],
    theirs: Callable[[], Any],
    calls: int,
    rounds: int = 5,
    warmup: int = 50,
) -> dict[str, float]:
    """Per-call time of ``ours`` (llmport) and ``theirs`` (the raw SDK)."""
    for _ in range(warmup):  # connections, imports, caches
        ours()
        theirs()
    mine: list[float] = []
    raw: list[float] = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            theirs()
        raw.append((time.perf_counter() - start) / calls)
        start = time.perf_counter()
        for _ in range(calls):
            ours()
        mine.append((time.perf_counter() - start) / calls)
    o, t = statistics.median(mine), statistics.median(raw)
    return {"llmport_us": o * 1e6, "raw_us": t * 1e6, "overhead_us": (o - t) * 1e6, "ratio": o / t}


async def compare_async(
    ours: Callable[[], Awaitable[Any]],
    theirs: Callable[[], Awaitable[Any]],
    concurrency: int,
    rounds: int = 3,
    warmup: int = 50,
) -> dict[str, float]:
    """Wall time of ``concurrency`` gathered calls of each side, and peak RSS."""
    await asyncio.gather(*(ours() for _ in range(warmup)))
    await asyncio.gather(*(theirs() for _ in range(warmup)))
    mine: list[float] = []
    raw: list[float] = []
    for _ in range(rounds):
        start = time.perf_counter()
        await asyncio.gather(*(theirs() for _ in range(concurrency)))
        raw.append(time.perf_counter() - start)
        start = time.perf_counter()
        await asyncio.gather(*(ours() for _ in range(concurrency)))
        mine.append(time.perf_counter() - start)
    o, t = statistics.median(mine), statistics.median(raw)
    return {"llmport_ms": o * 1e3, "raw_ms": t * 1e3, "ratio": o / t, "peak_rss_mb": rss_mb()}


def report(
    vendor: str,
    title: str,
    sync: dict[str, float],
    conc: dict[str, float],
    *,
    sync_case: str,
    async_case: str,
    **extra: Any,
) -> None:
    """Print the comparison as a rich table and one JSON line."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for col in ("case", "llmport", "raw SDK", "ratio", "target", "note"):
        table.add_column(col)
    table.add_row(
        sync_case,
        f"{sync['llmport_us']:.0f} us",
        f"{sync['raw_us']:.0f} us",
        f"{sync['ratio']:.3f}",
        f"<= {SYNC_TARGET}",
        f"overhead {sync['overhead_us']:.0f} us/call",
    )
    table.add_row(
        async_case,
        f"{conc['llmport_ms']:.0f} ms",
        f"{conc['raw_ms']:.0f} ms",
        f"{conc['ratio']:.3f}",
        f"<= {ASYNC_TARGET}",
        f"peak RSS {conc['peak_rss_mb']:.0f} MB",
    )
    Console().print(table)
    print(
        json.dumps(
            {
                "benchmark": vendor,
                "sync": {k: round(v, 3) for k, v in sync.items()},
                "async": {**extra, **{k: round(v, 3) for k, v in conc.items()}},
                "targets_met": sync["ratio"] <= SYNC_TARGET and conc["ratio"] <= ASYNC_TARGET,
            }
        )
    )
