"""Cache breakpoints in a continued conversation: never more than Anthropic's 4.

Each turn marks its prompt (``"cache": True``) and asks for ``cache="auto"``;
the conversation continues with ``history=result.messages``. Without moving
the marks, turn five would carry six ``cache_control`` entries and Anthropic
would answer 400.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from llmport import Runtime
from llmport.testing.loopback import LoopbackServer, Reply
from support.anthropic_scenarios import message, text_stream, usage
from support.api_modes import MODES, run_via
from support.cache_turns import assert_five_marks_refused, cached_bodies

SONNET = "claude-sonnet-4-5-20250929"
TURNS = 10


def answer(i: int, stream: bool) -> Reply:
    msg_id = f"msg_01CacheTurn{i:012d}"
    if stream:
        return Reply(sse=text_stream(msg_id, SONNET, [f"answer {i}"], 10, 2))
    content = [{"type": "text", "text": f"answer {i}"}]
    return Reply(json=message(msg_id, SONNET, content, "end_turn", usage(10, 2)))


def runtime(server: LoopbackServer) -> Runtime:
    return Runtime(
        model=f"anthropic:{SONNET}",
        providers={"anthropic": {"api_key": "test-key", "base_url": server.url}},
    )


def marks(body: dict[str, Any]) -> int:
    """The ``cache_control`` entries anywhere in a request body."""
    return json.dumps(body).count('"cache_control"')


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("mode", MODES)
async def test_marks_move_to_the_newest_turn_and_stay_within_four(mode: str, stream: bool) -> None:
    replies = [answer(i, stream) for i in range(TURNS)]
    bodies = await cached_bodies(mode, replies, runtime, stream=stream)
    for i, body in enumerate(bodies):
        # The newest turn, the system prompt and the tools: three, every turn.
        assert marks(body) == 3, i
        newest = body["messages"][-1]
        assert newest["role"] == "user"
        assert newest["content"][-1]["text"] == f"question {i}"
        assert "cache_control" in newest["content"][-1]
        assert marks({"messages": body["messages"][:-1]}) == 0


@pytest.mark.parametrize("mode", MODES)
async def test_auto_marks_fill_only_the_room_left_by_explicit_ones(mode: str) -> None:
    with LoopbackServer([answer(0, False)]) as server:
        prompt = [
            {"type": "text", "text": "doc one", "cache": True},
            {"type": "text", "text": "doc two", "cache": True},
            {"type": "text", "text": "doc three", "cache": True},
            {"type": "text", "text": "question", "cache": True},
        ]
        await run_via(mode, runtime(server), prompt, system="Be brief.", cache="auto")
        body = server.requests[0].json()
    assert marks(body) == 4
    assert isinstance(body["system"], str)  # no room left for the automatic system mark


@pytest.mark.parametrize("mode", MODES)
async def test_explicit_marks_beyond_four_are_an_option_error(mode: str) -> None:
    await assert_five_marks_refused(mode, runtime)
