"""Credentials never leave: not through exception chains, tracebacks, reprs or botocore's logs.

The loopback "Bedrock" echoes the credentials back in its error bodies (as a
misbehaving proxy might). The access key id has the AWS ``AKIA`` shape; the
secret key and the session token have no known shape, so only the literal
masking of configured (or resolved) values can hide them.
"""

from __future__ import annotations

import logging
import traceback
from pathlib import Path
from typing import Any

import pytest
from llmport import AuthenticationError, ExecFailed, RateLimitError, Runtime
from llmport.errors import ProviderError
from llmport.messages.types import Request
from llmport.testing import recording_backoff
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_bedrock.plugin import provider_info
from llmport_bedrock.provider import BedrockProvider
from support.api_modes import MODES, run_via
from support.bedrock_scenarios import (
    REGION,
    answer,
    error_reply,
    ev,
    stream_reply,
    text_events,
    usage,
)

MODEL = "bedrock:us.amazon.nova-micro-v1:0"
KEY_ID = "AKIALLMPORTLEAKTEST1"
SECRET = "LEAKcustomsecret/abc+xyz-0123456789"
TOKEN = "LEAKsessiontoken-0123456789abcdef"
CREDENTIALS = {
    "aws_access_key_id": KEY_ID,
    "aws_secret_access_key": SECRET,
    "aws_session_token": TOKEN,
}
LEAKS = (KEY_ID, SECRET, TOKEN)
OK = Reply(json=answer([{"text": "fine"}], "end_turn", usage(5, 1)))
OK_STREAM = stream_reply(text_events(["fi", "ne"], 5, 1), "req-ok")


def echo(secrets: tuple[str, ...] = LEAKS) -> str:
    return "The request signed with " + " and ".join(secrets) + " is not valid."


def runtime(server: LoopbackServer, settings: dict[str, Any], **kwargs: Any) -> Runtime:
    return Runtime(
        model=MODEL,
        backoff=recording_backoff([], jitter=False),
        providers={"bedrock": {**settings, "region": REGION, "endpoint_url": server.url}},
        **kwargs,
    )


def shown(err: BaseException) -> str:
    """Everything a user could print of ``err``: its traceback (chain included) and repr."""
    return "".join(traceback.format_exception(err)) + repr(err) + str(err)


def assert_clean(err: BaseException, secrets: tuple[str, ...] = LEAKS) -> None:
    text = shown(err)
    for secret in secrets:
        assert secret not in text
    if isinstance(err, ProviderError):
        assert err.__cause__ is None
        assert err.__context__ is None  # detached by the runtime: no botocore exception held
        assert err.vendor_error is not None
        assert not any(secret in err.vendor_error for secret in secrets)


def exception_frame(code: str, message: str) -> dict[str, Any]:
    return {"message_type": "exception", "exception_type": code, "data": {"message": message}}


async def failing_run(
    mode: str, server: LoopbackServer, settings: dict[str, Any], stream: bool, **kw: Any
) -> BaseException:
    rt = runtime(server, settings, **kw)
    try:
        await run_via(mode, rt, "Hi", stream=stream)
    except Exception as exc:
        return exc
    finally:
        rt.close()
    raise AssertionError("the call did not fail")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
async def test_a_permanent_error_echoing_the_keys_chains_and_shows_none(
    mode: str, stream: bool
) -> None:
    if stream:
        frames = [ev("messageStart", role="assistant")]
        frames.append(exception_frame("validationException", echo()))
        reply = stream_reply(frames, "r1")
    else:
        reply = error_reply(403, "UnrecognizedClientException", echo(), "r1")
    with LoopbackServer([reply, OK]) as server:
        err = await failing_run(mode, server, CREDENTIALS, stream, max_retries=3)
        assert len(server.requests) == 1
    assert isinstance(err, ProviderError) and not err.retryable
    assert "is not valid" in str(err) and "***" in str(err)  # the echo arrived, masked
    assert_clean(err)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
async def test_retried_throttling_ending_in_exec_failed_shows_no_key(
    mode: str, stream: bool
) -> None:
    if stream:
        frames = [ev("messageStart", role="assistant")]
        frames.append(exception_frame("throttlingException", echo()))
        replies = [stream_reply(frames, "r1"), stream_reply(frames, "r2")]
    else:
        replies = [error_reply(429, "ThrottlingException", echo(), f"r{i}") for i in (1, 2)]
    with LoopbackServer([*replies, OK_STREAM if stream else OK]) as server:
        err = await failing_run(mode, server, CREDENTIALS, stream, max_retries=2)
        assert len(server.requests) == 2
    assert isinstance(err, ExecFailed) and len(err.attempts) == 2
    assert_clean(err)
    for failure in err.attempts:
        assert isinstance(failure.error, RateLimitError) and failure.error.retryable
        assert "***" in str(failure.error)
        assert_clean(failure.error)
    assert err.__cause__ is err.attempts[-1].error


@pytest.mark.parametrize("mode", MODES)
async def test_credentials_resolved_from_a_shared_file_are_masked_too(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No key in the settings: only the session knows them (AWS credential chain).
    key_id, secret = "LEAKFILEKEYID-0001", "LEAKfilesecret-abcdef0123456789"
    path = tmp_path / "credentials"
    path.write_text(f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(path))
    leaks = (key_id, secret)
    with LoopbackServer([error_reply(403, "AccessDeniedException", echo(leaks), "r1")]) as server:
        rt = runtime(server, {})
        try:
            with pytest.raises(AuthenticationError) as info:
                await run_via(mode, rt, "Hi")
            p = rt.route(MODEL)[0]
            assert isinstance(p, BedrockProvider)
            assert set(leaks) <= set(p.secrets())
        finally:
            rt.close()
    assert "***" in str(info.value)
    assert_clean(info.value, leaks)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
async def test_botocore_debug_logs_show_no_credentials(
    mode: str, stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="botocore")
    caplog.set_level(logging.DEBUG, logger="urllib3")
    throttled = error_reply(429, "ThrottlingException", echo(), "r1")
    with LoopbackServer([throttled, OK_STREAM if stream else OK]) as server:
        rt = runtime(server, CREDENTIALS)
        try:
            result = await run_via(mode, rt, "Hi", stream=stream)
        finally:
            rt.close()
    assert result.output == "fine"
    messages = [record.getMessage() for record in caplog.records]
    # The records that used to carry the credentials were captured, masked: the
    # canonical request (botocore's signer logs it) and the echoed error body.
    # (The direct path sends without botocore's "Sending http request" record.)
    assert any("x-amz-security-token:***" in m for m in messages)
    assert any("Response body" in m and "is not valid" in m for m in messages)
    for secret in LEAKS:
        assert secret not in caplog.text
        assert not any(secret in m for m in messages)


def test_the_access_key_id_is_a_secret_of_the_provider() -> None:
    p = BedrockProvider({**CREDENTIALS, "region": REGION}, provider_info())
    assert set(LEAKS) <= set(p.secrets())
    assert not any(secret in repr(p) for secret in LEAKS)


def test_credentials_refreshed_between_attempts_are_masked_too() -> None:
    """A role's or SSO credentials roll over: the values of the next attempt are masked too."""

    class Rolling:
        """Stands in for botocore's RefreshableCredentials: new values on every refresh."""

        def __init__(self) -> None:
            self.n = 0

        def get_frozen_credentials(self) -> Any:
            from botocore.credentials import ReadOnlyCredentials

            self.n += 1
            return ReadOnlyCredentials(
                f"LEAKROLLINGKEY-{self.n:04d}", f"LEAKrollingsecret-{self.n:04d}-abc", None
            )

    rolled = ("LEAKROLLINGKEY-0002", "LEAKrollingsecret-0002-abc")
    reply = error_reply(403, "AccessDeniedException", echo(rolled), "r2")
    with LoopbackServer([OK, reply]) as server:
        p = BedrockProvider(
            {**CREDENTIALS, "region": REGION, "endpoint_url": server.url}, provider_info()
        )
        prepared = p.prepare(Request(model="us.amazon.nova-micro-v1:0", messages=[]))
        p.client()
        p._credentials = Rolling()  # the session's credentials, refreshed before each attempt
        assert p.send(prepared).text == "fine"  # attempt 1: the 0001 values
        with pytest.raises(AuthenticationError) as info:
            p.send(prepared)  # attempt 2: the 0002 values, echoed back
        p.close()
    assert "***" in str(info.value) and "is not valid" in str(info.value)
    assert not any(secret in shown(info.value) for secret in rolled)
    assert set(rolled) <= set(p.secrets())
