"""Outages of the PostgreSQL store: a server that is down is typed, a restart loses nothing.

These tests stop and restart a PostgreSQL of their own (the session's shared
server stays up for the other tests).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import pytest
from llmport import MediaBlock, Runtime, Session, SessionStoreUnavailable, agentic_function
from llmport.provider.config import Config
from pg_proxy import TcpProxy
from support.session_media import PNG

pytestmark = pytest.mark.filterwarnings("ignore:XDG_RUNTIME_DIR is not set")


_names = iter(range(1_000_000))
T = TypeVar("T")


def once_reachable(action: Callable[[], T], within: float = 20.0) -> T:
    """``action()``, once the pool reaches the restarted server again.

    After a restart the pool reconnects with its own backoff (1 s, then 2 s,
    ...), so an action made at once on a loaded machine can still be refused
    with ``SessionStoreUnavailable`` within its 1 s bound (the typed error the
    bound promises). These tests are about what goes on after the restart,
    not how soon the pool is back: they try again until then.
    """
    give_up = time.monotonic() + within
    while True:
        try:
            return action()
        except SessionStoreUnavailable:
            if time.monotonic() > give_up:
                raise
            time.sleep(0.2)


@pytest.fixture
def own_url(own_pg: Any, isolated_from_host: None, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh database on the dedicated server, the store's bound set to 1 s."""
    name = f"outage{next(_names)}"
    with psycopg.connect(own_pg.server.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    monkeypatch.setenv("LLMPORT_PLUGINS", "postgres")
    return own_pg.url(name) + "&timeout=1"


def stored_seqs(own_pg: Any, url: str, session_id: str) -> list[int]:
    with Session(url, id=session_id, readonly=True) as again:
        return [n.seq for n in again.nodes()]


def test_a_stopped_server_is_a_typed_error_within_the_bound(
    own_pg: Any, own_url: str
) -> None:
    session = Session(own_url)
    first = session.begin("function", "before", session.root, {})
    own_pg.stop()
    try:
        started = time.monotonic()
        with pytest.raises(SessionStoreUnavailable) as caught:
            session.begin("function", "during", session.root, {})
        assert time.monotonic() - started < 2.5
        assert caught.value.service.startswith("PostgreSQL at postgresql://")
        assert caught.value.__cause__ is None and caught.value.__context__ is None
        started = time.monotonic()
        with pytest.raises(SessionStoreUnavailable):
            Session(own_url)  # opening one is typed too
        assert time.monotonic() - started < 2.5
    finally:
        own_pg.start()
    # The same session goes on.
    after = once_reachable(lambda: session.begin("function", "after", session.root, {}))
    assert stored_seqs(own_pg, own_url, session.id) == [first.seq, after.seq]
    session.close()


def test_media_bytes_against_a_stopped_server_are_a_typed_error_within_the_bound(
    own_pg: Any, own_url: str
) -> None:
    session = Session(own_url)
    kept = session.attachments.keep(MediaBlock("image", "image/png", data=PNG))
    reader = Session(own_url, id=session.id)  # nothing cached: reads go to the database
    own_pg.stop()
    try:
        for action in (
            lambda: session.attachments.keep(MediaBlock("image", "image/png", data=PNG + b"2")),
            lambda: reader.attachments.block(kept),
        ):
            started = time.monotonic()
            with pytest.raises(SessionStoreUnavailable) as caught:
                action()
            assert time.monotonic() - started < 2.5
            assert caught.value.__cause__ is None and caught.value.__context__ is None
    finally:
        own_pg.start()
    back = once_reachable(lambda: reader.attachments.block(kept))  # the session reads on
    assert isinstance(back, MediaBlock) and back.data == PNG
    session.close()
    reader.close()


def test_a_server_stopped_mid_run_is_a_typed_error_within_the_bound(
    own_pg: Any, own_url: str
) -> None:
    # SIGSTOP: the pooled connection stays open and the server never answers (no timeout
    # of the driver's sees it). The statement must still end, typed, within ?timeout=1.
    session = Session(own_url)
    first = session.begin("function", "before", session.root, {})
    raised: list[BaseException] = []

    def during() -> None:
        try:
            session.begin("function", "during", session.root, {})
        except BaseException as exc:  # handed to the test's thread
            raised.append(exc)

    frozen = own_pg.freeze()
    try:
        worker = threading.Thread(target=during, daemon=True)
        worker.start()
        worker.join(2.5)  # a hang detector: without a bound it would wait forever
        hung = worker.is_alive()
    finally:
        own_pg.thaw(frozen)
        worker.join(10)
    assert not hung, "the statement was still waiting for the stopped server after 2.5 s"
    (error,) = raised
    assert isinstance(error, SessionStoreUnavailable)
    assert "stopped" in error.detail
    assert error.__cause__ is None and error.__context__ is None
    after = session.begin("function", "after", session.root, {})  # the same session goes on
    # The given-up INSERT was in the server's buffer: it may run once the server resumes (as
    # any write whose reply never came), once, at the next free sequence number.
    with Session(own_url, id=session.id, readonly=True) as again:
        names = sorted(n.name for n in again.nodes())
    assert names in (["after", "before"], ["after", "before", "during"])
    assert first.seq < after.seq
    session.close()


def test_a_restart_mid_run_loses_nothing(own_pg: Any, own_url: str) -> None:
    session = Session(own_url)
    failures: list[BaseException] = []
    written = 0
    stop = threading.Event()

    def writer() -> None:
        nonlocal written
        while not stop.is_set():
            try:
                node = session.begin("function", f"f{written}", session.root, {"i": written})
                session.end(node, "ok", {"value": written}, 0.0)
                written += 1
            except BaseException as exc:  # anything but SessionStoreUnavailable fails below
                failures.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    time.sleep(0.3)
    own_pg.restart()
    time.sleep(0.3)
    stop.set()
    thread.join(30)
    assert all(isinstance(f, SessionStoreUnavailable) for f in failures), failures
    assert written > 0
    in_memory = [n for n in session.nodes() if "unsaved" not in (n.result or {})]
    stored = {n.seq: n for n in _nodes_once_reachable(own_url, session.id)}
    for node in in_memory:  # every write the session acknowledged is in the database
        assert node.seq in stored
        assert stored[node.seq].status == node.status
    session.close()


def _nodes_once_reachable(url: str, session_id: str) -> list[Any]:
    """The stored nodes, read once the pool reaches the restarted server again."""

    def read() -> list[Any]:
        with Session(url, id=session_id, readonly=True) as again:
            return list(again.nodes())

    return once_reachable(read)


def test_an_answer_received_before_the_store_died_is_returned(
    own_pg: Any, own_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    def answer_then_store_dies(content: Any, model: str, response_format: Any) -> str:
        own_pg.stop()
        return "the answer"

    rt = Runtime(call=answer_then_store_dies, model="test:m", config=Config())

    @agentic_function
    def ask() -> str:
        return str(rt.exec("q"))

    try:
        with Session(own_url) as session:
            assert ask() == "the answer"
    finally:
        own_pg.start()
    llm = [n for n in session.nodes() if n.kind == "llm"]
    assert len(llm) == 1 and llm[0].status == "ok"
    assert "session store unavailable" in llm[0].result["unsaved"]  # type: ignore[index]
    assert any("was not stored" in r.getMessage() for r in caplog.records)
    rt.close()


def test_a_server_that_never_answers_is_unavailable_within_the_timeout(
    isolated_from_host: None,
) -> None:
    from llmport_postgres import PostgresStore, close_pools

    with socket.socket() as mute:  # accepts connections (the backlog), never says a word
        mute.bind(("127.0.0.1", 0))
        mute.listen(8)
        port = mute.getsockname()[1]
        started = time.monotonic()
        try:
            with pytest.raises(SessionStoreUnavailable) as caught:
                PostgresStore(f"postgresql://app@127.0.0.1:{port}/app?timeout=1")
            assert time.monotonic() - started < 2.5  # timeout=1, and room for a loaded machine
            assert caught.value.service == f"PostgreSQL at postgresql://app@127.0.0.1:{port}/app"
        finally:
            close_pools()  # its pool would keep trying to connect in the background


def proxied(own_pg: Any, proxy: TcpProxy, options: str = "") -> str:
    """A fresh database with the llmport tables, and its URL through ``proxy``."""
    name = f"proxied{next(_names)}"
    with psycopg.connect(own_pg.server.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    Session(own_pg.url(name)).close()  # the tables, made directly
    return f"postgresql://postgres@127.0.0.1:{proxy.port}/{name}{options}"


def socket_of(own_pg: Any) -> str:
    return str(Path(own_pg.server.pgdata) / ".s.PGSQL.5432")


@pytest.mark.parametrize(
    "statement", [b"INSERT INTO llmport_nodes", b"INSERT INTO llmport_node_ends"]
)
def test_a_write_whose_reply_was_lost_after_the_commit_is_stored_once(
    own_pg: Any, isolated_from_host: None, monkeypatch: pytest.MonkeyPatch, statement: bytes
) -> None:
    monkeypatch.setenv("LLMPORT_PLUGINS", "postgres")
    with TcpProxy(socket_of(own_pg), drop_reply_to=statement) as proxy:
        url = proxied(own_pg, proxy)
        session = Session(url)
        node = session.begin("function", "once", session.root, {})
        session.end(node, "ok", {"result": 1}, 0.0)
        assert proxy.dropped == 1  # the write committed, its reply never came: retried
        direct = own_pg.url(url.rsplit("/", 1)[1])
        with Session(direct, id=session.id, readonly=True) as again:
            stored = [(n.seq, n.name, n.status) for n in again.nodes()]
        assert stored == [(node.seq, "once", "ok")]
        later = session.begin("function", "next", session.root, {})
        assert later.seq == node.seq + 1  # the retry took no sequence number of its own
        session.close()


def test_a_dropped_write_and_the_wait_after_it_share_one_bound(
    own_pg: Any, isolated_from_host: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLMPORT_PLUGINS", "postgres")
    with TcpProxy(
        socket_of(own_pg), drop_reply_to=b"INSERT INTO llmport_nodes", hold=2.5,
        refuse_after_drop=True,
    ) as proxy:
        session = Session(proxied(own_pg, proxy, "?timeout=3"))
        started = time.monotonic()
        with pytest.raises(SessionStoreUnavailable) as caught:
            session.begin("function", "lost", session.root, {})  # 2.5 s, dropped, then down
        elapsed = time.monotonic() - started
        assert elapsed <= 3 + 1.5  # one bound for both tries (it was 2.5 s + another 3 s)
        assert caught.value.__cause__ is None and caught.value.__context__ is None
        session.close()
