"""Reasoning as each service is shown to take it back, and Groq's three reasoning formats.

Loopback servers answer in the services' documented shapes; what llmport sends
on the next turn is read where the server received it. Sync and async, exec
and stream.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llmport import Runtime
from llmport.messages.types import ThinkingBlock
from llmport.testing.loopback import LoopbackServer, Reply

MODES = ["exec", "async_exec", "stream", "astream"]


def chat_answer(model: str, content: str, **message: Any) -> dict[str, Any]:
    """A Chat Completions answer (the shape of wire-samples openai-compat-*/text.json)."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1781021261,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content, **message},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def chat_stream(model: str, pieces: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same answer streamed: one chunk per delta, then the finish and usage chunks."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model}
    events = [
        {"data": {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}}
        for delta in pieces
    ]
    events.append(
        {"data": {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}}
    )
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    events.append({"data": {**base, "choices": [], "usage": usage}})
    events.append({"data": "[DONE]"})
    return events


def reply(model: str, mode: str, content: str, pieces: list[dict[str, Any]], **msg: Any) -> Reply:
    if mode.endswith("stream"):
        return Reply(sse=chat_stream(model, pieces))
    return Reply(json=chat_answer(model, content, **msg))


async def _acollect(rt: Runtime, mode: str, prompt: str, history: Any) -> Any:
    if mode == "async_exec":
        return await rt.arun(prompt, history=history)
    events = [event async for event in rt.astream(prompt, history=history)]
    return events[-1].result


def two_turns(prefix: str, model: str, mode: str, first: Reply, second: Reply) -> tuple[Any, Any]:
    """Two turns of one conversation; the first answer and the second request's body."""
    with LoopbackServer([first, second]) as server:
        rt = Runtime(
            model=f"{prefix}:{model}",
            providers={prefix: {"api_key": "test-key", "base_url": server.url}},
        )

        def turn(prompt: str, history: Any = None) -> Any:
            if mode == "exec":
                return rt.run(prompt, history=history)
            if mode == "stream":
                return list(rt.stream(prompt, history=history))[-1].result
            return asyncio.run(_acollect(rt, mode, prompt, history))

        result = turn("What is 2 + 2? Think briefly first.")
        turn("Now add 3 to that.", history=result.messages)
        rt.close()
    return result, server.requests[1].json()


@pytest.mark.parametrize("mode", MODES)
def test_cerebras_glm_reasoning_goes_back_inline(mode: str) -> None:
    model = "zai-glm-4.7"
    thought = "Simple sum: 4."
    first = reply(
        model,
        mode,
        "4.",
        [{"role": "assistant", "reasoning": thought}, {"content": "4."}],
        reasoning=thought,
    )
    second = reply(model, mode, "7.", [{"role": "assistant", "content": "7."}])
    result, body = two_turns("cerebras", model, mode, first, second)
    assert result.output == "4."
    assistant = body["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == f"<think>{thought}</think>\n4."
    assert "reasoning" not in assistant


@pytest.mark.parametrize("mode", MODES)
def test_cerebras_gpt_oss_reasoning_goes_back_as_its_field(mode: str) -> None:
    # As recorded (wire-samples openai-compat-cerebras/reasoning-multi-turn.json).
    model = "gpt-oss-120b"
    thought = "User asks simple. Answer: 4."
    first = reply(
        model,
        mode,
        "4.",
        [{"role": "assistant", "reasoning": thought}, {"content": "4."}],
        reasoning=thought,
    )
    second = reply(model, mode, "7.", [{"role": "assistant", "content": "7."}])
    _, body = two_turns("cerebras", model, mode, first, second)
    assert body["messages"][1] == {"role": "assistant", "content": "4.", "reasoning": thought}


@pytest.mark.parametrize("mode", MODES)
def test_groq_raw_reasoning_format_is_split_out_and_not_sent_back(mode: str) -> None:
    # reasoning_format "raw": the reasoning arrives inline in <think> tags.
    model = "qwen/qwen3-32b"
    thought = "The user asks 2 + 2. That is 4."
    content = f"<think>\n{thought}\n</think>\n\n4."
    pieces = [
        {"role": "assistant", "content": "<thi"},
        {"content": f"nk>\n{thought}\n</th"},
        {"content": "ink>\n\n4."},
    ]
    first = reply(model, mode, content, pieces)
    second = reply(model, mode, "7.", [{"role": "assistant", "content": "7."}])
    result, body = two_turns("groq", model, mode, first, second)
    assert result.output == "4."
    blocks = result.messages[-1].blocks
    thinking = [b for b in blocks if isinstance(b, ThinkingBlock)]
    assert [b.text.strip() for b in thinking] == [thought]
    # Groq documents no reasoning on input: the earlier turn goes back as its answer only.
    assert body["messages"][1] == {"role": "assistant", "content": "4."}


@pytest.mark.parametrize("mode", MODES)
def test_groq_parsed_and_hidden_reasoning_formats(mode: str) -> None:
    model = "openai/gpt-oss-20b"
    thought = "Quick sum."
    parsed = reply(
        model,
        mode,
        "4.",
        [{"role": "assistant", "reasoning": thought}, {"content": "4."}],
        reasoning=thought,
    )
    hidden = reply(model, mode, "7.", [{"role": "assistant", "content": "7."}])
    result, body = two_turns("groq", model, mode, parsed, hidden)
    assert [b.text for b in result.messages[-1].blocks if isinstance(b, ThinkingBlock)] == [thought]
    assert body["messages"][1] == {"role": "assistant", "content": "4."}
