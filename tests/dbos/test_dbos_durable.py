"""Durable runs on DBOS, on a real PostgreSQL, with workers as real processes.

Model calls go to a loopback server that counts them; the tool's side effect
is a line in a counter file. No network.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llmport import Session
from llmport.cli.session import show
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from rich.console import Console

WORKER = str(Path(__file__).with_name("worker.py"))
GOAL = 5  # tool calls; the run makes GOAL + 1 model requests


def completion(message: dict[str, Any]) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


def counting_vendor(request: RecordedRequest) -> Reply:
    """Ask for the tool until it ran GOAL times, then answer: request k carries k-1 results."""
    done = sum(1 for m in request.json()["messages"] if m["role"] == "tool")
    if done < GOAL:
        call = {
            "id": f"call_{done + 1}",
            "type": "function",
            "function": {"name": "bump", "arguments": json.dumps({"n": done + 1})},
        }
        return Reply(json=completion({"role": "assistant", "content": None, "tool_calls": [call]}))
    return Reply(json=completion({"role": "assistant", "content": f"counted to {done}"}))


def worker(*args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, WORKER, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LLMPORT_PLUGINS": "postgres", **env},
    )


def wait_for(path: Path, process: subprocess.Popen[str], seconds: float = 90.0) -> None:
    end = time.monotonic() + seconds
    while not path.exists():
        if process.poll() is not None:
            raise AssertionError(f"the worker exited early: {process.communicate()[1][-3000:]}")
        assert time.monotonic() < end, "the worker never reached the pause"
        time.sleep(0.02)


def finished(process: subprocess.Popen[str], seconds: float = 90.0) -> str:
    out, err = process.communicate(timeout=seconds)
    assert process.returncode == 0, err[-3000:]
    return out


@pytest.fixture
def waiting_worker(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Starts a worker now (its imports overlap the first worker's run) that launches DBOS
    only once ``tmp_path / "go"`` exists: after the first worker is killed. One the test
    never let go is killed at teardown."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str, **env: str) -> subprocess.Popen[str]:
        started.append(worker(*args, LLMPORT_TEST_GO=str(tmp_path / "go"), **env))
        return started[-1]

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_a_killed_worker_is_resumed_by_another_without_paying_again(
    pg_url: str, tmp_path: Path, waiting_worker: Callable[..., subprocess.Popen[str]]
) -> None:
    counter, marker, go = tmp_path / "counter", tmp_path / "paused", tmp_path / "go"
    vendor = Reply(handler=counting_vendor)
    with LoopbackServer([vendor], repeat=True) as server:
        first = worker("resume", pg_url, server.url, str(counter), "run-1", "3", str(marker))
        second = waiting_worker("resume", pg_url, server.url, str(counter), "run-1")
        wait_for(marker, first)  # model requests 1-3 answered, tools 1-2 ran, tool 3 about to
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert len(server.requests) == 3
        go.touch()
        outcome = json.loads(finished(second))
    assert outcome["result"] == f"counted to {GOAL}"
    # Each of the six model requests reached the vendor exactly once across both workers.
    seen = Counter(
        sum(1 for m in r.json()["messages"] if m["role"] == "tool") for r in server.requests
    )
    assert seen == Counter(range(GOAL + 1))
    # The tool's side effect happened once per call.
    assert counter.read_text().split() == [str(n) for n in range(1, GOAL + 1)]
    session = Session(pg_url, id="run-1", readonly=True)
    nodes = session.nodes()
    assert [n.kind for n in nodes] == ["function", "llm"] + ["tool"] * GOAL  # same ids, no copies
    assert all(n.data["workflow_id"] == "run-1" for n in nodes)
    assert all(n.status == "ok" for n in nodes)
    llm, tools = nodes[1], nodes[2:]
    assert llm.result["replayed"] == [tools[0].id, tools[1].id]  # the first worker's tool runs
    session.close()
    console = Console(file=io.StringIO(), width=200, color_system=None)
    assert show(f"{pg_url}#run-1", False, console) == 0
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert ["replayed" in line for line in lines if " tool " in line] == [True, True] + [False] * 3
    assert any("workflow run-1" in line for line in lines if " function " in line)


def test_a_resumed_run_does_not_ask_its_approver_again(
    pg_url: str, tmp_path: Path, waiting_worker: Callable[..., subprocess.Popen[str]]
) -> None:
    counter, marker, approvals = tmp_path / "counter", tmp_path / "paused", tmp_path / "approvals"
    go = tmp_path / "go"
    asked = {"LLMPORT_TEST_APPROVALS": str(approvals)}
    with LoopbackServer([Reply(handler=counting_vendor)], repeat=True) as server:
        run = ("resume", pg_url, server.url, str(counter), "run-a")
        first = worker(*run, "3", str(marker), **asked)
        second = waiting_worker(*run, **asked)
        wait_for(marker, first)  # calls 1-3 approved, tools 1-2 ran, tool 3 about to
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert approvals.read_text().split() == ["1", "2", "3"]
        go.touch()
        outcome = json.loads(finished(second))
    assert outcome["result"] == f"counted to {GOAL}"
    # Each call's approval was asked once across both workers: the resumed run replayed 1-3.
    assert approvals.read_text().split() == [str(n) for n in range(1, GOAL + 1)]
    assert counter.read_text().split() == [str(n) for n in range(1, GOAL + 1)]
    assert len(server.requests) == GOAL + 1


def test_four_workers_drain_fifty_queued_runs_within_the_concurrency_limit(pg_url: str) -> None:
    lock = threading.Lock()
    flight = {"now": 0, "max": 0}

    def slow_answer(request: RecordedRequest) -> Reply:
        with lock:
            flight["now"] += 1
            flight["max"] = max(flight["max"], flight["now"])
        try:
            time.sleep(0.03)
            content = request.json()["messages"][-1]["content"]  # the agentic call, then its text
            question = content if isinstance(content, str) else content[-1]["text"]
            return Reply(json=completion({"role": "assistant", "content": f"re: {question}"}))
        finally:
            with lock:
                flight["now"] -= 1

    with LoopbackServer([Reply(handler=slow_answer)], repeat=True) as server:
        helpers = [worker("drain", pg_url, server.url, f"w{i}") for i in (2, 3, 4)]
        try:
            main = worker("drain", pg_url, server.url, "w1", "50")
            results = json.loads(finished(main))
        finally:
            for helper in helpers:
                helper.kill()
                helper.wait()
    assert len(results) == 50  # none lost
    assert results == {f"run-{i}": f"re: run {i}" for i in range(50)}
    assert len(server.requests) == 50  # each run paid once
    assert 1 <= flight["max"] <= 3  # the queue's concurrency limit held across the workers
    print(f"max concurrent runs: {flight['max']}")
