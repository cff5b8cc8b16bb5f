"""The provider contract (Engine v2) of the Anthropic plugin, against a loopback server.

prepare once / send per attempt, one async client per event loop, credentials
checked before any request, no key in any error or traceback, vendor fields,
and input problems that are never retried as transient errors.
"""

from __future__ import annotations

import asyncio
import traceback
from typing import Any

import pytest
from llmport import (
    AuthenticationError,
    ConfigError,
    ExecFailed,
    OverloadedError,
    ProviderError,
    Runtime,
    UnsupportedFeatureError,
)
from llmport.errors import OptionError
from llmport.messages.types import Message, Reasoning, Request, TextBlock, ToolSpec
from llmport.testing import recording_backoff
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from llmport_anthropic import convert_in
from llmport_anthropic import provider as provider_module
from llmport_anthropic.provider import AnthropicProvider
from support.anthropic_scenarios import error, message, text_stream, usage
from support.api_modes import MODES, run_via

MODEL = "claude-haiku-4-5-20251001"
OK = Reply(
    json=message("msg_ok", MODEL, [{"type": "text", "text": "fine"}], "end_turn", usage(5, 1))
)
OK_STREAM = Reply(sse=text_stream("msg_ok", MODEL, ["fi", "ne"], 5, 1))
#: A key in Anthropic's own format (masked by shape too) and a gateway key of no known shape.
STANDARD_KEY = "sk-ant-api03-FAKEtestkey0123456789abcdefABCDEF-0123456789"
CUSTOM_KEY = "LEAKcustomproxykey-0123456789abcdef"
SDK_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_ORGANIZATION_ID",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_BASE_URL",
)


def rt_for(server: LoopbackServer, *, api_key: str = "test-key", **kwargs: Any) -> Runtime:
    settings = {"api_key": api_key, "base_url": server.url} if api_key else {"base_url": server.url}
    return Runtime(
        model="anthropic:claude-haiku-4-5",
        backoff=recording_backoff([], jitter=False, initial=0.25),
        providers={"anthropic": settings},
        **kwargs,
    )


def provider_for(server: LoopbackServer, **settings: Any) -> AnthropicProvider:
    return AnthropicProvider({"api_key": "test-key", "base_url": server.url, **settings})


def hi(model: str = "claude-haiku-4-5", **kwargs: Any) -> Request:
    return Request(model, [Message("user", (TextBlock("Hi"),))], **kwargs)


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No key, no token, and nothing the SDK's own credential chain could find."""
    for name in SDK_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.config/anthropic profile either


# --- prepare once, send per attempt ------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("mode", MODES)
async def test_a_request_is_converted_once_and_resent_as_is(
    mode: str, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[Request] = []
    families: list[str] = []
    real_build, real_family = convert_in.build_request, provider_module.family_for

    def counting_build(request: Request, *args: Any) -> Any:
        builds.append(request)
        return real_build(request, *args)

    def counting_family(model: str) -> Any:
        families.append(model)
        return real_family(model)

    monkeypatch.setattr(convert_in, "build_request", counting_build)
    monkeypatch.setattr(provider_module, "family_for", counting_family)
    failing = Reply(status=529, json=error("overloaded_error", "Overloaded", "r"))
    with LoopbackServer([failing, failing, OK_STREAM if stream else OK]) as server:
        result = await run_via(mode, rt_for(server, max_retries=3), "Hi", stream=stream)
        bodies = [r.json() for r in server.requests]
    assert result.output == "fine" and result.attempts == 3
    assert len(builds) == 1 and families == ["claude-haiku-4-5"]  # once, not once per attempt
    assert bodies[0] == bodies[1] == bodies[2]
    assert bodies[0]["stream"] is stream


def test_prepare_returns_the_payload_send_uses() -> None:
    with LoopbackServer([OK]) as server:
        provider = provider_for(server)
        prepared = provider.prepare(hi(options={"max_tokens": 20}))
        assert isinstance(prepared, convert_in.AnthropicPrepared)
        assert prepared.payload["max_tokens"] == 20 and prepared.request.model == "claude-haiku-4-5"
        assert server.requests == []  # prepare does no I/O
        response = provider.send(prepared)
        assert server.requests[0].json()["max_tokens"] == 20
    assert response.text == "fine"
    provider.close()


def test_send_refuses_what_another_provider_prepared() -> None:
    from llmport.provider.contract import Prepared

    provider = AnthropicProvider({"api_key": "test-key"})
    with pytest.raises(TypeError, match="prepare"):
        provider.send(Prepared(hi()))


# --- clients: one async client per event loop ----------------------------------------------------


def test_two_asyncio_runs_on_one_runtime() -> None:
    with LoopbackServer([OK, OK]) as server:
        rt = rt_for(server, max_retries=1)  # a client of a closed loop would fail the only attempt
        assert asyncio.run(rt.async_exec("hi")) == "fine"
        assert asyncio.run(rt.async_exec("hi")) == "fine"
        assert len(server.requests) == 2
        rt.close()


def test_each_loop_closes_its_own_client_and_close_closes_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[Any] = []
    real_async, real_sync = AnthropicProvider._make_async, AnthropicProvider._make_sync

    def make_async(self: AnthropicProvider) -> Any:
        made.append(real_async(self))
        return made[-1]

    def make_sync(self: AnthropicProvider) -> Any:
        made.append(real_sync(self))
        return made[-1]

    monkeypatch.setattr(AnthropicProvider, "_make_async", make_async)
    monkeypatch.setattr(AnthropicProvider, "_make_sync", make_sync)
    with LoopbackServer([OK, OK, OK]) as server:
        rt = rt_for(server, max_retries=1)
        assert asyncio.run(rt.async_exec("hi")) == "fine"
        assert asyncio.run(rt.async_exec("hi")) == "fine"
        first, second = made
        assert first is not second
        assert first.is_closed() and second.is_closed()  # closed as their loops shut down
        assert rt.exec("hi") == "fine"
        sync = made[2]
        assert not sync.is_closed()
        rt.close()
        assert sync.is_closed()


async def test_aclose_closes_the_running_loops_client(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []
    real_async = AnthropicProvider._make_async

    def make_async(self: AnthropicProvider) -> Any:
        made.append(real_async(self))
        return made[-1]

    monkeypatch.setattr(AnthropicProvider, "_make_async", make_async)
    with LoopbackServer([OK, OK]) as server:
        rt = rt_for(server)
        assert await rt.async_exec("hi") == "fine"
        assert await rt.async_exec("hi") == "fine"
        (client,) = made  # one client for this loop, reused
        assert not client.is_closed()
        await rt.aclose()
        assert client.is_closed()


# --- credentials -----------------------------------------------------------------------------


@pytest.mark.usefixtures("no_credentials")
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("mode", MODES)
async def test_no_credentials_is_a_config_error_before_any_request(mode: str, stream: bool) -> None:
    with LoopbackServer([OK]) as server:
        rt = rt_for(server, api_key="", max_retries=3)
        with pytest.raises(ConfigError) as info:
            await run_via(mode, rt, "Hi", stream=stream)
        assert server.requests == []
    assert "ANTHROPIC_API_KEY" in str(info.value)
    assert not isinstance(info.value, TypeError)


@pytest.mark.usefixtures("no_credentials")
@pytest.mark.parametrize("where", ["setting", "environment"])
def test_an_auth_token_counts_as_credentials(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "tok-FAKE-0123456789abcdef"
    with LoopbackServer([OK]) as server:
        if where == "setting":
            rt = Runtime(
                model="anthropic:claude-haiku-4-5",
                providers={"anthropic": {"auth_token": token, "base_url": server.url}},
            )
        else:
            monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", token)
            rt = rt_for(server, api_key="")
        assert rt.exec("hi") == "fine"
        headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
    assert headers["authorization"] == f"Bearer {token}"


@pytest.mark.usefixtures("no_credentials")
def test_the_key_from_the_environment_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", CUSTOM_KEY)
    body = error("authentication_error", f"the key {CUSTOM_KEY} is revoked", "req_1")
    with (
        LoopbackServer([Reply(status=401, json=body)]) as server,
        pytest.raises(AuthenticationError) as info,
    ):
        rt_for(server, api_key="").exec("hi")
    assert CUSTOM_KEY not in "".join(traceback.format_exception(info.value))
    assert CUSTOM_KEY not in str(info.value.vendor_error)


# --- no key in any error, traceback or chain ---------------------------------------------------


def _echo(status: int, kind: str) -> Any:
    """A reply that echoes the request's own credential in the error body."""

    def handler(request: RecordedRequest) -> Reply:
        auth = {k.lower(): v for k, v in request.headers.items()}["authorization"]
        key = auth.removeprefix("Bearer ")
        body = error(kind, f"the key {key} is not valid here", "req_echo")
        return Reply(status=status, json=body, headers={"x-echo": key})

    return Reply(handler=handler)


def _leaks(exc: BaseException, key: str) -> bool:
    text = "".join(traceback.format_exception(exc)) + repr(exc) + str(exc)
    vendor = getattr(exc, "vendor_error", None)
    return key in text or (vendor is not None and key in vendor)


@pytest.mark.parametrize("key", [STANDARD_KEY, CUSTOM_KEY], ids=["standard", "custom"])
@pytest.mark.parametrize("mode", MODES)
async def test_a_401_echoing_the_key_leaks_nothing(mode: str, key: str) -> None:
    with LoopbackServer([_echo(401, "authentication_error")]) as server:
        with pytest.raises(AuthenticationError) as info:
            await run_via(mode, rt_for(server, api_key=key, max_retries=3), "Hi")
        assert len(server.requests) == 1
    err = info.value
    assert err.__cause__ is None and err.__context__ is None
    assert err.vendor_error is not None and "AuthenticationError" in err.vendor_error
    assert "is not valid here" in str(err)  # the vendor's message, masked, is kept
    assert not _leaks(err, key)


@pytest.mark.parametrize("key", [STANDARD_KEY, CUSTOM_KEY], ids=["standard", "custom"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("mode", MODES)
async def test_retried_500s_echoing_the_key_leak_nothing(mode: str, stream: bool, key: str) -> None:
    with LoopbackServer([_echo(500, "api_error"), _echo(500, "api_error")]) as server:
        with pytest.raises(ExecFailed) as info:
            await run_via(mode, rt_for(server, api_key=key, max_retries=2), "Hi", stream=stream)
        assert len(server.requests) == 2
    failed = info.value
    assert not _leaks(failed, key)
    assert [type(a.error) for a in failed.attempts] == [OverloadedError, OverloadedError]
    for attempt in failed.attempts:
        assert attempt.error.__cause__ is None and attempt.error.__context__ is None
        assert not _leaks(attempt.error, key)


def test_a_gateway_key_given_as_a_header_is_masked() -> None:
    gateway = "GWAYheaderkey-fedcba9876543210"

    def handler(request: RecordedRequest) -> Reply:
        echoed = {k.lower(): v for k, v in request.headers.items()}["x-gateway-key"]
        return Reply(status=403, json=error("permission_error", f"{echoed} may not", "r"))

    settings = {"api_key": "test-key", "default_headers": {"x-gateway-key": gateway}}
    with LoopbackServer([Reply(handler=handler)]) as server:
        rt = Runtime(
            model="anthropic:claude-haiku-4-5",
            providers={"anthropic": {**settings, "base_url": server.url}},
        )
        with pytest.raises(AuthenticationError) as info:
            rt.exec("hi")
    assert "may not" in str(info.value)
    assert not _leaks(info.value, gateway)


# --- vendor fields ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_vendor_fields_are_merged_into_the_body(mode: str) -> None:
    reply = Reply(
        json=message(
            "msg_v", "claude-sonnet-4-6", [{"type": "text", "text": "{}"}], "end_turn", usage(5, 1)
        )
    )
    vendor = {
        "anthropic": {
            "output_config": {"effort": "low"},  # merged beside llmport's output_config.format
            "metadata": {"user_id": "u-2"},  # replaces the option's value, key by key
            "inference_geo": "us",  # a field llmport does not model
            "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
        },
        "openai": {"user": "not for anthropic"},
    }
    with LoopbackServer([reply]) as server:
        rt = rt_for(server)
        await run_via(
            mode,
            rt,
            "Hi",
            model="anthropic:claude-sonnet-4-6",
            response_format={"type": "object", "properties": {}},
            metadata={"user_id": "u-1"},
            temperature=0.5,
            vendor=vendor,
        )
        body = server.requests[0].json()
    assert body["output_config"] == {
        "format": {
            "type": "json_schema",
            "schema": {"type": "object", "properties": {}, "additionalProperties": False},
        },
        "effort": "low",
    }
    assert body["metadata"] == {"user_id": "u-2"}
    assert body["inference_geo"] == "us"
    assert body["context_management"] == {"edits": [{"type": "clear_tool_uses_20250919"}]}
    assert body["temperature"] == 0.5
    assert "user" not in body


def test_vendor_fields_merge_rules() -> None:
    fields = {
        "thinking": {"display": "summarized"},  # merged into llmport's thinking object
        "stop_sequences": ["X"],  # a list: replaced
        "temperature": 0.9,  # a body field llmport sends through extra_body: replaced there
        "timeout": "a body field",  # not the SDK's per-request timeout argument
        "new_field": {"a": [1]},
    }
    request = hi(
        "claude-sonnet-4-6",
        options={"temperature": 1, "timeout": 30, "stop": "A"},
        vendor={"anthropic": fields},
        reasoning=Reasoning("low"),
    )
    params = AnthropicProvider({"api_key": "k"}).prepare(request).params
    assert params["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert params["output_config"] == {"effort": "low"}
    assert params["stop_sequences"] == ["X"]
    assert params["timeout"] == 30
    assert params["extra_body"] == {
        "temperature": 0.9,
        "timeout": "a body field",
        "new_field": {"a": [1]},
    }
    # The caller's dicts are never shared with (or changed by) a request.
    assert params["extra_body"]["new_field"] is not fields["new_field"]
    assert fields["thinking"] == {"display": "summarized"}
    with pytest.raises(UnsupportedFeatureError, match="stream"):
        AnthropicProvider({"api_key": "k"}).prepare(hi(vendor={"anthropic": {"stream": True}}))


#: Tool entries exactly as recorded from the real API (pydantic-ai cassettes; see
#: ../shared/wire-samples/anthropic/tool-search.json and strict-tools.json).
DEFERRED_TOOL = {
    "defer_loading": True,
    "description": "Look up the current exchange rate between two currencies.",
    "input_schema": {
        "additionalProperties": False,
        "properties": {"from_currency": {"type": "string"}, "to_currency": {"type": "string"}},
        "required": ["from_currency", "to_currency"],
        "type": "object",
    },
    "name": "get_exchange_rate",
}
STRICT_TOOL = {
    "description": "",
    "input_schema": {"additionalProperties": False, "properties": {}, "type": "object"},
    "name": "country_source",
    "strict": True,
}


def _spec_of(entry: dict[str, Any], **kwargs: Any) -> ToolSpec:
    return ToolSpec(entry["name"], entry["description"], entry["input_schema"], **kwargs)


async def sent_body(mode: str, request: Request) -> Any:
    """The JSON body the provider sends for ``request`` (prepared once, sent once)."""
    with LoopbackServer([OK]) as server:
        provider = provider_for(server)
        prepared = provider.prepare(request)
        if mode == "sync":
            provider.send(prepared)
        else:
            await provider.asend(prepared)
            await provider.aclose()
        provider.close()
        return server.requests[0].json()


@pytest.mark.parametrize("mode", MODES)
async def test_tool_vendor_fields_reach_the_tool_entry(mode: str) -> None:
    deferred = _spec_of(DEFERRED_TOOL, vendor={"anthropic": {"defer_loading": True}})
    strict = _spec_of(
        STRICT_TOOL,
        strict=True,
        vendor={"openai": {"defer_loading": True}},  # another vendor's fields: not sent
    )
    request = hi("claude-sonnet-4-6", tools=[deferred, strict])
    body = await sent_body(mode, request)
    assert body["tools"] == [DEFERRED_TOOL, STRICT_TOOL]  # the recorded shapes, field for field


BM25 = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


@pytest.mark.parametrize("mode", MODES)
async def test_vendor_tools_go_after_the_function_tools(mode: str) -> None:
    # wire-samples/anthropic/tool-search.json: deferred function tools, then the server tool.
    deferred = _spec_of(DEFERRED_TOOL, vendor={"anthropic": {"defer_loading": True}})
    request = hi("claude-sonnet-4-6", tools=[deferred])
    request.vendor = {"anthropic": {"tools": [BM25]}}
    body = await sent_body(mode, request)
    assert body["tools"] == [DEFERRED_TOOL, BM25]


# --- input problems are never transient -----------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"timeout": -1}, "timeout"),
        ({"temperature": 1.5}, "between 0 and 1"),
        ({"top_k": 0}, "top_k"),
        ({"tempurature": 0.2}, "did you mean 'temperature'"),
    ],
)
async def test_bad_option_values_fail_before_any_request(
    mode: str, options: dict[str, Any], match: str
) -> None:
    with LoopbackServer([OK]) as server:
        with pytest.raises(OptionError, match=match):
            await run_via(mode, rt_for(server, max_retries=3), "Hi", **options)
        assert server.requests == []


@pytest.mark.parametrize("options", [{"timeout": -1}, {"temperature": 1.5}, {"top_k": True}])
def test_the_provider_itself_rejects_bad_values(options: dict[str, Any]) -> None:
    with pytest.raises(OptionError):
        AnthropicProvider({"api_key": "k"}).prepare(hi(options=options))


@pytest.mark.parametrize("timeout", [-1, 0, "soon", float("nan")])
def test_a_bad_timeout_setting_is_a_config_error(timeout: Any) -> None:
    with pytest.raises(ConfigError, match="timeout"):
        AnthropicProvider({"api_key": "k", "timeout": timeout})


def test_a_request_the_sdk_cannot_send_is_permanent() -> None:
    """A ValueError wrapped in the SDK's APIConnectionError is not a network failure.

    (The async transport turns a negative timeout into an immediate timeout,
    indistinguishable from a real one: that is why prepare() checks it.)
    """
    with LoopbackServer([OK]) as server:
        provider = provider_for(server)
        prepared = provider.prepare(hi())
        prepared.payload["timeout"] = -1  # past every check, as a plugin bug would be
        with pytest.raises(ProviderError) as info:
            provider.send(prepared)
        assert server.requests == []
        provider.close()
    assert info.value.retryable is False
    assert "ValueError" in str(info.value)
    assert info.value.__cause__ is None


@pytest.mark.parametrize(
    "headers", [{"x-team": "a\nb"}, {"x-team": 3}, ["x-team"], {"bad name": "v"}]
)
def test_bad_default_headers_are_a_config_error(headers: Any) -> None:
    with pytest.raises(ConfigError, match="default_headers"):
        AnthropicProvider({"api_key": "k", "default_headers": headers})
