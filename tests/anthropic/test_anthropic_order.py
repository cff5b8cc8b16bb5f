"""An answer that interleaves tool calls with other blocks goes back in its order.

Claude may write text, call a tool, write again and call another tool in one
answer; with thinking on the answer is kept as blocks, and the next request
echoes every block and ``tool_use`` where it came. Sync, async, stream and
async stream, at the wire (loopback body capture).
"""

from __future__ import annotations

from typing import Any

import pytest
from llmport import Runtime
from llmport.messages.types import FinalEvent, Message
from llmport.testing.loopback import LoopbackServer, Reply
from support.anthropic_scenarios import as_sse, message, usage

MODES = ["sync", "async", "stream", "astream"]
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

MODEL = "claude-sonnet-4-5-20250929"
THINKING = {"type": "thinking", "thinking": "Two cities.", "signature": "EqQBCkYIBxgCKkB-sig"}
PARIS = {
    "type": "tool_use",
    "id": "toolu_01Paris",
    "name": "get_weather",
    "input": {"city": "Paris"},
}
ROME = {"type": "tool_use", "id": "toolu_01Rome", "name": "get_weather", "input": {"city": "Rome"}}
ANSWER = [
    THINKING,
    {"type": "text", "text": "First Paris."},
    PARIS,
    {"type": "text", "text": "Then Rome."},
    ROME,
]


def get_weather(city: str) -> str:
    return f"sunny in {city}"


async def run(mode: str, rt: Runtime) -> Any:
    kwargs: dict[str, Any] = {
        "content": "Weather in Paris and Rome?",
        "tools": [get_weather],
        "reasoning": {"budget_tokens": 1024},
        "max_tokens": 4096,
    }
    if mode == "sync":
        return rt.run(**kwargs)
    if mode == "async":
        return await rt.arun(**kwargs)
    events = (
        list(rt.stream(**kwargs)) if mode == "stream" else [e async for e in rt.astream(**kwargs)]
    )
    assert isinstance(events[-1], FinalEvent)
    return events[-1].result


@pytest.mark.parametrize("mode", MODES)
async def test_interleaved_tool_uses_go_back_where_they_came(mode: str) -> None:
    first = message("msg_01Order1", MODEL, ANSWER, "tool_use", usage(50, 40))
    last = message(
        "msg_01Order2", MODEL, [{"type": "text", "text": "Both sunny."}], "end_turn", usage(90, 5)
    )
    replies = (
        [Reply(sse=as_sse(first)), Reply(sse=as_sse(last))]
        if "stream" in mode
        else [Reply(json=first), Reply(json=last)]
    )
    with LoopbackServer(replies) as server:
        rt = Runtime(
            model=f"anthropic:{MODEL}",
            providers={"anthropic": {"api_key": "k", "base_url": server.url}},
        )
        result = await run(mode, rt)
        rt.close()
    echoed = server.requests[1].json()["messages"][1]
    assert echoed["role"] == "assistant"
    assert echoed["content"] == ANSWER
    answer = result.messages[1]
    assert [c.position for c in answer.tool_calls] == [2, None]
    again = Message.from_dict(answer.to_dict())
    assert [c.position for c in again.tool_calls] == [2, None]
