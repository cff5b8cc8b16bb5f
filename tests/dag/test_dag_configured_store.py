"""The configured SQLite file, kept open by ``with Runtime(...)`` across top-level agentic calls.

Each call still gets its own session, every node is committed when it is
written (another connection reads it as soon as the call returns), and the
configuration is still read on every call. Counted: connections opened.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import sqlite3
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from llmport import Runtime, agentic_function
from llmport.sessions.agentic import current_session
from llmport.sessions.session import list_sessions


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The database files connections were opened to (``sqlite3.connect`` spied on)."""
    opened: list[str] = []
    real = sqlite3.connect

    def spy(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        opened.append(os.path.basename(os.fspath(database)))
        return real(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", spy)
    return opened


_connect = sqlite3.connect  # the test's own reads: not counted by the spy


def _rows(path: Path) -> list[tuple[str, str, str]]:
    """(session, name, status) of every stored node, read by a connection of its own."""
    with closing(_connect(path)) as db:
        return db.execute("SELECT session, name, status FROM nodes ORDER BY rowid").fetchall()


def _runtime() -> Runtime:
    return Runtime(call=lambda content, model, response_format: "ok")


def test_one_connection_serves_every_call_of_the_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, connects: list[str]
) -> None:
    path = tmp_path / "runs.sqlite"
    monkeypatch.setenv("LLMPORT_SESSION", str(path))
    rt = _runtime()

    @agentic_function
    def ask(n: int) -> str:
        if n == 2:
            raise ValueError("no")
        return str(rt.exec(f"q{n}", context=""))

    with rt:
        for n in range(4):
            if n == 2:
                with pytest.raises(ValueError):
                    ask(n)
            else:
                ask(n)
            # Committed when the call returns: another connection reads it, complete.
            rows = _rows(path)
            assert len(rows) == [2, 4, 5, 7][n]
            assert "running" not in {status for _, _, status in rows}
        assert connects == ["runs.sqlite"]
    assert not Path(f"{path}-wal").exists()  # the block's end closed the last connection
    sessions = list_sessions(path)
    assert len({s.id for s in sessions}) == 4  # a session per call, as without the block
    assert [s.nodes for s in sessions] == [2, 2, 1, 2]

    connects.clear()
    ask(0)
    ask(1)  # outside a block: a connection per call, as before
    assert connects == ["runs.sqlite", "runs.sqlite"]


def test_the_configuration_is_still_read_on_every_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    @agentic_function
    def where() -> str | None:
        session = current_session()
        assert session is not None
        return session.path

    first, second = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with _runtime():
        monkeypatch.setenv("LLMPORT_SESSION", str(first))
        assert where() == str(first)
        monkeypatch.setenv("LLMPORT_SESSION", str(second))
        assert where() == str(second)
        monkeypatch.delenv("LLMPORT_SESSION")
        assert where() is None
        monkeypatch.setenv("LLMPORT_SESSION", str(first))
        os.remove(first)  # removed (and its -wal, -shm) while held: made again, as a call would
        for extra in ("-wal", "-shm"):
            Path(f"{first}{extra}").unlink(missing_ok=True)
        assert where() == str(first)
        assert first.exists()
    assert [s.nodes for s in list_sessions(first)] == [1]
    assert [s.nodes for s in list_sessions(second)] == [1]


def test_threads_and_tasks_share_the_held_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, connects: list[str]
) -> None:
    path = tmp_path / "runs.sqlite"
    monkeypatch.setenv("LLMPORT_SESSION", str(path))
    rt = _runtime()

    @agentic_function
    def ask(n: int) -> str:
        return str(rt.exec(f"q{n}", context=""))

    @agentic_function
    async def aask(n: int) -> str:
        return str(await rt.async_exec(f"a{n}", context=""))

    with rt, ThreadPoolExecutor(8) as pool:
        # Threads given the block's context (as asyncio.to_thread gives it) use its store.
        calls = [pool.submit(contextvars.copy_context().run, ask, n) for n in range(40)]
        assert [call.result() for call in calls] == ["ok"] * 40

    async def tasks() -> None:
        async with rt:
            await asyncio.gather(*(aask(n) for n in range(40)))

    asyncio.run(tasks())
    assert connects == ["runs.sqlite", "runs.sqlite"]  # one per block
    sessions = list_sessions(path)
    assert len(sessions) == 80
    assert {s.nodes for s in sessions} == {2}
    assert {r[2] for r in _rows(path)} == {"ok"}


WRITER = textwrap.dedent("""
    import sys
    from llmport import Runtime, agentic_function

    rt = Runtime(call=lambda content, model, response_format: "ok")

    @agentic_function
    def ask(n):
        return rt.exec(f"q{n}", context="")

    sys.stdin.readline()                 # both start together
    with rt:
        for n in range(int(sys.argv[1])):
            ask(n)
""")


def test_processes_holding_one_file_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = {**os.environ, "LLMPORT_PLUGINS": "", "LLMPORT_SESSION": str(path)}
    writers = [
        subprocess.Popen(
            [sys.executable, str(script), "30"],
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        for _ in range(2)
    ]
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers:
        _, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err
    sessions = list_sessions(path)
    assert len(sessions) == 60
    assert {s.nodes for s in sessions} == {2}


def test_a_process_forked_inside_the_block_opens_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, connects: list[str]
) -> None:
    # SQLite connections must not cross a fork: the child opens its own, the parent's stays.
    path = tmp_path / "runs.sqlite"
    monkeypatch.setenv("LLMPORT_SESSION", str(path))
    rt = _runtime()

    @agentic_function
    def ask(n: int) -> str:
        return str(rt.exec(f"q{n}", context=""))

    with rt:
        ask(0)
        child = os.fork()
        if child == 0:  # pragma: no cover - the child's verdict is its exit code
            try:
                ask(1)
                os._exit(0 if connects == ["runs.sqlite", "runs.sqlite"] else 3)
            except BaseException:
                os._exit(2)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        ask(2)
    assert connects == ["runs.sqlite"]
    assert [s.nodes for s in list_sessions(path)] == [2, 2, 2]


def test_a_call_running_when_the_file_is_replaced_ends_in_its_own_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, moved = tmp_path / "runs.sqlite", tmp_path / "moved.sqlite"
    monkeypatch.setenv("LLMPORT_SESSION", str(path))

    @agentic_function
    def inner() -> str:
        return "b"

    @agentic_function
    def outer(block: contextvars.Context) -> str:
        for name in ("", "-wal", "-shm"):  # moved away while this call runs
            Path(f"{path}{name}").rename(f"{moved}{name}")
        with ThreadPoolExecutor(1) as pool:  # a top-level call of the block: a new file
            assert pool.submit(block.run, inner).result() == "b"
        return "a"

    with _runtime():
        assert outer(contextvars.copy_context()) == "a"
    assert [r[1:] for r in _rows(moved)] == [("outer", "ok")]
    assert [r[1:] for r in _rows(path)] == [("inner", "ok")]


CRASHER = textwrap.dedent("""
    import os
    from llmport import Runtime, agentic_function

    rt = Runtime(call=lambda content, model, response_format: "ok")

    @agentic_function
    def ask(n):
        return rt.exec(f"q{n}", context="")

    with rt:
        for n in range(5):
            ask(n)
        os._exit(7)                      # dies holding the file: no close, no checkpoint
""")


def test_calls_returned_before_the_process_died_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    script = tmp_path / "crasher.py"
    script.write_text(CRASHER)
    env = {**os.environ, "LLMPORT_PLUGINS": "", "LLMPORT_SESSION": str(path)}
    done = subprocess.run(
        [sys.executable, str(script)], env=env, cwd=tmp_path, capture_output=True, timeout=60
    )
    assert done.returncode == 7, done.stderr
    rows = _rows(path)
    assert len(rows) == 10
    assert {status for _, _, status in rows} == {"ok"}
