"""In one process, on DBOS's SQLite system database: what a durable run checkpoints."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llmport_dbos
import pytest
from dbos import DBOS, SetWorkflowID
from llmport import Limit, Session, agentic_function, hookimpl
from llmport.controls.limits import HeldBefore
from llmport.provider.config import Config
from llmport.testing import Script, call_tools

SCRIPT = Script()
rt = SCRIPT.runtime(config=Config())
bumps: list[int] = []


async def bump(n: int) -> str:
    """Count one more."""
    bumps.append(n)
    return f"counted {n}"


@agentic_function
async def inner(n: int) -> str:
    """A nested agentic function: its request is a step of the same workflow."""
    return str(await rt.async_exec(f"inner {n}"))


@agentic_function
async def count(goal: int) -> str:
    """Count with the tool, then ask a nested function."""
    counted = await rt.async_exec(f"count to {goal}", tools=[bump])
    return f"{counted} / {await inner(goal)}"


durable_count = llmport_dbos.durable(count, name="tests.steps.count")


@llmport_dbos.durable
@agentic_function
def shout(word: str) -> str:
    """Durable by decorator, named after its module and qualified name."""
    return str(rt.exec(word)).upper()


@pytest.fixture
def dbos(tmp_path: Path) -> Iterator[Any]:
    launched = llmport_dbos.launch(f"sqlite:///{tmp_path / 'dbos.sqlite'}", name="steps")
    yield launched
    launched.destroy()


async def test_an_async_durable_run_checkpoints_each_request_and_tool_call(
    dbos: Any, tmp_path: Path
) -> None:
    SCRIPT.add(call_tools(("bump", {"n": 1})), call_tools(("bump", {"n": 2})), "two", "inner")
    with SetWorkflowID("steps-1"):
        result = await durable_count(2)
    assert result == "two / inner" and bumps == [1, 2]
    steps = [s["function_name"] for s in await DBOS.list_workflow_steps_async("steps-1")]
    model, tool = "llmport.model:test", "llmport.tool:bump"
    assert steps == [model, tool, model, tool, model, model]
    # Run again under the same id: DBOS returns the run's result; nothing is asked or run.
    asked = len(SCRIPT.requests)
    with SetWorkflowID("steps-1"):
        assert await durable_count(2) == "two / inner"
    assert len(SCRIPT.requests) == asked and bumps == [1, 2]


class EachCallApproved:
    @hookimpl
    def llmport_tool_policy(self, check: Any) -> str:
        return "approve"


approvals: list[int] = []


async def approve(check: Any) -> bool:
    approvals.append(check.call.arguments["n"])
    return True


guarded = SCRIPT.runtime(config=Config(), hooks=[EachCallApproved()], approver=approve)


@agentic_function
async def count_approved(goal: int) -> str:
    """Count with the tool, each call approved first."""
    return str(await guarded.async_exec(f"count to {goal}", tools=[bump]))


durable_approved = llmport_dbos.durable(count_approved, name="tests.steps.count_approved")


async def test_an_approval_is_a_step_of_its_own(dbos: Any) -> None:
    SCRIPT.add(call_tools(("bump", {"n": 7})), "seven")
    with SetWorkflowID("steps-4"):
        assert await durable_approved(7) == "seven"
    assert approvals == [7]
    steps = [s["function_name"] for s in await DBOS.list_workflow_steps_async("steps-4")]
    model = "llmport.model:test"
    assert steps == [model, "llmport.approval:bump", "llmport.tool:bump", model]


def test_the_bare_decorator_makes_a_durable_run(dbos: Any) -> None:
    SCRIPT.add("hey")
    with SetWorkflowID("steps-3"):
        assert shout("hey") == "HEY"
    assert shout.name == f"{__name__}.shout"
    assert DBOS.get_workflow_status("steps-3").name == shout.name  # type: ignore[union-attr]
    steps = [s["function_name"] for s in DBOS.list_workflow_steps("steps-3")]
    assert steps == ["llmport.model:test"]


def test_a_durable_run_records_into_the_session_named_by_its_workflow_id(
    dbos: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLMPORT_SESSION", str(tmp_path / "runs.sqlite"))
    SCRIPT.add(call_tools(("bump", {"n": 1})), "one", "inner")
    with SetWorkflowID("steps-2"):
        assert durable_count.start(1).get_result() == "one / inner"
    with Session(tmp_path / "runs.sqlite", id="steps-2", readonly=True) as session:
        nodes = session.nodes()
    assert [(n.kind, n.name) for n in nodes] == [
        ("function", "count"),
        ("llm", "scripted:test"),
        ("tool", "bump"),
        ("function", "inner"),
        ("llm", "scripted:test"),
    ]
    assert {n.data["workflow_id"] for n in nodes} == {"steps-2"}


@agentic_function
def child(word: str) -> str:
    """A durable function called inside another durable run (a child workflow)."""
    return str(rt.exec(f"child {word}"))


durable_child = llmport_dbos.durable(child, name="tests.steps.child")


@agentic_function
def parent(word: str) -> str:
    """Asks, then runs the durable child under a workflow id of its own."""
    asked = str(rt.exec(f"parent {word}"))
    with SetWorkflowID("steps-5-child"):
        return asked + durable_child(word)


durable_parent = llmport_dbos.durable(parent, name="tests.steps.parent")


def test_a_nested_durable_run_records_into_its_own_session(
    dbos: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLMPORT_SESSION", str(tmp_path / "runs.sqlite"))
    SCRIPT.add("P", "C")
    with SetWorkflowID("steps-5"):
        assert durable_parent("w") == "PC"
    recorded = {}
    for run in ("steps-5", "steps-5-child"):
        with Session(tmp_path / "runs.sqlite", id=run, readonly=True) as session:
            recorded[run] = [(n.kind, n.name, n.data["workflow_id"]) for n in session.nodes()]
    assert recorded == {
        "steps-5": [("function", "parent", "steps-5"), ("llm", "scripted:test", "steps-5")],
        "steps-5-child": [
            ("function", "child", "steps-5-child"),
            ("llm", "scripted:test", "steps-5-child"),
        ],
    }


def test_launch_survives_a_closed_log_stream(tmp_path: Path) -> None:
    """DBOS logs to the stderr of its import; a process may have closed that since."""
    import io
    import logging

    import dbos  # noqa: F401  # its console handler exists once it is imported

    console = [h for h in logging.getLogger("dbos").handlers if type(h) is logging.StreamHandler]
    assert console
    closed = io.StringIO()
    closed.close()
    console[0].stream = closed
    llmport_dbos.launch(f"sqlite:///{tmp_path / 'dbos.sqlite'}", name="steps").destroy()
    assert console[0].stream is not closed


class CountingLimiter:
    """Grants every ask and counts them: the capacity a durable run takes."""

    def __init__(self) -> None:
        self.taken = 0

    def try_acquire(self, limits: Any, tokens: int) -> Any:
        self.taken += 1
        return HeldBefore()  # a permit with nothing to give back

    async def atry_acquire(self, limits: Any, tokens: int) -> Any:
        return self.try_acquire(limits, tokens)

    def close(self) -> None:
        pass


LIMITER = CountingLimiter()
limited = SCRIPT.runtime(config=Config(), limits={"scripted:*": Limit(rpm=1000)}, limiter=LIMITER)


async def count_limited(goal: int) -> str:
    """Count with the tool under a rate limit."""
    return str(await limited.async_exec(f"count to {goal}", tools=[bump]))


durable_limited = llmport_dbos.durable(count_limited, name="tests.steps.count_limited")


async def test_a_resumed_run_takes_no_rate_limit_capacity_again(dbos: Any) -> None:
    SCRIPT.add(call_tools(("bump", {"n": 1})), "one")
    with SetWorkflowID("steps-6"):
        assert await durable_limited(1) == "one"
    steps = await DBOS.list_workflow_steps_async("steps-6")
    limit, model = "llmport.limit:scripted:test", "llmport.model:test"
    names = [s["function_name"] for s in steps]
    assert names == [limit, model, "llmport.tool:bump", limit, model]
    assert LIMITER.taken == 2
    # Resumed past its last step (a fork replays every recorded step): the requests are
    # answered from the record, and so is the capacity they took.
    asked = len(SCRIPT.requests)
    last = max(s["function_id"] for s in steps)
    handle = await DBOS.fork_workflow_async("steps-6", last + 1)
    assert await handle.get_result() == "one"
    assert len(SCRIPT.requests) == asked
    assert LIMITER.taken == 2
