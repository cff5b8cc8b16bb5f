"""The direct converse-stream path (botocore's serializer, SigV4 and frame decoder), sync and async.

Every stream and every fault is sent to the direct path and to
``client.converse_stream`` (the direct path turned off) from the same
loopback bytes: the raw event dicts are equal (bytes members included), the
provider events are equal, and every error is the same llmport error (class,
message, status, code, retryability, retry delay), with no credential in
messages or exception chains.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from llmport import Runtime
from llmport.errors import (
    ConfigError,
    LlmportError,
    MalformedResponseError,
    OptionError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
)
from llmport.messages.types import Message, Request, TextBlock
from llmport.testing import recording_backoff
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_bedrock import provider as provider_module
from llmport_bedrock.direct import AsyncEvents, Events
from llmport_bedrock.eventstream import encode_frame, encode_stream, exception_frame
from llmport_bedrock.plugin import provider_info
from llmport_bedrock.provider import BedrockProvider
from support.api_modes import MODES, events_via
from support.bedrock_scenarios import (
    EVENTSTREAM,
    REGION,
    citation_events,
    code_interpreter_events,
    ev,
    reasoning_stream_events,
    stream_reply,
    text_events,
    tool_events,
)
from test_bedrock_direct import CREDENTIALS, ERRORS, KEY_ID, LEAKS, TOKEN, facts

MODEL = "us.amazon.nova-micro-v1:0"
ECHO = "The request signed with " + " and ".join(LEAKS) + " is not valid."

OK_STREAM = stream_reply(text_events(["fi", "ne"], 5, 1), "req-ok")


def frames(*parts: bytes) -> Reply:
    return Reply(
        body=b"".join(parts),
        headers={"content-type": EVENTSTREAM, "x-amzn-RequestId": "req-s"},
    )


def first_events() -> bytes:
    return encode_stream(
        [
            ev("messageStart", role="assistant"),
            ev("contentBlockDelta", contentBlockIndex=0, delta={"text": "Hel"}),
        ]
    )


def redacted_events() -> list[dict[str, Any]]:
    blob = base64.b64encode(b"\x00opaque reasoning\xff").decode()
    return [
        ev("messageStart", role="assistant"),
        ev(
            "contentBlockDelta",
            contentBlockIndex=0,
            delta={"reasoningContent": {"redactedContent": blob}},
        ),
        ev("contentBlockStop", contentBlockIndex=0),
        ev("contentBlockDelta", contentBlockIndex=1, delta={"text": "ok"}),
        ev("contentBlockStop", contentBlockIndex=1),
        ev("messageStop", stopReason="end_turn"),
        ev(
            "metadata",
            metrics={"latencyMs": 1},
            usage={"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        ),
    ]


#: Streams that end well, as Bedrock sends them.
STREAMS: dict[str, list[dict[str, Any]]] = {
    "text": text_events(["Hel", "lo", "!"], 5, 3),
    "tools": tool_events(),
    "reasoning": reasoning_stream_events(),
    "redacted reasoning": redacted_events(),
    "code interpreter": code_interpreter_events(),
    "citations": citation_events(),
}

#: Exception frames the ConverseStream event shape has a member for.
MODELED = [
    "throttlingException",
    "validationException",
    "modelStreamErrorException",
    "serviceUnavailableException",
    "internalServerException",
]
#: ... and frames it has none for (botocore parses them without a code).
EXCEPTIONS = [*MODELED, "modelTimeoutException", "someNewException"]

#: Faults inside a 200 stream other than exception frames.
STREAM_FAULTS: dict[str, Reply] = {
    "exception frame after events": frames(
        first_events(), exception_frame("throttlingException", "slow down")
    ),
    "exception frame echoing credentials": frames(
        first_events(), exception_frame("validationException", ECHO)
    ),
    "error frame": frames(
        first_events(),
        encode_frame(
            {":message-type": "error", ":error-code": "InternalFailure", ":error-message": "boom"},
            b"",
        ),
    ),
    "corrupt frame": frames(first_events(), b"\x00\x00\x00\x20" + b"\x00" * 28),
    "not event-stream bytes": Reply(body=b'{"output": {"message": '),
    "partial frame at the end": frames(first_events(), encode_stream(STREAMS["text"])[:30]),
    "no frames": frames(),
}


def provider(server: LoopbackServer, **settings: Any) -> BedrockProvider:
    return BedrockProvider(
        {**CREDENTIALS, "region": REGION, "endpoint_url": server.url, **settings},
        provider_info(),
    )


def request(**options: Any) -> Request:
    return Request(MODEL, [Message("user", (TextBlock("Hi"),))], options=options)


async def collect(
    mode: str, p: BedrockProvider, req: Request | None = None
) -> tuple[list[Any], Any]:
    """The provider events of one stream and its llmport error (None if it ended well)."""
    prepared = p.prepare(req or request())
    events: list[Any] = []
    try:
        if mode == "sync":
            events.extend(p.send_stream(prepared))
        else:
            events.extend([e async for e in p.asend_stream(prepared)])
    except LlmportError as exc:
        return events, exc
    finally:
        if mode == "sync":
            p.close()
        else:
            await p.aclose()
    return events, None


async def outcome(
    mode: str, reply: Reply, direct: bool, monkeypatch: pytest.MonkeyPatch, **settings: Any
) -> tuple[list[Any], Any, list[Any]]:
    """What a stream gives for ``reply``, on the direct path or on ``client.converse_stream``."""
    with monkeypatch.context() as patch:
        if not direct:
            patch.setattr(provider_module, "usable", lambda client: False)
        with LoopbackServer([reply]) as server:
            events, error = await collect(mode, provider(server, **settings))
            return events, error, server.requests


async def raw_events(mode: str, reply: Reply, direct: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The event dicts the provider reads (botocore's EventStream, or the direct decoder)."""
    with monkeypatch.context() as patch:
        if not direct:
            patch.setattr(provider_module, "usable", lambda client: False)
        with LoopbackServer([reply]) as server:
            p = provider(server)
            prepared = p.prepare(request())
            if mode == "sync":
                stream, request_id = p._open_stream(prepared)
                assert isinstance(stream, Events) == direct
                out = list(stream)
                stream.close()
                p.close()
                return out, request_id
            stream, request_id = await p._aopen_stream(prepared)
            out = []
            if isinstance(stream, AsyncEvents):
                assert direct
                while (event := await stream.next()) is not None:
                    out.append(event)
            else:
                assert not direct  # boto3's stream, read here on the loop: a test only
                out = list(stream)
            stream.close()
            await p.aclose()
            return out, request_id


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", list(STREAMS))
async def test_event_dicts_equal_botocores_event_stream(
    mode: str, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = stream_reply(STREAMS[case], "req-7")
    direct = await raw_events(mode, reply, True, monkeypatch)
    before = await raw_events(mode, reply, False, monkeypatch)
    assert direct == before
    assert direct[1] == "req-7"
    assert len(direct[0]) == len(STREAMS[case])


@pytest.mark.parametrize("mode", MODES)
async def test_bytes_members_are_bytes(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    reply = stream_reply(STREAMS["redacted reasoning"], "req-b")
    events, _ = await raw_events(mode, reply, True, monkeypatch)
    delta = events[1]["contentBlockDelta"]["delta"]["reasoningContent"]
    assert delta["redactedContent"] == b"\x00opaque reasoning\xff"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", list(STREAMS))
async def test_provider_events_equal_the_boto3_streams(
    mode: str, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = stream_reply(STREAMS[case], "req-7")
    direct = await outcome(mode, reply, True, monkeypatch)
    before = await outcome(mode, reply, False, monkeypatch)
    assert direct[1] is None and before[1] is None
    assert direct[0] == before[0]


def assert_same_error(direct: Any, before: Any) -> None:
    assert facts(direct) == facts(before)
    for secret in LEAKS:
        assert secret not in str(direct)
        if isinstance(direct, ProviderError) and direct.vendor_error:
            assert secret not in direct.vendor_error
    # The chain a traceback shows holds nothing from botocore or aiohttp (the runtime
    # also cuts the suppressed context: see the Runtime test below).
    node: BaseException | None = direct
    while node is not None:
        assert isinstance(node, LlmportError)
        node = node.__cause__ or (None if node.__suppress_context__ else node.__context__)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", list(ERRORS))
async def test_http_errors_are_classified_as_converse_stream_classifies_them(
    mode: str, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    events, direct, sent = await outcome(mode, ERRORS[case], True, monkeypatch)
    before_events, before, _ = await outcome(mode, ERRORS[case], False, monkeypatch)
    assert len(sent) == 1  # one attempt: llmport is the retry layer
    assert events == before_events
    if case == "not json":  # a 200 whose bytes are no frames: malformed either way
        assert isinstance(direct, MalformedResponseError)
    assert_same_error(direct, before)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("code", EXCEPTIONS)
async def test_exception_frames_raise_what_converse_stream_raises(
    mode: str, code: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = frames(exception_frame(code, f"{code} happened"))
    events, direct, _ = await outcome(mode, reply, True, monkeypatch)
    before_events, before, _ = await outcome(mode, reply, False, monkeypatch)
    assert isinstance(direct, ProviderError)
    if code in MODELED:  # a member of the stream's shape: its code; else botocore's blank one
        assert direct.code == code[:1].upper() + code[1:]
    assert events == before_events == []
    assert_same_error(direct, before)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", list(STREAM_FAULTS))
async def test_faults_inside_a_stream_match_converse_stream(
    mode: str, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = STREAM_FAULTS[case]
    events, direct, _ = await outcome(mode, reply, True, monkeypatch)
    before_events, before, _ = await outcome(mode, reply, False, monkeypatch)
    assert events == before_events  # what came before the fault was delivered alike
    if before is None:
        assert direct is None
    else:
        assert_same_error(direct, before)


@pytest.mark.parametrize("mode", MODES)
async def test_a_truncated_stream(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cut = stream_reply(text_events(["never", " finished"], 5, 2), "cut")
    cut.truncate = True  # promises twice the bytes it sends, then hangs up
    events, direct, _ = await outcome(mode, cut, True, monkeypatch)
    before_events, before, _ = await outcome(mode, cut, False, monkeypatch)
    # What boto3 itself does depends on the installed botocore: from 1.44 it ends the
    # body quietly where the server hung up (the events so far, no messageStop: the
    # runtime retries that); 1.42 raises a retryable connection error. Either way the
    # direct sync path (botocore's own reader) does the same as boto3.
    if before is None:
        assert [e.text for e in before_events] == ["never"]
    else:
        assert isinstance(before, ProviderConnectionError) and before.retryable
    if mode == "sync":
        assert [e.text for e in events] == [e.text for e in before_events]
        if before is None:
            assert direct is None
        else:
            assert_same_error(direct, before)
    else:
        # aiohttp checks the promised length: a retryable connection error.
        assert isinstance(direct, ProviderConnectionError) and direct.retryable


@pytest.mark.parametrize("mode", MODES)
async def test_a_slow_stream_is_a_retryable_timeout(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = stream_reply(text_events(["late"], 1, 1), "slow")
    slow.delay = 1.0
    _, direct, _ = await outcome(mode, slow, True, monkeypatch, timeout=0.2)
    _, before, _ = await outcome(mode, slow, False, monkeypatch, timeout=0.2)
    assert type(direct) is type(before) is ProviderTimeoutError
    assert direct.retryable


@pytest.mark.parametrize("mode", MODES)
async def test_the_request_is_the_same_bytes_and_a_signed_sigv4_post(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    req = request(temperature=0.5, max_tokens=100, stop=["END"])
    bodies = []
    for direct in (True, False):
        with monkeypatch.context() as patch:
            if not direct:
                patch.setattr(provider_module, "usable", lambda client: False)
            with LoopbackServer([OK_STREAM]) as server:
                events, error = await collect(mode, provider(server), req)
                assert error is None and events
                (sent,) = server.requests
        bodies.append(sent.body)
        assert sent.method == "POST"
        assert sent.path == "/model/us.amazon.nova-micro-v1%3A0/converse-stream"
        headers = {k.lower(): v for k, v in sent.headers.items()}
        assert headers["content-type"] == "application/json"
        assert headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={KEY_ID}/")
        assert f"/{REGION}/bedrock/aws4_request" in headers["authorization"]
        assert headers["x-amz-security-token"] == TOKEN
    assert bodies[0] == bodies[1]
    assert json.loads(bodies[0])["inferenceConfig"] == {
        "temperature": 0.5,
        "maxTokens": 100,
        "stopSequences": ["END"],
    }


@pytest.mark.parametrize("mode", MODES)
async def test_a_prepared_stream_is_serialized_once_for_every_attempt(mode: str) -> None:
    with LoopbackServer([ERRORS["unavailable"], OK_STREAM]) as server:
        p = provider(server)
        prepared = p.prepare(request())
        if mode == "sync":
            with pytest.raises(ProviderError):
                list(p.send_stream(prepared))
            wire = prepared.stream_wire
            assert list(p.send_stream(prepared))
            p.close()
        else:
            with pytest.raises(ProviderError):
                [e async for e in p.asend_stream(prepared)]
            wire = prepared.stream_wire
            assert [e async for e in p.asend_stream(prepared)]
            await p.aclose()
        first, second = server.requests
    assert wire is not None and prepared.stream_wire is wire
    assert prepared.wire is None  # the Converse body is its own, made only when sent
    assert first.body == second.body == wire[1]


@pytest.mark.parametrize("mode", MODES)
async def test_invalid_parameters_are_option_errors_before_any_request(mode: str) -> None:
    with LoopbackServer([OK_STREAM]) as server:
        p = provider(server)
        prepared = p.prepare(request())
        prepared.payload["inferenceConfig"]["maxTokens"] = "many"
        with pytest.raises(OptionError, match=r"inferenceConfig\.maxTokens") as info:
            if mode == "sync":
                list(p.send_stream(prepared))
            else:
                [e async for e in p.asend_stream(prepared)]
        p.close()
        assert server.requests == []
    assert info.value.__cause__ is None and info.value.__context__ is None


async def test_async_streams_use_no_thread_once_the_client_exists() -> None:
    with LoopbackServer([OK_STREAM], repeat=True) as server:
        p = provider(server)
        prepared = p.prepare(request())
        events = [e async for e in p.asend_stream(prepared)]  # makes the client (on the pool)
        assert events

        def no_pool() -> Any:
            raise AssertionError("the direct stream path used the thread pool")

        p.executor = no_pool  # type: ignore[method-assign]
        for _ in range(3):
            assert [e async for e in p.asend_stream(prepared)] == events
        assert p._aio.open_loops == 1
        await p.aclose()


@pytest.mark.parametrize("mode", MODES)
async def test_a_stream_left_early_frees_its_connection_and_the_next_one_works(mode: str) -> None:
    long = stream_reply(text_events([f"piece {i} " for i in range(200)], 5, 200), "long")
    with LoopbackServer([long, OK_STREAM]) as server:
        p = provider(server)
        prepared = p.prepare(request())
        if mode == "sync":
            stream = p.send_stream(prepared)
            next(stream)
            stream.close()
            events, error = list(p.send_stream(prepared)), None
        else:
            agen = p.asend_stream(prepared)
            await agen.__anext__()
            await agen.aclose()
            events = [e async for e in p.asend_stream(prepared)]
            error = None
        assert error is None and events
        assert len(server.requests) == 2
        if mode == "sync":
            p.close()
        else:
            await p.aclose()


@pytest.mark.parametrize("mode", MODES)
async def test_a_bedrock_api_key_is_never_streamed_to_plain_http(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # botocore signs with the bearer token when AWS_BEARER_TOKEN_BEDROCK is set; llmport
    # refuses plain HTTP itself, whatever the installed botocore does.
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-for-tests")
    with LoopbackServer([OK_STREAM]) as server:
        _, error = await collect(mode, provider(server))
        assert isinstance(error, ConfigError)
        assert "is sent only over HTTPS" in str(error)
        assert server.requests == []


@pytest.mark.parametrize("mode", MODES)
async def test_stream_errors_through_the_runtime_hold_no_credentials_in_their_chains(
    mode: str,
) -> None:
    replies = [
        ERRORS["echoed credentials"],
        STREAM_FAULTS["exception frame echoing credentials"],
        STREAM_FAULTS["corrupt frame"],
    ]
    for reply in replies:
        with LoopbackServer([reply]) as server:
            rt = Runtime(
                model=f"bedrock:{MODEL}",
                backoff=recording_backoff([], jitter=False),
                max_retries=1,
                providers={
                    "bedrock": {**CREDENTIALS, "region": REGION, "endpoint_url": server.url}
                },
            )
            try:
                await events_via(mode, rt, "Hi")
            except Exception as exc:
                error: BaseException = exc
            else:
                raise AssertionError("the stream did not fail")
            finally:
                rt.close()
        for start in (error, getattr(error, "last_error", None)):
            node: BaseException | None = start
            while node is not None:
                for secret in LEAKS:
                    assert secret not in str(node)
                assert isinstance(node, LlmportError)  # no botocore/aiohttp exception kept
                node = node.__cause__ or node.__context__
