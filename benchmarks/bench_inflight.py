"""SPEC §8: 10,000 async_exec in flight complete, memory linear in the count.

For each count (1k, 5k, 10k) and each side (llmport ``async_exec`` through
the OpenAI plugin; the raw ``AsyncOpenAI`` SDK on aiohttp), a fresh process
gathers that many calls against a loopback server in its own process and
prints wall time, peak RSS and the tracemalloc peak (Python allocations).
Per-call memory = (peak at N - peak at 1k) / (N - 1k): flat means linear.

    uv run python benchmarks/bench_inflight.py [--counts 1000,5000,10000]
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
from bench_peers import ANSWERS
from loopback_proc import ServerProcess


def one(side: str, count: int, url: str) -> dict[str, Any]:
    if side == "llmport":
        from llmport import Runtime

        rt = Runtime(
            model="openai:gpt-4o-mini",
            providers={"openai": {"api_key": "sk-bench", "base_url": url + "/v1"}},
        )

        def call() -> Any:
            return rt.async_exec("What is the capital of France?")
    else:
        import openai

        holder: list[Any] = []

        def call() -> Any:
            if not holder:
                holder.append(
                    openai.AsyncOpenAI(
                        api_key="sk-bench",
                        base_url=url + "/v1",
                        max_retries=0,
                        http_client=openai.DefaultAioHttpClient(),
                    )
                )
            return holder[0].chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": "What is the capital of France?"}],
            )

    async def main() -> dict[str, Any]:
        await asyncio.gather(*(call() for _ in range(20)))  # imports, pool
        base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        tracemalloc.start()
        start = time.perf_counter()
        results = await asyncio.gather(*(call() for _ in range(count)))
        wall = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert len(results) == count
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return {
            "side": side,
            "count": count,
            "wall_s": round(wall, 2),
            "peak_rss_mb": round(rss, 1),
            "rss_growth_mb": round(rss - base_rss, 1),
            "tracemalloc_peak_mb": round(peak / 1e6, 1),
        }

    return asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", default="1000,5000,10000")
    parser.add_argument("--one", nargs=3, metavar=("SIDE", "COUNT", "URL"))
    args = parser.parse_args()
    if args.one:
        side, count, url = args.one
        print(json.dumps(one(side, int(count), url)))
        return
    counts = [int(c) for c in args.counts.split(",")]
    rows = []
    with ServerProcess([{"json": ANSWERS["openai"]}]) as server:
        for count in counts:
            for side in ("llmport", "raw SDK (aiohttp)"):
                out = subprocess.run(
                    [sys.executable, __file__, "--one", side, str(count), server.url],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(
        f"{'side':20} {'in flight':>9} {'wall s':>7} {'RSS MB':>7} {'RSS +MB':>8} "
        f"{'tracemalloc MB':>15} {'KB/call':>8}"
    )
    first = {r["side"]: r for r in rows if r["count"] == counts[0]}
    for r in rows:
        base = first[r["side"]]
        per = ""
        if r["count"] > base["count"]:
            grow = r["tracemalloc_peak_mb"] - base["tracemalloc_peak_mb"]
            per = f"{grow * 1000 / (r['count'] - base['count']):.1f}"
        print(
            f"{r['side']:20} {r['count']:9d} {r['wall_s']:7.2f} {r['peak_rss_mb']:7.1f} "
            f"{r['rss_growth_mb']:8.1f} {r['tracemalloc_peak_mb']:15.1f} {per:>8}"
        )
    print(json.dumps({"bench": "inflight", "rows": rows}))


if __name__ == "__main__":
    main()
