"""Scale benchmarks: many writers into one session, and context cost as a session grows.

    uv run python benchmarks/bench_scale.py [--quick] [--writers-only] [--repeat N]

``--writers-only`` runs part 1 alone against PostgreSQL (``--repeat N`` times on
one server, printing each run and the median): the figure for "8 writers
into one session".

1. Appends: 8 processes x 1,000 nodes into **one** session, in PostgreSQL
   (a real PostgreSQL 16 started from the ``pgserver`` wheel in a temporary
   directory, over a Unix socket) and beside it in one SQLite file. Each
   process opens the session, waits until all are ready, then appends:
   half the nodes are function nodes (INSERT, then the completion), half
   tool nodes (one INSERT). nodes/s = all nodes / (last process done -
   first process started). Then checks: 0 lost, sequence dense, each
   process's order kept.
2. Context per exec with the **default** ``render_range`` (token-bounded
   reads, :data:`llmport.sessions.dag.DEFAULT_READ_TOKENS`) on sessions of 1,000 /
   10,000 / 100,000 nodes (``main`` calling ``step(i)``, each step an exec
   that ran a tool), measured the way ``exec`` computes it
   (:meth:`AgenticFrame.context_messages`).

Prints figures, never asserts; one JSON line at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path
from typing import Any

from llmport import Session
from llmport.sessions.agentic import AgenticFrame
from llmport.sessions.dag import DEFAULT_READ_TOKENS

WORKERS = 8

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from llmport import Session

    url, sid, who, count, go = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    session = Session(url, id=sid)
    top = session.begin("function", f"worker-{who}", session.root, {"arguments": {}})
    print("ready", flush=True)
    while not Path(go).exists():
        time.sleep(0.001)
    t0 = time.time()
    for i in range(count - 1):
        if i % 2:
            node = session.begin("function", "step", top, {"arguments": {"who": who, "i": i}})
            session.end(node, "ok", {"result": i}, 0.0)
        else:
            session.record("tool", "step", top, {"arguments": {"who": who, "i": i}}, "ok",
                           {"content": str(i)}, 0.0)
    session.end(top, "ok", {"result": count}, 0.0)
    print(t0, time.time(), flush=True)
""")


def run_writers(url: str, count: int, folder: Path, env: dict[str, str]) -> dict[str, Any]:
    session = Session(url)
    sid = session.id
    session.close()
    script = folder / "writer.py"
    script.write_text(WRITER)
    go = folder / f"go-{sid}"
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), url, sid, str(k), str(count), str(go)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for k in range(WORKERS)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    go.touch()
    spans = []
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        start, end = map(float, out.split())
        spans.append((start, end))
    elapsed = max(e for _, e in spans) - min(s for s, _ in spans)
    stored = Session(url, id=sid, readonly=True)
    nodes = stored.nodes()
    total = WORKERS * count
    ordered = all(
        [
            n.data["arguments"]["i"]
            for n in nodes
            if n.name == "step" and n.data["arguments"]["who"] == str(k)
        ]
        == list(range(count - 1))
        for k in range(WORKERS)
    )
    dense = [n.seq for n in nodes] == list(range(1, len(nodes) + 1))
    stored.close()
    return {
        "nodes": total,
        "stored": len(nodes),
        "lost": total - len(nodes),
        "dense": dense,
        "order_kept": ordered,
        "seconds": round(elapsed, 3),
        "nodes_per_s": round(total / elapsed),
    }


def build(nodes: int) -> tuple[Session, AgenticFrame]:
    session = Session()
    main = session.begin(
        "function",
        "main",
        session.root,
        {"arguments": {"goal": "ship it"}, "doc": "Run the agent."},
    )
    for i in range(max(0, (nodes - 2) // 3)):
        step = session.begin("function", "step", main, {"arguments": {"i": i}}, expose="full")
        llm = session.begin(
            "llm",
            "openai:gpt-4o-mini",
            step,
            {"content": [{"type": "text", "text": f"do step {i}"}]},
        )
        session.record(
            "tool", "lookup", llm, {"arguments": {"q": i}}, "ok", {"content": f"found {i}"}, 0.001
        )
        session.end(llm, "ok", {"reply": f"step {i} done", "usage": {"input_tokens": 10}}, 0.01)
        session.end(step, "ok", {"result": f"done {i}"}, 0.01)
    worker = session.begin("function", "worker", main, {"arguments": {}})
    return session, AgenticFrame(session, worker, None, None)  # the default render_range


def bench_context(nodes: int, repeat: int) -> dict[str, Any]:
    session, frame = build(nodes)
    frame.context_messages()  # warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        history = frame.context_messages()
        times.append(time.perf_counter() - t0)
    reads: Any = getattr(history, "reads", [])
    ordered = sorted(times)
    return {
        "nodes": len(session),
        "reads": len(reads),
        "tokens": reads.tokens,
        "median_ms": round(statistics.median(times) * 1000, 3),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1] * 1000, 3),
    }


def writers_only(url: str, count: int, folder: Path, env: dict[str, str], repeat: int) -> None:
    """Part 1 alone against PostgreSQL, ``repeat`` times: each run and the median nodes/s."""
    runs = []
    for _ in range(repeat):
        row = run_writers(url, count, folder, env)
        runs.append(row)
        print(
            f"postgresql {row['nodes_per_s']:>7,} nodes/s  {row['seconds']:>6}s  lost "
            f"{row['lost']}  dense {row['dense']}  order {row['order_kept']}  "
            f"load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
    median = statistics.median(r["nodes_per_s"] for r in runs)
    print(f"median {median:,.0f} nodes/s ({WORKERS} processes x {count:,} nodes, {repeat} runs)")
    print(json.dumps({"bench": "scale-writers", "median_nodes_per_s": median, "runs": runs}))


def main() -> None:
    quick = "--quick" in sys.argv
    count = 200 if quick else 1_000
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 1
    folder = Path(tempfile.mkdtemp(prefix="llmport-bench-"))
    env = {**os.environ, "LLMPORT_PLUGINS": "postgres"}
    os.environ["LLMPORT_PLUGINS"] = "postgres"
    import pgserver

    pgdata = tempfile.mkdtemp(prefix="llmport-pg-")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server = pgserver.get_server(pgdata, cleanup_mode="stop")
    try:
        if "--writers-only" in sys.argv:
            writers_only(server.get_uri(), count, folder, env, repeat)
            return
        postgres = run_writers(server.get_uri(), count, folder, env)
        sqlite = run_writers(str(folder / "bench.sqlite"), count, folder, env)
    finally:
        from llmport_postgres import close_pools

        close_pools()
        server.cleanup()
        shutil.rmtree(pgdata, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)

    sizes = [1_000, 10_000] if quick else [1_000, 10_000, 100_000]
    context = [bench_context(n, 100 if quick else 300) for n in sizes]

    print(f"{WORKERS} processes x {count:,} nodes into one session")
    print(f"{'store':>10} {'nodes/s':>9} {'seconds':>8} {'lost':>5} {'dense':>6} {'order':>6}")
    for name, row in (("postgresql", postgres), ("sqlite", sqlite)):
        print(
            f"{name:>10} {row['nodes_per_s']:>9,} {row['seconds']:>8} {row['lost']:>5} "
            f"{row['dense']!s:>6} {row['order_kept']!s:>6}"
        )
    print()
    print(f"context per exec, default render_range (token budget {DEFAULT_READ_TOKENS:,})")
    print(
        f"{'session nodes':>14} {'nodes read':>11} {'est. tokens':>12} {'median ms':>10} "
        f"{'p95 ms':>8}"
    )
    for row in context:
        print(
            f"{row['nodes']:>14,} {row['reads']:>11} {row['tokens']:>12,} "
            f"{row['median_ms']:>10.3f} {row['p95_ms']:>8.3f}"
        )
    growth = context[-1]["median_ms"] / context[0]["median_ms"]
    print(f"growth x{growth:.2f} (target: <= 2 ms, flat)")
    print(
        json.dumps(
            {
                "bench": "scale",
                "postgresql": postgres,
                "sqlite": sqlite,
                "context": context,
                "context_growth": round(growth, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
