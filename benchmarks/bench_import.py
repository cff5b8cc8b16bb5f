"""SPEC §8: `import llmport` with every plugin installed.

Target: no vendor SDK imported; <= 40 ms median wall time. Each sample is a
fresh interpreter; the interpreter's own start-up (``python -c pass``) is
reported separately and subtracted.

    uv run python benchmarks/bench_import.py [--runs 30]
"""

from __future__ import annotations

import argparse
import json
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


def wall(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    for _ in range(3):  # warm the OS file cache
        wall("import llmport")
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
                "target_met": (bare - base) <= 0.040 and not leaked,
            }
        )
    )


if __name__ == "__main__":
    main()
