"""Faults from a loopback server speaking the Gemini API, sync and async."""

from __future__ import annotations

from typing import Any

import pytest
from gemini_helpers import isolated, run, runtime, stream  # noqa: F401  (isolated: autouse)
from llmport import (
    AuthenticationError,
    BadRequestError,
    ExecFailed,
    NotFoundError,
    OverloadedError,
    RateLimitError,
    RunResult,
)
from llmport.errors import (
    MalformedResponseError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderTimeoutError,
)
from llmport.testing.loopback import LoopbackServer, Reply
from support.gemini_scenarios import answer, error, quota_error, text_stream, usage

MODEL = "gemini:gemini-2.5-flash"
OK = Reply(json=answer("ok", [{"text": "fine"}], usage(5, 1)))
OK_STREAM = Reply(sse=text_stream("ok", ["fi", "ne"], 5, 1))
MODES = ["sync", "async"]


async def go(
    mode: str,
    server: LoopbackServer,
    delays: list[float] | None = None,
    *,
    streamed: bool = False,
    max_retries: int = 3,
    settings: dict[str, Any] | None = None,
    **options: Any,
) -> RunResult:
    rt = runtime(MODEL, delays, max_retries=max_retries, base_url=server.url, **(settings or {}))
    if streamed:
        events = await stream(mode, rt, content="Hi", **options)
        return events[-1].result  # type: ignore[no-any-return]
    return await run(mode, rt, content="Hi", **options)


@pytest.mark.parametrize("mode", MODES)
async def test_429_honours_retry_info_then_retry_after(mode: str) -> None:
    delays: list[float] = []
    replies = [
        Reply(status=429, json=quota_error("1.5s")),
        Reply(
            status=429,
            json=error(429, "RESOURCE_EXHAUSTED", "slow down"),
            headers={"retry-after": "2"},
        ),
        OK,
    ]
    with LoopbackServer(replies) as server:
        result = await go(mode, server, delays)
        assert len(server.requests) == 3
    assert delays == [1.5, 2.0]
    assert [type(f.error) for f in result.failures] == [RateLimitError, RateLimitError]
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("status", "grpc", "cls"),
    [
        (500, "INTERNAL", OverloadedError),
        (503, "UNAVAILABLE", OverloadedError),
        (504, "DEADLINE_EXCEEDED", ProviderTimeoutError),
        (408, "DEADLINE_EXCEEDED", ProviderTimeoutError),
    ],
)
async def test_transient_statuses_are_retried(mode: str, status: int, grpc: str, cls: Any) -> None:
    delays: list[float] = []
    with LoopbackServer(
        [Reply(status=status, json=error(status, grpc, "try later")), OK]
    ) as server:
        result = await go(mode, server, delays)
        assert len(server.requests) == 2
    failure = result.failures[0].error
    assert isinstance(failure, cls)
    assert (failure.status, failure.retryable, failure.code) == (status, True, grpc)
    assert delays == [0.25]  # llmport's exponential backoff (no RetryInfo given)
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_retries_are_off(mode: str) -> None:
    with LoopbackServer([Reply(status=503, json=error(503, "UNAVAILABLE", "busy")), OK]) as server:
        with pytest.raises(ExecFailed) as info:
            await go(mode, server, max_retries=1)
        assert len(server.requests) == 1  # the SDK did not retry on its own
        assert server.unplayed == 1
    assert isinstance(info.value.last_error, OverloadedError)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("status", "grpc", "cls"),
    [
        (400, "INVALID_ARGUMENT", BadRequestError),
        (400, "FAILED_PRECONDITION", BadRequestError),
        (401, "UNAUTHENTICATED", AuthenticationError),
        (403, "PERMISSION_DENIED", PermissionDeniedError),
        (404, "NOT_FOUND", NotFoundError),
    ],
)
async def test_permanent_errors_raise_at_once(mode: str, status: int, grpc: str, cls: Any) -> None:
    delays: list[float] = []
    body = error(status, grpc, "API key not valid. Please pass a valid API key. key=test-key")
    with LoopbackServer([Reply(status=status, json=body), OK]) as server:
        with pytest.raises(cls) as info:
            await go(mode, server, delays)
        assert len(server.requests) == 1
        assert server.requests[0].headers["x-goog-api-key"] == "test-key"
    err = info.value
    assert (err.retryable, err.status, err.code) == (False, status, grpc)
    assert "test-key" not in str(err) and "test-key" not in repr(err)
    assert delays == []


@pytest.mark.parametrize("mode", MODES)
async def test_connection_reset_is_retried(mode: str) -> None:
    with LoopbackServer([Reply(reset=True), OK]) as server:
        result = await go(mode, server)
    assert isinstance(result.failures[0].error, ProviderConnectionError)
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_timeout_option(mode: str) -> None:
    with LoopbackServer([Reply(delay=0.6, json={}), OK]) as server:
        result = await go(mode, server, timeout=0.2)
        assert len(server.requests) == 2
        assert server.requests[0].headers["X-Server-Timeout"] == "1"  # the SDK tells the server too
    failure = result.failures[0].error
    assert isinstance(failure, ProviderTimeoutError) and failure.retryable


@pytest.mark.parametrize("mode", MODES)
async def test_timeout_setting_exhausted(mode: str) -> None:
    with LoopbackServer([Reply(delay=0.6, json={})]) as server, pytest.raises(ExecFailed) as info:
        await go(mode, server, max_retries=1, settings={"timeout": 0.2})
    assert isinstance(info.value.last_error, ProviderTimeoutError)


@pytest.mark.parametrize("mode", MODES)
async def test_malformed_json_is_transient(mode: str) -> None:
    with LoopbackServer([Reply(body=b'{"candidates": [ {"content": {"pa'), OK]) as server:
        result = await go(mode, server)
    failure = result.failures[0].error
    assert isinstance(failure, MalformedResponseError) and failure.retryable
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_truncated_body_is_transient(mode: str) -> None:
    with LoopbackServer([Reply(json=OK.json, truncate=True), OK]) as server:
        result = await go(mode, server)
    assert result.failures[0].error.retryable  # type: ignore[attr-defined]
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_truncated_stream_is_retried(mode: str) -> None:
    cut = Reply(sse=text_stream("cut", ["never ", "finished ", "at all"], 5, 3), truncate=True)
    with LoopbackServer([cut, OK_STREAM]) as server:
        result = await go(mode, server, streamed=True, stream_retry="restart")
        assert len(server.requests) == 2
    failure = result.failures[0].error
    assert isinstance(failure, (MalformedResponseError, ProviderConnectionError))
    assert failure.retryable
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_stream_without_finish_reason_is_incomplete(mode: str) -> None:
    # Every event arrives and parses, but none says the answer is finished.
    unfinished = Reply(sse=[{"data": answer("u", [{"text": "half"}], usage(5, 1), finish=None)}])
    with LoopbackServer([unfinished, OK_STREAM]) as server:
        result = await go(mode, server, streamed=True, stream_retry="restart")
    assert isinstance(result.failures[0].error, MalformedResponseError)
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_retries_exhausted_report_every_attempt(mode: str) -> None:
    replies = [Reply(status=503, json=error(503, "UNAVAILABLE", "The model is overloaded."))] * 3
    with LoopbackServer(replies) as server:
        with pytest.raises(ExecFailed) as info:
            await go(mode, server)
        assert len(server.requests) == 3
    assert (
        str(info.value).count("OverloadedError: gemini 503 UNAVAILABLE: The model is overloaded.")
        == 3
    )
