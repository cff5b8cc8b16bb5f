"""Media in the session DAG: kept once per SHA-256 as attachments, given back on read."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from llmport import AttachmentError, MediaBlock, Session, SessionStoreUnavailable
from llmport.messages.types import Response, TextBlock, Usage
from llmport.testing import Script, respond
from support.session_media import PNG, images, rendered, run_program

JPEG = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 8


def attachment_rows(path: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT sha256, size FROM attachments").fetchall()


def tamper(path: Path, sql: str, params: tuple[object, ...] = ()) -> None:
    """Change an attachment row behind the store's back (its triggers dropped first)."""
    with sqlite3.connect(path) as db:
        db.execute("DROP TRIGGER attachments_append_only")
        db.execute("DROP TRIGGER attachments_written_once")
        db.execute(sql, params)


def test_a_later_exec_is_sent_the_tool_image_itself_not_a_placeholder() -> None:
    _, script = run_program(None)
    sent = images(script.requests[-1].messages)  # ask's request: look read from the DAG
    assert [(b.media_type, b.data, b.filename) for b in sent] == [("image/png", PNG, "shot.png")]
    texts = [b.text for m in script.requests[-1].messages for b in m.blocks if hasattr(b, "text")]
    assert not any("bytes (image/png)" in t for t in texts)


def test_sqlite_round_trip_gives_the_bytes_back_and_rows_hold_only_the_hash(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.sqlite"
    session, _ = run_program(path)
    digest = hashlib.sha256(PNG).hexdigest()
    assert attachment_rows(path) == [(digest, len(PNG))]
    with sqlite3.connect(path) as db:
        stored = db.execute("SELECT start_data, end_data FROM nodes").fetchall()
    rows = " ".join(start + (end or "") for start, end in stored)
    assert digest in rows and "iVBORw0KGgo" not in rows  # the hash, never base64 bytes
    tool = next(n for n in session.nodes() if n.kind == "tool" and n.name == "screenshot")
    assert tool.result is not None
    assert tool.result["blocks"] == [
        {
            "type": "image",
            "media_type": "image/png",
            "size": len(PNG),
            "filename": "shot.png",
            "sha256": digest,
        }
    ]

    again = Session(path, id=session.id, readonly=True)
    back = images(rendered(again))
    assert [(b.type, b.media_type, b.data, b.filename) for b in back] == [
        ("image", "image/png", PNG, "shot.png")
    ]
    again.close()


def test_the_same_bytes_are_one_row_across_turns_execs_and_sessions(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    run_program(path)
    run_program(path)  # a second session in the file, the same image
    assert len(attachment_rows(path)) == 1
    run_program(path, image=PNG + b"more")
    assert len(attachment_rows(path)) == 2


def test_a_reopened_session_gives_one_block_for_every_read_of_a_hash(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    session, _ = run_program(path)
    again = Session(path, id=session.id)
    first = images(rendered(again))
    second = images(rendered(again))
    assert len(first) == 1 and first[0] is second[0]  # loaded once, held once
    again.close()


def test_a_deleted_attachment_reads_as_a_marked_placeholder(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    session, _ = run_program(path)
    tamper(path, "DELETE FROM attachments")
    again = Session(path, id=session.id)
    shown = rendered(again)
    assert images(shown) == []
    texts = [b.text for m in shown for b in m.blocks if isinstance(b, TextBlock)]
    digest = hashlib.sha256(PNG).hexdigest()
    assert f"[image: shot.png (image/png); attachment sha256:{digest[:12]} is missing]" in texts
    again.close()


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE attachments SET data = zeroblob(length(data))",  # half-written: zeros
        "UPDATE attachments SET data = substr(data, 1, 100)",  # truncated
        "UPDATE attachments SET data = 'not bytes at all'",  # a text value
    ],
)
def test_bytes_that_do_not_match_their_hash_are_refused_typed(tmp_path: Path, sql: str) -> None:
    path = tmp_path / "s.sqlite"
    session, _ = run_program(path)
    tamper(path, sql)
    again = Session(path, id=session.id)
    with pytest.raises(AttachmentError) as caught:
        rendered(again)
    assert caught.value.sha256 == hashlib.sha256(PNG).hexdigest()
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    again.close()


def test_a_planted_attachment_contradicting_its_media_type_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    session = Session(path)
    digest = hashlib.sha256(JPEG).hexdigest()
    with sqlite3.connect(path) as db:  # a JPEG planted under its own, correct, hash
        db.execute(
            "INSERT INTO attachments VALUES (?, 'image/png', ?, ?)", (digest, len(JPEG), JPEG)
        )
    form = {"type": "image", "media_type": "image/png", "size": len(JPEG), "sha256": digest}
    with pytest.raises(AttachmentError, match="image/jpeg"):
        session.attachments.block(form)
    session.close()


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"size": 10**15}, "over"),
        ({"size": "12"}, "not a byte count"),
        ({"size": -1}, "not a byte count"),
        ({"size": 99}, "holds"),
        ({"sha256": "../../etc/passwd"}, "64 lowercase hex"),
        ({"type": "video"}, "unknown media kind"),
        ({"media_type": 7}, "type/subtype"),
        ({"type": "audio"}, "an audio block cannot be image/png"),
    ],
)
def test_hostile_stored_forms_are_refused_typed_before_any_read(
    tmp_path: Path, change: dict[str, object], problem: str
) -> None:
    path = tmp_path / "s.sqlite"
    session = Session(path)
    block = MediaBlock("image", "image/png", data=PNG)
    form = {**session.attachments.keep(block), **change}
    fresh = Session(path, id=session.id)  # nothing cached: the store is read
    with pytest.raises(AttachmentError, match=problem):
        fresh.attachments.block(form)
    session.close()
    fresh.close()


def test_url_media_keep_the_redacted_url_and_no_bytes(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    session = Session(path)
    url = "https://user:hunter2secret@example.com/a.png?X-Goog-Signature=abcdef0123456789"
    form = session.attachments.keep(MediaBlock("image", "image/png", url=url))
    assert "sha256" not in form and "hunter2secret" not in json.dumps(form)
    assert "abcdef0123456789" not in json.dumps(form)
    assert attachment_rows(path) == []
    session.close()


def test_an_answer_image_is_kept_and_given_back_after_the_reply(tmp_path: Path) -> None:
    from llmport import agentic_function
    from llmport.messages.types import Message

    def draw(request: object) -> Response:
        blocks = (TextBlock("here it is"), MediaBlock("image", "image/png", data=PNG))
        return Response(text="here it is", blocks=blocks, usage=Usage(1, 1))

    script = Script([respond(draw), respond(lambda r: Response(text="ok", usage=Usage(1, 1)))])
    rt = script.runtime()

    @agentic_function(expose="full")
    def paint() -> str:
        """Paint."""
        return str(rt.exec("draw a square"))

    @agentic_function
    def review() -> str:
        """Review."""
        return str(rt.exec("is it square?"))

    path = tmp_path / "s.sqlite"
    with Session(path) as session:
        paint()
        review()
    sent: list[Message] = list(script.requests[-1].messages)
    assert [m.role for m in sent] == ["user", "assistant", "user"]
    assert images(sent[2:]) and images(sent[2:])[0].data == PNG  # a user turn: every vendor
    again = Session(path, id=session.id)
    assert [b.data for b in images(rendered(again))] == [PNG]
    again.close()


def test_writing_an_attachment_to_a_locked_database_is_unavailable_in_bounded_time(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.sqlite"
    session = Session(path)
    other = sqlite3.connect(path, isolation_level=None, timeout=0)
    other.execute("BEGIN IMMEDIATE")  # another process holding the write lock, stuck
    started = time.monotonic()
    try:
        with pytest.raises(SessionStoreUnavailable) as caught:
            session.attachments.keep(MediaBlock("image", "image/png", data=PNG))
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert time.monotonic() - started < 10
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    session.attachments.keep(MediaBlock("image", "image/png", data=PNG))  # free again: written
    assert len(attachment_rows(path)) == 1
    session.close()


MEMORY_CHILD = textwrap.dedent(
    """
    import resource, sys
    from pathlib import Path
    from support.session_media import images, rendered, run_program
    from llmport import Session

    def peak() -> int:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    image_path, db = Path(sys.argv[1]), sys.argv[2]
    run_program(db + ".warm")  # imports and first-use caches: not the image's cost
    base = peak()
    session, script = run_program(db, image_path.read_bytes())
    assert len(images(script.requests[-1].messages)) == 1
    again = Session(db, id=session.id, readonly=True)
    assert len(images(rendered(again))) == 1
    print(peak() - base)
    """
)


def test_a_20_mb_tool_image_through_3_turns_and_a_reopen_keeps_peak_rss_under_3x(
    tmp_path: Path,
) -> None:
    size = 20 * 1024 * 1024
    image = tmp_path / "big.png"
    image.write_bytes(PNG[:8] + bytes(size - 8))
    tests = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_CHILD, str(image), str(tmp_path / "s.sqlite")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={"PYTHONPATH": str(tests), "LLMPORT_PLUGINS": "", "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    grown = int(out.stdout.strip().splitlines()[-1])
    assert grown <= 3 * size, f"peak RSS grew by {grown / 2**20:.1f} MiB for a 20 MiB image"
    assert len(attachment_rows(tmp_path / "s.sqlite")) == 1


def test_a_readonly_session_writes_no_attachment(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    Session(path).close()
    readonly = Session(path, readonly=True)
    image = MediaBlock("image", "image/png", data=PNG)
    form = readonly.attachments.keep(image)
    assert form["sha256"] == hashlib.sha256(PNG).hexdigest()
    assert readonly.attachments.block(form) is image  # held for this reader only
    assert attachment_rows(path) == []
    readonly.close()
