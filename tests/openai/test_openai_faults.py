"""Faults from a real HTTP server (LoopbackServer), sync and async.

The plugin's clients run with ``max_retries=0``; every retry below is
llmport's, observed through a Backoff that records delays instead of
sleeping.
"""

from __future__ import annotations

import traceback
from typing import Any

import pytest
from llmport import (
    AuthenticationError,
    ExecFailed,
    MalformedResponseError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
)
from llmport.messages.types import TextDelta
from llmport.testing.loopback import LoopbackServer, Reply
from support.openai_scenarios import (
    _responses_stream_events,
    _stream_text_chunks,
    chat_usage,
    completion,
    error_body,
    response_obj,
)

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
        events = drive.stream(rt, content="hi", stream_retry="restart")
    run = events[-1].result
    assert run.output == "The capital of Mexico is Mexico City."
    # The cut stream ends without a finish reason: a retryable MalformedResponseError.
    assert isinstance(run.failures[0].error, MalformedResponseError)
    # (async httpx2 may also trip once over the socket the server closed: retried too.)
    assert all(f.error.retryable for f in run.failures)
    assert len(server.requests) == 2
    assert any(isinstance(e, TextDelta) for e in events)


def test_an_error_chunk_mid_stream_is_classified_by_its_type(drive: Any, runtime: Any) -> None:
    words = ["The", " capital"]
    broken = [
        *_stream_text_chunks("a", words)[:2],
        {"data": error_body("boom", "server_error", None)},
    ]
    refused = [{"data": error_body("not allowed", "invalid_request_error", "invalid_prompt")}]
    with LoopbackServer(
        [Reply(sse=broken), Reply(sse=_stream_text_chunks("b", words)), Reply(sse=refused)]
    ) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        run = drive.stream(rt, content="hi", stream_retry="restart")[-1].result
        assert run.output == "The capital" and len(server.requests) == 2
        failure = run.failures[0].error
        assert isinstance(failure, ProviderError) and failure.retryable and "boom" in str(failure)
        with pytest.raises(ProviderError) as info:  # permanent: raised at once
            drive.stream(rt, content="hi")
    assert info.value.code == "invalid_prompt" and not info.value.retryable
    assert len(server.requests) == 3 and info.value.__cause__ is None


def test_responses_error_event_and_failed_response(drive: Any, runtime: Any) -> None:
    events = _responses_stream_events()
    overloaded = {"type": "error", "code": "server_error", "message": "try again", "param": None}
    failed = response_obj("resp_f", [], usage=(1, 0, 0, 0), status="failed")
    failed["error"] = {"code": "invalid_prompt", "message": "flagged"}
    with LoopbackServer(
        [
            Reply(sse=[*events[:4], {"event": "error", "data": overloaded}]),
            Reply(sse=events),
            Reply(json=failed),
        ]
    ) as server:
        rt = runtime("openai-responses:gpt-5-mini", base_url=server.url + "/v1")
        run = drive.stream(rt, content="hi")[-1].result
        assert run.output == "pong" and run.failures[0].error.code == "server_error"
        with pytest.raises(ProviderError) as info:
            drive.run(rt, content="hi")
    assert info.value.code == "invalid_prompt" and not info.value.retryable
    assert "flagged" in str(info.value) and len(server.requests) == 3


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
    assert "Attempt 1: OverloadedError: openai 503: The server had an error" in message
    assert "Attempt 2: RateLimitError: openai 429 rate_limit_exceeded" in message
    assert "Attempt 3: ProviderConnectionError: openai: connection failed" in message
    assert isinstance(info.value.last_error, ProviderConnectionError)
    assert len(server.requests) == 3


# --- nothing vendor-side is chained, and no key survives in a traceback --------------------

#: A key of the standard shape, and a gateway key no pattern recognises.
PROJECT_KEY = "sk-proj-" + "Zq7" * 16
GATEWAY_KEY = "LEAKcustomproxykey-0123456789abcdef"


def echoing(status: int, type_: str, code: str | None) -> Reply:
    """A reply that echoes the key it was sent, as OpenAI's 401 (and some gateways' 5xx) do."""

    def handler(request: Any) -> Reply:
        key = request.headers["authorization"].removeprefix("Bearer ")
        message = f"Incorrect API key provided: {key}. Request was: Authorization: Bearer {key}"
        return Reply(status=status, json=error_body(message, type_, code))

    return Reply(handler=handler)


def assert_no_key(err: BaseException, *keys: str) -> None:
    text = "".join(traceback.format_exception(err))
    for key in keys:
        assert key not in text
    assert "openai." not in text.replace("openai.com", "")  # no SDK exception in the chain


def assert_detached(err: BaseException) -> None:
    assert err.__cause__ is None and err.__context__ is None


@pytest.mark.parametrize("key", [PROJECT_KEY, GATEWAY_KEY], ids=["sk-proj", "gateway"])
def test_401_echoing_the_key_leaves_no_trace_of_it(drive: Any, runtime: Any, key: str) -> None:
    with LoopbackServer([echoing(401, "invalid_request_error", "invalid_api_key")]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1", api_key=key)
        with pytest.raises(AuthenticationError) as info:
            drive.run(rt, content="hi")
    err = info.value
    assert len(server.requests) == 1 and key in server.requests[0].headers["authorization"]
    assert "Incorrect API key provided: ***" in str(err)
    assert_detached(err)
    assert_no_key(err, key)
    assert err.vendor_error is not None and key not in err.vendor_error


@pytest.mark.parametrize("key", [PROJECT_KEY, GATEWAY_KEY], ids=["sk-proj", "gateway"])
def test_retried_500s_echoing_the_key_end_in_exec_failed_without_it(
    drive: Any, runtime: Any, key: str
) -> None:
    with LoopbackServer([echoing(500, "server_error", None)] * 3) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1", api_key=key, max_retries=3)
        with pytest.raises(ExecFailed) as info:
            drive.run(rt, content="hi")
    err = info.value
    assert len(server.requests) == 3 and len(err.attempts) == 3
    assert_no_key(err, key)
    for attempt in err.attempts:
        assert isinstance(attempt.error, OverloadedError) and "***" in str(attempt.error)
        assert_detached(attempt.error)
        assert_no_key(attempt.error, key)
    assert err.__cause__ is err.last_error


def test_a_key_from_the_environment_is_masked_whatever_its_shape(
    drive: Any, runtime: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", GATEWAY_KEY)
    with LoopbackServer([echoing(401, "invalid_request_error", "invalid_api_key")]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1", api_key=None)
        with pytest.raises(AuthenticationError) as info:
            drive.run(rt, content="hi")
    assert server.requests[0].headers["authorization"] == f"Bearer {GATEWAY_KEY}"
    assert_no_key(info.value, GATEWAY_KEY)


def test_transport_errors_chain_nothing(drive: Any, runtime: Any) -> None:
    with LoopbackServer([Reply(reset=True)]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1", max_retries=1)
        with pytest.raises(ExecFailed) as info:  # transient, and the only attempt
            drive.run(rt, content="hi")
    error = info.value.last_error
    assert isinstance(error, ProviderConnectionError) and info.value.__cause__ is error
    assert_detached(error)
    assert "httpx" not in "".join(traceback.format_exception(info.value))
