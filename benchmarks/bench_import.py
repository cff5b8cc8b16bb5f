"""Performance target: `import llmport` with every plugin installed.

Target: no vendor SDK imported; <= 40 ms median wall time. Each sample is a
fresh interpreter; the interpreter's own start-up (``python -c pass``) is
reported separately and subtracted.

Wall times swing with the machine's load, so each case also reports figures
that depend on it far less: the number of modules it imports, the CPU time
the interpreter used (median; time spent waiting for a core is not counted),
and the sum over its modules of their own import time (``python -X
importtime``), each module's best of ``--runs`` interpreters. Every
interpreter runs with bytecode caching on (``PYTHONDONTWRITEBYTECODE``
dropped from its environment), as an installed package does: otherwise
every module is compiled from source on every run.

    uv run python benchmarks/bench_import.py [--runs 30]
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

VENDOR_MODULES = [
    "openai",
    "anthropic",
    "google.genai",
    "boto3",
    "botocore",
    "httpx",
    "httpx2",
    "aiohttp",
    "jsonschema",
    "rich",
    "sqlite3",
    "pydantic",
]

PROBE = (
    "import sys, json; import llmport; from llmport.plugins.host import PluginHost; "
    "host = PluginHost(); host.providers(); "
    f"print(json.dumps([m for m in {VENDOR_MODULES!r} if m in sys.modules]))"
)


CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=CHILD_ENV)
    return time.perf_counter() - started


def cpu(code: str) -> float:
    """CPU seconds (user + system) the interpreter used: waiting for a core is not counted."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=CHILD_ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def import_cost(code: str, runs: int) -> tuple[int, float]:
    """(modules imported, ms of their own import time summed, each module's best of ``runs``)."""
    best: dict[str, int] = {}
    for _ in range(runs):
        err = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code],
            check=True, capture_output=True, text=True, env=CHILD_ENV,
        ).stderr
        for line in err.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, _, name = line.removeprefix("import time:").split("|")
            best[name.strip()] = min(best.get(name.strip(), 1 << 62), int(self_us))
    return len(best), sum(best.values()) / 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    for _ in range(3):  # warm the OS file cache and write the bytecode cache
        wall(PROBE)
    base = statistics.median(wall("pass") for _ in range(args.runs))
    bare = statistics.median(wall("import llmport") for _ in range(args.runs))
    runtime = statistics.median(wall("from llmport import Runtime") for _ in range(args.runs))
    loaded = statistics.median(wall(PROBE) for _ in range(args.runs))
    leaked = json.loads(
        subprocess.run(
            [sys.executable, "-c", PROBE], check=True, capture_output=True, text=True
        ).stdout
    )
    rows = [
        ("python -c pass", base * 1000, ""),
        ("import llmport", (bare - base) * 1000, "target <= 40 ms"),
        ("from llmport import Runtime", (runtime - base) * 1000, "no engine or pluggy yet"),
        ("import + load every plugin's providers", (loaded - base) * 1000, "no SDK imported"),
    ]
    print(f"{'what':42} {'median ms':>10}  note")
    for what, ms, note in rows:
        print(f"{what:42} {ms:10.1f}  {note}")
    print(f"heavy modules imported: {leaked or 'none'}")
    cpu_base = statistics.median(cpu("pass") for _ in range(args.runs))
    costs = {
        what: import_cost(code, args.runs)
        for what, code in (
            ("import llmport", "import llmport"),
            ("from llmport import Runtime", "from llmport import Runtime"),
        )
    }
    cpu_ms = {
        what: (statistics.median(cpu(code) for _ in range(args.runs)) - cpu_base) * 1000
        for what, code in (
            ("import llmport", "import llmport"),
            ("from llmport import Runtime", "from llmport import Runtime"),
        )
    }
    print(f"{'load-independent':42} {'modules':>10}  {'CPU ms':>7}  summed -X importtime self")
    for what, (count, ms) in costs.items():
        print(f"{what:42} {count:10d}  {cpu_ms[what]:7.1f}  {ms:.1f} ms (each module's best)")
    print(
        json.dumps(
            {
                "bench": "import",
                "runs": args.runs,
                "python_startup_ms": round(base * 1000, 1),
                "import_llmport_ms": round((bare - base) * 1000, 1),
                "from_llmport_import_runtime_ms": round((runtime - base) * 1000, 1),
                "import_and_load_plugins_ms": round((loaded - base) * 1000, 1),
                "heavy_modules_imported": leaked,
                "modules_import_llmport": costs["import llmport"][0],
                "modules_from_llmport_import_runtime": costs["from llmport import Runtime"][0],
                "cpu_ms_import_llmport": round(cpu_ms["import llmport"], 1),
                "cpu_ms_runtime": round(cpu_ms["from llmport import Runtime"], 1),
                "importtime_self_sum_import_llmport_ms": round(costs["import llmport"][1], 1),
                "importtime_self_sum_runtime_ms": round(
                    costs["from llmport import Runtime"][1], 1
                ),
                "target_met": (bare - base) <= 0.040 and not leaked,
            }
        )
    )


if __name__ == "__main__":
    main()
