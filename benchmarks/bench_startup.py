"""Start-up of a script: ``from llmport import Runtime, tool, agentic_function``.

    uv run python benchmarks/bench_startup.py [--runs 30] [--against /tmp/before]

Each sample is a fresh interpreter with bytecode caching on
(``PYTHONDONTWRITEBYTECODE`` dropped, as for an installed package), timed
from outside like ``hyperfine``; ``python -c pass`` runs interleaved with it
and its median is subtracted, in wall and in CPU time (and its best from
the best, the figure least disturbed by a busy machine). Target: <= 60 ms of
CPU time (user + system: what a busy machine's waits for a core do not
inflate). Prints one JSON line per side.

``--against CHECKOUT`` also times another checkout's core (its ``core`` folder
first on ``PYTHONPATH``), interleaved with this one in the same run: a before
and after measured under the same load. ``-X importtime``'s ten slowest modules
(own time, median of five runs) are listed for each side.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

IMPORT = "from llmport import Runtime, tool, agentic_function"


def wall(code: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds one fresh interpreter takes to run ``code``.

    CPU time (user + system) does not count waiting for a core on a busy machine.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu


def slowest(env: dict[str, str], count: int = 10, runs: int = 5) -> list[tuple[str, float]]:
    """The ``count`` modules with the most own import time (ms, median of ``runs``)."""
    own: dict[str, list[float]] = {}
    for _ in range(runs):
        run = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", IMPORT],
            check=True,
            env=env,
            capture_output=True,
            text=True,
        )
        for line in run.stderr.splitlines()[1:]:
            _, self_us, _, name = (part.strip() for part in line.replace(":", "|", 1).split("|"))
            own.setdefault(name, []).append(int(self_us) / 1000)
    medians = [(name, round(statistics.median(times), 2)) for name, times in own.items()]
    return sorted(medians, key=lambda item: -item[1])[:count]


def measure(sides: dict[str, dict[str, str]], runs: int) -> dict[str, dict[str, float]]:
    """Each side's import over ``python -c pass``, in ms: ``runs`` interleaved samples a side.

    ``sides`` maps a name to the environment its interpreters run with (its
    ``PYTHONPATH`` says whose llmport is imported); the first side's is used
    for ``python -c pass``. Returns, per side, the median wall and CPU time
    over the median of ``pass`` and the best wall time over the best of ``pass``.
    """
    for side_env in sides.values():
        wall(IMPORT, side_env)  # write the bytecode cache
    base_env = next(iter(sides.values()))
    base: list[tuple[float, float]] = []
    loaded: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
    for _ in range(runs):  # interleaved: load swings hit every side alike
        base.append(wall("pass", base_env))
        for side, side_env in sides.items():
            loaded[side].append(wall(IMPORT, side_env))
    median = statistics.median

    def over(side: str, i: int) -> float:
        return (median(x[i] for x in loaded[side]) - median(x[i] for x in base)) * 1000

    def best(side: str) -> float:
        # The fastest sample of each: the least disturbed by other jobs.
        return (min(x[0] for x in loaded[side]) - min(x[0] for x in base)) * 1000

    return {
        side: {
            "pass_ms": median(x[0] for x in base) * 1000,
            "import_over_pass_ms": over(side, 0),
            "import_over_pass_cpu_ms": over(side, 1),
            "import_over_pass_best_ms": best(side),
        }
        for side in sides
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--against", help="another checkout, timed interleaved (e.g. 'before')")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    sides = {"this": env}
    if args.against:
        core = os.path.join(os.path.abspath(args.against), "core")
        sides["against"] = {
            **env,
            "PYTHONPATH": os.pathsep.join(filter(None, [core, env.get("PYTHONPATH")])),
        }
    figures = measure(sides, args.runs)
    for side, side_env in sides.items():
        row = figures[side]
        print(f"{side}: slowest imports (own ms): {slowest(side_env)}", file=sys.stderr)
        print(
            json.dumps(
                {
                    "bench": "startup",
                    "side": side if side == "this" else args.against,
                    "code": IMPORT,
                    "runs": args.runs,
                    "load": round(os.getloadavg()[0], 2),
                    **{name: round(value, 1) for name, value in row.items()},
                    "target_met": row["import_over_pass_cpu_ms"] <= 60,
                }
            )
        )


if __name__ == "__main__":
    main()
