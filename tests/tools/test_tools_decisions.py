"""choices: the model finishes its turn, then must pick one choice through a forced call."""

from __future__ import annotations

import asyncio
import enum
import json
from collections.abc import Callable
from typing import Any

import pytest
from llmport import RunContext, Runtime, ToolCall, tool
from llmport.errors import DecisionError
from llmport.testing import Script, call_tools, reply

Run = Callable[..., Any]


def pick(name: str, **arguments: Any) -> Any:
    return call_tools(ToolCall(f"pick_{name}", name, arguments, json.dumps(arguments)))


def test_dict_of_values_forced_tool_call(run: Run) -> None:
    script = Script([reply("thinking"), pick("approve")])
    result = run(script.runtime(), "Ship it?", choices={"approve": True, "reject": False})
    assert result.output is True and result.value is True and result.choice == "approve"
    decision = script.requests[1]
    assert [t.name for t in decision.tools] == ["approve", "reject"]
    assert decision.tool_choice == "required" and decision.parallel_tool_calls is False


def test_single_choice_is_forced_by_name(run: Run) -> None:
    script = Script([reply("ok"), pick("only")])
    assert run(script.runtime(), "go", choices={"only": 1}).output == 1
    assert script.requests[1].tool_choice == {"name": "only"}


def test_list_of_callables_called_with_arguments(run: Run) -> None:
    class Level(enum.Enum):
        LOW = "low"
        HIGH = "high"

    def escalate(reason: str, level: Level) -> str:
        """Escalate to a human."""
        assert isinstance(level, Level)
        return f"escalated: {reason} ({level.value})"

    def close() -> str:
        """Close the ticket."""
        return "closed"

    script = Script([reply("hmm"), pick("escalate", reason="angry", level="high")])
    result = run(script.runtime(), "ticket", choices=[escalate, close])
    assert result.output == "escalated: angry (high)"
    specs = {t.name: t for t in script.requests[1].tools}
    assert specs["escalate"].parameters["properties"]["level"]["enum"] == ["low", "high"]
    assert specs["close"].description == "Close the ticket."


def test_async_callables_are_awaited(run: Run) -> None:
    async def later(n: int) -> int:
        await asyncio.sleep(0)
        return n * 10

    script = Script([reply("..."), pick("later", n=4)])
    assert run(script.runtime(), "go", choices=[later]).output == 40


def test_a_tool_as_a_choice_gets_its_run_context(run: Run) -> None:
    @tool(name="refund")
    def do_refund(amount: float, ctx: RunContext[str]) -> str:
        """Refund the customer."""
        return f"{ctx.deps} refunded {amount}"

    script = Script([reply("..."), pick("refund", amount=5)])
    result = run(script.runtime(), "go", choices=[do_refund, "nothing"], deps="shop")
    assert result.output == "shop refunded 5.0"
    assert "ctx" not in script.requests[1].tools[0].parameters["properties"]


def test_model_finishes_its_turn_with_tools_first(run: Run) -> None:
    looked: list[str] = []

    @tool
    def lookup(order: str) -> str:
        looked.append(order)
        return "delivered"

    script = Script(
        [call_tools(("lookup", {"order": "A1"})), reply("It was delivered."), pick("close")]
    )
    result = run(
        script.runtime(), "go", tools=[lookup], choices={"close": "closed", "refund": "refunded"}
    )
    assert looked == ["A1"] and result.output == "closed"
    assert [t.name for t in script.requests[0].tools] == ["lookup"]
    assert [t.name for t in script.requests[2].tools] == ["close", "refund"]
    assert result.iterations == 2 and len(result.tool_calls) == 1


@pytest.mark.parametrize(
    "bad",
    [
        pick("maybe"),  # unknown choice
        pick("wait", seconds="ten"),  # bad arguments
        call_tools(ToolCall("p1", "yes", {}, "{}"), ToolCall("p2", "no", {}, "{}")),  # two picks
        reply("I pick yes"),  # prose
    ],
)
def test_one_re_pick_then_decision_error(run: Run, bad: Any) -> None:
    def wait(seconds: int) -> int:
        return seconds

    choices = {"yes": True, "no": False, "wait": wait}
    script = Script([reply("..."), bad, pick("no")])
    assert run(script.runtime(), "go", choices=choices).output is False
    assert "not a valid choice" in script.requests[2].messages[-1].text

    script = Script([reply("..."), bad, bad, reply("unused")])
    with pytest.raises(DecisionError):
        run(script.runtime(), "go", choices=choices)
    assert len(script.requests) == 3


def test_structured_output_fallback_for_a_plain_call_function(mode: str) -> None:
    seen: list[dict[str, Any] | None] = []

    def call(
        content: list[dict[str, Any]], model: str, response_format: dict[str, Any] | None
    ) -> str:
        seen.append(response_format)
        if response_format is None:
            return "Let me think."
        return json.dumps({"choice": "B", "arguments": {}})

    rt = Runtime(call=call)
    kwargs: dict[str, Any] = {"choices": {"A": "first", "B": "second"}}
    out = rt.exec("go", **kwargs) if mode == "sync" else asyncio.run(rt.async_exec("go", **kwargs))
    assert out == "second"
    assert seen[0] is None
    names = [o["properties"]["choice"]["const"] for o in seen[1]["anyOf"]]  # type: ignore[index]
    assert names == ["A", "B"]


def test_choices_validation() -> None:
    rt = Script([]).runtime()
    with pytest.raises(ValueError, match="empty"):
        rt.exec("go", choices={})
    with pytest.raises(ValueError, match="unique"):
        rt.exec("go", choices=["a", "a"])
    with pytest.raises(ValueError, match="cannot be combined"):
        rt.exec("go", choices=["a"], response_format={"type": "object"})
