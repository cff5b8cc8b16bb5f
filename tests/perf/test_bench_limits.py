"""benchmarks/bench_limits.py reads its runs into the right table (no timing measured).

The script runs other benchmark scripts for two checkouts and reads their JSON
lines; these tests feed it canned lines and runs and check what the table and
verdicts say, how a failed or missing side shows, and which code a side imports.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import bench_limits  # noqa: E402


def dag_run(small: float, large: float) -> dict[str, Any]:
    over = {"999": small, "99999": large}
    return {"bench": "dag", "exec_in_session": {"overhead_ms": over, "ratio": large / small}}


def item(key: str) -> bench_limits.Item:
    return next(i for i in bench_limits.ITEMS if i.key == key)


def test_the_last_json_object_line_is_read() -> None:
    out = 'table\n{"bench": "a", "n": 1}\n[1, 2]\n{"bench": "b", "n": 2}\n{not json\nload 2.0\n'
    assert bench_limits.last_json(out) == {"bench": "b", "n": 2}
    with pytest.raises(bench_limits.BenchFailed, match="no JSON line"):
        bench_limits.last_json("only a table\n[1]\n")


def test_a_limit_met_after_and_not_before_reads_so() -> None:
    runs = {
        "before": [dag_run(0.04, 0.9), dag_run(0.05, 1.0)],
        "after": [dag_run(0.04, 0.041), dag_run(0.04, 0.043)],
    }
    outcome = bench_limits.summarise_dag(runs)
    assert outcome.met == {"before": False, "after": True}
    assert outcome.figures["before"] == pytest.approx(0.95)
    assert outcome.figures["after"] == pytest.approx(0.042)
    assert bench_limits.change(outcome) == "x0.04"
    assert bench_limits.verdict(outcome) == "met (before: not met)"
    lines = bench_limits.table(
        [(item("dag"), outcome, "1.0-1.2")], {"before": "342db75", "after": "abc"}
    )
    assert "before (342db75)" in lines[0] and "after (abc)" in lines[0]
    row = lines[2].split(" | ")
    assert row[2:4] == ["x21.25 (+0.950 vs +0.045 ms)", "x1.05 (+0.042 vs +0.040 ms)"]
    assert row[-1] == "1.0-1.2 |"


def test_a_failed_side_says_why_and_the_rest_still_reads() -> None:
    runs = {
        "before": [{"error": "exit 1: ImportError: cannot import name 'encode_stream'"}],
        "after": [
            {
                "ms": {"llmport Runtime.stream": 9.0, "boto3 converse_stream": 12.0},
                "ratio_runtime_to_boto3": 0.75,
            },
            {"error": "no answer in 900 s"},
        ],
    }
    outcome = bench_limits.summarise_bedrock(runs)
    assert (
        outcome.cells["before"] == "failed: exit 1: ImportError: cannot import name 'encode_stream'"
    )
    assert outcome.figures == {"before": None, "after": 9.0}
    assert bench_limits.change(outcome) == "—"
    assert bench_limits.verdict(outcome) == "met"
    assert outcome.notes == ["after: 1 run(s) failed: no answer in 900 s"]


def test_without_the_sdk_the_in_flight_item_is_not_judged() -> None:
    run = {"cpu_ms": 800.0, "wall_ms": 900.0, "failed": 0}
    outcome = bench_limits.summarise_inflight({"before": [run], "after": [run]})
    assert outcome.met == {"before": None, "after": None}
    assert bench_limits.verdict(outcome) == "SDK not measured"
    assert outcome.notes == ["Anthropic SDK on aiohttp not measured: not run"]
    missing = {"before": [run], "after": [run], "sdk": [{"error": "/x/python not found"}]}
    notes = bench_limits.summarise_inflight(missing).notes
    assert notes == ["Anthropic SDK on aiohttp not measured: /x/python not found"]
    sdk = {"cpu_ms": 790.0, "wall_ms": 700.0, "failed": 0}
    judged = bench_limits.summarise_inflight({"before": [run], "after": [sdk], "sdk": [run]})
    assert judged.met == {"before": True, "after": True}
    assert "x0.99 the SDK's CPU" in judged.cells["after"]


def test_lost_nodes_fail_the_writers_target_whatever_the_rate() -> None:
    def run(rate: int, lost: int) -> dict[str, Any]:
        one = {"nodes": 8000, "nodes_per_s": rate, "lost": lost, "dense": True, "order_kept": True}
        return {"bench": "scale-writers", "runs": [one]}

    outcome = bench_limits.summarise_pg({"before": [run(1500, 0)], "after": [run(2500, 3)]})
    assert outcome.met == {"before": False, "after": False}
    assert "LOST" in outcome.cells["after"]
    assert bench_limits.change(outcome) == "x1.67"
    timed = run(2100, 0)
    timed["runs"][0].update(client_cpu_us_per_node=410, server_cpu_us_per_node=380)
    cell = bench_limits.summarise_pg({"before": [timed], "after": [timed]}).cells["after"]
    assert cell == (
        "2,100 nodes/s (median of 1, 8,000 nodes a run), CPU 410 + 380 us a node (writers + server)"
    )


def test_sides_alternate_and_a_failure_does_not_stop_the_rest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    order = []

    def run_one(name: str) -> dict[str, Any]:
        order.append(name)
        if name == "b" and len(order) < 3:
            raise bench_limits.BenchFailed("exit 1: boom")
        return {"name": name}

    runs = bench_limits.alternate(["a", "b", "c"], 2, run_one, "x")
    assert order == ["a", "b", "c", "b", "c", "a"]
    assert runs["b"] == [{"error": "exit 1: boom"}, {"name": "b"}]
    assert "x b 1/2" in capsys.readouterr().out


def test_a_side_imports_only_its_own_checkout(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    for name, project in (("anthropic", True), ("notes", False), ("bedrock", True)):
        (tmp_path / "plugins" / name).mkdir(parents=True)
        if project:
            (tmp_path / "plugins" / name / "pyproject.toml").write_text("")
    assert bench_limits.checkout_path(tmp_path) == [
        str(tmp_path / "core"),
        str(tmp_path / "plugins" / "anthropic"),
        str(tmp_path / "plugins" / "bedrock"),
    ]
    side = bench_limits.Side("before", tmp_path, "x")
    env = side.env("")
    assert env["PYTHONPATH"].split(os.pathsep)[:3] == bench_limits.checkout_path(tmp_path)
    assert "" not in env["PYTHONPATH"].split(os.pathsep)
    assert env["LLMPORT_PLUGINS"] == "" and "PYTHONDONTWRITEBYTECODE" not in env
    core_only = side.env(core_only=True)["PYTHONPATH"].split(os.pathsep)
    assert (
        core_only[0] == str(tmp_path / "core")
        and str(tmp_path / "plugins" / "bedrock") not in core_only
    )
    inside = str(tmp_path / "core" / "llmport" / "__init__.py")
    elsewhere = "/work/other/core/llmport/__init__.py"
    assert bench_limits.outside([inside, elsewhere], tmp_path) == [elsewhere]


def test_the_command_line_lists_its_items_and_refuses_others() -> None:
    run = [sys.executable, str(BENCH / "bench_limits.py")]
    shown = subprocess.run([*run, "--help"], capture_output=True, text=True, check=True)
    assert "--before" in shown.stdout and "startup" in shown.stdout
    refused = subprocess.run(
        [*run, "--before", ".", "--only", "speed"], capture_output=True, text=True
    )
    assert refused.returncode == 2 and "unknown item(s) ['speed']" in refused.stderr


def test_durable_and_start_up_rows_read_their_scripts_lines() -> None:
    step = {
        "step_overhead_us": 11870.0,
        "bare_dbos_step_us": 11710.0,
        "llmport_over_dbos_us": 160.0,
    }
    durable = bench_limits.summarise_durable(
        {"before": [{"error": "exit 1: no module"}], "after": [{"postgresql": step}]}
    )
    assert (
        durable.cells["after"] == "+11.87 ms a step (bare DBOS step 11.71; llmport's share +0.16)"
    )
    assert durable.cells["before"] == "failed: exit 1: no module"
    assert bench_limits.verdict(durable) == "no bound: stated"
    row = {"import_over_pass_cpu_ms": 61.0, "import_over_pass_ms": 90.0}
    start = bench_limits.summarise_startup(
        {
            "before": [{**row, "import_over_pass_best_ms": 70.0}],
            "after": [{**row, "import_over_pass_cpu_ms": 49.4, "import_over_pass_best_ms": 45.1}],
        }
    )
    assert start.cells["after"] == "CPU 49.4 ms (wall 90.0, best 45.1)"
    assert bench_limits.verdict(start) == "met (before: not met)"
