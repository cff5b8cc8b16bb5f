"""The cost of a durable step (llmport-dbos) over a plain call.

    uv run python benchmarks/bench_durable.py [--steps 20] [--runs 15] [--no-postgres]

An agentic function making ``steps`` ``exec`` calls on a scripted provider
(no network, no vendor time: what is left is llmport's and DBOS's own cost)
runs plain and as a durable run (a DBOS workflow, each ``exec`` a step),
on DBOS's SQLite system database and on PostgreSQL (a local server started
from the ``pgserver`` wheel). Prints, per database: µs per plain exec, µs
per durable run, and the overhead of one durable step over a plain call
(the slope between runs of 1 and ``steps`` steps, so the workflow's own
start and end are not counted in it), then one JSON line.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

import llmport_dbos
from llmport import Runtime, agentic_function
from llmport.provider.config import Config
from llmport.testing import Script


def scripted(calls: int) -> Runtime:
    rt: Runtime = Script(["ok"] * calls).runtime(config=Config())
    return rt


class Run:
    """An agentic function of ``steps`` execs, plain and durable, on the runtime set last.

    A workflow's arguments are checkpointed, so the runtime is not one of them.
    """

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.rt = scripted(steps)

        @agentic_function
        def work(label: str) -> str:
            """Ask ``steps`` times."""
            return "".join(self.rt.exec(f"{label} {i}") for i in range(steps))

        self.plain = work
        self.durable = llmport_dbos.durable(work, name=f"bench.work_{steps}")

    def seconds(self, fn: Callable[[str], Any], runs: int) -> float:
        """Median seconds of one run of ``fn`` (a fresh scripted runtime each run)."""
        samples = []
        for n in range(runs):
            self.rt = scripted(self.steps)
            gc.collect()
            started = time.perf_counter()
            fn(f"run {n}")
            samples.append(time.perf_counter() - started)
        return statistics.median(samples)


def measure(database: str, plans: dict[int, Run], runs: int) -> dict[str, float]:
    """Plain and durable timings on one DBOS system database."""
    dbos = llmport_dbos.launch(database, name="bench", log_level="WARNING")
    try:
        few, many = sorted(plans)
        figures: dict[str, float] = {}
        for steps, plan in plans.items():
            plan.seconds(plan.durable, 1)  # warm: the first workflow pays for connections
            figures[f"plain_{steps}"] = plan.seconds(plan.plain, runs)
            figures[f"durable_{steps}"] = plan.seconds(plan.durable, runs)
        plain_slope = (figures[f"plain_{many}"] - figures[f"plain_{few}"]) / (many - few)
        durable_slope = (figures[f"durable_{many}"] - figures[f"durable_{few}"]) / (many - few)
        return {
            "plain_exec_us": plain_slope * 1e6,
            "durable_step_us": durable_slope * 1e6,
            "step_overhead_us": (durable_slope - plain_slope) * 1e6,
            "durable_run_of_1_us": figures[f"durable_{few}"] * 1e6,
            "plain_run_of_1_us": figures[f"plain_{few}"] * 1e6,
            "run_overhead_us": (figures[f"durable_{few}"] - figures[f"plain_{few}"]) * 1e6,
        }
    finally:
        dbos.destroy()


def postgres_url(folder: str) -> tuple[str, Any] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver
    except ImportError:
        return None
    server = pgserver.get_server(folder, cleanup_mode="stop")
    return str(server.get_uri()), server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    plans = {1: Run(1), args.steps: Run(args.steps)}
    results: dict[str, dict[str, float]] = {}
    folder = tempfile.mkdtemp(prefix="llmport-bench-durable-")
    try:
        sqlite = f"sqlite:///{os.path.join(folder, 'dbos.sqlite')}"
        results["sqlite"] = measure(sqlite, plans, args.runs)
        found = None if args.no_postgres else postgres_url(os.path.join(folder, "pg"))
        if found is not None:
            url, server = found
            try:
                results["postgresql"] = measure(url, plans, args.runs)
            finally:
                server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    head = f"{'database':<12}{'plain exec':>14}{'durable step':>15}{'overhead':>12}"
    print(f"{head}{'run start':>12}")
    for name, row in results.items():
        print(
            f"{name:<12}{row['plain_exec_us']:>11.0f} µs{row['durable_step_us']:>12.0f} µs"
            f"{row['step_overhead_us']:>9.0f} µs{row['run_overhead_us']:>9.0f} µs"
        )
    load = os.getloadavg()[0]
    print(json.dumps({"steps": args.steps, "runs": args.runs, "load": load, **results}))


if __name__ == "__main__":
    main()
