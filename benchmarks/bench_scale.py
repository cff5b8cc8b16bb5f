"""Scale benchmarks: many writers into one session, and context cost as a session grows.

    uv run python benchmarks/bench_scale.py [--quick] [--writers-only] [--repeat N]
        [--against CHECKOUT]

``--writers-only`` runs part 1 alone against PostgreSQL (``--repeat N`` times on
one server, printing each run and the median): the figure for "8 writers
into one session". Each run also gives the CPU time per node, the writers'
own (their loop only) and the server's (all PostgreSQL processes): unlike
nodes/s it hardly depends on what else runs on the machine, and 2 cores
divided by it is the rate the machine could reach with nothing else to do.
``--against CHECKOUT`` (with ``--writers-only``) also runs another checkout's
core and PostgreSQL plugin (first on ``PYTHONPATH``), alternating with this
one run by run, each side in its own database of the same server: a before
and after under the same load.

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
    t0, cpu0 = time.time(), time.process_time()
    for i in range(count - 1):
        if i % 2:
            node = session.begin("function", "step", top, {"arguments": {"who": who, "i": i}})
            session.end(node, "ok", {"result": i}, 0.0)
        else:
            session.record("tool", "step", top, {"arguments": {"who": who, "i": i}}, "ok",
                           {"content": str(i)}, 0.0)
    session.end(top, "ok", {"result": count}, 0.0)
    print(t0, time.time(), time.process_time() - cpu0, flush=True)
""")

NEW_SESSION = "import sys; from llmport import Session; print(Session(sys.argv[1]).id)"


def server_cpu(postmaster: int | None) -> float:
    """CPU seconds used so far by the PostgreSQL server whose postmaster is ``postmaster``
    (its own and its processes', live or gone; from /proc). 0.0 without a server."""
    if postmaster is None:
        return 0.0
    ticks = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(pid) == postmaster or int(fields[1]) == postmaster:
            # utime + stime, and that of its children gone (a backend whose client left)
            ticks += sum(int(field) for field in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def run_writers(
    url: str, count: int, folder: Path, env: dict[str, str], postmaster: int | None = None
) -> dict[str, Any]:
    """``WORKERS`` processes appending ``count`` nodes each into one new session of ``url``
    (``postmaster``: the server's process, whose CPU time is counted)."""
    # made by the side under test, so that its own code creates the tables
    made = subprocess.run(
        [sys.executable, "-c", NEW_SESSION, url], env=env, check=True, capture_output=True
    )
    sid = made.stdout.decode().strip()
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
    server_before = server_cpu(postmaster)
    go.touch()
    spans = []
    client_cpu = 0.0
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        start, end, cpu = map(float, out.split())
        spans.append((start, end))
        client_cpu += cpu
    server = server_cpu(postmaster) - server_before
    elapsed = max(e for _, e in spans) - min(s for s, _ in spans)
    # The check is not what is timed: a generous bound, so a busy machine cannot fail it.
    check_url = url + ("&" if "?" in url else "?") + "timeout=120" if "://" in url else url
    stored = Session(check_url, id=sid, readonly=True)
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
        "client_cpu_us_per_node": round(client_cpu / total * 1e6),
        "server_cpu_us_per_node": round(server / total * 1e6),
        "load": round(os.getloadavg()[0], 2),
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


def side_env(env: dict[str, str], checkout: str) -> dict[str, str]:
    """``env`` with ``checkout``'s core and PostgreSQL plugin first on ``PYTHONPATH``."""
    root = Path(checkout).resolve()
    paths = [str(root / "core"), str(root / "plugins" / "postgres"), env.get("PYTHONPATH", "")]
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, paths))}


def database_url(server: Any, name: str) -> str:
    """The URL of database ``name`` on ``server`` (created empty)."""
    server.psql(f"CREATE DATABASE {name};")
    return str(server.get_uri(name))


def writers_only(
    server: Any, count: int, folder: Path, env: dict[str, str], repeat: int, against: str | None
) -> None:
    """Part 1 alone against PostgreSQL, ``repeat`` times: each run and the median nodes/s
    (with ``against``: that checkout's runs alternating with this one's)."""
    sides = {"this": (database_url(server, "this_side"), env)}
    if against:
        sides[against] = (database_url(server, "against_side"), side_env(env, against))
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    for i in range(repeat):
        order = list(sides) if i % 2 == 0 else list(reversed(sides))  # neither always first
        for side in order:
            url, side_environment = sides[side]
            row = run_writers(url, count, folder, side_environment, server.get_pid())
            runs[side].append(row)
            print(
                f"{side:>12} {row['nodes_per_s']:>7,} nodes/s  {row['seconds']:>6}s  cpu/node "
                f"{row['client_cpu_us_per_node']} + {row['server_cpu_us_per_node']} us  lost "
                f"{row['lost']}  dense {row['dense']}  order {row['order_kept']}  "
                f"load {row['load']:.2f}",
                flush=True,
            )
    for side, rows in runs.items():
        median = statistics.median(r["nodes_per_s"] for r in rows)
        cpu = statistics.median(
            r["client_cpu_us_per_node"] + r["server_cpu_us_per_node"] for r in rows
        )
        print(
            f"{side}: median {median:,.0f} nodes/s, {cpu:,.0f} us CPU per node "
            f"({WORKERS} processes x {count:,} nodes, {repeat} runs)"
        )
        print(
            json.dumps(
                {
                    "bench": "scale-writers",
                    "side": side,
                    "median_nodes_per_s": median,
                    "median_cpu_us_per_node": cpu,
                    "runs": rows,
                }
            )
        )


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
            against = sys.argv[sys.argv.index("--against") + 1] if "--against" in sys.argv else None
            writers_only(server, count, folder, env, repeat, against)
            return
        postgres = run_writers(server.get_uri(), count, folder, env, server.get_pid())
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
