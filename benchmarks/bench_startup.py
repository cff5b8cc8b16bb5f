"""Start-up of a script: ``from llmport import Runtime, tool, agentic_function``.

    uv run python benchmarks/bench_startup.py [--runs 30] [--against /tmp/before] [--host]

Each sample is a fresh interpreter with bytecode caching on
(``PYTHONDONTWRITEBYTECODE`` dropped, as for an installed package), timed
from outside like ``hyperfine``; ``python -c pass`` runs interleaved with it
and its median is subtracted, in wall and in CPU time (and its best from
the best, the figure least disturbed by a busy machine). Target: <= 60 ms of
CPU time (user + system: what a busy machine's waits for a core do not
inflate). Prints one JSON line per side.

``--against CHECKOUT`` also times another checkout's core and plugins (its
``core`` folder and each ``plugins/*`` folder first on ``PYTHONPATH``; the
installed entry points are this environment's), interleaved with this one in
the same run: a before and after measured under the same load. ``-X
importtime``'s ten slowest modules (own time, median of five runs) are listed
for each side.

``--host`` also times what a script or a CLI call pays after the import,
before its first request, for each side (one more JSON line per side,
``"bench": "startup-host"``; the same fresh interpreters, cached bytecode,
interleaved). Inside each interpreter, wall and CPU time of: ``Runtime()``
(``runtime``), its plugin host made on first use, which discovers and
imports the entry-point plugins (``first_host``), each next runtime's host
(``next_host``, the mean of 20: discovery done), and a scripted runtime's
first ``exec`` from the call to the request reaching the provider
(``first_request``).
From outside, over ``python -c pass``: the ``llmport`` console script's
``--version`` and ``models`` (``cli_version``, ``cli_models``: its output is
no terminal, 80 columns wide; ``cli_models_wide`` at ``COLUMNS=140``, where
the table has a price column and genai-prices is loaded), and
``llmport run`` to its exit on a scripted model (``cli_run``: the CLI's
``main`` in ``python -c``, the script registered with ``add_global_plugin``;
importing ``llmport.testing`` is counted too).
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
from collections.abc import Sequence

IMPORT = "from llmport import Runtime, tool, agentic_function"

#: Run in a fresh interpreter by ``--host``: prints ``{stage: [wall_s, cpu_s]}`` as JSON.
#: ``llmport run`` on a scripted model, no network and no log written.
CLI_RUN = """
import sys
from llmport.plugins.host import add_global_plugin
from llmport.testing import Script, reply
add_global_plugin(Script([reply("ok")]))
from llmport.cli.main import main
sys.exit(main(["run", "-m", "scripted:test", "--no-log", "hello"]))
"""

HOST_STAGES = """
import json, time
NEXT = 20
clock = lambda: (time.perf_counter(), time.process_time())
stages = {}
def took(name, since):
    now = clock()
    stages[name] = [now[0] - since[0], now[1] - since[1]]
    return now
start = clock()
from llmport import Runtime
start = took("import", start)
rt = Runtime()
start = took("runtime", start)
rt.plugins
start = took("first_host", start)
for _ in range(NEXT):
    Runtime().plugins
start = took("next_host", start)
stages["next_host"] = [seconds / NEXT for seconds in stages["next_host"]]
from llmport.messages.types import Response
from llmport.testing import Script, respond
def answer(request):
    took("first_request", start)
    return Response(text="ok", model=request.model)
rt = Script([respond(answer)]).runtime()
start = clock()
rt.exec("hello")
print(json.dumps(stages))
"""


def checkout_path(checkout: str, env: dict[str, str]) -> str:
    """``PYTHONPATH`` that imports ``checkout``'s core and plugins before the installed ones."""
    root = os.path.abspath(checkout)
    plugins = os.path.join(root, "plugins")
    folders = sorted(os.path.join(plugins, name) for name in os.listdir(plugins))
    return os.pathsep.join(
        filter(None, [os.path.join(root, "core"), *folders, env.get("PYTHONPATH")])
    )


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


def stages(env: dict[str, str]) -> dict[str, tuple[float, float]]:
    """Wall and CPU seconds of each :data:`HOST_STAGES` stage in one fresh interpreter."""
    run = subprocess.run(
        [sys.executable, "-c", HOST_STAGES], check=True, env=env, capture_output=True, text=True
    )
    return {name: (w, c) for name, (w, c) in json.loads(run.stdout).items()}


def command(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv`` (its output thrown away).

    Its exit status is not checked: a checkout without ``--version`` exits 2
    after building its whole parser, which is what such a call costs there.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.DEVNULL
    subprocess.run(list(argv), check=False, env=env, stdout=out, stderr=out)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def console_script() -> str:
    """The ``llmport`` command installed beside this interpreter."""
    return os.path.join(os.path.dirname(sys.executable), "llmport")


def host_costs(sides: dict[str, dict[str, str]], runs: int) -> dict[str, dict[str, float]]:
    """Per side: median wall and CPU ms of each start-up stage after the import (``--host``)."""
    cli = {
        "cli_version": [console_script(), "--version"],
        "cli_models": [console_script(), "models"],
        "cli_models_wide": [console_script(), "models"],
        "cli_run": [sys.executable, "-c", CLI_RUN],
    }
    wider = {"cli_models_wide": {"COLUMNS": "140"}}  # the table with prices
    for side_env in sides.values():  # write the bytecode caches
        stages(side_env)
        for name, argv in cli.items():
            command(argv, {**side_env, **wider.get(name, {})})
    base: list[tuple[float, float]] = []
    samples: dict[str, dict[str, list[tuple[float, float]]]] = {side: {} for side in sides}
    for _ in range(runs):  # interleaved, like the import's samples
        base.append(wall("pass", sides["this"]))
        for side, side_env in sides.items():
            for name, took in stages(side_env).items():
                samples[side].setdefault(name, []).append(took)
            for name, argv in cli.items():
                took = command(argv, {**side_env, **wider.get(name, {})})
                samples[side].setdefault(name, []).append(took)
    median = statistics.median
    base_ms = [median(x[i] for x in base) * 1000 for i in (0, 1)]
    found: dict[str, dict[str, float]] = {}
    for side, named in samples.items():
        found[side] = {}
        for name, taken in named.items():
            # The commands are whole processes: the interpreter's own start is subtracted.
            less = base_ms if name.startswith("cli_") else [0.0, 0.0]
            found[side][f"{name}_ms"] = round(median(x[0] for x in taken) * 1000 - less[0], 1)
            found[side][f"{name}_cpu_ms"] = round(median(x[1] for x in taken) * 1000 - less[1], 1)
    return found


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
    parser.add_argument(
        "--host", action="store_true", help="also time Runtime(), the plugin host, the CLI"
    )
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    sides = {"this": env}
    if args.against:
        sides["against"] = {**env, "PYTHONPATH": checkout_path(args.against, env)}
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
    if args.host:
        for side, costs in host_costs(sides, args.runs).items():
            name = side if side == "this" else args.against
            print(json.dumps({"bench": "startup-host", "side": name, "runs": args.runs, **costs}))


if __name__ == "__main__":
    main()
