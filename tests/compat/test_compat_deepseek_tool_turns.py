"""DeepSeek's parallel tool calls go back as documented: one assistant message, results in order.

DeepSeek's thinking-mode guide (https://api-docs.deepseek.com/guides/thinking_mode#tool-calls)
appends the model's message as it came (``reasoning_content``, ``content`` and every call of
the turn in ``tool_calls``), then one ``role: "tool"`` message per call, in the calls'
order. The answers below are in the shape of wire-samples openai-compat-deepseek/
reasoning.json (``reasoning_content`` beside ``content``) with the guide's two calls of one
turn; the second request is read where the loopback server received it. Sync and async,
exec and stream.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from llmport import Runtime
from llmport.testing.loopback import LoopbackServer, Reply

MODES = ["exec", "async_exec", "stream", "astream"]
MODEL = "deepseek-v4-flash"
THOUGHT = "Two cities: call get_weather for each, then compare."
CALLS = [
    ("call_00_tokyo0000000000000000000", "Tokyo"),
    ("call_01_osaka0000000000000000000", "Osaka"),
]
USAGE = {"prompt_tokens": 40, "completion_tokens": 30, "total_tokens": 70}


def get_weather(city: str) -> str:
    """The weather in a city."""
    if city == "Tokyo":
        time.sleep(0.2)  # the first call ends last when tools run side by side
    return {"Tokyo": "Sunny, 21C", "Osaka": "Rain, 18C"}[city]


def _call(index: int, call_id: str, city: str) -> dict[str, Any]:
    function = {"name": "get_weather", "arguments": json.dumps({"city": city})}
    return {"index": index, "id": call_id, "type": "function", "function": function}


def _answer(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "930c60df-bf64-41c9-a88e-3ec75f81e00e",
        "object": "chat.completion",
        "created": 1781021261,
        "model": MODEL,
        "choices": [{"index": 0, "finish_reason": finish, "logprobs": None, "message": message}],
        "usage": USAGE,
    }


def _chunks(deltas: list[dict[str, Any]], finish: str) -> list[dict[str, Any]]:
    base = {"id": "930c60df", "object": "chat.completion.chunk", "created": 1, "model": MODEL}
    events = [
        {"data": {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]}}
        for d in deltas
    ]
    end = {"index": 0, "delta": {}, "finish_reason": finish}
    events.append({"data": {**base, "choices": [end]}})
    events.append({"data": {**base, "choices": [], "usage": USAGE}})
    events.append({"data": "[DONE]"})
    return events


def tool_turn(mode: str) -> Reply:
    """The model's turn: its reasoning, then both calls (streamed: one call per index)."""
    calls = [_call(i, call_id, city) for i, (call_id, city) in enumerate(CALLS)]
    if mode.endswith("stream"):
        deltas = [
            {"role": "assistant", "content": None, "reasoning_content": THOUGHT},
            *({"tool_calls": [call]} for call in calls),
        ]
        return Reply(sse=_chunks(deltas, "tool_calls"))
    message = {
        "role": "assistant",
        "content": "",
        "reasoning_content": THOUGHT,
        "tool_calls": [{k: v for k, v in c.items() if k != "index"} for c in calls],
    }
    return Reply(json=_answer(message, "tool_calls"))


def final_turn(mode: str) -> Reply:
    text = "Tokyo is sunny; Osaka has rain."
    if mode.endswith("stream"):
        return Reply(sse=_chunks([{"role": "assistant", "content": text}], "stop"))
    return Reply(json=_answer({"role": "assistant", "content": text}, "stop"))


async def _arun(rt: Runtime, mode: str) -> Any:
    if mode == "async_exec":
        return await rt.arun("Weather in Tokyo and Osaka?", tools=[get_weather])
    events = [e async for e in rt.astream("Weather in Tokyo and Osaka?", tools=[get_weather])]
    return events[-1].result


def second_request(mode: str) -> tuple[Any, dict[str, Any]]:
    with LoopbackServer([tool_turn(mode), final_turn(mode)]) as server:
        rt = Runtime(
            model=f"deepseek:{MODEL}",
            providers={"deepseek": {"api_key": "sk-fake-deepseek", "base_url": server.url}},
        )
        try:
            if mode == "exec":
                result = rt.run("Weather in Tokyo and Osaka?", tools=[get_weather])
            elif mode == "stream":
                events = list(rt.stream("Weather in Tokyo and Osaka?", tools=[get_weather]))
                result = events[-1].result
            else:
                result = asyncio.run(_arun(rt, mode))
        finally:
            rt.close()
    assert len(server.requests) == 2
    return result, server.requests[1].json()


@pytest.mark.parametrize("mode", MODES)
def test_parallel_calls_go_back_in_one_assistant_message_then_results_in_order(mode: str) -> None:
    result, body = second_request(mode)
    assert result.output == "Tokyo is sunny; Osaka has rain."
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    assistant = messages[1]
    # Thinking mode with tools: the reasoning goes back on the message that made the calls.
    assert assistant["reasoning_content"] == THOUGHT
    calls = assistant["tool_calls"]
    assert [(c["id"], json.loads(c["function"]["arguments"])["city"]) for c in calls] == CALLS
    assert all(c["type"] == "function" for c in assistant["tool_calls"])
    results = [(m["tool_call_id"], m["content"]) for m in messages[2:]]
    assert results == [(CALLS[0][0], "Sunny, 21C"), (CALLS[1][0], "Rain, 18C")]
