"""A durable run whose PostgreSQL stops mid-run, in one process.

The run's checkpoints wait for the database up to ``launch(database_wait=)``:
a server back in time finishes the run with each model request paid once; one
that stays down longer is a ``SessionStoreUnavailable`` within the bound.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import llmport_dbos
import llmport_openai.plugin
import psycopg
import pytest
from dbos import DBOS, SetWorkflowID
from llmport import Runtime, SessionStoreUnavailable, agentic_function
from llmport.provider.config import Config
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply

pytestmark = pytest.mark.filterwarnings("ignore:XDG_RUNTIME_DIR is not set")

ASKS = 3
vendor = threading.local()  # the loopback server's URL for the module's Runtime, per test
runtimes: list[Runtime] = []


def completion(text: str) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


@agentic_function
def ask_three(topic: str) -> str:
    """Three model requests, one after another."""
    rt = runtimes[-1]
    return " | ".join(str(rt.exec(f"{topic} {i}")) for i in range(ASKS))


durable_ask = llmport_dbos.durable(ask_three, name="tests.outage.ask_three")


@agentic_function
async def aask_three(topic: str) -> str:
    """Async :func:`ask_three`."""
    rt = runtimes[-1]
    return " | ".join([str(await rt.async_exec(f"{topic} {i}")) for i in range(ASKS)])


durable_aask = llmport_dbos.durable(aask_three, name="tests.outage.aask_three")


def asked(request: RecordedRequest) -> str:
    content = request.json()["messages"][-1]["content"]
    return content if isinstance(content, str) else content[-1]["text"]


@pytest.fixture
def database(own_pg: Any, isolated_from_host: None) -> str:
    name = f"dbos{time.monotonic_ns()}"
    with psycopg.connect(own_pg.server.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return str(own_pg.url(name))


@pytest.fixture
def stop_at_second_request(own_pg: Any) -> Iterator[tuple[LoopbackServer, dict[str, float]]]:
    """A vendor that stops the database before answering the second request."""
    clock: dict[str, float] = {}

    def answer(request: RecordedRequest) -> Reply:
        if len(server.requests) == 2 and "stopped" not in clock:
            own_pg.stop()
            clock["stopped"] = time.monotonic()
        return Reply(json=completion(f"re: {asked(request)}"))

    server = LoopbackServer([Reply(handler=answer)], repeat=True)
    with server:
        runtimes.append(
            Runtime(
                model="openai:gpt-4o-mini",
                config=Config(),
                hooks=[llmport_openai.plugin],
                providers={"openai": {"api_key": "sk-fake-test", "base_url": server.url + "/v1"}},
            )
        )
        try:
            yield server, clock
        finally:
            runtimes.pop().close()


def launched(url: str, wait: float) -> Any:
    return llmport_dbos.launch(url, name="outage", database_wait=wait)


def restart_after(own_pg: Any, clock: dict[str, float], seconds: float) -> threading.Thread:
    def later() -> None:
        while "stopped" not in clock:
            time.sleep(0.05)
        time.sleep(seconds)
        own_pg.start()

    thread = threading.Thread(target=later)
    thread.start()
    return thread


def test_a_run_waits_out_a_database_stopped_8_s_and_pays_each_request_once(
    own_pg: Any, database: str, stop_at_second_request: tuple[LoopbackServer, dict[str, float]]
) -> None:
    server, clock = stop_at_second_request
    dbos = launched(database, wait=60)
    restarting = restart_after(own_pg, clock, 8.0)  # a real stop and start of the server
    try:
        with SetWorkflowID("outage-1"):
            assert durable_ask("q") == "re: q 0 | re: q 1 | re: q 2"
        assert time.monotonic() - clock["stopped"] >= 8.0  # it did wait for the server
        assert Counter(asked(r) for r in server.requests) == Counter(f"q {i}" for i in range(ASKS))
        status = DBOS.get_workflow_status("outage-1")
        assert status is not None and status.status == "SUCCESS"
        steps = [s["function_name"] for s in DBOS.list_workflow_steps("outage-1")]
        assert steps == ["llmport.model:gpt-4o-mini"] * ASKS  # each answer checkpointed
    finally:
        restarting.join()
        dbos.destroy()


def typed_within(call: Callable[[], Any], since: float, bound: float) -> SessionStoreUnavailable:
    with pytest.raises(SessionStoreUnavailable) as caught:
        call()
    assert time.monotonic() - since <= bound
    error = caught.value
    assert error.service.startswith("DBOS system database (PostgreSQL at postgresql://")
    assert error.__cause__ is None and error.__context__ is None
    return error


def test_a_database_down_longer_than_the_wait_is_a_typed_error_within_the_bound(
    own_pg: Any, database: str, stop_at_second_request: tuple[LoopbackServer, dict[str, float]]
) -> None:
    server, clock = stop_at_second_request
    dbos = launched(database, wait=1.0)
    try:
        # Generous only upwards: the wait, a poll and a DBOS retry interval (about 1 s).
        started = time.monotonic()
        with SetWorkflowID("outage-2"):
            typed_within(lambda: durable_ask("q"), started, 4.5)
        assert "stopped" in clock
        started = time.monotonic()
        typed_within(lambda: llmport_dbos.result("outage-2"), started, 4.5)
        assert len(server.requests) == 2  # nothing was asked while the database was down
    finally:
        own_pg.start()
        dbos.destroy()


async def test_an_async_durable_run_is_typed_the_same_way(
    own_pg: Any, database: str, stop_at_second_request: tuple[LoopbackServer, dict[str, float]]
) -> None:
    server, _ = stop_at_second_request
    dbos = launched(database, wait=1.0)
    try:
        started = time.monotonic()
        with SetWorkflowID("outage-3"), pytest.raises(SessionStoreUnavailable) as caught:
            await durable_aask("q")
        assert time.monotonic() - started <= 4.5
        assert caught.value.__cause__ is None and caught.value.__context__ is None
        assert len(server.requests) == 2
    finally:
        own_pg.start()
        dbos.destroy()


def test_database_wait_must_be_seconds(database: str) -> None:
    from llmport import OptionError

    for bad in (-1, float("nan"), "5", True):
        with pytest.raises(OptionError):
            llmport_dbos.launch(database, name="outage", database_wait=bad)
