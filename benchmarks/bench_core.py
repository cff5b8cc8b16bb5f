"""Per-call overhead of the core alone: the scripted provider, no network, no SDK.

    uv run python benchmarks/bench_core.py [--calls 5000] [--repeats 5]

Measures ``exec``, ``async_exec`` (sequential, one event loop), ``stream``
(every event consumed) and a two-turn tool loop, each as the best of
``--repeats`` runs of ``--calls`` calls (the best run, as ``timeit`` reports;
garbage collected between runs). What remains per call is planning,
routing, the step machine, the drivers and the hooks' fast path: the part
of every vendor ratio that belongs to llmport itself. Prints a table and a
JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import time
from collections.abc import Callable
from typing import Any

from llmport import Runtime, tool
from llmport.provider.config import Config
from llmport.testing import Script, call_tools


@tool
def lookup(city: str) -> str:
    """Weather for a city."""
    return "sunny"


def runtime(steps: list[Any]) -> Runtime:
    script = Script(steps)
    rt: Runtime = script.runtime(config=Config())
    return rt


def per_call_us(
    calls: int, repeats: int, body: Callable[[Runtime, int], None], turns: int
) -> float:
    """Best microseconds per call of ``body`` over ``repeats`` runs."""
    samples = []
    for _ in range(repeats):
        steps: list[Any] = []
        for _ in range(calls):
            if turns == 2:
                steps.append(call_tools(("lookup", {"city": "Oslo"})))
            steps.append("ok")
        rt = runtime(steps)
        gc.collect()
        started = time.perf_counter()
        body(rt, calls)
        samples.append((time.perf_counter() - started) / calls * 1e6)
    return min(samples)


def sync_exec(rt: Runtime, calls: int) -> None:
    for _ in range(calls):
        rt.exec("hi")


def async_exec(rt: Runtime, calls: int) -> None:
    async def main() -> None:
        for _ in range(calls):
            await rt.async_exec("hi")

    asyncio.run(main())


def stream(rt: Runtime, calls: int) -> None:
    for _ in range(calls):
        for _event in rt.stream("hi"):
            pass


def tool_loop(rt: Runtime, calls: int) -> None:
    for _ in range(calls):
        rt.exec("weather?", tools=[lookup], parallel_tool_calls=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rows = {
        "exec": per_call_us(args.calls, args.repeats, sync_exec, 1),
        "async_exec": per_call_us(args.calls, args.repeats, async_exec, 1),
        "stream": per_call_us(args.calls, args.repeats, stream, 1),
        "tool loop (2 turns)": per_call_us(args.calls // 5, args.repeats, tool_loop, 2),
    }
    print(f"{'scripted provider':<22}{'µs per call':>12}")
    for name, value in rows.items():
        print(f"{name:<22}{value:>12.1f}")
    print(json.dumps({"bench": "core", "us_per_call": {k: round(v, 1) for k, v in rows.items()}}))


if __name__ == "__main__":
    main()
