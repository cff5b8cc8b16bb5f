"""Non-streamed answers are parsed once from the JSON body (no SDK ``Message``).

``send`` takes ``messages.with_raw_response`` and reads the JSON itself: a
body that is not JSON or not shaped as the API's is a (retryable)
``MalformedResponseError``; status errors still come from the SDK; server-tool
blocks and the container are the vendor's JSON verbatim.
"""

from __future__ import annotations

from typing import Any

import pytest
from llmport import RateLimitError, Runtime
from llmport.errors import MalformedResponseError
from llmport.messages.types import ServerToolCall, ServerToolResult
from llmport.testing.loopback import LoopbackServer, Reply
from support.anthropic_scenarios import error, message, usage
from support.api_modes import MODES, run_via

MODEL = "claude-haiku-4-5-20251001"
OK = Reply(
    json=message("msg_ok", MODEL, [{"type": "text", "text": "fine"}], "end_turn", usage(5, 1))
)
BAD_SHAPES: list[Any] = [
    [],
    None,
    {"id": "m", "model": MODEL, "content": None},
    {"id": "m", "model": MODEL, "content": [{"type": "tool_use", "id": "t"}]},
    {"id": "m", "model": MODEL, "content": ["text"]},
]


def rt_for(server: LoopbackServer) -> Runtime:
    return Runtime(
        model="anthropic:claude-haiku-4-5",
        providers={"anthropic": {"api_key": "test-key", "base_url": server.url}},
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("body", BAD_SHAPES, ids=range(len(BAD_SHAPES)))
async def test_wrongly_shaped_answer_is_malformed_and_retried(mode: str, body: Any) -> None:
    with LoopbackServer([Reply(json=body), OK]) as server:
        result = await run_via(mode, rt_for(server), "Hi")
    failure = result.failures[0].error
    assert isinstance(failure, MalformedResponseError) and failure.retryable, repr(failure)
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_a_body_that_is_not_json_is_malformed(mode: str) -> None:
    page = Reply(body=b"<html>gateway</html>", headers={"content-type": "text/html"})
    with LoopbackServer([page, OK]) as server:
        result = await run_via(mode, rt_for(server), "Hi")
    failure = result.failures[0].error
    assert isinstance(failure, MalformedResponseError) and failure.retryable, repr(failure)
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_status_errors_still_come_from_the_sdk(mode: str) -> None:
    limited = Reply(
        status=429,
        json=error("rate_limit_error", "slow down", "req_1"),
        headers={"retry-after": "1"},
    )
    with LoopbackServer([limited, OK]) as server:
        result = await run_via(mode, rt_for(server), "Hi")
    failure = result.failures[0].error
    assert isinstance(failure, RateLimitError) and failure.retry_after == 1.0, repr(failure)
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_no_sdk_message_is_built_and_blocks_stay_verbatim(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anthropic._base_client as base

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the SDK built a response model")

    monkeypatch.setattr(base.BaseClient, "_process_response_data", refuse)
    search = {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"q": "x"}}
    found = {
        "type": "web_search_tool_result",
        "tool_use_id": "srv_1",
        "content": [{"type": "web_search_result", "url": "https://a.example", "future": 1}],
    }
    container = {"id": "container_1", "expires_at": "2025-11-21T10:00:00.123456Z"}
    body = message(
        "msg_1", MODEL, [search, found, {"type": "text", "text": "fine"}], "end_turn", usage(5, 1)
    )
    body["container"] = container
    with LoopbackServer([Reply(json=body)]) as server:
        result = await run_via(mode, rt_for(server), "Hi")
    assert result.output == "fine"
    answer = result.messages[-1]
    assert isinstance(answer.blocks[0], ServerToolCall) and answer.blocks[0].raw == search
    assert isinstance(answer.blocks[1], ServerToolResult) and answer.blocks[1].raw == found
    assert answer.extra["anthropic_container"] == container
