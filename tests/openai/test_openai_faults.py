"""Faults from a real HTTP server (LoopbackServer), sync and async.

The plugin's clients run with ``max_retries=0``; every retry below is
llmport's, observed through a Backoff that records delays instead of
sleeping.
"""

from __future__ import annotations

from typing import Any

import pytest
from llmport import (
    AuthenticationError,
    ExecFailed,
    MalformedResponseError,
    OverloadedError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
)
from llmport.loopback import LoopbackServer, Reply
from llmport.types import TextDelta
from openai_scenarios import _stream_text_chunks, chat_usage, completion, error_body

MODEL = "openai:gpt-4o-mini"
OK = Reply(json=completion("chatcmpl-ok", content="fine", usage=chat_usage(3, 1)))


def rate_limited(**headers: str) -> Reply:
    return Reply(
        status=429,
        headers=headers,
        json=error_body("Rate limit reached", "requests", "rate_limit_exceeded"),
    )


def server_error(status: int) -> Reply:
    return Reply(status=status, json=error_body("The server had an error", "server_error", None))


def test_429_retry_after_headers_are_honoured(
    drive: Any, runtime: Any, delays: list[float]
) -> None:
    with LoopbackServer(
        [
            rate_limited(**{"retry-after": "2"}),
            rate_limited(**{"retry-after-ms": "1500", "retry-after": "7"}),
            OK,
        ]
    ) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        run = drive.run(rt, content="hi")
    assert run.output == "fine"
    assert delays == [2.0, 1.5]
    assert [type(f.error) for f in run.failures] == [RateLimitError, RateLimitError]
    assert len(server.requests) == 3


def test_500_and_503_are_retried_then_succeed(
    drive: Any, runtime: Any, delays: list[float]
) -> None:
    with LoopbackServer([server_error(500), server_error(503), OK]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        run = drive.run(rt, content="hi")
    assert run.output == "fine" and run.attempts == 3 and len(delays) == 2
    assert [f.error.status for f in run.failures] == [500, 503]
    assert all(isinstance(f.error, OverloadedError) for f in run.failures)


def test_connection_reset_is_retried(drive: Any, runtime: Any) -> None:
    with LoopbackServer([Reply(reset=True), OK]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        run = drive.run(rt, content="hi")
    assert run.output == "fine"
    assert isinstance(run.failures[0].error, ProviderConnectionError)


def test_timeout_is_retried(drive: Any, runtime: Any) -> None:
    with LoopbackServer([Reply(delay=1.0, json={}), OK]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        run = drive.run(rt, content="hi", timeout=0.2)
    assert run.output == "fine"
    assert isinstance(run.failures[0].error, ProviderTimeoutError)
    assert server.requests[0].headers.get("x-stainless-read-timeout") == "0.2"


def test_malformed_json_is_retried(drive: Any, runtime: Any) -> None:
    with LoopbackServer([Reply(body=b'{"id": "chatcmpl-x", "choices": [{"trunc'), OK]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        run = drive.run(rt, content="hi")
    assert run.output == "fine"
    assert isinstance(run.failures[0].error, MalformedResponseError)


def test_truncated_stream_is_retried(drive: Any, runtime: Any) -> None:
    words = ["The", " capital", " of", " Mexico", " is", " Mexico", " City", "."]
    with LoopbackServer(
        [
            Reply(sse=_stream_text_chunks("cut", words), truncate=True),
            Reply(sse=_stream_text_chunks("whole", words)),
        ]
    ) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        events = drive.stream(rt, content="hi")
    run = events[-1].result
    assert run.output == "The capital of Mexico is Mexico City."
    # The cut stream ends without a finish reason: a retryable MalformedResponseError.
    assert isinstance(run.failures[0].error, MalformedResponseError)
    # (async httpx2 may also trip once over the socket the server closed: retried too.)
    assert all(f.error.retryable for f in run.failures)
    assert len(server.requests) == 2
    assert any(isinstance(e, TextDelta) for e in events)


def test_401_raises_at_once(drive: Any, runtime: Any, delays: list[float]) -> None:
    with LoopbackServer(
        [
            Reply(
                status=401,
                json=error_body(
                    "Incorrect API key provided: sk-abc***xyz9.",
                    "invalid_request_error",
                    "invalid_api_key",
                ),
            ),
            OK,
        ]
    ) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        with pytest.raises(AuthenticationError) as info:
            drive.run(rt, content="hi")
    assert len(server.requests) == 1 and delays == []
    assert "xyz9" not in str(info.value) and "sk-***" in str(info.value)


def test_insufficient_quota_is_not_retried(drive: Any, runtime: Any) -> None:
    quota = Reply(
        status=429,
        json=error_body(
            "You exceeded your current quota", "insufficient_quota", "insufficient_quota"
        ),
    )
    with LoopbackServer([quota, OK]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        with pytest.raises(RateLimitError) as info:
            drive.run(rt, content="hi")
    assert not info.value.retryable and len(server.requests) == 1


def test_exec_failed_lists_every_attempt(drive: Any, runtime: Any) -> None:
    with LoopbackServer([server_error(503), rate_limited(), Reply(reset=True)]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1", max_retries=3)
        with pytest.raises(ExecFailed) as info:
            drive.run(rt, content="hi")
    message = str(info.value)
    assert message.startswith("exec() failed after 3 attempts")
    assert "Attempt 1: OverloadedError: 503" in message
    assert "Attempt 2: RateLimitError: 429" in message
    assert "Attempt 3: ProviderConnectionError" in message
    assert isinstance(info.value.last_error, ProviderConnectionError)
    assert len(server.requests) == 3
