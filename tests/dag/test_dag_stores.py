"""Choosing a session store by path or URL (the PostgreSQL store: tests/postgres)."""

from __future__ import annotations

from pathlib import Path

import pytest
from llmport import Session
from llmport.sessions.session import list_sessions
from llmport.sessions.stores import MissingSessionStoreError, split_target


def test_plain_paths_and_sqlite_urls_use_the_embedded_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with Session("runs.sqlite") as first:
        first.begin("function", "f", first.root, {})
    again = Session("sqlite:///runs.sqlite", id=first.id)  # relative, as SQLAlchemy spells it
    assert len(again) == 1 and again.path == "runs.sqlite"
    again.close()
    absolute = Session(f"sqlite:///{tmp_path}/runs.sqlite", id=first.id)  # sqlite:////abs
    assert len(absolute) == 1
    absolute.close()
    assert [s.id for s in list_sessions("sqlite:///runs.sqlite")] == [first.id]


def test_split_target() -> None:
    assert split_target("a/b.sqlite") == ("sqlite", "a/b.sqlite")
    assert split_target("sqlite:////tmp/x.db") == ("sqlite", "/tmp/x.db")
    assert split_target("postgresql://h/db") == ("postgresql", "postgresql://h/db")
    with pytest.raises(Exception, match="sqlite:///"):
        split_target("sqlite://x.db")


def test_an_unknown_scheme_names_the_package_to_install() -> None:
    with pytest.raises(MissingSessionStoreError, match="pip install llmport-postgres"):
        Session("postgresql://nowhere/db")
    with pytest.raises(MissingSessionStoreError, match="no installed plugin"):
        Session("mongodb://nowhere/db")
