"""Outages of the SQLite store: a database kept locked is typed within the bound."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from llmport import Session, SessionStoreUnavailable


def test_a_database_kept_locked_is_unavailable_within_5_s(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    session = Session(path)
    first = session.begin("function", "before", session.root, {})
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holding the write lock, stuck
    try:
        started = time.monotonic()
        with pytest.raises(SessionStoreUnavailable) as caught:
            session.begin("function", "during", session.root, {})
        assert time.monotonic() - started < 5.5
        assert caught.value.service == f"SQLite at {path}"
        assert caught.value.__cause__ is None and caught.value.__context__ is None
    finally:
        other.execute("ROLLBACK")
        other.close()
    after = session.begin("function", "after", session.root, {})
    session.close()
    with Session(path, id=session.id, readonly=True) as again:
        assert [n.seq for n in again.nodes()] == [first.seq, after.seq]



#: Every way a SQLite file is opened by llmport: a session, a key-value store, the
#: embedding cache. Each must say "not usable" typed, with no sqlite3 error inside.
OPENERS = {
    "Session": lambda path: Session(path),
    "SqliteKV": lambda path: __import__("llmport.sessions.kv").sessions.kv.SqliteKV(path),
    "embed_cache": lambda path: __import__("llmport").Runtime(model="m", embed_cache=path),
}


@pytest.mark.parametrize("head", [b"", b"SQLite format 3\x00"], ids=["random", "sqlite-header"])
@pytest.mark.parametrize("opener", list(OPENERS))
def test_a_file_that_is_not_a_database_is_a_session_error_unchained(
    tmp_path: Path, opener: str, head: bytes
) -> None:
    from llmport import SessionError

    path = tmp_path / "damaged.sqlite"
    path.write_bytes(head + bytes(range(256)) * 32)
    with pytest.raises(SessionError) as caught:
        OPENERS[opener](str(path))
    assert str(path) in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
