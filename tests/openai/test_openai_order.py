"""Responses item order and tool search with deferred tools.

Cassette replays, sync and async (``drive``), exec and stream; the request
bodies are compared whole.
"""

from __future__ import annotations

from typing import Any

import pytest
from llmport import Runtime
from llmport.messages.types import FinalEvent, Message, ServerToolCall, ServerToolResult
from llmport.sessions.dag import message_to_stored
from llmport.testing.loopback import LoopbackServer, Reply
from openai_depth_scenarios import PLAN_CALL, REASONING_PLAN, responses_sse
from openai_helpers import request_json
from openai_order_scenarios import (
    PLAN_CALL_AGAIN,
    RATE_CALL,
    RATE_TEXT,
    RATE_TOOL,
    REASONING_AGAIN,
    SEARCH_CALL,
    SEARCH_OUTPUT,
    SEARCH_QUESTION,
    STOCK_TOOL,
    search_tools,
)
from support.openai_scenarios import FAKE_KEY, message_item, ok, response_obj, scenarios

SC = scenarios()
PLAN_USER = {
    "role": "user",
    "content": 'Compose a 6-line poem whose odd lines spell "SAM" and even lines "DAW".',
}


def replay(name: str, cassette: Any, drive: Any, runtime: Any) -> tuple[Any, Any]:
    sc = SC[name]
    rt = runtime(sc.model)
    with cassette(sc.cassette) as cass:
        if sc.stream:
            events = drive.stream(rt, model=sc.model, **sc.kwargs())
            assert isinstance(events[-1], FinalEvent)
            return events[-1].result, cass
        return drive.run(rt, model=sc.model, **sc.kwargs()), cass


def echo(call: dict[str, Any]) -> dict[str, Any]:
    """A function_call output item as it is sent back (its status is not)."""
    return {k: v for k, v in call.items() if k != "status"}


def output(call: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call["call_id"], "output": "plan updated"}


#: The interleaved answer sent back: every item in the order it came, then the results.
INTERLEAVED_ECHO = [
    PLAN_USER,
    REASONING_PLAN,
    echo(PLAN_CALL),
    REASONING_AGAIN,
    echo(PLAN_CALL_AGAIN),
    output(PLAN_CALL),
    output(PLAN_CALL_AGAIN),
]


@pytest.mark.parametrize("name", ["responses_interleaved", "responses_interleaved_stream"])
def test_interleaved_reasoning_and_calls_go_back_in_their_order(
    name: str, cassette: Any, drive: Any, runtime: Any
) -> None:
    result, cass = replay(name, cassette, drive, runtime)
    assert [item.get("type") for item in request_json(cass, 1)["input"][1:5]] == [
        "reasoning",
        "function_call",
        "reasoning",
        "function_call",
    ]
    assert request_json(cass, 1)["input"] == INTERLEAVED_ECHO
    answer = result.messages[1]
    # The first call sits after the first reasoning block; the second after both (no position).
    assert [c.position for c in answer.tool_calls] == [1, None]
    assert answer.to_dict()["tool_calls"][0]["position"] == 1
    assert "position" not in answer.to_dict()["tool_calls"][1]


@pytest.mark.parametrize("name", ["responses_interleaved", "responses_interleaved_stream"])
def test_the_order_survives_to_dict_and_from_dict(
    name: str, cassette: Any, drive: Any, runtime: Any
) -> None:
    result, _ = replay(name, cassette, drive, runtime)
    history = [Message.from_dict(m.to_dict()) for m in result.messages]
    assert [m.to_dict() for m in history] == [m.to_dict() for m in result.messages]
    reply = ok(
        response_obj("resp_0next", [message_item("msg_0next", "done")], usage=(9, 1, 0, 0)),
        "req_next",
    )
    with LoopbackServer([reply]) as server:
        rt = Runtime(
            model="openai-responses:gpt-5",
            providers={"openai-responses": {"api_key": FAKE_KEY, "base_url": server.url + "/v1"}},
        )
        rt.run("next", history=history)
        rt.close()
    sent = server.requests[0].json()["input"]
    assert sent[: len(INTERLEAVED_ECHO)] == INTERLEAVED_ECHO


def test_the_dag_keeps_a_calls_position() -> None:
    from llmport.messages.types import ThinkingBlock, ToolCall

    call = ToolCall("call_1", "update_plan", {"plan": "x"}, position=1)
    message = Message("assistant", (ThinkingBlock("a"), ThinkingBlock("b")), (call,))
    assert message_to_stored(message)["tool_calls"] == [
        {"id": "call_1", "name": "update_plan", "arguments": {"plan": "x"}, "position": 1}
    ]


def test_a_bad_position_is_a_message_error() -> None:
    from llmport.errors import MessageError

    data = {
        "role": "assistant",
        "tool_calls": [{"id": "c", "name": "t", "arguments": {}, "position": "first"}],
    }
    with pytest.raises(MessageError, match="position"):
        Message.from_dict(data)


# --- tool search (wire-samples/openai-responses/tool-search.json) ---------------------------


def search_body(stream: bool, input: list[dict[str, Any]]) -> dict[str, Any]:
    body = {
        "model": "gpt-5.4",
        "input": input,
        "include": ["reasoning.encrypted_content"],
        "tool_choice": "auto",
        "tools": [{"type": "tool_search"}, RATE_TOOL, STOCK_TOOL],
        # Not in the recording: llmport always says it (true is the API's default).
        "parallel_tool_calls": True,
    }
    if stream:
        body["stream"] = True
    return body


@pytest.mark.parametrize("name", ["responses_tool_search", "responses_tool_search_stream"])
def test_tool_search_sends_the_recorded_bodies(
    name: str, cassette: Any, drive: Any, runtime: Any
) -> None:
    result, cass = replay(name, cassette, drive, runtime)
    stream = name.endswith("stream")
    user = {"role": "user", "content": SEARCH_QUESTION}
    assert request_json(cass, 0) == search_body(stream, [user])
    # The search call goes back with its id as call_id; the server-run search's output does not.
    searched = {**SEARCH_CALL, "call_id": SEARCH_CALL["id"]}
    rate_output = {
        "type": "function_call_output",
        "call_id": RATE_CALL["call_id"],
        "output": "1 USD = 0.92 EUR",
    }
    second = search_body(stream, [user, searched, echo(RATE_CALL), rate_output])
    assert request_json(cass, 1) == second
    assert result.output == "Current rate: **1 USD = 0.92 EUR**."
    blocks = result.messages[1].blocks
    assert [type(b) for b in blocks] == [ServerToolCall, ServerToolResult]
    assert blocks[0].name == "tool_search" and blocks[0].input == {"paths": ["get_exchange_rate"]}
    assert blocks[1].content == [RATE_TOOL]  # the loaded tool, as the search returned it


@pytest.mark.parametrize("stream", [False, True], ids=["exec", "stream"])
def test_a_tool_search_call_goes_back_as_the_vendor_sent_it(stream: bool, drive: Any) -> None:
    # A streamed exchange had the vendor's arguments as ``{"queries": [...]}`` (the recorded
    # tool-search.json has ``{"paths": [...]}``): whatever the shape, it goes back verbatim.
    call = {**SEARCH_CALL, "arguments": {"queries": ["exchange rate USD EUR"], "limit": 3}}
    first = response_obj(
        "resp_q1", [call, SEARCH_OUTPUT, RATE_CALL], usage=(10, 5, 0, 0), model="gpt-5.4"
    )
    second = response_obj(
        "resp_q2", [message_item("msg_q2", RATE_TEXT)], usage=(20, 5, 0, 0), model="gpt-5.4"
    )
    if stream:
        replies = [ok_sse(first), ok_sse(second)]
    else:
        replies = [ok(first, "req_q1"), ok(second, "req_q2")]
    with LoopbackServer(replies) as server:
        rt = Runtime(
            model="openai-responses:gpt-5.4",
            providers={"openai-responses": {"api_key": FAKE_KEY, "base_url": server.url}},
        )
        kwargs = {"content": SEARCH_QUESTION, "tools": search_tools()}
        if stream:
            drive.stream(rt, **kwargs)
        else:
            drive.run(rt, **kwargs)
        rt.close()
    sent = [i for i in server.requests[1].json()["input"] if i.get("type") == "tool_search_call"]
    assert sent == [{**call, "call_id": call["id"]}]


def ok_sse(final: dict[str, Any]) -> Reply:
    return Reply(sse=responses_sse(final))
