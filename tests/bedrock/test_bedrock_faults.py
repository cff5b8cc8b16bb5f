"""Faults from a loopback server speaking Converse (JSON and event-stream), sync and async."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from llmport import (
    AuthenticationError,
    Backoff,
    BadRequestError,
    ExecFailed,
    NotFoundError,
    OverloadedError,
    RateLimitError,
    RunResult,
    Runtime,
)
from llmport.errors import (
    ConfigError,
    MalformedResponseError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderTimeoutError,
)
from llmport.testing import recording_backoff
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from support.api_modes import MODES, run_via
from support.bedrock_scenarios import (
    CREDENTIALS,
    REGION,
    answer,
    error_reply,
    ev,
    stream_reply,
    text_events,
    usage,
)

MODEL = "bedrock:us.amazon.nova-micro-v1:0"
OK = Reply(json=answer([{"text": "fine"}], "end_turn", usage(5, 1)))
OK_STREAM = stream_reply(text_events(["fi", "ne"], 5, 1), "req-ok")


def rt_for(
    server: LoopbackServer,
    delays: list[float],
    settings: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Runtime:
    return Runtime(
        model=MODEL,
        backoff=recording_backoff(delays, jitter=False, initial=0.25),
        providers={
            "bedrock": {
                **CREDENTIALS,
                "region": REGION,
                "endpoint_url": server.url,
                **(settings or {}),
            }
        },
        **kwargs,
    )


async def go(mode: str, rt: Runtime, stream: bool = False, **options: Any) -> RunResult:
    try:
        return await run_via(mode, rt, "Hi", stream=stream, **options)
    finally:
        rt.close()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
async def test_throttling_waits_retry_after(mode: str, stream: bool) -> None:
    delays: list[float] = []
    replies = [
        error_reply(429, "ThrottlingException", "Too many requests", "r1", {"retry-after": "2"}),
        OK_STREAM if stream else OK,
    ]
    with LoopbackServer(replies) as server:
        result = await go(mode, rt_for(server, delays), stream=stream)
        assert len(server.requests) == 2
    assert delays == [2.0]
    failure = result.failures[0].error
    assert isinstance(failure, RateLimitError) and failure.retry_after == 2.0
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (429, "ModelNotReadyException", OverloadedError),
        (408, "ModelTimeoutException", ProviderTimeoutError),
        (503, "ServiceUnavailableException", OverloadedError),
        (500, "InternalServerException", OverloadedError),
        (502, "", OverloadedError),  # a bare 5xx from a proxy: no Bedrock code
    ],
)
async def test_transient_errors_are_retried(mode: str, status: int, code: str, cls: Any) -> None:
    delays: list[float] = []
    reply = (
        error_reply(status, code, "try later", "r")
        if code
        else Reply(status=status, body=b"Bad Gateway")
    )
    with LoopbackServer([reply, OK]) as server:
        result = await go(mode, rt_for(server, delays))
        assert len(server.requests) == 2
    failure = result.failures[0].error
    assert isinstance(failure, cls)
    assert failure.retryable and failure.status == status  # type: ignore[attr-defined]
    assert delays == [0.25]  # exponential backoff, no retry-after given
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (400, "ValidationException", BadRequestError),
        (403, "AccessDeniedException", PermissionDeniedError),
        (404, "ResourceNotFoundException", NotFoundError),
        (403, "UnrecognizedClientException", AuthenticationError),
    ],
)
async def test_permanent_errors_raise_at_once(mode: str, status: int, code: str, cls: Any) -> None:
    delays: list[float] = []
    with LoopbackServer([error_reply(status, code, "no", "r"), OK]) as server:
        with pytest.raises(cls) as info:
            await go(mode, rt_for(server, delays, max_retries=3))
        assert len(server.requests) == 1 and server.unplayed == 1
    assert info.value.retryable is False and info.value.code == code
    assert CREDENTIALS["aws_secret_access_key"] not in str(info.value) + repr(info.value)
    assert delays == []


@pytest.mark.parametrize("mode", MODES)
async def test_botocore_makes_one_attempt_only(mode: str) -> None:
    # llmport is the one retry layer: with max_retries=1 exactly one HTTP request is made.
    with LoopbackServer(
        [error_reply(503, "ServiceUnavailableException", "busy", "r"), OK]
    ) as server:
        with pytest.raises(ExecFailed) as info:
            await go(mode, rt_for(server, [], max_retries=1))
        assert len(server.requests) == 1
    assert isinstance(info.value.last_error, OverloadedError)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
async def test_connection_reset_is_retried(mode: str, stream: bool) -> None:
    with LoopbackServer([Reply(reset=True), OK_STREAM if stream else OK]) as server:
        result = await go(mode, rt_for(server, []), stream=stream)
    assert isinstance(result.failures[0].error, ProviderConnectionError)
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_per_call_timeout_is_a_transient_timeout(mode: str) -> None:
    with LoopbackServer(
        [Reply(delay=1.0, json=answer([{"text": "late"}], "end_turn", usage(1, 1))), OK]
    ) as server:
        result = await go(mode, rt_for(server, []), timeout=0.2)
    failure = result.failures[0].error
    assert isinstance(failure, ProviderTimeoutError) and failure.retryable
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_malformed_json_is_retried(mode: str) -> None:
    with LoopbackServer([Reply(body=b'{"output": {"message": '), OK]) as server:
        result = await go(mode, rt_for(server, []))
    assert isinstance(result.failures[0].error, MalformedResponseError)
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_truncated_event_stream_is_retried(mode: str) -> None:
    cut = stream_reply(text_events(["never", " finished"], 5, 2), "cut")
    cut.truncate = True
    with LoopbackServer([cut, OK_STREAM]) as server:
        result = await go(mode, rt_for(server, []), stream=True, stream_retry="restart")
        assert len(server.requests) == 2
    failure = result.failures[0].error
    assert (
        isinstance(failure, (ProviderConnectionError, MalformedResponseError)) and failure.retryable
    )
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_throttling_frame_inside_stream(mode: str) -> None:
    frames = [
        ev("messageStart", role="assistant"),
        {
            "message_type": "exception",
            "exception_type": "throttlingException",
            "data": {"message": "Too many tokens, please wait before trying again."},
        },
    ]
    with LoopbackServer([stream_reply(frames, "t"), OK_STREAM]) as server:
        result = await go(mode, rt_for(server, []), stream=True)
    failure = result.failures[0].error
    assert isinstance(failure, RateLimitError)
    assert (failure.code, failure.status, failure.retryable) == ("ThrottlingException", 429, True)
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_validation_frame_inside_stream_is_permanent(mode: str) -> None:
    frames = [
        {
            "message_type": "exception",
            "exception_type": "validationException",
            "data": {"message": "bad input"},
        }
    ]
    with LoopbackServer([stream_reply(frames, "v"), OK_STREAM]) as server:
        with pytest.raises(BadRequestError):
            await go(mode, rt_for(server, [], max_retries=3), stream=True)
        assert len(server.requests) == 1


@pytest.mark.parametrize("mode", MODES)
async def test_no_credentials_is_a_config_error_before_sending(mode: str) -> None:
    with LoopbackServer([OK]) as server:
        rt = Runtime(
            model=MODEL,
            backoff=Backoff.none(),
            providers={"bedrock": {"region": REGION, "endpoint_url": server.url}},
        )
        with pytest.raises(ConfigError) as info:
            await go(mode, rt)
        assert server.requests == []
    assert "no usable AWS credentials" in str(info.value) and "AWS_ACCESS_KEY_ID" in str(info.value)


async def test_async_calls_never_block_the_event_loop() -> None:
    released = threading.Event()

    def answer_once_the_loop_ran(request: RecordedRequest) -> Reply:
        # The server answers only after a coroutine ran while boto3 waited for it.
        if released.wait(timeout=10):
            return OK
        return error_reply(400, "ValidationException", "the event loop was blocked", "r")

    with LoopbackServer([Reply(handler=answer_once_the_loop_ran)]) as server:
        rt = rt_for(server, [])

        async def release_once_requested() -> None:
            while not server.requests:
                await asyncio.sleep(0.005)
            released.set()

        helper = asyncio.create_task(release_once_requested())
        try:
            result = await rt.arun("Hi")
        finally:
            rt.close()
        await helper
    assert result.output == "fine"


async def test_thread_pool_bounds_concurrency() -> None:
    lock = threading.Lock()
    in_flight = peak = 0
    pair = threading.Barrier(2)

    def two_at_a_time(request: RecordedRequest) -> Reply:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        try:
            pair.wait(timeout=10)  # two requests at once: proves the pool's two workers run
            threading.Event().wait(0.05)  # room for a third one to arrive, were it let through
        except threading.BrokenBarrierError:
            return error_reply(400, "ValidationException", "requests ran one at a time", "r")
        finally:
            with lock:
                in_flight -= 1
        return OK

    with LoopbackServer([Reply(handler=two_at_a_time)], repeat=True) as server:
        rt = rt_for(server, [], settings={"max_workers": 2})
        try:
            results = await asyncio.gather(*(rt.arun("Hi") for _ in range(4)))
        finally:
            rt.close()
        assert len(server.requests) == 4
    assert [r.output for r in results] == ["fine"] * 4
    assert peak == 2  # 4 calls through 2 workers: never more than 2 requests at once
