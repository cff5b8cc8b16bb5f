"""``llmport logs -q WORD`` over 10,000 logged prompts: target <= 100 ms.

    uv run --frozen python benchmarks/bench_cli_logs.py [--prompts 10000] [--turns 10] [--home DIR]

``--home DIR`` keeps the filled database there and reuses it on the next run
(filling 10,000 prompts one logged turn at a time takes minutes).

Logs ``--prompts`` turns (``--turns`` per conversation) through the CLI's own
logbook (the session store plus its FTS5 index) into a temporary
``LLMPORT_HOME``, then times, median of 21 runs each:

1. ``llmport logs -q RAREWORD`` in process (``main([...])``: parsing, the query,
   printing), one match;
2. ``llmport logs -q COMMONWORD``: every turn matches, the newest 3 printed;
3. the same two as ``--json``;
4. the query alone (``logbook.search``), rare and common;
5. one ``llmport logs -q RAREWORD`` as a new process (Python start-up included).

Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from llmport import Message, Usage
from llmport.cli.logbook import LogQuery, open_conversation, search
from llmport.cli.main import main
from llmport.engine.result import RunResult

TARGET_MS = 100.0
WORDS = ["pelican", "harbour", "granite", "lantern", "meadow", "saffron", "tundra", "violet"]


def fill(prompts: int, turns: int) -> None:
    """Log ``prompts`` turns, ``turns`` per conversation; the last prompt alone says 'zeppelin'."""
    for start in range(0, prompts, turns):
        conversation = open_conversation(log=True)
        for i in range(start, min(start + turns, prompts)):
            word = "zeppelin" if i == prompts - 1 else WORDS[i % len(WORDS)]
            prompt = f"prompt {i}: tell me about the {word} and the common thread"
            answer = f"answer {i}: the {word} is fine"
            result: RunResult[str] = RunResult(
                output=answer,
                text=answer,
                model="openai:gpt-4o-mini",
                usage=Usage(input_tokens=12, output_tokens=7),
                latency=0.2,
                messages=[
                    *conversation.history,
                    Message.from_dict({"role": "user", "content": prompt}),
                    Message.from_dict({"role": "assistant", "content": answer}),
                ],
            )
            conversation.record(prompt, "openai:gpt-4o-mini", {}, result)
        if conversation.session is not None:
            conversation.session.close()


def timed(argv: list[str], rounds: int = 21) -> float:
    """Median milliseconds of ``llmport ARGV`` in process (output discarded)."""
    samples = []
    for _ in range(rounds):
        sink = io.StringIO()
        started = time.perf_counter()
        with contextlib.redirect_stdout(sink):
            assert main(argv) == 0
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def timed_search(text: str, rounds: int = 21) -> float:
    """Median milliseconds of the query alone (no argument parsing, no printing)."""
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        search(LogQuery(limit=3, text=text))
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def in_new_process(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "llmport.cli", *argv], check=True, capture_output=True)
    return (time.perf_counter() - started) * 1000


def run(prompts: int, turns: int, home: Path) -> dict[str, float]:
    started = time.perf_counter()
    if not (home / "logs.sqlite").exists():
        fill(prompts, turns)
    fill_s = time.perf_counter() - started
    figures = {
        "fill_s": round(fill_s, 1),
        "rare_ms": timed(["logs", "-q", "zeppelin"]),
        "common_ms": timed(["logs", "-q", "common"]),
        "rare_json_ms": timed(["logs", "-q", "zeppelin", "--json"]),
        "common_json_ms": timed(["logs", "-q", "common", "--json", "-n", "20"]),
        "query_rare_ms": timed_search("zeppelin"),
        "query_common_ms": timed_search("common"),
        "process_ms": in_new_process(["logs", "-q", "zeppelin"]),
    }
    return {k: round(v, 1) for k, v in figures.items()}


def main_bench() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--home", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        home = args.home or Path(scratch)
        os.environ["LLMPORT_HOME"] = str(home)
        figures = run(args.prompts, args.turns, home)
        size = (home / "logs.sqlite").stat().st_size
    print(f"{args.prompts} logged prompts ({size / 1e6:.1f} MB), fill {figures['fill_s']} s")
    print("  median of 21 in-process runs of `llmport logs ...` (process_ms: one new process)")
    for key in figures:
        if key == "fill_s":
            continue
        print(f"  {key:16} {figures[key]:8.1f} ms")
    ok = (
        max(figures[k] for k in ("rare_ms", "common_ms", "rare_json_ms", "common_json_ms"))
        <= TARGET_MS
    )
    print(json.dumps({"bench": "cli_logs", "prompts": args.prompts, **figures, "ok": ok}))


if __name__ == "__main__":
    main_bench()
