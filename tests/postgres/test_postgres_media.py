"""Session media in a real PostgreSQL: one ``llmport_attachments`` row per hash, given back."""

from __future__ import annotations

import hashlib

import psycopg
import pytest
from llmport import AttachmentError, Session
from llmport.messages.types import TextBlock
from support.session_media import PNG, images, rendered, run_program

pytestmark = pytest.mark.filterwarnings("ignore:XDG_RUNTIME_DIR is not set")

DIGEST = hashlib.sha256(PNG).hexdigest()


def attachment_rows(url: str) -> list[tuple[str, int]]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT sha256, size FROM llmport_attachments").fetchall()


def tamper(url: str, sql: str) -> None:
    """Change the attachment rows behind the store's back (its trigger dropped first)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TRIGGER llmport_attachments_append_only ON llmport_attachments")
        conn.execute(sql)


def test_round_trip_gives_the_bytes_back_and_rows_hold_only_the_hash(pg_url: str) -> None:
    session, script = run_program(pg_url)
    assert [b.data for b in images(script.requests[-1].messages)] == [PNG]
    assert attachment_rows(pg_url) == [(DIGEST, len(PNG))]
    with psycopg.connect(pg_url) as conn:
        nodes = repr(conn.execute("SELECT start_data FROM llmport_nodes").fetchall())
    assert DIGEST in nodes and "iVBORw0KGgo" not in nodes

    again = Session(pg_url, id=session.id, readonly=True)
    back = images(rendered(again))
    assert [(b.media_type, b.data, b.filename) for b in back] == [("image/png", PNG, "shot.png")]


def test_the_same_bytes_are_one_row_and_rows_are_append_only(pg_url: str) -> None:
    run_program(pg_url)
    run_program(pg_url)
    assert len(attachment_rows(pg_url)) == 1
    with psycopg.connect(pg_url, autocommit=True) as conn, pytest.raises(psycopg.Error):
        conn.execute("DELETE FROM llmport_attachments")


def test_a_deleted_attachment_is_a_marked_placeholder(pg_url: str) -> None:
    session, _ = run_program(pg_url)
    tamper(pg_url, "DELETE FROM llmport_attachments")
    shown = rendered(Session(pg_url, id=session.id))
    assert images(shown) == []
    texts = [b.text for m in shown for b in m.blocks if isinstance(b, TextBlock)]
    assert any(f"attachment sha256:{DIGEST[:12]} is missing" in t for t in texts)


def test_bytes_that_do_not_match_their_hash_are_refused_typed(pg_url: str) -> None:
    session, _ = run_program(pg_url)
    tamper(pg_url, "UPDATE llmport_attachments SET data = decode(repeat('00', size::int), 'hex')")
    with pytest.raises(AttachmentError) as caught:
        rendered(Session(pg_url, id=session.id))
    assert caught.value.sha256 == DIGEST
    assert caught.value.__cause__ is None and caught.value.__context__ is None
