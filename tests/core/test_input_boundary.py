"""SPEC §20 I2, the pieces the contract table cannot show (see
tests/contract/test_contract_inputs_boundary.py for every door on every vendor).
"""

from __future__ import annotations

from typing import Any

import pytest
from llmport import Message, Runtime, agentic_function, handoff, tool
from llmport.controls.budget import Budget
from llmport.errors import (
    ContentError,
    ContextWindowExceeded,
    MessageError,
    OptionError,
    SchemaError,
    TokenLimitExceeded,
)
from llmport.messages.check import MAX_DEPTH, UNKNOWN_WINDOW_TOKENS, nesting_problem
from llmport.messages.estimate import text_tokens
from llmport.testing import Script, call_tools, reply
from llmport.tools.tool import Tool


def nested(depth: int) -> dict[str, Any]:
    top: dict[str, Any] = {}
    node = top
    for _ in range(depth - 1):
        node["x"] = {}
        node = node["x"]
    return top


class Counting:
    """A ``call=`` function that counts the requests it gets."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, content: list[dict[str, Any]], model: str, response_format: Any) -> str:
        self.calls += 1
        return "ok"


def test_nesting_is_bounded_at_max_depth_and_checked_without_recursion() -> None:
    assert nesting_problem(nested(MAX_DEPTH)) is None
    assert nesting_problem(nested(MAX_DEPTH + 1)) == f"nested more than {MAX_DEPTH} levels deep"
    assert nesting_problem(nested(200_000)) is not None  # no RecursionError
    assert nesting_problem([[1, 2], {"a": (3,)}, "text"]) is None


def test_text_beyond_the_cap_for_an_unknown_window_is_refused_before_the_call() -> None:
    fn = Counting()
    rt = Runtime(call=fn)  # a call= function: its window is unknown
    with pytest.raises(ContextWindowExceeded) as info:
        rt.exec("x" * (UNKNOWN_WINDOW_TOKENS * 4 + 4))
    assert info.value.limit == UNKNOWN_WINDOW_TOKENS and fn.calls == 0
    big_history = [{"role": "user", "blocks": [{"type": "text", "text": "y" * 30_000_000}]}]
    with pytest.raises(ContextWindowExceeded):
        rt.exec("z" * 15_000_000, history=big_history)  # together over the cap
    assert rt.exec("x" * 1_000_000) == "ok" and fn.calls == 1


def test_a_zero_input_budget_refuses_any_text() -> None:
    fn = Counting()
    rt = Runtime(call=fn)
    assert text_tokens("hi") == 1 and text_tokens("") == 0
    with pytest.raises(TokenLimitExceeded):
        rt.exec("hi", budget=Budget(input_tokens=0))
    assert fn.calls == 0
    assert rt.exec("hi", budget=Budget(input_tokens=1)) == "ok"


def test_content_and_settings_of_the_wrong_kind_are_input_errors() -> None:
    rt = Runtime(call=Counting())
    with pytest.raises(ContentError, match="empty"):
        rt.exec("")
    with pytest.raises(ContentError, match="must be a string or a list"):
        rt.exec(b"bytes")
    with pytest.raises(OptionError, match="max_block_bytes"):
        Runtime(call=Counting(), max_block_bytes=0).exec("hi")
    assert rt.exec(block for block in ["a generator", " of blocks"]) == "ok"


def test_a_tool_returning_a_value_nested_too_deep_is_an_error_result_for_the_model() -> None:
    @tool
    def deep() -> dict[str, Any]:
        """A value nested past the limit."""
        return nested(20_000)

    script = Script([call_tools(("deep", {})), reply("noted")])
    assert script.runtime().exec("go", tools=[deep]) == "noted"
    result = script.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "nested more than" in result.content


def test_tool_arguments_of_the_wrong_kind_are_option_errors_still_value_errors() -> None:
    def fn(**kwargs: Any) -> str:
        return "ok"

    schema = {"type": "object", "properties": {}}
    for kwargs in ({"name": "two words"}, {"timeout": 0}, {"cache": "yes"}, {"fn": "not callable"}):
        args: dict[str, Any] = {"name": "t", "description": "d", "parameters": schema, "fn": fn}
        with pytest.raises(OptionError) as info:
            Tool(**{**args, **kwargs})
        assert isinstance(info.value, ValueError)  # what these raised before


def test_local_refs_that_resolve_are_accepted() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/properties/a"}},
        "$defs": {"A": {"type": "string"}},
    }
    assert Tool("t", "d", schema, lambda **kw: "ok").parameters is schema
    with pytest.raises(SchemaError, match="points to nothing"):
        Tool("t", "d", {**schema, "properties": {"c": {"$ref": "https://x/schema"}}}, print)


def test_a_handoff_filter_that_leaves_an_orphan_result_fails_before_the_target_runs() -> None:
    ran: list[int] = []

    @agentic_function
    def specialist(conversation: list[Message]) -> str:
        ran.append(len(conversation))
        return "handled"

    def keep_the_results_only(conversation: list[Message]) -> list[Message]:
        return [m for m in conversation if m.role != "assistant"]

    to_specialist = handoff(specialist, input_filter=keep_the_results_only)
    script = Script([call_tools(("transfer_to_specialist", {}))])
    with pytest.raises(MessageError, match="handoff input"):
        script.runtime().exec("help", tools=[to_specialist])
    assert ran == [] and len(script.requests) == 1
