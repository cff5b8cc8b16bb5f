"""The direct converse path (botocore's serializer and SigV4, no client.converse), sync and async.

Every answer and every error is checked against what ``client.converse``
gives for the same bytes from the loopback server: the same Response, the
same llmport error (class, message, status, code, retryability, retry
delay), and no credential in messages or exception chains.
"""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
from dataclasses import replace
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
from llmport.messages.types import Message, Request, Response, TextBlock
from llmport.testing import recording_backoff
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_bedrock import provider as provider_module
from llmport_bedrock.plugin import provider_info
from llmport_bedrock.provider import BedrockProvider
from support.api_modes import MODES
from support.bedrock_scenarios import REGION, answer, error_reply, usage

MODEL = "us.amazon.nova-micro-v1:0"
KEY_ID = "FAKEAKIDDIRECTTEST01"
SECRET = "LEAKdirectsecret/abc+xyz-0123456789"
TOKEN = "LEAKdirecttoken-0123456789abcdef"
CREDENTIALS = {
    "aws_access_key_id": KEY_ID,
    "aws_secret_access_key": SECRET,
    "aws_session_token": TOKEN,
}
LEAKS = (KEY_ID, SECRET, TOKEN)
OK = Reply(json=answer([{"text": "fine"}], "end_turn", usage(5, 1)))
ECHO = "The request signed with " + " and ".join(LEAKS) + " is not valid."


def err(status: int, code: str, message: str, **headers: str) -> Reply:
    return error_reply(status, code, message, "req-1", headers)


#: Every error class the plugin knows, plus the shapes a code can arrive in.
ERRORS: dict[str, Reply] = {
    "throttling": err(429, "ThrottlingException", "Too many requests", **{"retry-after": "3"}),
    "model not ready": err(429, "ModelNotReadyException", "warming up"),
    "model timeout": err(408, "ModelTimeoutException", "took too long"),
    "unavailable": err(503, "ServiceUnavailableException", "busy"),
    "internal": err(500, "InternalServerException", "oops"),
    "model error": err(424, "ModelErrorException", "the model failed"),
    "validation": err(400, "ValidationException", "bad field"),
    "context window": err(400, "ValidationException", "Input is too long for requested model."),
    "context window, tokens": err(
        400, "ValidationException", "prompt is too long: 250000 tokens > 200000 maximum"
    ),
    "access denied": err(403, "AccessDeniedException", "no access to this model"),
    "unrecognized client": err(403, "UnrecognizedClientException", "bad key"),
    "invalid signature": err(403, "InvalidSignatureException", "signature mismatch"),
    "expired token": err(403, "ExpiredTokenException", "token expired"),
    "not found": err(404, "ResourceNotFoundException", "no such model"),
    "quota": err(400, "ServiceQuotaExceededException", "quota exceeded"),
    "echoed credentials": err(403, "UnrecognizedClientException", ECHO),
    "code in the body only": Reply(
        status=400,
        json={"__type": "com.amazon.coral.validate#ValidationException", "message": "bad"},
    ),
    "bare proxy 502": Reply(
        status=502, body=b"<html>Bad Gateway</html>", headers={"content-type": "text/html"}
    ),
    "empty 500": Reply(status=500, body=b""),
    "unknown code": err(418, "TeapotException", "short and stout"),
    "not json": Reply(body=b'{"output": {"message": '),
}


def provider(server: LoopbackServer, **settings: Any) -> BedrockProvider:
    return BedrockProvider(
        {**CREDENTIALS, "region": REGION, "endpoint_url": server.url, **settings},
        provider_info(),
    )


def request(**options: Any) -> Request:
    return Request(MODEL, [Message("user", (TextBlock("Hi"),))], options=options)


async def send(mode: str, p: BedrockProvider, req: Request | None = None) -> Response:
    prepared = p.prepare(req or request())
    try:
        if mode == "sync":
            return p.send(prepared)
        return await p.asend(prepared)
    finally:
        if mode == "sync":
            p.close()
        else:
            await p.aclose()


async def outcome(
    mode: str, reply: Reply, direct: bool, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, list[Any]]:
    """What ``send`` gives for ``reply``, on the direct path or on ``client.converse``."""
    with monkeypatch.context() as patch:
        if not direct:
            patch.setattr(provider_module, "usable", lambda client: False)
        with LoopbackServer([reply]) as server:
            p = provider(server)
            try:
                return await send(mode, p), server.requests
            except LlmportError as exc:
                return exc, server.requests


def facts(error: Any) -> tuple[Any, ...]:
    assert isinstance(error, LlmportError), error
    return (
        type(error),
        str(error),
        getattr(error, "status", None),
        getattr(error, "code", None),
        getattr(error, "retryable", None),
        getattr(error, "retry_after", None),
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", list(ERRORS))
async def test_errors_are_classified_as_client_converse_classifies_them(
    mode: str, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    direct, sent = await outcome(mode, ERRORS[case], True, monkeypatch)
    before, _ = await outcome(mode, ERRORS[case], False, monkeypatch)
    assert len(sent) == 1  # one attempt: llmport is the retry layer
    assert facts(direct) == facts(before)
    for secret in LEAKS:
        assert secret not in str(direct)
        if isinstance(direct, ProviderError) and direct.vendor_error:
            assert secret not in direct.vendor_error


@pytest.mark.parametrize("mode", MODES)
async def test_the_request_is_the_same_bytes_and_a_signed_sigv4_post(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools_request = request(temperature=0.5, max_tokens=100, stop=["END"])
    bodies = []
    for direct in (True, False):
        with monkeypatch.context() as patch:
            if not direct:
                patch.setattr(provider_module, "usable", lambda client: False)
            with LoopbackServer([OK]) as server:
                assert (await send(mode, provider(server), tools_request)).text == "fine"
                (sent,) = server.requests
        bodies.append(sent.body)
        assert sent.method == "POST"
        assert sent.path == "/model/us.amazon.nova-micro-v1%3A0/converse"
        headers = {k.lower(): v for k, v in sent.headers.items()}
        assert headers["content-type"] == "application/json"
        assert (
            headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={KEY_ID}/")
            and f"/{REGION}/bedrock/aws4_request" in headers["authorization"]
        )
        assert headers["x-amz-security-token"] == TOKEN
        assert "x-amz-date" in headers
    assert bodies[0] == bodies[1]


@pytest.mark.parametrize("mode", MODES)
async def test_answers_read_from_json_equal_botocores_parse(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    png = base64.b64encode(b"\x89PNG fake image").decode()
    redacted = base64.b64encode(b"opaque reasoning").decode()
    content = [
        {"reasoningContent": {"redactedContent": redacted}},
        {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "sig"}}},
        {"text": "Here it is."},
        {
            "toolUse": {
                "toolUseId": "srv-1",
                "name": "nova_code_interpreter",
                "type": "server_tool_use",
                "input": {"code": "plot()"},
            }
        },
        {
            "toolResult": {
                "toolUseId": "srv-1",
                "content": [
                    {"text": "done"},
                    {"image": {"format": "png", "source": {"bytes": png}}},
                ],
                "status": "success",
            }
        },
        {"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {"city": "Paris"}}},
    ]
    reply = Reply(
        json=answer(content, "tool_use", usage(10, 4, 2, 1)),
        headers={"x-amzn-RequestId": "req-42"},
    )
    direct, _ = await outcome(mode, reply, True, monkeypatch)
    before, _ = await outcome(mode, reply, False, monkeypatch)
    assert isinstance(direct, Response)
    assert direct == before
    assert direct.id == "req-42"
    assert direct.tool_calls[0].arguments == {"city": "Paris"}
    result = direct.blocks[-1]
    assert result.content[1]["image"]["source"]["bytes"] == b"\x89PNG fake image"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_invalid_parameters_are_option_errors_before_any_request(mode: str) -> None:
    with LoopbackServer([OK]) as server:
        p = provider(server)
        prepared = p.prepare(request())
        prepared.payload["inferenceConfig"]["maxTokens"] = "many"
        with pytest.raises(OptionError, match=r"inferenceConfig\.maxTokens") as info:
            if mode == "sync":
                p.send(prepared)
            else:
                await p.asend(prepared)
        p.close()
        assert server.requests == []
    assert info.value.__cause__ is None and info.value.__context__ is None


@pytest.mark.parametrize("mode", MODES)
async def test_a_prepared_request_is_serialized_once_for_every_attempt(mode: str) -> None:
    with LoopbackServer([err(503, "ServiceUnavailableException", "busy"), OK]) as server:
        p = provider(server)
        prepared = p.prepare(request())
        with pytest.raises(ProviderError):
            if mode == "sync":
                p.send(prepared)
            else:
                await p.asend(prepared)
        wire = prepared.wire
        assert wire is not None
        assert (p.send(prepared) if mode == "sync" else await p.asend(prepared)).text == "fine"
        assert prepared.wire is wire
        first, second = server.requests
        p.close()
    assert first.body == second.body == wire[1]
    # each attempt is signed anew (same second: same signature is fine; the header is there)
    assert "authorization" in {k.lower() for k in second.headers}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("mode", MODES)
async def test_no_server_is_a_connection_error(mode: str) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    p = BedrockProvider({**CREDENTIALS, "region": REGION, "endpoint_url": url}, provider_info())
    with pytest.raises(ProviderConnectionError) as info:
        await send(mode, p)
    assert info.value.retryable
    assert info.value.__cause__ is None


@pytest.mark.parametrize("mode", MODES)
async def test_a_slow_answer_is_a_retryable_timeout(mode: str) -> None:
    with (
        LoopbackServer([Reply(delay=1.0, json=OK.json)]) as server,
        pytest.raises(ProviderTimeoutError) as info,
    ):
        await send(mode, provider(server, timeout=0.2))
    assert info.value.retryable


@pytest.mark.parametrize("mode", MODES)
async def test_errors_through_the_runtime_hold_no_credentials_in_their_chains(mode: str) -> None:
    replies = [err(403, "UnrecognizedClientException", ECHO), ERRORS["not json"]]
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
                if mode == "sync":
                    rt.exec("Hi")
                else:
                    await rt.async_exec("Hi")
            except Exception as exc:
                error: BaseException = exc
            else:
                raise AssertionError("the call did not fail")
            finally:
                rt.close()
        for start in (error, getattr(error, "last_error", None)):
            node: BaseException | None = start
            while node is not None:
                for secret in LEAKS:
                    assert secret not in str(node)
                assert isinstance(node, LlmportError)  # no botocore/aiohttp exception kept
                node = node.__cause__ or node.__context__


@pytest.mark.parametrize("mode", MODES)
async def test_no_credentials_is_a_config_error_before_sending(mode: str) -> None:
    with LoopbackServer([OK]) as server:
        p = BedrockProvider({"region": REGION, "endpoint_url": server.url}, provider_info())
        with pytest.raises(ConfigError, match="no usable AWS credentials"):
            await send(mode, p)
        assert server.requests == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_bedrock_api_key_is_never_sent_over_plain_http(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # botocore signs with the bearer token when AWS_BEARER_TOKEN_BEDROCK is set; plain
    # HTTP would carry the key in the clear: llmport refuses it, whatever botocore does
    # (1.44 refuses it too, earlier releases send it).
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-for-tests")
    with LoopbackServer([OK]) as server:
        p = provider(server)
        with pytest.raises(ConfigError, match=r"BEDROCK\) is sent only over HTTPS"):
            await send(mode, p)
        assert server.requests == []


async def test_async_sends_use_one_aiohttp_session_per_loop() -> None:
    with LoopbackServer([OK], repeat=True) as server:
        p = provider(server)
        prepared = p.prepare(request())
        for _ in range(3):
            assert (await p.asend(prepared)).text == "fine"
        assert p._aio.open_loops == 1
        assert p._pool is not None  # made once, to create the client off the loop
        await p.aclose()
        assert p._aio.open_loops == 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "body",
    [
        b'["a", "list"]',
        b"null",
        b'{"output": {"message": {"content": [{"reasoningContent": {"redactedContent": "x"}}]}}}',
    ],
)
async def test_json_not_shaped_as_an_answer_is_a_retryable_malformed_response(
    mode: str, body: bytes
) -> None:
    # client.converse let botocore's AttributeError out for a JSON list; now it is typed.
    reply = Reply(body=body, headers={"content-type": "application/json"})
    with LoopbackServer([reply]) as server, pytest.raises(MalformedResponseError) as info:
        await send(mode, provider(server))
    assert info.value.retryable


async def test_a_due_credential_refresh_runs_off_the_loop_and_signs_the_attempt() -> None:
    from botocore.credentials import ReadOnlyCredentials

    class Refreshable:
        """Stands in for botocore's RefreshableCredentials whose refresh is due."""

        def __init__(self) -> None:
            self.threads: list[int] = []

        def refresh_needed(self) -> bool:
            return True

        def get_frozen_credentials(self) -> Any:
            self.threads.append(threading.get_ident())  # a refresh may call STS / IMDS
            return ReadOnlyCredentials("FAKEAKIDROLLED000001", "LEAKrolledsecret-abc", None)

    with LoopbackServer([OK, OK]) as server:
        p = provider(server)
        prepared = p.prepare(request())
        assert (await p.asend(prepared)).text == "fine"  # makes the client
        rolled = Refreshable()
        p._credentials = rolled
        assert (await p.asend(prepared)).text == "fine"
        await p.aclose()
        sent = server.requests[1]
    assert rolled.threads and threading.get_ident() not in rolled.threads
    auth = {k.lower(): v for k, v in sent.headers.items()}["authorization"]
    assert "Credential=FAKEAKIDROLLED000001/" in auth
    assert "LEAKrolledsecret-abc" in p.secrets()


def test_the_async_tls_context_is_loaded_once_per_provider() -> None:
    settings = {**CREDENTIALS, "region": REGION}
    https = BedrockProvider({**settings, "endpoint_url": "https://127.0.0.1:9"}, provider_info())
    https._wire(None)
    context = https._tls()
    assert isinstance(context, ssl.SSLContext) and https._tls() is context
    https.close()
    plain = BedrockProvider({**settings, "endpoint_url": "http://127.0.0.1:9"}, provider_info())
    plain._wire(None)
    assert plain._tls() is True  # aiohttp's default: no bundle loaded for plain HTTP
    plain.close()


@pytest.mark.parametrize("mode", MODES)
async def test_an_instance_with_its_own_endpoint_never_sends_the_bedrock_api_key(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AWS_BEARER_TOKEN_BEDROCK is meant for AWS: the instance signs with its own credentials."""
    token = "bedrock-api-key-for-aws-only-0123456789"
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", token)
    with LoopbackServer([OK]) as server:
        info = replace(provider_info(), prefix="proxy", base="bedrock")
        settings = {**CREDENTIALS, "region": REGION, "endpoint_url": server.url}
        p = BedrockProvider(settings, info)
        assert (await send(mode, p)).text == "fine"
        (sent,) = server.requests
    headers = json.dumps(dict(sent.headers))
    assert token not in headers and "AWS4-HMAC-SHA256" in headers
