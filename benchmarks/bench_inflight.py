"""Performance target: 10,000 async_exec in flight complete, memory linear in the count.

For each vendor, count (500, 1k, 5k, 10k) and side (llmport ``async_exec``;
the raw SDK on each of its async transports, built as in ``bench_peers``), a
fresh process gathers that many calls against a loopback server in its own
process and prints wall time and peak RSS (with ``--tracemalloc``, also the
peak of Python allocations, which slows every call down). Per-call memory =
(peak at N - peak at the first count) / (N - first count), of RSS or of the
traced peak: flat means linear. Calls that fail (a pool timeout) are counted.

    uv run python benchmarks/bench_inflight.py [--counts 500,1000,5000,10000] [--vendors openai,...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
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
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="also trace Python allocations (exact per-call bytes; makes every call ~5x slower)",
    )
    args = parser.parse_args()
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
