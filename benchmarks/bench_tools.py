"""8 tools of 200 ms each, called in one turn: parallel vs sequential, sync vs async.

    uv run python benchmarks/bench_tools.py [--repeat 3]

Target: <= 205 ms with parallel_tool_calls=True; ~1.6 s when False.
The model is llmport.testing.Script (no network), so the time measured is the
tool loop itself: each runtime answers one plain call first (loading its
plugins and creating its provider, a once-per-runtime cost), then the timed
exec runs both turns and the eight tools. Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from llmport import tool
from llmport.testing import Script, call_tools, reply

N_TOOLS = 8
TOOL_SECONDS = 0.2
TARGET_MS = 205


def make_tools(kind: str) -> list[Any]:
    tools = []
    for i in range(N_TOOLS):
        if kind == "sync":

            def work(x: int) -> int:
                time.sleep(TOOL_SECONDS)
                return x
        else:

            async def work(x: int) -> int:  # type: ignore[misc]
                await asyncio.sleep(TOOL_SECONDS)
                return x

        tools.append(tool(work, name=f"tool_{i}"))
    return tools


def one_run(driver: str, kind: str, parallel: bool) -> float:
    calls = call_tools(*[(f"tool_{i}", {"x": i}) for i in range(N_TOOLS)])
    script = Script([reply("warm"), calls, reply("done")])
    rt = script.runtime()
    tools = make_tools(kind)
    rt.exec("warm up")  # plugins and provider: once per runtime, not the tool loop's cost
    started = time.perf_counter()
    if driver == "exec":
        rt.exec("go", tools=tools, parallel_tool_calls=parallel)
    else:
        asyncio.run(rt.async_exec("go", tools=tools, parallel_tool_calls=parallel))
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    cases: list[tuple[str, str, bool]] = [
        (d, k, p) for p in (True, False) for d in ("exec", "async_exec") for k in ("sync", "async")
    ]
    run: Callable[[str, str, bool], float] = one_run
    for driver, kind, parallel in cases:
        times = [run(driver, kind, parallel) for _ in range(args.repeat)]
        rows.append(
            {
                "driver": driver,
                "tools": kind,
                "parallel": parallel,
                "median_ms": round(statistics.median(times) * 1000, 1),
                "target_ms": TARGET_MS if parallel else None,
            }
        )
    print(f"{'driver':<11} {'tools':<6} {'parallel':<9} {'median ms':>10} {'target':>8}")
    for r in rows:
        target = f"<= {r['target_ms']}" if r["target_ms"] else "~1600"
        cells = f"{r['driver']:<11} {r['tools']:<6} {r['parallel']!s:<9}"
        print(f"{cells} {r['median_ms']:>10} {target:>8}")
    parallel_ok = all(r["median_ms"] <= TARGET_MS for r in rows if r["parallel"])
    print(
        json.dumps(
            {
                "benchmark": "tools",
                "n_tools": N_TOOLS,
                "tool_ms": TOOL_SECONDS * 1000,
                "repeat": args.repeat,
                "results": rows,
                "parallel_target_met": parallel_ok,
            }
        )
    )


if __name__ == "__main__":
    main()
