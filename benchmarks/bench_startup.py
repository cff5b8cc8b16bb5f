"""Start-up of a script: ``from llmport import Runtime, tool, agentic_function``.

    uv run python benchmarks/bench_startup.py [--runs 30]

Each sample is a fresh interpreter with bytecode caching on
(``PYTHONDONTWRITEBYTECODE`` dropped, as for an installed package), timed
from outside like ``hyperfine``; ``python -c pass`` runs interleaved with it
and its median is subtracted, in wall and in CPU time. Target: <= 60 ms. Prints one JSON line.
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    wall(IMPORT, env)  # write the bytecode cache
    base, loaded = [], []
    for _ in range(args.runs):  # interleaved: load swings hit both alike
        base.append(wall("pass", env))
        loaded.append(wall(IMPORT, env))

    def over(i: int) -> float:
        median = statistics.median
        return (median(x[i] for x in loaded) - median(x[i] for x in base)) * 1000

    wall_over, cpu_over = over(0), over(1)
    print(
        json.dumps(
            {
                "bench": "startup",
                "code": IMPORT,
                "runs": args.runs,
                "pass_ms": round(statistics.median(x[0] for x in base) * 1000, 1),
                "import_over_pass_ms": round(wall_over, 1),
                "import_over_pass_cpu_ms": round(cpu_over, 1),
                "target_met": wall_over <= 60,
            }
        )
    )


if __name__ == "__main__":
    main()
