"""Groq's ``tool_use_failed``: the model's invalid call, read from ``failed_generation``, is
answered with the validation error and the model tries again, as llmport repairs invalid
arguments. Other services and other 400s stay a ``BadRequestError``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llmport import Runtime
from llmport.errors import BadRequestError
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_openai.compat import parse_failed_generation

MODES = ["exec", "async_exec", "stream", "astream"]


def get_weather(city: str) -> str:
    """The weather in ``city``."""
    return f"sunny in {city}"


def failed(generation: str, code: str = "tool_use_failed") -> Reply:
    """Groq's 400 for a call it could not parse (https://console.groq.com/docs/tool-use)."""
    error = {
        "message": "Failed to call a function. Please adjust your prompt. "
        "See 'failed_generation' for more details.",
        "type": "invalid_request_error",
        "code": code,
        "failed_generation": generation,
    }
    return Reply(status=400, json={"error": error})


def answer(mode: str, **message: Any) -> Reply:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    if mode.endswith("stream"):
        base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "llama"}
        delta = {"role": "assistant", **message}
        for n, call in enumerate(delta.get("tool_calls") or ()):
            call["index"] = n
        chunks = [
            {"data": {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}},
            {"data": {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}},
            {"data": "[DONE]"},
        ]
        return Reply(sse=chunks)
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "llama",
        "choices": [
            {"index": 0, "finish_reason": finish, "message": {"role": "assistant", **message}}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }
    return Reply(json=body)


def _call(rt: Runtime, mode: str) -> str:
    kwargs: dict[str, Any] = {"tools": [get_weather]}
    if mode == "exec":
        return rt.exec("Weather in Paris?", **kwargs)
    if mode == "stream":
        return str(list(rt.stream("Weather in Paris?", **kwargs))[-1].result.output)

    async def go() -> str:
        if mode == "async_exec":
            return await rt.async_exec("Weather in Paris?", **kwargs)
        events = [e async for e in rt.astream("Weather in Paris?", **kwargs)]
        return str(events[-1].result.output)

    return asyncio.run(go())


@pytest.mark.parametrize("mode", MODES)
def test_a_failed_generation_is_repaired_like_invalid_arguments(mode: str) -> None:
    good = {
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            }
        ],
    }
    replies = [
        failed('<function=get_weather>{"town": "Paris"}</function>'),
        answer(mode, **good),
        answer(mode, content="Sunny in Paris."),
    ]
    with LoopbackServer(replies) as server:
        rt = Runtime(
            model="groq:llama-3.3-70b-versatile",
            providers={"groq": {"api_key": "test-key", "base_url": server.url}},
        )
        assert _call(rt, mode) == "Sunny in Paris."
        rt.close()
    assert len(server.requests) == 3
    second = server.requests[1].json()["messages"]
    assert second[1]["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": '{"town": "Paris"}',
    }
    assert second[2]["role"] == "tool"
    assert "'city' is a required property" in second[2]["content"]


@pytest.mark.parametrize(
    ("prefix", "code"),
    [("groq", "invalid_request_error"), ("openrouter", "tool_use_failed")],
)
def test_other_400s_stay_bad_requests(prefix: str, code: str) -> None:
    with LoopbackServer([failed("<function=x>{}</function>", code)]) as server:
        rt = Runtime(
            model=f"{prefix}:llama-3.3-70b-versatile",
            providers={prefix: {"api_key": "test-key", "base_url": server.url}},
        )
        with pytest.raises(BadRequestError):
            rt.exec("hi", tools=[get_weather])
        rt.close()
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("generation", "expected"),
    [
        (
            '<function=get_weather>{"city": "Paris"}</function>',
            [("get_weather", '{"city": "Paris"}')],
        ),
        (
            '<function=get_weather {"city": "Paris"}</function>',
            [("get_weather", '{"city": "Paris"}')],
        ),
        (
            '{"name": "get_weather", "arguments": {"city": "Paris"}}',
            [("get_weather", '{"city": "Paris"}')],
        ),
        (
            '[{"name": "a", "parameters": {"x": 1}}, {"name": "b", "arguments": "{bad"}]',
            [("a", '{"x": 1}'), ("b", "{bad")],
        ),
        ("I would call the weather tool", [("", "I would call the weather tool")]),
        ("", [("", "")]),
    ],
)
def test_failed_generations_are_read_as_written(
    generation: str, expected: list[tuple[str, str]]
) -> None:
    calls = parse_failed_generation(generation)
    assert [(c.name, c.raw_arguments) for c in calls] == expected
    assert len({c.id for c in calls}) == len(calls)
