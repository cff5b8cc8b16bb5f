"""`llmport session list`, and `session show` printing brackets literally."""

from __future__ import annotations

import argparse
import json
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest
from llmport import Session
from llmport.cli.session import add_list_parser, show, show_list
from llmport.errors import LlmportError
from llmport.sessions.session import SessionError, SessionFileNotFoundError
from llmport.sessions.sqlite import SqliteStore
from rich.console import Console

MARKUP = "[bold]x[/bold] [session] [red]"


def capture() -> Console:
    return Console(record=True, width=200, color_system=None)


def parse(argv: list[str]) -> argparse.Namespace:
    """The ``session`` subcommands as cli.py wires them, with ``list`` from session_cli."""
    parser = argparse.ArgumentParser(prog="llmport")
    commands = parser.add_subparsers(dest="command", required=True)
    session = commands.add_parser("session").add_subparsers(dest="session_command",
                                                             required=True)
    add_list_parser(session)
    return parser.parse_args(argv)


def three_sessions(path: Path) -> list[str]:
    ids = []
    for n in (2, 0, 1):
        session = Session(path, new=True)
        for i in range(n):
            session.record("tool", "t", session.root, {"arguments": {"i": i}}, "ok", {}, 0.0)
        session.close()
        ids.append(session.id)
    # Creation times one minute apart, oldest first (the clock may not tick between them).
    raw = sqlite3.connect(path, isolation_level=None)
    for minute, sid in enumerate(ids):
        raw.execute("UPDATE sessions SET created = ? WHERE id = ?",
                    (1_700_000_000 + 60 * minute, sid))
    raw.close()
    return ids


def test_list_newest_first_with_node_counts(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    ids = three_sessions(path)
    console = capture()
    assert show_list(str(path), False, console) == 0
    lines = console.export_text().splitlines()
    assert lines[0].strip() == f"{path}: 3 sessions"
    rows = [line for line in lines if any(sid in line for sid in ids)]
    assert [next(sid for sid in ids if sid in row) for row in rows] == ids[::-1]
    assert [row.split()[-2] for row in rows] == ["1", "0", "2"]  # the nodes column
    newest = datetime.fromtimestamp(1_700_000_120).strftime("%Y-%m-%d %H:%M:%S")
    assert newest in rows[0]


def test_list_json(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    ids = three_sessions(path)
    console = capture()
    assert show_list(str(path), True, console) == 0
    doc = json.loads(console.export_text())
    assert doc == {"path": str(path), "sessions": [
        {"id": ids[2], "created": "2023-11-14T22:15:20+00:00", "created_ts": 1_700_000_120,
         "nodes": 1},
        {"id": ids[1], "created": "2023-11-14T22:14:20+00:00", "created_ts": 1_700_000_060,
         "nodes": 0},
        {"id": ids[0], "created": "2023-11-14T22:13:20+00:00", "created_ts": 1_700_000_000,
         "nodes": 2}]}


def test_list_through_the_parser_and_the_configured_database(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "configured.sqlite"
    ids = three_sessions(path)
    args = parse(["session", "list", str(path), "--json"])
    assert args.func(args) == 0
    assert [s["id"] for s in json.loads(capsys.readouterr().out)["sessions"]] == ids[::-1]

    monkeypatch.setenv("LLMPORT_SESSION", str(path))
    args = parse(["session", "list", "--json"])
    assert args.path is None and args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["path"] == str(path)


def test_list_a_database_without_sessions(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    SqliteStore(str(path), durable=False, readonly=False).close()  # schema, no session
    console = capture()
    assert show_list(str(path), False, console) == 0
    assert console.export_text().strip() == f"no sessions in {path}"
    console = capture()
    assert show_list(str(path), True, console) == 0
    assert json.loads(console.export_text()) == {"path": str(path), "sessions": []}


def test_list_user_errors_are_typed(tmp_path: Path) -> None:
    with pytest.raises(SessionFileNotFoundError) as missing:
        show_list(str(tmp_path / "missing.sqlite"), False, capture())
    assert str(missing.value) == f"no session database at {tmp_path / 'missing.sqlite'}"
    assert isinstance(missing.value, LlmportError)
    with pytest.raises(SessionError) as unconfigured:
        show_list(None, False, capture())
    assert str(unconfigured.value) == (
        "no session database given, and no session database is configured "
        "(LLMPORT_SESSION or [session] path)")
    (tmp_path / "junk.sqlite").write_text("not a database")
    with pytest.raises(SessionError, match="not an llmport session database"):
        show_list(str(tmp_path / "junk.sqlite"), False, capture())
    plain = tmp_path / "plain.sqlite"
    sqlite3.connect(plain).execute("CREATE TABLE t(x)").connection.close()
    with pytest.raises(SessionError, match="not an llmport session database"):
        show_list(str(plain), False, capture())


def test_brackets_are_printed_literally(tmp_path: Path) -> None:
    folder = tmp_path / "[session]"
    folder.mkdir()
    path = folder / "[bold]runs.sqlite"
    session = Session(path)
    top = session.begin("function", f"fn {MARKUP}", session.root,
                        {"arguments": {"text": MARKUP}})
    llm = session.begin("llm", f"model{MARKUP}", top, {"content": [MARKUP]})
    session.record("tool", f"tool{MARKUP}", llm, {"arguments": {}}, "error",
                   {"error": f"failed: {MARKUP}"}, 0.0)
    session.end(llm, "ok", {"reply": f"reply {MARKUP}"}, 0.0)
    session.end(top, "error", {"error": {"type": "ValueError", "message": f"bad {MARKUP}"}}, 0.0)
    session.close()

    console = capture()
    assert show(str(path), False, console) == 0
    out = console.export_text()
    assert f"session {session.id}  {path}  3 nodes" in out
    assert f"n1 function fn {MARKUP}  error" in out
    assert f"ValueError: bad {MARKUP}" in out
    assert f"n2 llm model{MARKUP}  ok" in out
    assert f"n3 tool tool{MARKUP}  error" in out and f"failed: {MARKUP}" in out

    console = capture()
    assert show(str(path), True, console) == 0
    (stored,) = json.loads(console.export_text())["sessions"]
    assert stored["nodes"][0]["data"]["arguments"]["text"] == MARKUP
    assert stored["nodes"][1]["result"]["reply"] == f"reply {MARKUP}"

    console = capture()
    assert show_list(str(path), False, console) == 0
    assert console.export_text().splitlines()[0].strip() == f"{path}: 1 session"


def test_show_a_database_without_sessions(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    SqliteStore(str(path), durable=False, readonly=False).close()
    console = capture()
    assert show(str(path), False, console) == 0
    assert console.export_text().strip() == f"no sessions in {path}"
