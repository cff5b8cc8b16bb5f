"""Six performance limits, two checkouts side by side in one run: one table.

    uv run python benchmarks/bench_limits.py --before /tmp/limits-before [--quick]
    uv run python benchmarks/bench_limits.py --before-rev 342db75 [--only startup,dag]

``--before CHECKOUT`` is another checkout's folder (``git worktree add --detach
/tmp/limits-before 342db75``); ``--before-rev REV`` exports that commit of this
repository (``git archive``) to ``/tmp/llmport-limits-<commit>`` and uses it.
``--after`` is this checkout unless given. Each side runs **this** checkout's
benchmark scripts, with the side's ``core`` and ``plugins/*`` folders first on
``PYTHONPATH`` of a subprocess of this interpreter (the dependencies are this
environment's), so both sides are measured by the same harness. Which files
each side really imports (``llmport`` and a plugin) is printed once, and a side
that would import another checkout's code stops the run. For every item the
sides alternate, a fresh process per repetition, under the same load:

1. ``dag``: an exec in a 100k-node session against a 1k-node one
   (``bench_dag.py --exec-in-session``). Target: the overhead within 10%.
2. ``inflight``: Anthropic, 500 ``async_exec`` gathered in a fresh process,
   against the Anthropic SDK on aiohttp (``bench_inflight.py --timed``; the
   SDK side runs in ``--sdk-python``, an environment with
   ``anthropic[aiohttp]``, where the llmport sides run too, so all three use
   the same SDK version). Target: client CPU time <= the SDK's.
3. ``bedrock``: a 200-delta Bedrock stream, sync, ``Runtime.stream`` against
   boto3's ``converse_stream`` loop in the same process
   (``bench_bedrock_stream.py``). Target: <= boto3.
4. ``startup``: ``from llmport import Runtime, tool, agentic_function`` over
   ``python -c pass``, bytecode cached, CPU time (``bench_startup.measure``;
   only the side's ``core`` on the path: the import loads no plugin).
   Target: <= 60 ms.
5. ``durable``: a durable step over a plain exec on PostgreSQL, and a bare
   DBOS step doing nothing on the same database (``bench_durable.py
   --no-sqlite``; the bare step is the harness's, the same DBOS for both
   sides). Target: stated, llmport's share minimised.
6. ``pg``: 8 writer processes into one PostgreSQL session, nodes/s
   (``bench_scale.py --writers-only``, a fresh server per run). Target:
   >= 2,000 nodes/s.

Prints each run as it ends (with the load average), then one table (item,
target, before, after, after/before, verdict, load) and one JSON line. A side
that fails or an item that cannot run (no SDK environment, no ``pgserver``)
shows "not measured" or "failed" with the reason, and the rest still run.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
HERE = BENCH.parent
sys.path.insert(0, str(BENCH))

#: The SDK environment made for the 500-in-flight comparison (see docs/performance.md).
SDK_PYTHON = "/tmp/inflight-env/bin/python"
#: A subprocess that takes longer than this is reported as failed, not waited on.
TIMEOUT_S = 900

Runs = dict[str, list[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class Side:
    """One checkout under test: ``before`` or ``after``."""

    name: str
    root: Path
    label: str

    def env(self, plugins: str | None = None, *, core_only: bool = False) -> dict[str, str]:
        """This interpreter's environment with the checkout's code first on the path.

        ``plugins`` sets ``LLMPORT_PLUGINS`` (the entry points that load: a plugin
        one side lacks must not load from the other side's installed copy).
        ``core_only``: the plugins' folders stay off the path, for a run that
        imports no plugin (each folder on the path costs every import a lookup).
        Bytecode is cached, as for an installed package.
        """
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        folders = checkout_path(self.root)[:1] if core_only else checkout_path(self.root)
        paths = [*folders, env.get("PYTHONPATH", "")]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))  # "" would add the cwd
        if plugins is not None:
            env["LLMPORT_PLUGINS"] = plugins
        return env


@dataclass(slots=True)
class Outcome:
    """One item's result: each side's cell, the figure compared, the target per side."""

    cells: dict[str, str]
    figures: dict[str, float | None]
    met: dict[str, bool | None]
    notes: list[str] = field(default_factory=list)
    #: What the verdict says when the item has no pass/fail target.
    no_target: str = ""


@dataclass(frozen=True, slots=True)
class Options:
    """What every item's runs need: the sides, the run's size, the SDK environment."""

    sides: tuple[Side, ...]
    quick: bool
    sdk_python: str | None
    sdk_problem: str


@dataclass(frozen=True, slots=True)
class Item:
    """A limit: how to run it for both sides, and how to read its runs."""

    key: str
    title: str
    target: str
    #: The figure the after/before column divides.
    figure: str
    collect: Callable[[Options], Runs]
    summarise: Callable[[Runs], Outcome]


# -- checkouts ------------------------------------------------------------------------


def checkout_path(root: Path) -> list[str]:
    """A checkout's import folders: ``core``, then each plugin's folder."""
    plugins = sorted(p for p in (root / "plugins").iterdir() if (p / "pyproject.toml").is_file())
    return [str(root / "core"), *(str(p) for p in plugins)]


def label(root: Path) -> str:
    """The commit a checkout holds: its export marker, else git, else its path."""
    marker = root / ".limits-rev"
    if marker.is_file():
        return marker.read_text().strip()[:12]
    git = ["git", "-C", str(root)]
    head = subprocess.run([*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    if head.returncode:
        return str(root)
    changed = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
    )
    return head.stdout.strip() + ("+changes" if changed.stdout.strip() else "")


def export(rev: str) -> Path:
    """``rev`` of this repository exported to a folder of its own (reused if there)."""
    found = subprocess.run(
        ["git", "-C", str(HERE), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if found.returncode:
        raise SystemExit(f"--before-rev {rev}: not a commit of {HERE} ({tail(found.stderr)})")
    commit = found.stdout.strip()
    folder = Path("/tmp") / f"llmport-limits-{commit[:12]}"
    marker = folder / ".limits-rev"
    if not marker.is_file():
        archive = subprocess.run(
            ["git", "-C", str(HERE), "archive", commit], capture_output=True, check=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        marker.write_text(commit + "\n")
    return folder


PROBE = (
    "import json, llmport, llmport_anthropic; "
    "print(json.dumps([llmport.__file__, llmport_anthropic.__file__]))"
)


def outside(files: Sequence[str], root: Path) -> list[str]:
    """The files not inside ``root``: code a side would import from elsewhere."""
    top = root.resolve()
    return [f for f in files if not Path(f).resolve().is_relative_to(top)]


def provenance(side: Side, python: str) -> str:
    """Where ``python`` imports llmport and a plugin from on this side; stops if elsewhere."""
    run = subprocess.run(
        [python, "-c", PROBE], env=side.env("anthropic"), capture_output=True, text=True
    )
    if run.returncode:
        raise SystemExit(f"{side.name} ({python}): cannot import llmport: {tail(run.stderr)}")
    files = json.loads(run.stdout)
    strays = outside(files, side.root)
    if strays:
        raise SystemExit(f"{side.name} ({python}) imports {strays} from outside {side.root}")
    return f"{side.name} {side.label} [{python}]: " + ", ".join(files)


# -- running ----------------------------------------------------------------------------


class BenchFailed(Exception):
    """A benchmark subprocess exited with an error or printed no JSON line."""


def tail(text: str) -> str:
    """The last non-empty line of ``text`` (an error's message), shortened."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:160] if lines else ""


def last_json(stdout: str) -> dict[str, Any]:
    """The last line of ``stdout`` that is a JSON object (each script ends with one)."""
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                found = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(found, dict):
                return found
    raise BenchFailed(f"no JSON line in: {tail(stdout)!r}")


def run_json(argv: Sequence[str], env: Mapping[str, str]) -> dict[str, Any]:
    """Run one benchmark process and return its JSON line."""
    try:
        run = subprocess.run(
            argv, env=env, cwd=BENCH, capture_output=True, text=True, timeout=TIMEOUT_S
        )
    except subprocess.TimeoutExpired as exc:
        raise BenchFailed(f"no answer in {TIMEOUT_S} s") from exc
    if run.returncode:
        raise BenchFailed(f"exit {run.returncode}: {tail(run.stderr) or tail(run.stdout)}")
    return last_json(run.stdout)


def alternate(
    names: Sequence[str], reps: int, run_one: Callable[[str], dict[str, Any]], key: str
) -> Runs:
    """``reps`` rounds of one fresh run per name, the order rotated each round.

    A failed run is kept as ``{"error": ...}``; the others still run.
    """
    runs: Runs = {name: [] for name in names}
    for rep in range(reps):
        shift = rep % len(names)
        for name in [*names[shift:], *names[:shift]]:
            started = time.perf_counter()
            try:
                result = run_one(name)
            except BenchFailed as exc:
                result = {"error": str(exc)}
            runs[name].append(result)
            took = time.perf_counter() - started
            state = f"failed: {result['error']}" if "error" in result else "ok"
            print(
                f"  {key} {name} {rep + 1}/{reps}: {took:.1f} s, {state}, {load_now()}", flush=True
            )
    return runs


def each_side(opts: Options, key: str, reps: int, run: Callable[[Side], dict[str, Any]]) -> Runs:
    """``run`` for each side in turn, ``reps`` rounds (see :func:`alternate`)."""
    sides = {s.name: s for s in opts.sides}
    return alternate(list(sides), reps, lambda name: run(sides[name]), key)


def load_now() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def script(name: str, *args: str) -> list[str]:
    return [sys.executable, str(BENCH / name), *args]


def ok_runs(runs: Runs, name: str) -> list[dict[str, Any]]:
    return [r for r in runs.get(name, []) if "error" not in r]


def first_error(runs: Runs, name: str) -> str:
    """The first error of ``name``'s runs ("" if none failed)."""
    return next((r["error"] for r in runs.get(name, []) if "error" in r), "")


def failure(runs: Runs, name: str) -> str:
    error = first_error(runs, name)
    return f"failed: {error}" if error else "not measured"


def median_at(rows: list[dict[str, Any]], *keys: str) -> float:
    """The median over ``rows`` of the figure each holds at ``keys`` (one key per level)."""

    def read(row: Any) -> float:
        for key in keys:
            row = row[key]
        return float(row)

    return float(statistics.median(read(r) for r in rows))


def per_side(
    runs: Runs, read: Callable[[list[dict[str, Any]]], tuple[str, float, bool | None]]
) -> Outcome:
    """An outcome from one reading per side: its cell, its figure, whether it meets the target.

    A side without a successful run shows why (the first error, or "not measured").
    """
    outcome = Outcome(cells={}, figures={}, met={})
    for name in ("before", "after"):
        rows = ok_runs(runs, name)
        if not rows:
            outcome.cells[name], outcome.figures[name], outcome.met[name] = (
                failure(runs, name),
                None,
                None,
            )
            continue
        outcome.cells[name], outcome.figures[name], outcome.met[name] = read(rows)
        if len(rows) < len(runs[name]):
            outcome.notes.append(
                f"{name}: {len(runs[name]) - len(rows)} run(s) {failure(runs, name)}"
            )
    return outcome


# -- the items ------------------------------------------------------------------------------


def collect_dag(opts: Options) -> Runs:
    argv = script("bench_dag.py", "--exec-in-session", *(["--quick"] if opts.quick else []))
    return each_side(opts, "dag", 1 if opts.quick else 2, lambda side: run_json(argv, side.env("")))


def summarise_dag(runs: Runs) -> Outcome:
    def read(rows: list[dict[str, Any]]) -> tuple[str, float, bool | None]:
        ratio = median_at(rows, "exec_in_session", "ratio")
        # Keyed by each session's node count as built; the smallest first.
        overheads = [list(r["exec_in_session"]["overhead_ms"].values()) for r in rows]
        small, large = (float(statistics.median(o[i] for o in overheads)) for i in (0, -1))
        return f"x{ratio:.2f} (+{large:.3f} vs +{small:.3f} ms)", large, ratio <= 1.10

    return per_side(runs, read)


def sdk_check(python: str | None) -> str:
    """Why ``python`` cannot run the Anthropic SDK on aiohttp ("" when it can)."""
    if python is None:
        return "no --sdk-python given"
    if not Path(python).is_file():
        return f"{python} not found"
    probe = subprocess.run(
        [python, "-c", "import anthropic, aiohttp, httpx_aiohttp"], capture_output=True, text=True
    )
    return f"{python}: {tail(probe.stderr)}" if probe.returncode else ""


SDK = "raw SDK (aiohttp)"


def collect_inflight(opts: Options) -> Runs:
    from bench_peers import ANSWERS
    from loopback_proc import ServerProcess

    sides = {s.name: s for s in opts.sides}
    python = opts.sdk_python if not opts.sdk_problem and opts.sdk_python else sys.executable
    names = [*sides, *([] if opts.sdk_problem else ["sdk"])]
    with ServerProcess([{"json": ANSWERS["anthropic"]}]) as server:

        def run_one(name: str) -> dict[str, Any]:
            side = sides.get(name, sides["after"])  # the SDK side imports no llmport
            contender = SDK if name == "sdk" else "llmport"
            argv = [python, str(BENCH / "bench_inflight.py"), "--timed", "anthropic", contender]
            return run_json([*argv, "500", server.url, "--warmup", "20"], side.env("anthropic"))

        runs = alternate(names, 3 if opts.quick else 7, run_one, "inflight")
    if opts.sdk_problem:  # what the row says instead of the SDK's figures
        runs["sdk"] = [{"error": f"{opts.sdk_problem}; the llmport sides ran in {python}"}]
    return runs


def summarise_inflight(runs: Runs) -> Outcome:
    sdk = ok_runs(runs, "sdk")
    sdk_cpu = median_at(sdk, "cpu_ms") if sdk else None

    def read(rows: list[dict[str, Any]]) -> tuple[str, float, bool | None]:
        cpu, wall = median_at(rows, "cpu_ms"), median_at(rows, "wall_ms")
        failed = sum(r["failed"] for r in rows)
        cell = f"CPU {cpu:,.0f} ms, wall {wall:,.0f} ms"
        if failed:
            cell += f", {failed} calls failed"
        if sdk_cpu is None:
            return cell, cpu, None
        return f"{cell}; x{cpu / sdk_cpu:.2f} the SDK's CPU", cpu, cpu <= sdk_cpu and not failed

    outcome = per_side(runs, read)
    if sdk:
        wall = median_at(sdk, "wall_ms")
        outcome.notes.append(
            f"Anthropic SDK on aiohttp: CPU {sdk_cpu:,.0f} ms, wall {wall:,.0f} ms"
        )
    else:
        outcome.no_target = "SDK not measured"
        reason = first_error(runs, "sdk") or "not run"
        outcome.notes.append(f"Anthropic SDK on aiohttp not measured: {reason}")
    return outcome


def collect_bedrock(opts: Options) -> Runs:
    rounds, calls = ("5", "5") if opts.quick else ("7", "10")
    argv = script("bench_bedrock_stream.py", "--rounds", rounds, "--calls", calls)
    reps = 2 if opts.quick else 3
    return each_side(opts, "bedrock", reps, lambda side: run_json(argv, side.env("bedrock")))


def summarise_bedrock(runs: Runs) -> Outcome:
    def read(rows: list[dict[str, Any]]) -> tuple[str, float, bool | None]:
        ms = median_at(rows, "ms", "llmport Runtime.stream")
        boto3 = median_at(rows, "ms", "boto3 converse_stream")
        ratio = median_at(rows, "ratio_runtime_to_boto3")
        return f"{ms:.2f} ms, x{ratio:.2f} boto3's ({boto3:.2f} ms)", ms, ratio <= 1.0

    return per_side(runs, read)


def collect_startup(opts: Options) -> Runs:
    import bench_startup

    runs = 12 if opts.quick else 30
    try:
        # The import loads no plugin: the plugins' folders on the path would only add
        # lookups to every import (~4 ms CPU for eleven folders, both sides alike).
        sides = {s.name: s.env("", core_only=True) for s in opts.sides}
        figures = bench_startup.measure(sides, runs)
    except subprocess.CalledProcessError as exc:
        return {s.name: [{"error": f"import failed (exit {exc.returncode})"}] for s in opts.sides}
    print(f"  startup: {runs} interleaved runs a side, {load_now()}", flush=True)
    return {name: [{**row, "runs": runs}] for name, row in figures.items()}


def summarise_startup(runs: Runs) -> Outcome:
    def read(rows: list[dict[str, Any]]) -> tuple[str, float, bool | None]:
        row = rows[0]
        cpu = float(row["import_over_pass_cpu_ms"])
        wall, best = row["import_over_pass_ms"], row["import_over_pass_best_ms"]
        return f"CPU {cpu:.1f} ms (wall {wall:.1f}, best {best:.1f})", cpu, cpu <= 60

    return per_side(runs, read)


def collect_durable(opts: Options) -> Runs:
    runs, steps = ("5", "20") if opts.quick else ("9", "20")  # a slope over 1 and 20 steps
    argv = script("bench_durable.py", "--no-sqlite", "--runs", runs, "--steps", steps)

    def run(side: Side) -> dict[str, Any]:
        found = run_json(argv, side.env("dbos"))
        if "postgresql" not in found:
            raise BenchFailed("no PostgreSQL (the pgserver wheel is not installed)")
        return found

    return each_side(opts, "durable", 1 if opts.quick else 2, run)


def summarise_durable(runs: Runs) -> Outcome:
    def read(rows: list[dict[str, Any]]) -> tuple[str, float, bool | None]:
        over, bare, share = (
            median_at(rows, "postgresql", key) / 1000
            for key in ("step_overhead_us", "bare_dbos_step_us", "llmport_over_dbos_us")
        )
        cell = f"+{over:.2f} ms a step (bare DBOS step {bare:.2f}; llmport's share {share:+.2f})"
        return cell, over, None

    outcome = per_side(runs, read)
    outcome.no_target = "no bound: stated"
    outcome.notes.append("the bare DBOS step is the harness's: the same DBOS on both sides")
    return outcome


def collect_pg(opts: Options) -> Runs:
    argv = script("bench_scale.py", "--writers-only", "--repeat", "1")
    argv += ["--quick"] if opts.quick else []
    reps = 2 if opts.quick else 3
    return each_side(opts, "pg", reps, lambda side: run_json(argv, side.env("postgres")))


def summarise_pg(runs: Runs) -> Outcome:
    def read(rows: list[dict[str, Any]]) -> tuple[str, float, bool | None]:
        every = [run for r in rows for run in r["runs"]]
        rate = float(statistics.median(run["nodes_per_s"] for run in every))
        sound = all(run["lost"] == 0 and run["dense"] and run["order_kept"] for run in every)
        nodes = every[0]["nodes"]
        cell = f"{rate:,.0f} nodes/s (median of {len(every)}, {nodes:,} nodes a run)"
        if all("client_cpu_us_per_node" in run for run in every):  # bench_scale's newer lines
            client, server = (
                statistics.median(run[f"{who}_cpu_us_per_node"] for run in every)
                for who in ("client", "server")
            )
            cell += f", CPU {client:,.0f} + {server:,.0f} us a node (writers + server)"
        return (
            cell + ("" if sound else "; nodes LOST or out of order"),
            rate,
            rate >= 2000 and sound,
        )

    return per_side(runs, read)


ITEMS = (
    Item(
        "dag",
        "exec in a 100k- vs 1k-node session",
        "100k within 10% of 1k",
        "ms over the bare exec at 100k nodes",
        collect_dag,
        summarise_dag,
    ),
    Item(
        "inflight",
        "Anthropic, 500 gathered, fresh process",
        "CPU ≤ SDK on aiohttp",
        "client CPU ms of the gather",
        collect_inflight,
        summarise_inflight,
    ),
    Item(
        "bedrock",
        "200-delta Bedrock stream, sync",
        "≤ boto3",
        "ms per Runtime.stream",
        collect_bedrock,
        summarise_bedrock,
    ),
    Item(
        "startup",
        "from llmport import Runtime, tool, agentic_function",
        "≤ 60 ms CPU",
        "CPU ms over python -c pass",
        collect_startup,
        summarise_startup,
    ),
    Item(
        "durable",
        "durable step over a plain exec, PostgreSQL",
        "stated; minimised",
        "ms a durable step adds to an exec",
        collect_durable,
        summarise_durable,
    ),
    Item(
        "pg",
        "8 writers into one PostgreSQL session",
        "≥ 2,000 nodes/s",
        "nodes/s",
        collect_pg,
        summarise_pg,
    ),
)


# -- the table --------------------------------------------------------------------------------


def change(outcome: Outcome) -> str:
    """After over before of the compared figure."""
    before, after = outcome.figures.get("before"), outcome.figures.get("after")
    if before is None or after is None or before == 0:
        return "—"
    return f"x{after / before:.2f}"


def verdict(outcome: Outcome) -> str:
    """Whether ``after`` meets the target, and whether ``before`` did."""
    after, before = outcome.met.get("after"), outcome.met.get("before")
    if after is None:
        return outcome.no_target or "not measured"
    said = "met" if after else "NOT met"
    return said if before is None else f"{said} (before: {'met' if before else 'not met'})"


def table(rows: Sequence[tuple[Item, Outcome, str]], labels: Mapping[str, str]) -> list[str]:
    """The markdown table of every item measured, and the notes under it."""
    head = ["item", "target", f"before ({labels['before']})", f"after ({labels['after']})"]
    lines = [
        "| " + " | ".join([*head, "after/before", "verdict", "load"]) + " |",
        "|" + "---|" * 7,
    ]
    notes = []
    for item, outcome, load in rows:
        cells = [outcome.cells.get(n, "not measured") for n in ("before", "after")]
        title = f"{item.key}: {item.title}"
        lines.append(
            "| "
            + " | ".join([title, item.target, *cells, change(outcome), verdict(outcome), load])
            + " |"
        )
        notes += [f"- {item.key}: {note}" for note in outcome.notes]
    return lines + notes


def measure(item: Item, opts: Options) -> tuple[Runs, Outcome, str]:
    """Run one item for both sides; its runs, what they say, and the load around them."""
    start = os.getloadavg()[0]
    print(f"{item.key}: {item.title} ({load_now()})", flush=True)
    runs = item.collect(opts)
    load = f"{start:.1f}-{os.getloadavg()[0]:.1f}"
    return runs, item.summarise(runs), load


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    before = parser.add_mutually_exclusive_group(required=True)
    before.add_argument("--before", type=Path, help="another checkout's folder")
    before.add_argument("--before-rev", help="a commit of this repository, exported to /tmp")
    parser.add_argument("--after", type=Path, default=HERE, help="default: this checkout")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (~3 min)")
    keys = ",".join(i.key for i in ITEMS)
    parser.add_argument("--only", default=keys, help=f"items to run, of {keys}")
    parser.add_argument(
        "--sdk-python", default=SDK_PYTHON, help="interpreter with anthropic[aiohttp]"
    )
    args = parser.parse_args(argv)
    unknown = set(args.only.split(",")) - {i.key for i in ITEMS}
    if unknown:
        parser.error(f"unknown item(s) {sorted(unknown)}; known: {keys}")
    return args


def main() -> None:
    args = parse()
    before_root = export(args.before_rev) if args.before_rev else args.before.resolve()
    sides = tuple(
        Side(name, root, label(root))
        for name, root in (("before", before_root), ("after", args.after.resolve()))
    )
    chosen = [i for i in ITEMS if i.key in args.only.split(",")]
    problem = sdk_check(args.sdk_python) if any(i.key == "inflight" for i in chosen) else ""
    opts = Options(sides, args.quick, args.sdk_python, problem)
    if problem:
        print(f"Anthropic SDK on aiohttp not measured: {problem}")
    for side in sides:
        print(provenance(side, sys.executable))
        if any(i.key == "inflight" for i in chosen) and not problem and args.sdk_python:
            print(provenance(side, args.sdk_python))
    started = time.perf_counter()
    results = [(item, *measure(item, opts)) for item in chosen]
    labels = {s.name: s.label for s in sides}
    print(f"\n{len(results)} item(s) in {time.perf_counter() - started:.0f} s")
    print("\n".join(table([(item, outcome, load) for item, _, outcome, load in results], labels)))
    print(
        json.dumps(
            {
                "bench": "limits",
                "quick": args.quick,
                "sides": {s.name: {"root": str(s.root), "label": s.label} for s in sides},
                "items": {
                    item.key: {
                        "target": item.target,
                        "figure": item.figure,
                        "cells": outcome.cells,
                        "figures": outcome.figures,
                        "met": outcome.met,
                        "notes": outcome.notes,
                        "load": load,
                        "runs": runs,
                    }
                    for item, runs, outcome, load in results
                },
            }
        )
    )


if __name__ == "__main__":
    main()
