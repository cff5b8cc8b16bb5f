"""Planning reads the snapshot the runtime hands the engine, never calling back into it."""

from __future__ import annotations

from typing import Any

import pytest
from llmport import Budget, ContextPolicy, Limit, Runtime, tool
from llmport.controls.options import split_call
from llmport.controls.retry import Backoff
from llmport.engine.plan import start
from llmport.provider.config import Config
from llmport.testing import Script


@tool
def lookup(city: str) -> str:
    """The weather in ``city``."""
    return "sunny"


def every_branch_runtime() -> Runtime:
    """A runtime whose plans route, fall back, gate, budget, fit a window and open a store."""
    a, b = Script(["from a"], prefix="a"), Script(["from b"], prefix="b")
    return Runtime(
        model=["a:m", "b:m"],
        hooks=[a, b],
        config=Config(),
        backoff=Backoff.none(),
        limits={"a:*": Limit(rpm=600)},
        context_policy=ContextPolicy(strategy="summarize", summary_model="b:m"),
        budget=Budget(total_tokens=10_000),
        temperature=0.2,
    )


def refuse(self: Runtime, name: str) -> Any:
    raise AssertionError(f"planning read Runtime.{name}")


def test_planning_reads_the_snapshot_and_never_the_runtime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rt = every_branch_runtime()
    snapshot = rt.snapshot()
    params, options = split_call({"tools": [lookup]})
    params["content"] = "weather in Paris?"
    monkeypatch.setattr(Runtime, "__getattribute__", refuse)
    plan, _ = start(snapshot, params, options, stream=False)
    monkeypatch.undo()
    # Every branch that used to ask the runtime ran, answered by the snapshot.
    assert [c.qualified for c in plan.candidates] == ["a:m", "b:m"]
    assert plan.gate is not None and plan.ledgers and plan.store is not None
    assert plan.resolve_model("b:m")[1] == "m"
    assert plan.max_attempts == 2 and plan.options["temperature"] == 0.2
    assert plan.toolbox is not None and "lookup" in plan.toolbox.tools


def test_a_run_reaches_the_runtime_only_for_its_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    rt = every_branch_runtime()
    read: list[str] = []
    original = Runtime.__getattribute__

    def counting(self: Runtime, name: str) -> Any:
        read.append(name)
        return original(self, name)

    monkeypatch.setattr(Runtime, "__getattribute__", counting)
    assert rt.exec("hi") == "from a"
    monkeypatch.undo()
    # exec -> run -> the engine, which asks the runtime for its snapshot once and plans from it.
    assert "snapshot" in read and read.count("snapshot") == 1
    assert not {"route", "resolve", "gate", "store_for", "add_usage"} & set(read)
    assert rt.usage.requests == 1  # the usage total still reaches the runtime


def test_a_setting_changed_on_the_runtime_applies_to_the_next_snapshot() -> None:
    rt = every_branch_runtime()
    before = rt.snapshot()
    rt.max_retries = 5
    assert before.max_retries == 2 and rt.snapshot().max_retries == 5


def test_the_plan_is_frozen_and_a_fallback_changes_only_the_run_state() -> None:
    from dataclasses import FrozenInstanceError

    from llmport import OverloadedError
    from llmport.engine.drive import drive
    from llmport.engine.steps import machine
    from llmport.testing import fail

    a = Script([fail(OverloadedError("busy"))], prefix="a")
    b = Script(["from b"], prefix="b")
    rt = Runtime(model=["a:m", "b:m"], hooks=[a, b], config=Config(), max_retries=1)
    params, options = split_call({})
    params["content"] = "hi"
    plan, run = start(rt.snapshot(), params, options, stream=False)
    with pytest.raises(FrozenInstanceError):
        plan.options = {}  # type: ignore[misc]
    for _ in drive(machine(plan, run)):
        pass
    assert run.text == "from b"
    assert plan.state.qualified == plan.qualified == "b:m" and plan.state.index == 1
    assert [c.qualified for c in plan.candidates] == ["a:m", "b:m"]  # the plan did not move
