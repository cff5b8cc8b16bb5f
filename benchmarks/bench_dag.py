"""Session DAG benchmarks: context computation per exec, and SQLite append rate.

    uv run python benchmarks/bench_dag.py [--quick] [--exec-in-session]
    uv run python benchmarks/bench_dag.py [--quick] --agentic-call [--postgres]

1. Context per exec on sessions of 1,000 / 10,000 / 100,000 nodes: the
   session is one long agent run (``main`` calling ``step(i)``, each step an
   exec that ran a tool: 3 nodes a step). A new ``worker`` call under
   ``main`` with ``render_range={"callers": 50, "subcalls": 20}`` and 20
   finished sub-calls of its own computes its context the way ``exec`` does
   (:meth:`AgenticFrame.context_messages`: clock tick, reads, rendering).
   Target: <= 2 ms and flat as the session grows.
2. SQLite append rate: nodes written to a WAL database, one transaction per
   write (a function or llm node is an INSERT then an UPDATE of its row; a
   tool node a single INSERT), and the same through ``@agentic_function``
   calls. Target: >= 5,000 nodes/s.
3. Exec cost in a growing session: one ``exec(..., context="")`` (no DAG
   context rendered) inside an ``@agentic_function`` call under ``main`` of a
   1,000-node and of a 100,000-node session, each session written by its
   runtime's own execs (``step(i)``, one exec each), minus the same exec of a
   fresh runtime outside any session; the scripted provider, no network.
   Blocks alternate between the sessions and the medians are compared.
   Target: the 100k figure within 10% of the 1k figure (what an exec writes
   and looks up must not grow with the session or the calls before it).
4. Fixed cost of an agentic call: an ``@agentic_function`` whose body is one
   ``exec(..., context="")``, against the same exec called bare; top level
   outside any session (each call records into a session of its own, made
   from the configuration) and inside ``with Session():``. Python calls per
   call (cProfile, 1,000 calls) and microseconds per call (median of
   interleaved blocks); the scripted provider, no network. Then top level
   with a configured SQLite file (``LLMPORT_SESSION``, a temporary folder;
   each call a new session in it), the file opened for each call (100 calls
   a block) and held open by ``with rt:``, and, for reference, the calls
   inside one SQLite session (``with Session(path):``); ``--postgres`` adds
   a configured PostgreSQL database (the ``pgserver`` wheel, 100 calls a
   block). ``--agentic-call`` measures this alone (another checkout's
   interpreter can run this file).

``--exec-in-session`` measures part 3 alone (what ``bench_limits.py`` runs
for each checkout).

Prints a table, then one JSON line.
"""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from llmport import Runtime, Session, agentic_function
from llmport.provider.config import Config
from llmport.sessions import dag
from llmport.sessions.agentic import AgenticFrame
from llmport.testing import Script

RANGE = {"callers": 50, "subcalls": 20}


def build(nodes: int) -> tuple[Session, AgenticFrame]:
    session = Session()
    main = session.begin(
        "function",
        "main",
        session.root,
        {"arguments": {"goal": "ship it"}, "doc": "Run the agent."},
    )
    for i in range(max(0, (nodes - 22) // 3)):  # main + worker + 20 leaves + 3 a step
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
    worker = session.begin("function", "worker", main, {"arguments": {}, "render_range": RANGE})
    for j in range(20):
        leaf = session.begin("function", "leaf", worker, {"arguments": {"j": j}})
        session.end(leaf, "ok", {"result": j}, 0.0)
    return session, AgenticFrame(session, worker, RANGE["callers"], RANGE["subcalls"])


def bench_context(nodes: int, repeat: int) -> dict[str, Any]:
    session, frame = build(nodes)
    frame.context_messages()  # warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        history = frame.context_messages()
        times.append(time.perf_counter() - t0)
    reads = getattr(history, "reads", [])
    return {
        "nodes": len(session),
        "reads": len(reads),
        "messages": len(history),
        "median_ms": statistics.median(times) * 1000,
        "p95_ms": _p95(times) * 1000,
    }


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[int(len(ordered) * 0.95) - 1]


def bench_append(count: int, folder: Path) -> dict[str, float]:
    raw = Session(folder / "raw.sqlite")
    parent = raw.begin("function", "main", raw.root, {"arguments": {}})
    t0 = time.perf_counter()
    for i in range(count):
        node = raw.begin("function", "step", parent, {"arguments": {"i": i}})
        raw.end(node, "ok", {"result": i}, 0.0)
    function_rate = count / (time.perf_counter() - t0)
    llm = raw.begin("llm", "m", parent, {})
    t0 = time.perf_counter()
    for i in range(count):
        raw.record("tool", "t", llm, {"arguments": {"i": i}}, "ok", {"content": "x"}, 0.0)
    tool_rate = count / (time.perf_counter() - t0)
    raw.close()

    @agentic_function
    def step(i: int) -> int:
        return i

    @agentic_function
    def main() -> None:
        for i in range(count):
            step(i)

    with Session(folder / "agentic.sqlite"):
        t0 = time.perf_counter()
        main()
        agentic_rate = count / (time.perf_counter() - t0)
    return {
        "function_nodes_per_s": function_rate,
        "tool_nodes_per_s": tool_rate,
        "agentic_calls_per_s": agentic_rate,
    }


def _agent_run(nodes: int, calls: int) -> tuple[Runtime, Session, AgenticFrame]:
    """A session of about ``nodes`` nodes written by one runtime's execs, and a frame in it.

    ``main`` calls ``step(i)``, each an exec (a function and an llm node): the
    runtime has made as many calls as the session has steps, as in an agent run.
    """
    steps = max(0, nodes - 2) // 2
    rt: Runtime = Script(["ok"] * (steps + calls + 100)).runtime(config=Config())

    @agentic_function
    def step(i: int) -> Any:
        return rt.exec(f"step {i}", context="")

    session = Session()
    main = session.begin("function", "main", session.root, {"arguments": {}})
    frame = AgenticFrame(session, main, None, None)
    token = dag.enter_frame(frame)
    try:
        for i in range(steps):
            step(i)
    finally:
        dag.leave_frame(token)
    return rt, session, frame


def _exec_block(rt: Runtime, frame: AgenticFrame | None, calls: int) -> float:
    """Median ms of ``calls`` context-free execs, each in its own agentic call in ``frame``."""

    @agentic_function
    def ask() -> Any:
        return rt.exec("hi", context="")

    token = dag.enter_frame(frame) if frame is not None else None
    times = []
    try:
        for _ in range(calls):
            t0 = time.perf_counter()
            ask() if frame is not None else rt.exec("hi", context="")
            times.append(time.perf_counter() - t0)
    finally:
        if token is not None:
            dag.leave_frame(token)
    return statistics.median(times) * 1000


def bench_exec_in_session(sizes: list[int], calls: int, blocks: int) -> dict[str, Any]:
    """Exec overhead over the bare exec per session size; blocks interleaved, medians kept."""
    runs = {n: _agent_run(n, calls * blocks) for n in sizes}
    built = {n: len(session) for n, (_, session, _) in runs.items()}
    bare_rt: Runtime = Script(["ok"] * (calls * blocks + 100)).runtime(config=Config())
    _exec_block(bare_rt, None, 50)  # warm up
    samples: dict[int | str, list[float]] = {n: [] for n in sizes}
    samples["bare"] = []
    for _ in range(blocks):
        samples["bare"].append(_exec_block(bare_rt, None, calls))
        for n, (rt, _, frame) in runs.items():
            samples[n].append(_exec_block(rt, frame, calls))
    bare = statistics.median(samples["bare"])
    over = {n: statistics.median(samples[n]) - bare for n in sizes}
    return {
        "bare_ms": round(bare, 4),
        "overhead_ms": {built[n]: round(over[n], 4) for n in sizes},
        "ratio": round(over[sizes[-1]] / over[sizes[0]], 3),
    }


#: Calls per block of the rows that open the configured file on every call (~10 ms each).
OPENING_CALLS = 100
#: The rows of part 4.
ROWS = 7


def bench_agentic_call(
    calls: int, blocks: int, folder: Path, postgres: str | None = None
) -> dict[str, Any]:
    """Python calls and µs per call: bare exec, agentic call at top level, in a session.

    The top-level rows with a configured SQLite file (``LLMPORT_SESSION`` in
    ``folder``, set only while they run) record each call into a new session
    of that file: opened for each call, or held open by ``with rt:``.
    ``postgres``: a PostgreSQL URL for one more row, configured the same way.
    """
    rt: Runtime = Script(["ok"] * ((blocks + 2) * ROWS * calls + 100)).runtime(config=Config())

    @agentic_function
    def ask(question: str) -> Any:
        return rt.exec(question, context="")

    def bare(n: int) -> None:
        for _ in range(n):
            rt.exec("hi", context="")

    def agentic(n: int) -> None:
        for _ in range(n):
            ask("hi")

    session = Session()  # in memory: what the "in session" calls record into

    def in_session(n: int) -> None:
        with session:
            agentic(n)

    configured = str(folder / "configured.sqlite")

    def configured_in(target: str) -> Any:
        def top_level(n: int) -> None:
            os.environ["LLMPORT_SESSION"] = target
            try:
                agentic(n)
            finally:
                del os.environ["LLMPORT_SESSION"]

        return top_level

    top_level_configured = configured_in(configured)

    def top_level_configured_held(n: int) -> None:
        with rt:  # the runtime keeps the configured file open for the block
            top_level_configured(n)

    stored = Session(folder / "stored.sqlite")  # one session in a file, for reference

    def in_stored_session(n: int) -> None:
        with stored:
            agentic(n)

    contenders = {
        "bare exec": (bare, calls),
        "agentic, top level": (agentic, calls),
        "agentic, in session": (in_session, calls),
        "top level, SQLite configured": (top_level_configured, OPENING_CALLS),
        "same, inside with rt": (top_level_configured_held, calls),
        "in a SQLite session": (in_stored_session, calls),
    }
    if postgres is not None:  # the store plugin pools its connections: no block needed
        contenders["top level, PostgreSQL"] = (configured_in(postgres), OPENING_CALLS)
    for run, n in contenders.values():
        run(n)  # warm up: imports, first-call caches, the files made
    counts = {}
    for name, (run, n) in contenders.items():
        profile = cProfile.Profile()
        profile.enable()
        run(n)
        profile.disable()
        counts[name] = pstats.Stats(profile).total_calls / n  # type: ignore[attr-defined]
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(blocks):
        for name, (run, n) in contenders.items():
            t0 = time.perf_counter()
            run(n)
            samples[name].append((time.perf_counter() - t0) / n * 1e6)
    return {
        name: {"calls": round(counts[name]), "us": round(statistics.median(samples[name]), 1)}
        for name in contenders
    }


def agentic_call(blocks: int, postgres: bool = False) -> dict[str, Any]:
    """Part 4, its SQLite files in a temporary folder (no configured session around it).

    ``postgres``: also a PostgreSQL row, on a server the ``pgserver`` wheel
    starts in a temporary folder (as ``bench_scale.py`` does).
    """
    os.environ.pop("LLMPORT_SESSION", None)  # the top-level rows record in memory
    with tempfile.TemporaryDirectory() as tmp:
        if not postgres:
            return bench_agentic_call(1_000, blocks, Path(tmp))
        import warnings

        import pgserver

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = pgserver.get_server(
                tempfile.mkdtemp(prefix="llmport-pg-"), cleanup_mode="stop"
            )
        try:
            return bench_agentic_call(1_000, blocks, Path(tmp), server.get_uri())
        finally:
            from llmport_postgres import close_pools

            close_pools()
            server.cleanup()


def print_agentic_call(fixed: dict[str, Any]) -> None:
    print('fixed cost of an agentic call wrapping one exec(context="")')
    print(f"{'':>29} {'Python calls':>13} {'µs per call':>12}")
    for name, row in fixed.items():
        print(f"{name:>29} {row['calls']:>13,} {row['us']:>12.1f}")


def exec_in_session(quick: bool) -> dict[str, Any]:
    """Part 3 with this run's sizes: an exec in a 100k- against a 1k-node session."""
    return bench_exec_in_session([1_000, 100_000], 200 if quick else 500, 5 if quick else 9)


def print_exec_in_session(in_session: dict[str, Any]) -> None:
    print('exec(context="") in an @agentic_function, over the bare exec')
    print(f"  bare exec: {in_session['bare_ms']:.4f} ms")
    for size, over in in_session["overhead_ms"].items():
        print(f"  {size:>8,} session nodes: +{over:.4f} ms")
    print(f"  largest / smallest: x{in_session['ratio']:.2f}  (target: <= 1.10)")


def main() -> None:
    quick = "--quick" in sys.argv
    if "--exec-in-session" in sys.argv:
        in_session = exec_in_session(quick)
        print_exec_in_session(in_session)
        print(json.dumps({"bench": "dag", "exec_in_session": in_session}))
        return
    if "--agentic-call" in sys.argv:
        fixed = agentic_call(3 if quick else 5, postgres="--postgres" in sys.argv)
        print_agentic_call(fixed)
        print(json.dumps({"bench": "dag", "agentic_call": fixed}))
        return
    sizes = [1_000, 10_000] if quick else [1_000, 10_000, 100_000]
    context = [bench_context(n, 200 if quick else 500) for n in sizes]
    with tempfile.TemporaryDirectory() as tmp:
        append = bench_append(2_000 if quick else 10_000, Path(tmp))
    in_session = exec_in_session(quick)
    fixed = agentic_call(5 if quick else 9)

    print(f"context per exec (render_range={RANGE})")
    print(
        f"{'session nodes':>14} {'nodes read':>11} {'messages':>9} {'median ms':>10} {'p95 ms':>8}"
    )
    for row in context:
        print(
            f"{row['nodes']:>14,} {row['reads']:>11} {row['messages']:>9} "
            f"{row['median_ms']:>10.3f} {row['p95_ms']:>8.3f}"
        )
    growth = context[-1]["median_ms"] / context[0]["median_ms"]
    print(
        f"growth {context[0]['nodes']:,} -> {context[-1]['nodes']:,} nodes: x{growth:.2f}  "
        f"(target: <= 2 ms, flat)"
    )
    print()
    print("SQLite append (WAL, one transaction per write)")
    print(f"  function nodes (insert + complete): {append['function_nodes_per_s']:>10,.0f} nodes/s")
    print(f"  tool nodes (one insert):            {append['tool_nodes_per_s']:>10,.0f} nodes/s")
    print(f"  @agentic_function calls:            {append['agentic_calls_per_s']:>10,.0f} nodes/s")
    print("  target: >= 5,000 nodes/s")
    print()
    print_exec_in_session(in_session)
    print()
    print_agentic_call(fixed)
    ok = (
        all(r["median_ms"] <= 2.0 for r in context)
        and min(append.values()) >= 5000
        and in_session["ratio"] <= 1.10
    )
    print(
        json.dumps(
            {
                "bench": "dag",
                "context": context,
                "context_growth": round(growth, 3),
                "append": {k: round(v) for k, v in append.items()},
                "exec_in_session": in_session,
                "agentic_call": fixed,
                "targets_met": ok,
            }
        )
    )


if __name__ == "__main__":
    main()
