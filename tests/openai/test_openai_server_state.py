"""Server-side conversation state on OpenAI Responses, replayed from cassettes.

The cassettes replay the recorded calls of the wire samples
``previous-response-id-tool-loop`` and ``conversation`` (see
cassettes/README.md); each request's state fields (``input``,
``previous_response_id``, ``store``, ``conversation``) are asserted equal to
the recorded request's.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llmport.messages.types import FinalEvent
from openai_helpers import request_json
from state_scenarios import (
    CONV_ID,
    CONV_TURNS,
    INSTRUCTIONS,
    MODEL,
    RETRY_TEXT,
    chained_turn,
    conversation_turn,
    first_turn,
)

R1 = "resp_0435eb6c2aa8e9eb0069e15ffdbb848195ab503209f100317f"
R2 = "resp_0435eb6c2aa8e9eb0069e15ffeb3fc81959cd2d1e915a8c7ea"
R3 = "resp_0435eb6c2aa8e9eb0069e1600000608195818a61245c018620"
R4 = "resp_0435eb6c2aa8e9eb0069e160015f14819589a941eb8f14e5a5"
STATE = ("input", "previous_response_id", "store", "conversation")

#: The state fields of the four recorded requests of previous-response-id-tool-loop.json.
RECORDED_CHAIN: list[dict[str, Any]] = [
    {"input": [{"content": "Say hi in one word, no punctuation.", "role": "user"}]},
    {
        "input": [{"content": "What's the weather in New York?", "role": "user"}],
        "previous_response_id": R1,
        "store": True,
    },
    {
        "input": [
            {
                "call_id": "call_P1vN20XNjvNyIm0VshHYzmSA",
                "output": RETRY_TEXT,
                "type": "function_call_output",
            }
        ],
        "previous_response_id": R2,
        "store": True,
    },
    {
        "input": [
            {
                "call_id": "call_N2BikjqNxghwNIwHl2XKfb0F",
                "output": "Sunny, 72F",
                "type": "function_call_output",
            }
        ],
        "previous_response_id": R3,
        "store": True,
    },
]


def state_of(body: dict[str, Any]) -> dict[str, Any]:
    return {k: body[k] for k in STATE if k in body}


def run_or_stream(drive: Any, rt: Any, stream: bool, **kwargs: Any) -> Any:
    if not stream:
        return drive.run(rt, model=MODEL, **kwargs)
    events = drive.stream(rt, model=MODEL, **kwargs)
    assert isinstance(events[-1], FinalEvent)
    return events[-1].result


@pytest.mark.parametrize("stream", [False, True], ids=["exec", "stream"])
def test_previous_response_id_chains_through_the_tool_loop(
    cassette: Any, drive: Any, runtime: Any, stream: bool
) -> None:
    rt = runtime(MODEL)
    name = (
        "openai/responses_previous_id_stream.yaml"
        if stream
        else "openai/responses_previous_id.yaml"
    )
    with cassette(name) as cass:
        first = drive.run(rt, model=MODEL, **first_turn())
        assert first.response_id == R1
        result = run_or_stream(drive, rt, stream, **chained_turn(first.response_id))
    bodies = [request_json(cass, i) for i in range(4)]
    assert [state_of(b) for b in bodies] == RECORDED_CHAIN
    assert result.text == "The weather in New York is sunny and 72°F."
    assert result.response_id == R4
    # The neutral history stays complete: the user turn, both tool turns, the answer.
    roles = [m.role for m in result.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert [r.call.arguments for r in result.tool_calls] == [{"city": "New York"}, {"city": "NYC"}]


@pytest.mark.parametrize("stream", [False, True], ids=["exec", "stream"])
def test_a_conversation_is_created_used_with_only_the_new_turn_and_deleted(
    cassette: Any, drive: Any, runtime: Any, stream: bool
) -> None:
    rt = runtime(MODEL)
    name = "openai/responses_conversation"
    with cassette(f"{name}_stream.yaml" if stream else f"{name}.yaml") as cass:
        conv = (
            asyncio.run(rt.acreate_conversation()) if drive.is_async else rt.create_conversation()
        )
        first = run_or_stream(drive, rt, stream, **conversation_turn(0))
        second = run_or_stream(drive, rt, stream, **conversation_turn(1))
        if drive.is_async:
            asyncio.run(rt.adelete_conversation(conv))
        else:
            rt.delete_conversation(conv)
    assert conv == CONV_ID
    assert request_json(cass, 0) == {}  # POST /v1/conversations: a new, empty conversation
    for index, turn in enumerate(CONV_TURNS, start=1):
        body = request_json(cass, index)
        assert state_of(body) == {
            "input": [{"content": turn, "role": "user"}],
            "conversation": CONV_ID,
        }
        assert body["instructions"] == INSTRUCTIONS
    assert (cass.requests[3].method, cass.requests[3].uri) == (
        "DELETE",
        f"https://api.openai.com/v1/conversations/{CONV_ID}",
    )
    assert first.text == "stored" and second.text == "CONV-PAI-5222"
    assert first.response_id == "resp_01000000000000000000000000000000000000000000000000"
    assert second.response_id == "resp_02000000000000000000000000000000000000000000000000"


def test_the_dag_records_the_answer_ids_of_a_chained_run(cassette: Any, runtime: Any) -> None:
    from llmport import Session, agentic_function

    rt = runtime(MODEL)

    @agentic_function
    def weather() -> Any:
        # context="": the recorded requests carry no rendered DAG context.
        first = rt.run(model=MODEL, context="", **first_turn())
        return rt.run(model=MODEL, context="", **chained_turn(str(first.response_id)))

    with Session() as session, cassette("openai/responses_previous_id.yaml"):
        result = weather()
    llm_nodes = [n for n in session.nodes() if n.kind == "llm"]
    assert [n.result["response_ids"] for n in llm_nodes if n.result] == [[R1], [R2, R3, R4]]
    assert result.node_id == llm_nodes[1].id
