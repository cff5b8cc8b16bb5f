"""Many writers on one SQLite session: every node lands, ids match the database."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from llmport import Session
from llmport.cli.session import show
from llmport.sessions import sqlite as session_module
from rich.console import Console

CALLS = 100  # per process: main + 100 x (step, its exec) = 201 nodes

WRITER = textwrap.dedent("""
    import json, sys
    from llmport import Runtime, Session, agentic_function

    path, sid, tag, calls = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    rt = Runtime(call=lambda content, model, response_format: "ok")

    @agentic_function(render_range={"callers": 2})   # bounded context: the test stays fast
    def step(tag, i):
        return rt.exec(f"{tag} step {i}")

    @agentic_function
    def main(tag):
        for i in range(calls):
            step(tag, i)

    session = Session(path, id=sid)      # opened (and loaded: empty) before the other writes
    print("ready", flush=True)
    sys.stdin.readline()                 # both start appending together
    with session:
        main(tag)
    print(json.dumps([[n.id, n.kind, n.parent_id, n.data.get("arguments")]
                      for n in session.nodes()]), flush=True)
""")


def test_two_processes_append_to_one_session_and_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    sid = "shared0session"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = {**os.environ, "LLMPORT_PLUGINS": ""}
    writers = {
        tag: subprocess.Popen(
            [sys.executable, str(script), str(path), sid, tag, str(CALLS)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env)
        for tag in ("A", "B")
    }
    outputs: dict[str, tuple[str, str]] = {}
    try:
        for child in writers.values():
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
        for child in writers.values():
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        for tag, child in writers.items():
            outputs[tag] = child.communicate(timeout=60)
    finally:
        for child in writers.values():
            if child.poll() is None:
                child.kill()
                child.wait()
    for tag, child in writers.items():
        err = outputs[tag][1]
        assert child.returncode == 0, err
        assert "IntegrityError" not in err

    stored = Session(path, id=sid, readonly=True)
    nodes = stored.nodes()
    assert len(nodes) == 2 * (1 + 2 * CALLS)
    assert [n.seq for n in nodes] == list(range(1, len(nodes) + 1))
    for tag in ("A", "B"):
        (main,) = [n for n in nodes if n.name == "main" and n.data["arguments"] == {"tag": tag}]
        steps = [n for n in nodes if n.name == "step" and n.data["arguments"]["tag"] == tag]
        # Each process's calls are stored in the order it made them, under its own main.
        assert [s.data["arguments"]["i"] for s in steps] == list(range(CALLS))
        assert all(s.parent is main and s.status == "ok" for s in steps)
        for s in steps:
            (llm,) = s.children or []
            assert llm.kind == "llm" and llm.status == "ok" and llm.result is not None
            assert llm.result["reply"] == "ok"
        assert main.status == "ok" and main.seq < steps[0].seq

        # What the process held in memory is exactly its own nodes, under the stored ids.
        mine = json.loads(outputs[tag][0])
        assert len(mine) == 1 + 2 * CALLS
        for node_id, kind, parent_id, arguments in mine:
            row = stored.node(node_id)
            assert (row.kind, row.parent_id, row.data.get("arguments")) == (
                kind, parent_id, arguments)

    console = Console(record=True, width=160, color_system=None)
    assert show(str(path), False, console) == 0
    text = console.export_text()
    assert f"session {sid}" in text and f"{len(nodes)} nodes" in text
    assert text.count("function main  ok") == 2 and text.count("function step  ok") == 2 * CALLS
    stored.close()


def test_two_session_objects_interleaving_in_one_process(tmp_path: Path) -> None:
    """The same race, step by step: each writer's ids are the database's, gaps and all."""
    path = tmp_path / "s.sqlite"
    a = Session(path, id="same")
    b = Session(path, id="same")
    a_top = a.begin("function", "a", a.root, {"arguments": {}})
    b_top = b.begin("function", "b", b.root, {"arguments": {}})  # b expected n1: taken
    assert (a_top.id, b_top.id) == ("n1", "n2")
    a_kids = [a.begin("function", "a_kid", a_top, {"arguments": {"i": i}}) for i in range(2)]
    b_kid = b.record("tool", "b_tool", b_top, {"arguments": {}}, "ok", {"content": "x"}, 0.0)
    a_last = a.begin("llm", "m", a_top, {})
    assert [n.id for n in a.nodes()] == ["n1", "n3", "n4", "n6"]
    assert [n.id for n in b.nodes()] == ["n2", "n5"]
    assert a_last.id == "n6" and b_kid.id == "n5" and a_kids[1].id == "n4"
    # Each object finds its own nodes by id; the other's show after reopening.
    assert a.node("n4") is a_kids[1] and b.node("n5") is b_kid
    with pytest.raises(KeyError, match="reopened"):
        a.node("n5")
    a.end(a_kids[0], "ok", {"result": 1}, 0.0)
    b.end(b_top, "ok", {"result": 2}, 0.0)
    a.close()
    b.close()

    again = Session(path, id="same")
    assert [(n.id, n.name, n.parent_id, n.status) for n in again.nodes()] == [
        ("n1", "a", None, "running"), ("n2", "b", None, "ok"),
        ("n3", "a_kid", "n1", "ok"), ("n4", "a_kid", "n1", "running"),
        ("n5", "b_tool", "n2", "ok"), ("n6", "m", "n1", "running")]
    assert again.begin("function", "next", again.root, {}).id == "n7"
    again.close()


def test_a_locked_database_is_waited_for(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Without SQLite's busy wait, a write held up by another writer is retried."""
    monkeypatch.setattr(session_module, "_BUSY_TIMEOUT_MS", 0)
    path = tmp_path / "s.sqlite"
    session = Session(path)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process is writing
    released = threading.Timer(0.05, other.execute, ("COMMIT",))
    released.start()
    try:
        node = session.begin("function", "f", session.root, {"arguments": {}})
    finally:
        released.join()
        other.close()
    assert node.id == "n1"
    session.close()
    assert [n.name for n in Session(path, readonly=True).nodes()] == ["f"]
