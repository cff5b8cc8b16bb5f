"""Opening a SQLite session database: the schema is made once, then one header field is read;
a new session's rows are not read back."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from llmport import Session, agentic_function
from llmport.sessions.session import list_sessions


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every SQL statement the connections opened from now on run (SQLite's trace)."""
    seen: list[str] = []
    real = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        db = real(*args, **kwargs)
        db.set_trace_callback(seen.append)
        return db

    monkeypatch.setattr(sqlite3, "connect", traced)
    return seen


def _creates(statements: list[str]) -> list[str]:
    return [s for s in statements if s.lstrip().upper().startswith("CREATE")]


def test_the_schema_script_runs_on_the_first_open_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, statements: list[str]
) -> None:
    monkeypatch.setenv("LLMPORT_SESSION", str(tmp_path / "runs.sqlite"))

    @agentic_function
    def job(n: int) -> int:
        return n

    job(1)
    assert _creates(statements)  # a new file: its tables and triggers
    statements.clear()
    job(2)
    job(3)
    assert statements  # the calls were recorded through traced connections
    assert _creates(statements) == []
    # A new session's id is known to nobody else yet: its (absent) rows are not read.
    assert [s for s in statements if s.startswith("SELECT") and "FROM nodes" in s] == []
    assert [s.nodes for s in list_sessions(tmp_path / "runs.sqlite")] == [1, 1, 1]


def test_a_file_made_before_the_stamp_is_checked_once_and_stays_usable(
    tmp_path: Path, statements: list[str]
) -> None:
    path = tmp_path / "old.sqlite"
    with Session(path) as old:
        old.record("tool", "t", old.root, {}, "ok", {"content": "x"}, 0.0)
    with sqlite3.connect(path) as db:  # as the schema script left files before it stamped them
        db.execute("DROP TRIGGER nodes_complete_once")
        db.execute("PRAGMA user_version = 0")
    statements.clear()
    again = Session(path, id=old.id)
    assert _creates(statements)  # what is missing is made again
    assert len(again) == 1
    again.close()
    statements.clear()
    Session(path).close()
    assert _creates(statements) == []
    with sqlite3.connect(path) as db:
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        assert "nodes_complete_once" in names
        assert db.execute("PRAGMA user_version").fetchone() == (1,)
