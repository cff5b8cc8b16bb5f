"""SQLite sessions: WAL, append-only rows, reopen and continue, secrets, config, crashes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from dag_helpers import build, exec_, fn, texts
from llmport import Session, agentic_function
from llmport.errors import AuthenticationError
from llmport.sessions.session import list_sessions
from llmport.testing import Script, fail

SECRET = "sk-test-secret-0123456789abcdefXYZ"


def db_bytes(path: Path) -> bytes:
    """The database file and its WAL/shm companions, as bytes."""
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def test_wal_mode_and_rows_as_nodes(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "s.sqlite"
    script = Script(["hello"])
    program = build(mode, script.runtime(), {"greet": fn([exec_("hi")])})
    with Session(path) as session:
        program.run("greet", who="you")
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = raw.execute("SELECT seq, kind, name, parent, status FROM nodes ORDER BY seq").fetchall()
    assert rows == [(1, "function", "greet", None, "ok"), (2, "llm", "scripted:test", 1, "ok")]
    raw.close()
    reopened = Session(path, id=session.id)
    assert [n.to_dict() for n in reopened.nodes()] == [n.to_dict() for n in session.nodes()]
    reopened.close()


def test_rows_are_append_only(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"

    @agentic_function
    def once() -> int:
        return 1

    with Session(path):
        once()
    raw = sqlite3.connect(path, isolation_level=None)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        raw.execute("DELETE FROM nodes")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        raw.execute("UPDATE nodes SET end_data = '{}' WHERE seq = 1")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        raw.execute("DELETE FROM sessions")
    raw.close()


def test_reopen_and_continue(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "s.sqlite"
    script = Script(["Paris", "It is in France."])
    program = build(mode, script.runtime(), {"ask": fn([exec_("question")])})
    with Session(path) as first:
        program.run("ask", q="capital")
    first_id = first.id

    with Session(path, resume=True) as again:  # the latest session in the file
        assert again.id == first_id and len(again) == 2
        program.run("ask", q="country")
    assert [n.seq for n in again.nodes()] == [1, 2, 3, 4]
    assert again.node("n4").data["reads"] == ["n1", "n3"]
    assert texts(script.requests[1].messages) == [
        (
            "user",
            [
                "[call ask(q='capital')]",
                "[ask returned: Paris]",
                "[call ask(q='country')]",
                "question",
            ],
        )
    ]
    assert [s.id for s in list_sessions(path)] == [first_id]
    fresh = Session(path)  # no id, no resume: a new session
    assert fresh.id != first_id and len(fresh) == 0
    assert [s.nodes for s in list_sessions(path)] == [4, 0]
    fresh.close()
    by_id = Session(path, id=first_id)
    assert by_id.id == first_id and len(by_id) == 4
    by_id.close()


def test_reopening_a_file_starts_a_new_session_by_default(tmp_path: Path, mode: str) -> None:
    """Issue 12: a second run of a script must not read the first run as context."""
    path = tmp_path / "runs.sqlite"
    script = Script(["first answer", "second answer"])
    program = build(mode, script.runtime(), {"ask": fn([exec_("question")])})
    with Session(path) as first:
        program.run("ask", q="one")
    with Session(path) as second:
        program.run("ask", q="two")
    assert first.id != second.id
    assert texts(script.requests[1].messages) == [("user", ["[call ask(q='two')]", "question"])]
    assert [s.nodes for s in list_sessions(path)] == [2, 2]
    with pytest.raises(ValueError, match="resume"):
        Session(path, id=first.id, resume=True)
    latest = Session(path, readonly=True)  # reading without an id: the latest session
    assert latest.id == second.id
    latest.close()


def test_failures_are_stored_as_failed_nodes(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "s.sqlite"
    script = Script([fail(AuthenticationError("invalid key", provider="scripted", status=401))])
    program = build(mode, script.runtime(), {"f": fn([exec_("x")])})
    with Session(path), pytest.raises(AuthenticationError):
        program.run("f")
    stored = Session(path, resume=True)
    function, llm = stored.nodes()
    assert (function.status, llm.status) == ("error", "error")
    assert llm.result is not None and "reply" not in llm.result
    assert llm.result["error"]["type"] == "AuthenticationError"
    stored.close()


def test_api_keys_never_reach_the_database(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    script = Script(["fine", fail(ValueError(f"upstream said: Authorization: Bearer {SECRET}"))])
    rt = script.runtime(providers={"scripted": {"api_key": SECRET}}, max_retries=1)

    @agentic_function
    def use(token_note: str) -> str:
        rt.exec("first")
        return str(rt.exec("second"))

    with Session(path), pytest.raises(Exception, match="upstream"):
        use(f"key is {SECRET}")
    assert b"sk-test-secret" not in db_bytes(path)
    assert SECRET.encode() not in db_bytes(path)
    stored = Session(path, readonly=True)
    assert "***" in stored.node("n1").data["arguments"]["token_note"]
    stored.close()


def test_configured_database_gets_a_session_per_top_level_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "configured.sqlite"
    monkeypatch.setenv("LLMPORT_SESSION", str(path))

    @agentic_function
    def job(n: int) -> int:
        return n

    job(1)
    job(2)
    sessions = list_sessions(path)
    assert [s.nodes for s in sessions] == [1, 1]
    assert len({s.id for s in sessions}) == 2


def test_session_path_from_llmport_toml(tmp_path: Path) -> None:
    (tmp_path / "llmport.toml").write_text('[session]\npath = "from-toml.sqlite"\n')

    @agentic_function
    def job() -> str:
        return "done"

    job()
    assert [s.nodes for s in list_sessions(tmp_path / "from-toml.sqlite")] == [1]


def test_readonly_sessions_refuse_writes(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    Session(path).close()
    ro = Session(path, readonly=True)
    with pytest.raises(RuntimeError, match="read-only"):
        ro.begin("function", "x", ro.root, {})
    ro.close()
    with pytest.raises(FileNotFoundError):
        Session(tmp_path / "missing.sqlite", readonly=True)


CHILD = textwrap.dedent("""
    import sys
    from llmport import Runtime, Session, agentic_function

    rt = Runtime(call=lambda content, model, response_format: "ok")

    @agentic_function
    def step(i):
        return rt.exec(f"step {i}")

    @agentic_function
    def main():
        for i in range(100):
            step(i)
            print(i, flush=True)
            sys.stdin.readline()   # the parent kills us here, between nodes

    with Session(sys.argv[1]):
        main()
""")


def test_a_killed_process_loses_nothing_appended(tmp_path: Path) -> None:
    path = tmp_path / "crash.sqlite"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "LLMPORT_PLUGINS": ""}
    child = subprocess.Popen(
        [sys.executable, str(script), str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        for expected in range(5):
            assert child.stdout.readline().strip() == str(expected)
            if expected < 4:
                child.stdin.write("\n")
                child.stdin.flush()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL

    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    raw.close()
    session = Session(path, resume=True)
    nodes = session.nodes()
    assert len(nodes) == 11  # main + 5 x (step, its exec)
    assert nodes[0].name == "main" and nodes[0].status == "running"
    assert all(n.status == "ok" for n in nodes[1:])
    assert [n.data["arguments"] for n in nodes if n.name == "step"] == [{"i": i} for i in range(5)]

    # Continue the session: the sequence goes on; the unfinished call is not context.
    rt = Script(["after"]).runtime()

    @agentic_function
    def resume() -> str:
        return str(rt.exec("resume"))

    with session:
        resume()
    assert [n.seq for n in session.nodes()][-2:] == [12, 13]
    assert session.node("n13").data["reads"] == ["n12"]


def test_node_rows_survive_reading_while_writing(tmp_path: Path) -> None:
    """A reader sees every committed node while the writer keeps its connection open."""
    path = tmp_path / "s.sqlite"
    writer = Session(path)
    seen: list[Any] = []

    @agentic_function(session=writer)
    def outer() -> None:
        inner()
        seen.append(len(Session(path, id=writer.id, readonly=True)))

    @agentic_function
    def inner() -> None:
        return None

    outer()
    assert seen == [2]
    writer.close()


#: A model's answer holding a lone surrogate (a Python str may; UTF-8 cannot encode it).
LONE = "a\ud800b"


def test_an_answer_with_a_lone_surrogate_is_stored_and_reads_back_unchanged(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.sqlite"
    rt = Script([LONE]).runtime()

    @agentic_function
    def ask() -> str:
        return str(rt.exec("hi"))

    with Session(path) as session:
        assert ask() == LONE  # the answer is returned, the write did not fail
        session.kv.put("answers", "last", {"reply": LONE})
    with Session(path, id=session.id) as again:
        assert again.node("n2").result["reply"] == LONE  # type: ignore[index]
        item = again.kv.get("answers", "last")
        assert item is not None and item.value == {"reply": LONE}
