"""allow/deny globs, policy hooks, approvals, nested scopes, guardrails and observers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from llmport import Request, Response, hookimpl, tool
from llmport.errors import GuardrailTripped, ToolApprovalRequired
from llmport.testing import Script, call_tools, reply
from llmport.tools.policy import CallInfo, ToolCheck

Run = Callable[..., Any]
ran: list[str] = []
_lock = threading.Lock()


def _mark(name: str) -> str:
    with _lock:
        ran.append(name)
    return name


@tool
def read_file(path: str) -> str:
    return _mark("read_file")


@tool
def read_dir(path: str) -> str:
    return _mark("read_dir")


@tool
def delete_file(path: str) -> str:
    return _mark("delete_file")


ALL = [read_file, read_dir, delete_file]


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


class Policy:
    """Answers from a table: {(tool, stage): verdict}."""

    def __init__(self, table: dict[tuple[str, str], str]) -> None:
        self.table = table
        self.checks: list[ToolCheck] = []

    @hookimpl
    def llmport_tool_policy(self, check: ToolCheck) -> str | None:
        self.checks.append(check)
        return self.table.get((check.tool_name, check.stage))


def offered(script: Script, index: int = 0) -> list[str]:
    return [t.name for t in script.requests[index].tools]


def test_allow_and_deny_globs_deny_wins(run: Run) -> None:
    script = Script([reply("ok")])
    run(script.runtime(), "go", tools=ALL, tools_allow=["read_*", "delete_*"], tools_deny=["*_dir"])
    assert offered(script) == ["read_file", "delete_file"]

    script = Script([reply("ok")])
    run(script.runtime(), "go", tools=ALL, tools_allow="read_*", tools_deny=["read_file"])
    assert offered(script) == ["read_dir"]


def test_policy_applies_after_globs_at_offer_and_run(run: Run) -> None:
    policy = Policy({("delete_file", "offer"): "deny", ("read_dir", "run"): "deny"})
    script = Script(
        [call_tools(("read_dir", {"path": "/"}), ("read_file", {"path": "a"})), reply("ok")]
    )
    result = run(script.runtime(hooks=[policy]), "go", tools=ALL, tools_deny=["nothing"])
    assert offered(script) == ["read_file", "read_dir"]
    assert ran == ["read_file"]  # read_dir was denied at the run stage
    assert [r.status for r in result.tool_calls] == ["denied", "ok"]
    assert "denied by policy" in script.requests[1].messages[-1].tool_results[0].content
    run_checks = [c for c in policy.checks if c.stage == "run"]
    assert {c.tool_name for c in run_checks} == {"read_dir", "read_file"}
    assert all(c.call is not None and c.info.model == "scripted:test" for c in run_checks)


def test_approval_needs_an_approver_before_any_request(run: Run) -> None:
    script = Script([reply("never")])
    with pytest.raises(ToolApprovalRequired, match="delete_file"):
        run(script.runtime(hooks=[Policy({("delete_file", "offer"): "approve"})]), "go", tools=ALL)
    assert script.requests == []


@pytest.mark.parametrize("grant", [True, False])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_approver_decides(run: Run, grant: bool, kind: str) -> None:
    asked: list[ToolCheck] = []

    if kind == "sync":

        def approver(check: ToolCheck) -> bool:
            asked.append(check)
            return grant
    else:

        async def approver(check: ToolCheck) -> bool:
            await asyncio.sleep(0)
            asked.append(check)
            return grant

    policy = Policy({("delete_file", "offer"): "approve"})
    script = Script(
        [call_tools(("delete_file", {"path": "x"}), ("read_file", {"path": "y"})), reply("ok")]
    )
    result = run(script.runtime(hooks=[policy]), "go", tools=ALL, approver=approver)
    assert [c.tool_name for c in asked] == ["delete_file"]
    assert asked[0].call is not None and asked[0].call.arguments == {"path": "x"}
    if grant:
        assert sorted(ran) == ["delete_file", "read_file"]
    else:
        assert ran == ["read_file"]
        assert result.tool_calls[0].status == "not_approved"
        assert script.requests[1].messages[-1].tool_results[0].is_error


def test_run_stage_approve_and_runtime_level_approver(run: Run) -> None:
    policy = Policy({("read_file", "run"): "approve"})
    script = Script([call_tools(("read_file", {"path": "a"})), reply("ok")])
    rt = script.runtime(hooks=[policy], approver=lambda check: check.tool_name == "read_file")
    run(rt, "go", tools=ALL)
    assert ran == ["read_file"]

    script = Script([call_tools(("read_file", {"path": "a"})), reply("never")])
    with pytest.raises(ToolApprovalRequired):
        run(script.runtime(hooks=[policy]), "go", tools=ALL)
    assert ran == ["read_file"]  # not run a second time


def test_approver_must_answer_bool(run: Run) -> None:
    policy = Policy({("read_file", "offer"): "approve"})
    script = Script([call_tools(("read_file", {"path": "a"})), reply("never")])
    with pytest.raises(TypeError, match="bool"):
        run(script.runtime(hooks=[policy]), "go", tools=ALL, approver=lambda c: "yes")


# --- nested exec narrows ---------------------------------------------------------------


@pytest.mark.parametrize("parallel", [True, False])
def test_nested_exec_can_only_narrow(mode: str, parallel: bool) -> None:
    inner = Script([reply("inner ok"), reply("inner ok")], prefix="inner")
    inner_rt = inner.runtime()

    @tool
    def delegate(task: str) -> str:
        return str(inner_rt.exec(task, tools=ALL))

    @tool
    async def adelegate(task: str) -> str:
        return str(await inner_rt.async_exec(task, tools=ALL))

    outer = Script(
        [call_tools(("delegate", {"task": "a"}), ("adelegate", {"task": "b"})), reply("done")]
    )
    rt = outer.runtime()
    kwargs = {
        "tools": [delegate, adelegate, read_file, read_dir],
        "tools_deny": ["read_dir"],
        "parallel_tool_calls": parallel,
    }
    if mode == "sync":
        rt.exec(
            "go", **kwargs
        )  # delegate in a thread (parallel) or inline; adelegate on a private loop
    else:
        asyncio.run(rt.async_exec("go", **kwargs))  # delegate in a thread, adelegate as a task
    assert len(inner.requests) == 2
    for request in inner.requests:
        # delete_file was never allowed outside; read_dir was denied outside.
        assert [t.name for t in request.tools] == ["read_file"]
    # Outside any tool, nothing is narrowed.
    after = Script([reply("ok")], prefix="after")
    after.runtime().exec("go", tools=ALL)
    assert [t.name for t in after.requests[0].tools] == ["read_file", "read_dir", "delete_file"]


# --- guardrails, observers, per-runtime hooks -------------------------------------------


class InputGuard:
    @hookimpl
    def llmport_before_request(self, request: Request, info: CallInfo) -> Request | None:
        if "password" in request.messages[-1].text:
            raise GuardrailTripped("no secrets", guardrail="input", stage="request")
        return Request(
            **{
                **{f: getattr(request, f) for f in request.__dataclass_fields__},
                "system": "be nice",
            }
        )


class OutputGuard:
    @hookimpl
    def llmport_after_response(
        self, request: Request, response: Response, info: CallInfo
    ) -> Response | None:
        if "forbidden" in response.text:
            raise GuardrailTripped("bad output", guardrail="output", stage="response")
        return None


def test_input_guardrail_blocks_before_sending_and_can_rewrite(run: Run) -> None:
    script = Script([reply("fine")])
    with pytest.raises(GuardrailTripped, match="no secrets"):
        run(script.runtime(hooks=[InputGuard()], max_retries=3), "my password is 1")
    assert script.requests == []
    run(script.runtime(hooks=[InputGuard()]), "hello")
    assert script.requests[0].system == "be nice"


def test_output_guardrail_trips_and_is_not_retried(run: Run) -> None:
    script = Script([reply("forbidden words"), reply("unused")])
    with pytest.raises(GuardrailTripped, match="bad output") as info:
        run(script.runtime(hooks=[OutputGuard()], max_retries=3), "go")
    assert info.value.stage == "response"
    assert len(script.requests) == 1


class Tracer:
    def __init__(self, broken: bool = False) -> None:
        self.events: list[tuple[str, int]] = []
        self.broken = broken

    @hookimpl
    def llmport_observe(self, event: str, payload: dict[str, Any], info: CallInfo) -> None:
        self.events.append((event, info.iteration))
        if self.broken:
            raise RuntimeError("observer bug")


def test_observers_see_every_model_and_tool_call(run: Run) -> None:
    tracer, broken = Tracer(), Tracer(broken=True)
    script = Script(
        [call_tools(("read_file", {"path": "a"}), ("read_dir", {"path": "b"})), reply("ok")]
    )
    result = run(script.runtime(hooks=[tracer, broken]), "go", tools=ALL)
    assert result.output == "ok"  # a failing observer never breaks a run
    names = [e for e, _ in tracer.events]
    assert names == [
        "run_start",
        "model_start",
        "model_end",
        "tool_start",
        "tool_start",
        "tool_end",
        "tool_end",
        "model_start",
        "model_end",
        "run_end",
    ]
    assert tracer.events[-2][1] == 2
    assert broken.events == tracer.events


def test_hooks_are_per_runtime(run: Run) -> None:
    tracer = Tracer()
    run(Script([reply("a")]).runtime(hooks=[tracer]), "go")
    count = len(tracer.events)
    run(Script([reply("b")]).runtime(), "go")
    assert count == 4 and len(tracer.events) == count  # run_start, model_start/end, run_end


class PartialTracer:
    """Hookimpls may declare only the arguments they use, as with any pluggy hook."""

    def __init__(self) -> None:
        self.events: list[str] = []

    @hookimpl
    def llmport_observe(self, event: str) -> None:
        self.events.append(event)

    @hookimpl
    def llmport_before_request(self, request: Request) -> None:
        self.events.append("before")


def test_hookimpls_with_fewer_arguments(run: Run) -> None:
    tracer = PartialTracer()
    run(Script([reply("a")]).runtime(hooks=[tracer]), "go")
    assert tracer.events == ["run_start", "before", "model_start", "model_end", "run_end"]


class Wrapping:
    """pluggy wrappers (``hookimpl(wrapper=True)``) wrap the chain and the observers."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl(wrapper=True)
    def llmport_before_request(self, request: Any) -> Any:
        self.seen.append("before:in")
        result = yield
        self.seen.append(f"before:out:{result.options.get('temperature')}")
        return result

    @hookimpl(wrapper=True)
    def llmport_observe(self, event: str) -> Any:
        self.seen.append(f"observe:{event}:in")
        yield
        self.seen.append(f"observe:{event}:out")


class Warmer:
    @hookimpl
    def llmport_before_request(self, request: Any) -> Any:
        request.options["temperature"] = 0.5
        return request

    @hookimpl
    def llmport_observe(self, event: str) -> None:
        pass


def test_hook_wrappers_wrap_the_guardrail_chain_and_the_observers(run: Run) -> None:
    wrapping = Wrapping()
    script = Script([reply("ok")])
    run(script.runtime(hooks=[Warmer(), wrapping]), "go")
    assert wrapping.seen[:2] == ["observe:run_start:in", "observe:run_start:out"]
    assert "before:in" in wrapping.seen and "before:out:0.5" in wrapping.seen
    assert wrapping.seen.index("before:in") < wrapping.seen.index("before:out:0.5")
    assert script.requests[0].options["temperature"] == 0.5
