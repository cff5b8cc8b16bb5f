"""rt.count_tokens on every target: the vendor's counting endpoint where it has one.

The loopback server answers in each vendor's recorded count format
(``../shared/wire-samples/*/count-tokens.json``); OpenAI Chat has no
endpoint, and a compatible server without it answers 404: both estimate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from llmport import Runtime
from llmport.testing.loopback import LoopbackServer, Reply
from wire import TARGETS, Wire

each_target = pytest.mark.parametrize("wire", TARGETS, ids=str)
Make = Callable[..., Runtime]

#: target id -> (the vendor's count reply, the end of the path it is asked on)
COUNTS: dict[str, tuple[dict[str, Any], str] | None] = {
    "openai-chat": None,
    "openai-responses": ({"object": "response.input_tokens", "input_tokens": 37}, "/input_tokens"),
    "anthropic": ({"input_tokens": 37}, "/v1/messages/count_tokens"),
    "gemini": ({"totalTokens": 37}, ":countTokens"),
    "bedrock": ({"inputTokens": 37}, "/count-tokens"),
    "callonly": None,  # tiny chat has no counting endpoint
    "callonly-stream": None,
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@each_target
async def test_count_tokens_through_the_runtime(wire: Wire, mode: str, runtime: Make) -> None:
    expected = COUNTS[wire.id]
    replies = [Reply(json=expected[0])] if expected else []
    with LoopbackServer(replies) as server:
        rt = runtime(wire, server)
        question = "How many tokens is this question? " * 8
        if mode == "sync":
            count = rt.count_tokens(question, system="Be brief.")
        else:
            count = await rt.acount_tokens(question, system="Be brief.")
        requests = list(server.requests)
    if expected is None:
        assert (count.exact, count.source) == (False, "estimate") and requests == []
        assert count.input_tokens > 0
        return
    assert (count.input_tokens, count.exact, count.source) == (37, True, "vendor")
    assert len(requests) == 1 and requests[0].path.split("?")[0].endswith(expected[1])
    assert "How many tokens" in requests[0].body.decode()


async def test_a_compatible_server_without_the_endpoint_gives_an_estimate(runtime: Make) -> None:
    wire = next(w for w in TARGETS if w.id == "openai-responses")
    with LoopbackServer(
        [Reply(status=404, json={"error": {"message": "no such route"}})]
    ) as server:
        count = runtime(wire, server).count_tokens("x" * 400)
        assert len(server.requests) == 1
    assert (count.exact, count.source) == (False, "estimate") and count.input_tokens >= 100
