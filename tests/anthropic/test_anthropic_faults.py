"""Faults from a loopback server speaking the Messages API, sync and async."""

from __future__ import annotations

from typing import Any

import pytest
from llmport import (
    AuthenticationError,
    BadRequestError,
    ExecFailed,
    OverloadedError,
    RateLimitError,
    RunResult,
    Runtime,
)
from llmport.errors import MalformedResponseError, ProviderConnectionError, ProviderTimeoutError
from llmport.testing import recording_backoff
from llmport.testing.loopback import LoopbackServer, Reply
from support.anthropic_scenarios import error, message, text_stream, usage
from support.api_modes import MODES, run_via

MODEL = "claude-haiku-4-5-20251001"
OK = Reply(
    json=message("msg_ok", MODEL, [{"type": "text", "text": "fine"}], "end_turn", usage(5, 1))
)
OK_STREAM = Reply(sse=text_stream("msg_ok", MODEL, ["fi", "ne"], 5, 1))


def rt_for(server: LoopbackServer, delays: list[float], **kwargs: Any) -> Runtime:
    return Runtime(
        model="anthropic:claude-haiku-4-5",
        backoff=recording_backoff(delays, jitter=False, initial=0.25),
        providers={"anthropic": {"api_key": "test-key", "base_url": server.url}},
        **kwargs,
    )


async def go(mode: str, rt: Runtime, stream: bool = False, **options: Any) -> RunResult:
    return await run_via(mode, rt, "Hi", stream=stream, **options)


@pytest.mark.parametrize("mode", MODES)
async def test_429_waits_retry_after(mode: str) -> None:
    delays: list[float] = []
    replies = [
        Reply(
            status=429,
            json=error("rate_limit_error", "slow down", "req_1"),
            headers={"retry-after": "2"},
        ),
        Reply(
            status=429,
            json=error("rate_limit_error", "slow down", "req_2"),
            headers={"retry-after-ms": "1500"},
        ),
        OK,
    ]
    with LoopbackServer(replies) as server:
        result = await go(mode, rt_for(server, delays, max_retries=3))
        assert len(server.requests) == 3
    assert delays == [2.0, 1.5]
    assert [type(f.error) for f in result.failures] == [RateLimitError, RateLimitError]
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("status", "kind", "cls"),
    [
        (529, "overloaded_error", OverloadedError),
        (500, "api_error", OverloadedError),
        (503, "api_error", OverloadedError),
        (408, "timeout_error", ProviderTimeoutError),
        (409, "invalid_request_error", None),
    ],
)
async def test_transient_statuses_are_retried(mode: str, status: int, kind: str, cls: Any) -> None:
    delays: list[float] = []
    with LoopbackServer(
        [Reply(status=status, json=error(kind, "try later", "req_x")), OK]
    ) as server:
        result = await go(mode, rt_for(server, delays))
        assert len(server.requests) == 2
    failure = result.failures[0].error
    assert failure.status == status and failure.retryable  # type: ignore[attr-defined]
    if cls is not None:
        assert isinstance(failure, cls)
    assert delays == [0.25]  # exponential backoff (no retry-after given)
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("status", "kind", "cls"),
    [
        (400, "invalid_request_error", BadRequestError),
        (401, "authentication_error", AuthenticationError),
    ],
)
async def test_permanent_errors_raise_at_once(mode: str, status: int, kind: str, cls: Any) -> None:
    delays: list[float] = []
    with LoopbackServer([Reply(status=status, json=error(kind, "no", "req_p")), OK]) as server:
        with pytest.raises(cls) as info:
            await go(mode, rt_for(server, delays, max_retries=3))
        assert len(server.requests) == 1
        assert server.unplayed == 1
    assert info.value.retryable is False and info.value.status == status
    assert "test-key" not in str(info.value) and "test-key" not in repr(info.value)
    assert delays == []


@pytest.mark.parametrize("mode", MODES)
async def test_x_should_retry_false_overrides(mode: str) -> None:
    with LoopbackServer(
        [
            Reply(
                status=500,
                json=error("api_error", "broken", "r"),
                headers={"x-should-retry": "false"},
            )
        ]
    ) as server:
        with pytest.raises(OverloadedError) as info:
            await go(mode, rt_for(server, [], max_retries=3))
        assert len(server.requests) == 1
    assert info.value.retryable is False


@pytest.mark.parametrize("mode", MODES)
async def test_connection_reset_is_retried(mode: str) -> None:
    with LoopbackServer([Reply(reset=True), OK]) as server:
        result = await go(mode, rt_for(server, []))
    assert isinstance(result.failures[0].error, ProviderConnectionError)
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_timeout_option(mode: str) -> None:
    with LoopbackServer([Reply(delay=0.6, json={}), OK]) as server:
        result = await go(mode, rt_for(server, []), timeout=0.2)
        assert len(server.requests) == 2
    failure = result.failures[0].error
    assert isinstance(failure, ProviderTimeoutError) and failure.retryable


@pytest.mark.parametrize("mode", MODES)
async def test_timeout_setting_exhausted(mode: str) -> None:
    with LoopbackServer([Reply(delay=0.6, json={})]) as server:
        rt = Runtime(
            model="anthropic:claude-haiku-4-5",
            max_retries=1,
            providers={"anthropic": {"api_key": "k", "base_url": server.url, "timeout": 0.2}},
        )
        with pytest.raises(ExecFailed) as info:
            await go(mode, rt)
    assert isinstance(info.value.last_error, ProviderTimeoutError)


@pytest.mark.parametrize("mode", MODES)
async def test_malformed_json_is_transient(mode: str) -> None:
    with LoopbackServer([Reply(body=b'{"content": [ {"type": "te'), OK]) as server:
        result = await go(mode, rt_for(server, []))
    failure = result.failures[0].error
    assert isinstance(failure, MalformedResponseError) and failure.retryable
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_truncated_body_is_transient(mode: str) -> None:
    with LoopbackServer([Reply(json=OK.json, truncate=True), OK]) as server:
        result = await go(mode, rt_for(server, []))
    assert result.failures[0].error.retryable  # type: ignore[attr-defined]
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_truncated_stream_is_retried(mode: str) -> None:
    cut = Reply(sse=text_stream("msg_cut", MODEL, ["never ", "finished"], 5, 2), truncate=True)
    with LoopbackServer([cut, OK_STREAM]) as server:
        # Three attempts: the loopback closes the cut connection without "Connection: close",
        # so a pooled client may first hit that stale keep-alive socket (a connection error).
        rt = rt_for(server, [], max_retries=3)
        result = await go(mode, rt, stream=True, stream_retry="restart")
        assert len(server.requests) == 2
    failure = result.failures[0].error
    assert (
        isinstance(failure, (MalformedResponseError, ProviderConnectionError)) and failure.retryable
    )
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_error_event_after_200_in_a_stream(mode: str) -> None:
    events = text_stream("msg_err", MODEL, ["partial"], 5, 1)[:4]
    events.append(
        {
            "event": "error",
            "data": {
                "type": "error",
                "error": {"type": "overloaded_error", "message": "Overloaded"},
            },
        }
    )
    with LoopbackServer([Reply(sse=events), OK_STREAM]) as server:
        result = await go(mode, rt_for(server, []), stream=True, stream_retry="restart")
    failure = result.failures[0].error
    assert isinstance(failure, OverloadedError)
    assert (failure.status, failure.retryable, failure.code) == (529, True, "overloaded_error")
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_invalid_request_error_event_in_a_stream_is_permanent(mode: str) -> None:
    events = text_stream("msg_err", MODEL, ["x"], 5, 1)[:2]
    events.append(
        {
            "event": "error",
            "data": {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}},
        }
    )
    with LoopbackServer([Reply(sse=events), OK_STREAM]) as server:
        with pytest.raises(BadRequestError):
            await go(mode, rt_for(server, [], max_retries=3), stream=True)
        assert len(server.requests) == 1


@pytest.mark.parametrize("mode", MODES)
async def test_retries_exhausted_report_every_attempt(mode: str) -> None:
    replies = [Reply(status=529, json=error("overloaded_error", "Overloaded", "r"))] * 3
    with LoopbackServer(replies) as server:
        with pytest.raises(ExecFailed) as info:
            await go(mode, rt_for(server, [], max_retries=3))
        assert len(server.requests) == 3
    assert str(info.value).count("OverloadedError: anthropic 529 overloaded_error") == 3
