"""The cost of a durable step (llmport-dbos) over a plain call.

    uv run python benchmarks/bench_durable.py [--steps 20] [--runs 15] [--cpu]
        [--no-postgres | --no-sqlite]

An agentic function making ``steps`` ``exec`` calls on a scripted provider
(no network, no vendor time: what is left is llmport's and DBOS's own cost)
runs plain and as a durable run (a DBOS workflow, each ``exec`` a step),
on DBOS's SQLite system database and on PostgreSQL (a local server started
from the ``pgserver`` wheel). Prints, per database: µs per plain exec, µs
per durable run, and the overhead of one durable step over a plain call
(the slope between runs of 1 and ``steps`` steps, so the workflow's own
start and end are not counted in it), then one JSON line.

Beside them, on the same database in the same run, a bare DBOS workflow of
``steps`` steps that do nothing (``@DBOS.step`` returning a constant): its
slope is what DBOS itself costs per step, so ``llmport over DBOS`` is what
llmport adds to a durable step (recording the exec's node, the step's
result in the session, the replay lookup).
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

    def seconds(
        self, fn: Callable[[str], Any], runs: int, clock: Callable[[], float] = time.perf_counter
    ) -> float:
        """Median seconds of one run of ``fn`` (a fresh scripted runtime each run)."""
        samples = []
        for n in range(runs):
            self.rt = scripted(self.steps)
            gc.collect()
            started = clock()
            fn(f"run {n}")
            samples.append(clock() - started)
        return statistics.median(samples)


def bare_dbos_workflow() -> Callable[[str, int], str]:
    """A DBOS workflow of ``steps`` steps that do nothing (registered before launch)."""
    from dbos import DBOS

    @DBOS.step()
    def nothing(i: int) -> str:
        return "ok"

    @DBOS.workflow()
    def bare(label: str, steps: int) -> str:
        return "".join(nothing(i) for i in range(steps))

    return bare  # type: ignore[no-any-return]


def bare_seconds(
    bare: Callable[[str, int], str],
    steps: int,
    runs: int,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Median seconds of one bare DBOS workflow of ``steps`` steps."""
    samples = []
    for n in range(runs):
        gc.collect()
        started = clock()
        bare(f"bare {n}", steps)
        samples.append(clock() - started)
    return statistics.median(samples)


def measure(
    database: str,
    plans: dict[int, Run],
    runs: int,
    bare: Callable[[str, int], str],
    clock: Callable[[], float],
) -> dict[str, float]:
    """Plain, durable and bare DBOS timings on one DBOS system database, interleaved."""
    dbos = llmport_dbos.launch(database, name="bench", log_level="WARNING")
    try:
        few, many = sorted(plans)
        figures: dict[str, float] = {}
        for steps, plan in plans.items():
            plan.seconds(plan.durable, 1)  # warm: the first workflow pays for connections
            bare_seconds(bare, steps, 1)
            figures[f"plain_{steps}"] = plan.seconds(plan.plain, runs, clock)
            figures[f"durable_{steps}"] = plan.seconds(plan.durable, runs, clock)
            figures[f"bare_{steps}"] = bare_seconds(bare, steps, runs, clock)
        plain_slope = (figures[f"plain_{many}"] - figures[f"plain_{few}"]) / (many - few)
        durable_slope = (figures[f"durable_{many}"] - figures[f"durable_{few}"]) / (many - few)
        bare_slope = (figures[f"bare_{many}"] - figures[f"bare_{few}"]) / (many - few)
        return {
            "plain_exec_us": plain_slope * 1e6,
            "durable_step_us": durable_slope * 1e6,
            "step_overhead_us": (durable_slope - plain_slope) * 1e6,
            "bare_dbos_step_us": bare_slope * 1e6,
            "llmport_over_dbos_us": (durable_slope - plain_slope - bare_slope) * 1e6,
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
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL alone")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="this process's CPU time (all its threads) instead of wall time: what llmport and "
        "DBOS compute, without the database's waits for its disk",
    )
    args = parser.parse_args()
    plans = {1: Run(1), args.steps: Run(args.steps)}
    bare = bare_dbos_workflow()
    clock = time.process_time if args.cpu else time.perf_counter
    results: dict[str, dict[str, float]] = {}
    folder = tempfile.mkdtemp(prefix="llmport-bench-durable-")
    try:
        if not args.no_sqlite:
            sqlite = f"sqlite:///{os.path.join(folder, 'dbos.sqlite')}"
            results["sqlite"] = measure(sqlite, plans, args.runs, bare, clock)
        found = None if args.no_postgres else postgres_url(os.path.join(folder, "pg"))
        if found is not None:
            url, server = found
            try:
                results["postgresql"] = measure(url, plans, args.runs, bare, clock)
            finally:
                server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    head = f"{'database':<12}{'plain exec':>14}{'durable step':>15}{'overhead':>12}"
    print(f"{head}{'bare DBOS step':>17}{'llmport over DBOS':>20}{'run start':>12}")
    for name, row in results.items():
        print(
            f"{name:<12}{row['plain_exec_us']:>11.0f} µs{row['durable_step_us']:>12.0f} µs"
            f"{row['step_overhead_us']:>9.0f} µs{row['bare_dbos_step_us']:>14.0f} µs"
            f"{row['llmport_over_dbos_us']:>17.0f} µs{row['run_overhead_us']:>9.0f} µs"
        )
    load = os.getloadavg()[0]
    summary = {"steps": args.steps, "runs": args.runs, "cpu": args.cpu, "load": load}
    print(json.dumps({**summary, **results}))


if __name__ == "__main__":
    main()
