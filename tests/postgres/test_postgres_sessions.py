"""Sessions in a real PostgreSQL (started by conftest.py from the pgserver wheel)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import psycopg
import pytest
from llmport import Session, SessionStoreUnavailable, agentic_function
from llmport.cli.main import main as cli_main
from llmport.messages.types import Usage
from llmport.sessions.session import SessionError, UnknownSessionError, list_sessions
from llmport.sessions.stores import MissingSessionStoreError, SessionFileNotFoundError
from llmport.testing import Script, fail
from llmport_postgres import PostgresStore
from llmport_postgres.store import display_url

SECRET = "sk-test-FAKE0123456789abcdefFAKE"

pytestmark = pytest.mark.filterwarnings("ignore:XDG_RUNTIME_DIR is not set")


def raw_rows(url: str) -> str:
    """Every stored row of every table, as one text."""
    with psycopg.connect(url) as conn:
        out = []
        for table in ("llmport_sessions", "llmport_nodes", "llmport_node_ends"):
            out += [repr(r) for r in conn.execute(f"SELECT * FROM {table}").fetchall()]
    return "\n".join(out)


def test_append_reopen_and_continue(pg_url: str) -> None:
    script = Script(["Paris", "It is in France."])
    rt = script.runtime()

    @agentic_function
    def ask(q: str) -> str:
        return str(rt.exec(f"question: {q}"))

    with Session(pg_url) as first:
        assert ask("capital") == "Paris"
    assert first.path is not None and first.path.startswith("postgresql://")
    assert [n.seq for n in first.nodes()] == [1, 2]

    with Session(pg_url, id=first.id) as again:
        assert len(again) == 2 and again.node("n2").result["reply"] == "Paris"  # type: ignore[index]
        ask("country")
    assert [n.seq for n in again.nodes()] == [1, 2, 3, 4]
    assert again.node("n4").data["reads"] == ["n1", "n3"]
    # The reloaded context is byte-identical to what the first process rendered.
    first_text = script.requests[1].messages[0].blocks[0]
    assert getattr(first_text, "text", "") == "[call ask(q='capital')]"

    with Session(pg_url, resume=True) as latest:
        assert latest.id == first.id and len(latest) == 4
    fresh = Session(pg_url)  # a new session by default
    assert fresh.id != first.id and len(fresh) == 0
    assert [(s.id, s.nodes) for s in list_sessions(pg_url)] == [(first.id, 4), (fresh.id, 0)]
    fresh.close()


def test_rows_are_append_only_and_completions_are_rows(pg_url: str) -> None:
    session = Session(pg_url)
    main = session.begin("function", "main", session.root, {"arguments": {"b": 1, "a": 2}})
    session.record("tool", "t", main, {"arguments": {}}, "ok", {"content": "x"}, 0.0)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM llmport_node_ends").fetchone() == (1,)
    session.end(main, "ok", {"result": 3}, 0.1)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute(
            "SELECT seq, status FROM llmport_node_ends ORDER BY seq"
        ).fetchall() == [(1, "ok"), (2, "ok")]
        for sql in (
            "UPDATE llmport_nodes SET name = 'x'",
            "DELETE FROM llmport_node_ends",
            "DELETE FROM llmport_nodes",
        ):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                conn.execute(sql)
        with pytest.raises(psycopg.errors.UniqueViolation):  # a node is completed once
            conn.execute(
                "INSERT INTO llmport_node_ends VALUES (%s, 1, 'error', 9, 0, null)", (session.id,)
            )
    again = Session(pg_url, id=session.id, readonly=True)
    assert list(again.node("n1").data["arguments"]) == ["b", "a"]  # json keeps key order
    assert [(n.status, n.end) for n in again.nodes()] == [("ok", 3), ("ok", 2)]
    again.close()


def test_only_stored_nodes_of_existing_sessions_are_written(pg_url: str) -> None:
    # The store's statements keep what foreign keys would (the tables have none: their
    # row locks cost concurrent writers throughput): no node without its session, no
    # completion without its node, each a typed error.
    store = PostgresStore(pg_url)
    session = Session(pg_url)
    main = session.begin("function", "main", session.root, {"arguments": {}})
    with pytest.raises(SessionError, match="no node 99"):
        store.complete(session.id, 99, "ok", 5, 0.0, {"result": 1})
    with pytest.raises(SessionError, match="no session 'nowhere'"):
        store.insert("nowhere", main)
    store.complete(session.id, main.seq, "ok", 5, 0.0, {"result": 1})
    store.complete(session.id, main.seq, "ok", 5, 0.0, {"result": 1})  # a retry: kept once
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT session, seq FROM llmport_nodes").fetchall() == [
            (session.id, 1)
        ]
        assert conn.execute("SELECT session, seq FROM llmport_node_ends").fetchall() == [
            (session.id, 1)
        ]
    session.close()


def test_a_statement_that_failed_leaves_its_connection_serving_the_next(pg_url: str) -> None:
    # Each pooled connection runs the store's statements through one cursor it keeps: a
    # statement the server refused (no tables yet) must not spoil the ones after it.
    reader = PostgresStore(pg_url, readonly=True)
    with pytest.raises(SessionFileNotFoundError, match="holds no llmport sessions yet"):
        reader.sessions()
    session = Session(pg_url)  # creates the tables through the same process's pool
    main = session.begin("function", "main", session.root, {"arguments": {}})
    session.end(main, "ok", {"result": 1}, 0.0)
    assert reader.sessions()[0][:1] == (session.id,)
    assert [row[0] for row in reader.load(session.id)] == [1]
    session.close()


def test_running_nodes_reload_as_running_and_failures_as_failed(pg_url: str) -> None:
    script = Script([fail(ValueError("upstream broke"))])
    rt = script.runtime(max_retries=1)

    @agentic_function
    def f() -> str:
        return str(rt.exec("x"))

    with Session(pg_url) as session, pytest.raises(Exception, match="upstream"):
        f()
    stored = Session(pg_url, id=session.id, readonly=True)
    function, llm = stored.nodes()
    assert (function.status, llm.status) == ("error", "error")
    assert llm.result is not None and "reply" not in llm.result
    with pytest.raises(RuntimeError, match="read-only"):
        stored.begin("function", "x", stored.root, {})
    with pytest.raises(UnknownSessionError):
        Session(pg_url, id="nope", readonly=True)


def test_api_keys_are_never_stored(pg_url: str) -> None:
    script = Script(["fine", fail(ValueError(f"upstream said: Authorization: Bearer {SECRET}"))])
    rt = script.runtime(providers={"scripted": {"api_key": SECRET}}, max_retries=1)

    @agentic_function
    def use(token_note: str) -> str:
        rt.exec(f"first, with {SECRET}")
        return str(rt.exec("second"))

    with Session(pg_url) as session, pytest.raises(Exception, match="upstream"):
        use(f"key is {SECRET}")
    session.add_summary(1, f"the key was {SECRET}")
    stored = raw_rows(pg_url)
    assert SECRET not in stored and "FAKE0123456789" not in stored
    assert "***" in stored
    again = Session(pg_url, id=session.id, readonly=True)
    assert "***" in again.node("n1").data["arguments"]["token_note"]
    again.close()


def test_a_password_in_the_url_is_never_shown() -> None:
    assert (
        display_url("postgresql://bob:s3cret@db:5433/x?sslmode=require")
        == "postgresql://bob:***@db:5433/x?sslmode=require"
    )
    assert display_url("postgresql://db/x") == "postgresql://db/x"


WRITER = textwrap.dedent("""
    import sys
    from llmport import Session

    url, sid, who, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    session = Session(url, id=sid)
    top = session.begin("function", f"worker-{who}", session.root, {"arguments": {}})
    for i in range(count):
        if i % 2:
            node = session.begin("function", "step", top, {"arguments": {"who": who, "i": i}})
            session.end(node, "ok", {"result": i}, 0.0)
        else:
            session.record("tool", "step", top, {"arguments": {"who": who, "i": i}}, "ok",
                           {"content": str(i)}, 0.0)
    session.end(top, "ok", {"result": count}, 0.0)
    print("done", flush=True)
""")


def test_eight_processes_append_to_one_session_and_nothing_is_lost(
    pg_url: str, tmp_path: Path
) -> None:
    session = Session(pg_url)
    session.close()
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = {**os.environ, "LLMPORT_PLUGINS": "postgres"}
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), pg_url, session.id, str(k), "50"],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for k in range(8)
    ]
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0 and out.strip() == "done"

    stored = Session(pg_url, id=session.id, readonly=True)
    nodes = stored.nodes()
    assert len(nodes) == 8 * 51  # 8 top-level calls + 8 x 50 steps
    assert [n.seq for n in nodes] == list(range(1, 8 * 51 + 1))  # dense: no gaps, no duplicates
    assert all(n.status == "ok" for n in nodes)
    for k in range(8):
        mine = [n for n in nodes if n.kind != "function" or n.name == "step"]
        order = [n.data["arguments"]["i"] for n in mine if n.data["arguments"]["who"] == str(k)]
        assert order == list(range(50))  # each process's nodes in the order it appended them
        top = next(n for n in nodes if n.name == f"worker-{k}")
        assert len(top.children or []) == 50
    assert [(s.id, s.nodes) for s in list_sessions(pg_url)] == [(session.id, 408)]
    stored.close()


KILLED = textwrap.dedent("""
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

    with Session(sys.argv[1], id=sys.argv[2]):
        main()
""")


def test_a_killed_worker_loses_nothing_and_another_continues(pg_url: str, tmp_path: Path) -> None:
    sid = "crashy"
    script = tmp_path / "child.py"
    script.write_text(KILLED)
    env = {**os.environ, "LLMPORT_PLUGINS": "postgres"}
    child = subprocess.Popen(
        [sys.executable, str(script), pg_url, sid],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        for expected in range(3):
            assert child.stdout.readline().strip() == str(expected)
            if expected < 2:
                child.stdin.write("\n")
                child.stdin.flush()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    session = Session(pg_url, id=sid)
    nodes = session.nodes()
    assert len(nodes) == 7 and nodes[0].status == "running"  # main + 3 x (step, exec)
    rt = Script(["after"]).runtime()

    @agentic_function
    def resume() -> str:
        return str(rt.exec("resume"))

    with session:
        resume()
    assert [n.seq for n in session.nodes()][-2:] == [8, 9]
    assert session.node("n9").data["reads"] == ["n8"]


def test_summaries_are_stored(pg_url: str) -> None:
    session = Session(pg_url)
    main = session.begin("function", "main", session.root, {"arguments": {}})
    session.add_summary(1, "earlier", Usage(input_tokens=7, output_tokens=2), frame=main)
    again = Session(pg_url, id=session.id, readonly=True)
    (summary,) = [n for n in again.nodes() if n.kind == "summary"]
    assert summary.data["text"] == "earlier" and summary.status == "ok"
    assert again.usage().input_tokens == 7


def test_session_list_and_show_on_the_url(pg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    script = Script(["hi"])
    rt = script.runtime()

    @agentic_function
    def hello() -> str:
        return str(rt.exec("hello"))

    with Session(pg_url) as session:
        hello()
    assert cli_main(["session", "list", pg_url, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(s["id"], s["nodes"]) for s in listed["sessions"]] == [(session.id, 2)]
    assert cli_main(["session", "show", f"{pg_url}#{session.id[:6]}", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [n["kind"] for n in shown["sessions"][0]["nodes"]] == ["function", "llm"]
    assert shown["sessions"][0]["path"] == pg_url.replace("postgres:@", "postgres:***@")
    assert cli_main(["session", "show", pg_url]) == 0
    out = capsys.readouterr().out
    assert session.id in out and "hello" in out


def test_a_missing_store_plugin_names_the_package(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLMPORT_PLUGINS", "")
    with pytest.raises(MissingSessionStoreError, match="pip install llmport-postgres"):
        Session(pg_url)
    with pytest.raises(MissingSessionStoreError, match="redis://"):
        Session("redis://localhost/0")


def test_the_store_is_registered_through_the_hook(pg_url: str) -> None:
    from llmport.sessions.stores import session_stores

    stores: dict[str, Any] = session_stores()
    assert stores["postgresql"] is PostgresStore and stores["postgres"] is PostgresStore


QUERY_PASSWORD = "S3cretQueryPassw0rd"


def test_a_password_in_the_query_string_is_never_shown() -> None:
    """The URL helper masks secret query parameters as it masks ``user:pass@``."""
    assert display_url(f"postgresql://app@db/x?sslmode=require&password={QUERY_PASSWORD}") == (
        "postgresql://app@db/x?sslmode=require&password=***"
    )
    assert display_url("postgresql://db/x?sslpassword=abc&application_name=me") == (
        "postgresql://db/x?sslpassword=***&application_name=me"
    )


def test_session_store_unavailable_never_shows_a_query_string_password() -> None:
    """Channel: the typed error of an unreachable store (port 1 refuses at once)."""
    url = f"postgresql://app@127.0.0.1:1/db?password={QUERY_PASSWORD}&connect_timeout=2"
    with pytest.raises(SessionStoreUnavailable) as caught:
        Session(url)
    shown = f"{caught.value}\n{caught.value!r}"
    assert "password=***" in shown
    assert QUERY_PASSWORD not in shown


def test_session_list_never_shows_a_query_string_password(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Channel: ``llmport session list`` (text and JSON) on a URL with ``&password=``."""
    url = f"{pg_url}&password={QUERY_PASSWORD}"  # the test server trusts local users
    with Session(url) as session:
        session.begin("function", "main", session.root, {"arguments": {}})
    for argv in (["session", "list", url], ["session", "list", url, "--json"]):
        assert cli_main(argv) == 0
        out = capsys.readouterr().out
        assert session.id[:8] in out
        assert QUERY_PASSWORD not in out and "password=***" in out


def test_an_answer_with_a_lone_surrogate_is_stored_and_reads_back_unchanged(pg_url: str) -> None:
    lone = "a\ud800b"  # a Python str may hold it; UTF-8 cannot encode it
    rt = Script([lone]).runtime()

    @agentic_function
    def ask() -> str:
        return str(rt.exec("hi"))

    with Session(pg_url) as session:
        assert ask() == lone
    with Session(pg_url, id=session.id) as again:
        assert again.node("n2").result["reply"] == lone  # type: ignore[index]
