"""Performance target: 10,000 async_exec in flight complete, memory linear in the count.

For each vendor, count (500, 1k, 5k, 10k) and side (llmport ``async_exec``;
the raw SDK on each of its async transports, built as in ``bench_peers``), a
fresh process gathers that many calls against a loopback server in its own
process and prints wall time and peak RSS (with ``--tracemalloc``, also the
peak of Python allocations, which slows every call down). Per-call memory =
(peak at N - peak at the first count) / (N - first count), of RSS or of the
traced peak: flat means linear. Calls that fail (a pool timeout) are counted.

    uv run python benchmarks/bench_inflight.py [--counts 500,1000,5000,10000] [--vendors openai,...]

``--repeat N`` times one count instead: N interleaved repetitions (every side
once, then again, ...), each a fresh process that warms up with 20 calls and
times one gather of ``--counts`` calls (what a batch job does; ``--warmup 0``:
the first gather of a cold process, client creation and first-use imports
included); with
``--rounds R`` each process times R gathers one after the other and reports
their median (a long-lived process). Per side it prints the median wall ms,
the median CPU ms of the client process, garbage collections during the
timed gathers, and the load average of each repetition::

    python benchmarks/bench_inflight.py --vendors anthropic --counts 500 --repeat 7 [--rounds 5]

``--against DIR`` adds a side ``llmport @DIR``: the llmport side run with
``DIR/core`` and ``DIR/plugins/<vendor>`` first on ``PYTHONPATH`` (another
checkout, e.g. ``git archive`` of the branch point), interleaved with the
others run by run, so a before/after pair shares the machine's load.
``--sides`` keeps only the named sides (comma-separated)::

    python benchmarks/bench_inflight.py --vendors anthropic --counts 500 --repeat 7 \
        --against /tmp/before --sides "llmport,raw SDK (aiohttp)"
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_peers import ANSWERS, llmport_sides, sdk_sides
from loopback_proc import ServerProcess

#: The sides measured per vendor: llmport and the raw SDK on each of its async transports.
SIDES = {
    "openai": ("llmport", "raw SDK (httpx)", "raw SDK (aiohttp)"),
    "anthropic": ("llmport", "raw SDK (httpx)", "raw SDK (aiohttp)"),
    "gemini": ("llmport", "raw SDK (default: aiohttp async)"),
    "bedrock": ("llmport", "raw SDK (boto3; async = threads)"),
}


def _process_age_ms() -> float:
    """Milliseconds since this process started (Linux; interpreter start-up included)."""
    with open("/proc/self/stat") as stat:
        started_ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
    since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)
    return (since_boot - started_ticks / os.sysconf("SC_CLK_TCK")) * 1000


def _collections() -> list[int]:
    return [generation["collections"] for generation in gc.get_stats()]


class _GcClock:
    """Wall time spent in garbage collections of each generation (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.ms = [0.0, 0.0, 0.0]
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.ms[info["generation"]] += (time.perf_counter() - self._start) * 1000


def timed(
    vendor: str, side: str, count: int, url: str, rounds: int, gc_off: bool, warmup: int
) -> dict[str, Any]:
    """``rounds`` gathers of ``count`` calls in this process, after ``warmup`` calls.

    ``gc_off``: the collector disabled during the timed gathers (what they
    cost without garbage collection). ``warmup=0``: the first gather also
    makes the client and loads what each side loads on first use (the raw
    SDK is imported before, when its side is built; llmport imports it in
    its first call); ``process_ms`` then says what the whole batch job took.
    """
    sides = llmport_sides(vendor, url) if side == "llmport" else sdk_sides(vendor, url)
    call = next(s for s in sides if s.name == side and s.aio is not None).aio
    assert call is not None

    async def main() -> dict[str, Any]:
        if warmup:
            await asyncio.gather(*(call() for _ in range(warmup)))  # imports, client, sockets
        walls, cpus, failed = [], [], 0
        before, clock = _collections(), _GcClock()
        gc.callbacks.append(clock)
        if gc_off:
            gc.disable()
        for _ in range(rounds):
            cpu, start = time.process_time(), time.perf_counter()
            results = await asyncio.gather(*(call() for _ in range(count)), return_exceptions=True)
            walls.append((time.perf_counter() - start) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
            failed += sum(isinstance(r, BaseException) for r in results)
        # Counted before the collector is back on: its first collection then is not the burst's.
        gcs = [after - first for after, first in zip(_collections(), before, strict=True)]
        gc.callbacks.remove(clock)
        gc.enable()
        return {
            "side": side,
            "wall_ms": statistics.median(walls),
            "cpu_ms": statistics.median(cpus),
            "gc": gcs,
            "gc_ms": [round(ms / rounds, 1) for ms in clock.ms],
            "process_ms": _process_age_ms(),
            "failed": failed,
            "load": os.getloadavg()[0],
            "llmport": str(getattr(sys.modules.get("llmport"), "__file__", "")),
        }

    return asyncio.run(main())


def _side_env(vendor: str, against: str | None, side: str) -> dict[str, str] | None:
    """The environment of a side's process: ``llmport @DIR`` puts that checkout first."""
    if against is None or not side.startswith("llmport @"):
        return None
    path = [f"{against}/core", f"{against}/plugins/{vendor}"]
    if os.environ.get("PYTHONPATH"):
        path.append(os.environ["PYTHONPATH"])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


def repeat(
    vendor: str,
    count: int,
    times: int,
    rounds: int,
    gc_off: bool,
    warmup: int,
    against: str | None = None,
    only: list[str] | None = None,
) -> None:
    """Interleaved fresh processes per side; prints medians per side and one JSON line."""
    sides = list(SIDES[vendor]) + ([f"llmport @{against}"] if against else [])
    sides = [side for side in sides if not only or side in only or side.startswith("llmport @")]
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    with ServerProcess([{"json": ANSWERS[vendor]}]) as server:
        for _ in range(times):
            for side in sides:
                timed_side = "llmport" if side.startswith("llmport @") else side
                argv = [sys.executable, __file__, "--timed", vendor, timed_side, str(count)]
                argv += [server.url, "--warmup", str(warmup)]
                out = subprocess.run(
                    [*argv, "--rounds", str(rounds)] + (["--gc-off"] if gc_off else []),
                    capture_output=True,
                    text=True,
                    check=True,
                    env=_side_env(vendor, against, side),
                )
                runs[side].append(json.loads(out.stdout.strip().splitlines()[-1]))
    collector = ", collector off while timed" if gc_off else ""
    print(
        f"{vendor}, {count} gathered, {times} fresh processes x {rounds} gather(s) "
        f"after {warmup} warm-up calls{collector}"
    )
    print(
        f"{'side':18} {'wall ms':>8} {'CPU ms':>7} {'GC ms':>6} {'full GCs':>8} "
        f"{'gen0/1 GCs':>10} {'process ms':>10} {'failed':>6}  full GCs per process; loads"
    )
    for side, rows in runs.items():
        young = "/".join(str(round(statistics.median(r["gc"][g] for r in rows))) for g in (0, 1))
        print(
            f"{side[:18]:18} {statistics.median(r['wall_ms'] for r in rows):8.0f} "
            f"{statistics.median(r['cpu_ms'] for r in rows):7.0f} "
            f"{statistics.median(sum(r.get('gc_ms', [0])) for r in rows):6.0f} "
            f"{sum(r['gc'][2] for r in rows) / len(rows):8.2f} {young:>10} "
            f"{statistics.median(r.get('process_ms', 0) for r in rows):10.0f} "
            f"{sum(r['failed'] for r in rows):6d}  "
            + " ".join(str(r["gc"][2]) for r in rows)
            + "; "
            + " ".join(f"{r['load']:.1f}" for r in rows)
        )
    print(json.dumps({"bench": "inflight-repeat", "vendor": vendor, "count": count, "runs": runs}))


def one(vendor: str, side: str, count: int, url: str, traced: bool) -> dict[str, Any]:
    sides = llmport_sides(vendor, url) if side == "llmport" else sdk_sides(vendor, url)
    chosen = next(s for s in sides if s.name == side and s.aio is not None)
    call = chosen.aio
    assert call is not None

    async def main() -> dict[str, Any]:
        await asyncio.gather(*(call() for _ in range(20)))  # imports, pool
        base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if traced:
            tracemalloc.start()
        start = time.perf_counter()
        # A side that cannot keep that many in flight (a pool timeout) is reported, not fatal.
        results = await asyncio.gather(*(call() for _ in range(count)), return_exceptions=True)
        wall = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] if traced else 0
        tracemalloc.stop()
        errors = [r for r in results if isinstance(r, BaseException)]
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return {
            "vendor": vendor,
            "side": side,
            "count": count,
            "wall_s": round(wall, 2),
            "peak_rss_mb": round(rss, 1),
            "rss_growth_mb": round(rss - base_rss, 1),
            "tracemalloc_peak_mb": round(peak / 1e6, 1),
            "failed": len(errors),
            "error": f"{type(errors[0]).__name__}: {errors[0]}"[:100] if errors else "",
        }

    return asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", default="500,1000,5000,10000")
    parser.add_argument("--vendors", default="openai,anthropic,gemini,bedrock")
    parser.add_argument("--one", nargs=4, metavar=("VENDOR", "SIDE", "COUNT", "URL"))
    parser.add_argument("--timed", nargs=4, metavar=("VENDOR", "SIDE", "COUNT", "URL"))
    parser.add_argument("--repeat", type=int, help="interleaved fresh processes per side")
    parser.add_argument("--rounds", type=int, default=1, help="gathers per process (--repeat)")
    parser.add_argument("--gc-off", action="store_true", help="no collector while timed (--repeat)")
    parser.add_argument("--warmup", type=int, default=20, help="calls before timing (--repeat)")
    parser.add_argument("--against", help="another checkout's llmport as one more side")
    parser.add_argument("--sides", help="only these sides, comma-separated (--repeat)")
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="also trace Python allocations (exact per-call bytes; makes every call ~5x slower)",
    )
    args = parser.parse_args()
    if args.timed:
        vendor, side, count, url = args.timed
        print(
            json.dumps(timed(vendor, side, int(count), url, args.rounds, args.gc_off, args.warmup))
        )
        return
    if args.repeat:
        for vendor in args.vendors.split(","):
            count = int(args.counts.split(",")[0])
            only = args.sides.split(",") if args.sides else None
            repeat(
                vendor,
                count,
                args.repeat,
                args.rounds,
                args.gc_off,
                args.warmup,
                args.against,
                only,
            )
        return
    if args.one:
        vendor, side, count, url = args.one
        print(json.dumps(one(vendor, side, int(count), url, args.tracemalloc)))
        return
    counts = [int(c) for c in args.counts.split(",")]
    rows = []
    for vendor in args.vendors.split(","):
        with ServerProcess([{"json": ANSWERS[vendor]}]) as server:
            for count in counts:
                for side in SIDES[vendor]:
                    out = subprocess.run(
                        [sys.executable, __file__, "--one", vendor, side, str(count), server.url]
                        + (["--tracemalloc"] if args.tracemalloc else []),
                        capture_output=True,
                        text=True,
                        check=True,
                    )
                    rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(
        f"{'vendor':10} {'side':34} {'in flight':>9} {'wall s':>7} {'RSS MB':>7} {'RSS +MB':>8} "
        f"{'tracemalloc MB':>15} {'KB/call':>8} {'failed':>7}"
    )
    first = {(r["vendor"], r["side"]): r for r in rows if r["count"] == counts[0]}
    for r in rows:
        base = first[r["vendor"], r["side"]]
        per = ""
        if r["count"] > base["count"]:
            key = "tracemalloc_peak_mb" if args.tracemalloc else "peak_rss_mb"
            grow = r[key] - base[key]
            per = f"{grow * 1000 / (r['count'] - base['count']):.1f}"
        print(
            f"{r['vendor']:10} {r['side']:34} {r['count']:9d} {r['wall_s']:7.2f} "
            f"{r['peak_rss_mb']:7.1f} "
            f"{r['rss_growth_mb']:8.1f} {r['tracemalloc_peak_mb']:15.1f} {per:>8} "
            f"{r['failed']:7d}"
        )
    print(json.dumps({"bench": "inflight", "rows": rows}))


if __name__ == "__main__":
    main()
