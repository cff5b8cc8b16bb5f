"""Cache points in a continued conversation: never more than Converse's 4.

Each turn marks its prompt (``"cache": True``) and asks for ``cache="auto"``;
the conversation continues with ``history=result.messages``. Without moving
the marks, every turn would add a ``cachePoint`` and Bedrock would refuse
the request after a few turns.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from llmport import Runtime
from llmport.testing.loopback import LoopbackServer, Reply
from support.api_modes import MODES
from support.bedrock_scenarios import (
    CREDENTIALS,
    NOVA_MICRO,
    REGION,
    answer,
    stream_reply,
    text_events,
)
from support.bedrock_scenarios import usage as bedrock_usage
from support.cache_turns import assert_five_marks_refused, cached_bodies

TURNS = 10


def reply(i: int, stream: bool) -> Reply:
    if stream:
        return stream_reply(text_events([f"answer {i}"], 10, 2), f"req-{i}")
    return Reply(json=answer([{"text": f"answer {i}"}], "end_turn", bedrock_usage(10, 2)))


def runtime(server: LoopbackServer) -> Runtime:
    settings = {**CREDENTIALS, "region": REGION, "endpoint_url": server.url}
    return Runtime(model=f"bedrock:{NOVA_MICRO}", providers={"bedrock": settings})


def points(body: Any) -> int:
    """The ``cachePoint`` entries anywhere in a request body."""
    return json.dumps(body).count('"cachePoint"')


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("mode", MODES)
async def test_points_move_to_the_newest_turn_and_stay_within_four(mode: str, stream: bool) -> None:
    replies = [reply(i, stream) for i in range(TURNS)]
    bodies = await cached_bodies(mode, replies, runtime, stream=stream)
    for i, body in enumerate(bodies):
        # The newest turn, the system prompt and the tools: three, every turn.
        assert points(body) == 3, i
        newest = body["messages"][-1]
        assert newest["role"] == "user"
        assert newest["content"][-2] == {"text": f"question {i}"}
        assert "cachePoint" in newest["content"][-1]
        assert points(body["messages"][:-1]) == 0


@pytest.mark.parametrize("mode", MODES)
async def test_explicit_marks_beyond_four_are_an_option_error(mode: str) -> None:
    await assert_five_marks_refused(mode, runtime)
