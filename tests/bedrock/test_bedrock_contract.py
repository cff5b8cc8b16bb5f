"""The provider contract: prepare once, send the same payload, vendor fields, input errors.

Every request goes to a loopback server speaking Converse; the tests assert
the JSON bodies it received.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from llmport import Runtime
from llmport.errors import OptionError
from llmport.messages.types import Message, Request, TextBlock, ToolSpec
from llmport.testing import recording_backoff
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_bedrock import convert_in
from llmport_bedrock.convert_in import ConversePrepared
from llmport_bedrock.plugin import provider_info
from llmport_bedrock.provider import BedrockProvider
from support.api_modes import MODES, run_via
from support.bedrock_scenarios import (
    CREDENTIALS,
    REGION,
    answer,
    error_reply,
    stream_reply,
    text_events,
    usage,
)

NOVA = "us.amazon.nova-micro-v1:0"
MODEL = f"bedrock:{NOVA}"
OK = Reply(json=answer([{"text": "fine"}], "end_turn", usage(5, 1)))
OK_STREAM = stream_reply(text_events(["fi", "ne"], 5, 1), "req-ok")
WEATHER = ToolSpec(
    "get_weather",
    "Weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def settings(server: LoopbackServer) -> dict[str, Any]:
    return {**CREDENTIALS, "region": REGION, "endpoint_url": server.url}


def runtime(server: LoopbackServer, **kwargs: Any) -> Runtime:
    return Runtime(
        model=MODEL,
        backoff=recording_backoff([], jitter=False),
        providers={"bedrock": settings(server)},
        **kwargs,
    )


def provider(server: LoopbackServer) -> BedrockProvider:
    return BedrockProvider(settings(server), provider_info())


def request(**fields: Any) -> Request:
    return Request(model=NOVA, messages=[Message("user", (TextBlock("Hi"),))], **fields)


# --- prepare once ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
async def test_a_retry_resends_the_payload_prepared_once(
    mode: str, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[Request] = []
    real_build = convert_in.build_request

    def counting_build(req: Request, *args: Any) -> ConversePrepared:
        builds.append(req)
        return real_build(req, *args)

    monkeypatch.setattr(convert_in, "build_request", counting_build)
    throttled = error_reply(429, "ThrottlingException", "slow down", "r1")
    with LoopbackServer([throttled, OK_STREAM if stream else OK]) as server:
        rt = runtime(server)
        try:
            result = await run_via(mode, rt, "Hi", stream=stream, temperature=0.5)
        finally:
            rt.close()
        bodies = [r.json() for r in server.requests]
    assert result.output == "fine" and result.attempts == 2
    assert len(builds) == 1  # converted once for two attempts
    assert bodies[0] == bodies[1]
    assert bodies[0] == {
        "messages": [{"role": "user", "content": [{"text": "Hi"}]}],
        "inferenceConfig": {"temperature": 0.5},
    }


def test_prepare_imports_no_sdk_and_the_provider_does_not_import_the_entry_point() -> None:
    code = (
        "import sys\n"
        "from llmport.messages.types import Message, Request, TextBlock\n"
        "from llmport_bedrock.provider import BedrockProvider\n"
        "p = BedrockProvider({'region': 'us-east-1'})\n"
        "prepared = p.prepare(Request(model='us.amazon.nova-micro-v1:0',\n"
        "    messages=[Message('user', (TextBlock('Hi'),))], options={'temperature': 0.1}))\n"
        "print(prepared.payload['inferenceConfig'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore')))\n"
        "print('llmport_bedrock.plugin' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["{'temperature': 0.1}", "[]", "False"]


def test_a_plain_prepared_is_converted_by_send() -> None:
    # The runtime always hands back what prepare() returned; anything else is prepared here.
    with LoopbackServer([OK]) as server:
        p = provider(server)
        from llmport.provider.contract import Prepared

        response = p.send(Prepared(request()))
        p.close()
        assert server.requests[0].json()["messages"][0]["content"] == [{"text": "Hi"}]
    assert response.text == "fine" and response.model == NOVA


# --- vendor fields -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
async def test_vendor_fields_are_merged_into_the_converse_body(mode: str, stream: bool) -> None:
    vendor = {
        "bedrock": {
            "inferenceConfig": {"maxTokens": 64},  # merged beside llmport's temperature
            "additionalModelRequestFields": {"inferenceConfig": {"topK": 20}},
            "requestMetadata": {"team": "search"},
            "promptVariables": {"city": {"text": "Paris"}},
        },
        "openai": {"user": "u1"},  # another vendor's fields are not sent to Bedrock
    }
    with LoopbackServer([OK_STREAM if stream else OK]) as server:
        rt = runtime(server)
        try:
            result = await run_via(
                mode, rt, "Hi", stream=stream, temperature=0.2, top_p=0.9, vendor=vendor
            )
        finally:
            rt.close()
        (sent,) = server.requests
    assert result.output == "fine"
    assert sent.path.endswith("/converse-stream" if stream else "/converse")
    assert sent.json() == {
        "messages": [{"role": "user", "content": [{"text": "Hi"}]}],
        "inferenceConfig": {"temperature": 0.2, "topP": 0.9, "maxTokens": 64},
        "additionalModelRequestFields": {"inferenceConfig": {"topK": 20}},
        "requestMetadata": {"team": "search"},
        "promptVariables": {"city": {"text": "Paris"}},
    }
    assert vendor["bedrock"]["inferenceConfig"] == {"maxTokens": 64}  # the caller's dict untouched


def test_vendor_fields_replace_what_is_not_a_dict() -> None:
    with LoopbackServer([OK]) as server:
        p = provider(server)
        prepared = p.prepare(
            request(
                options={"stop": ["END"]},
                vendor={"bedrock": {"inferenceConfig": {"stopSequences": ["STOP", "HALT"]}}},
            )
        )
        p.send(prepared)
        p.close()
        body = server.requests[0].json()
    assert body["inferenceConfig"] == {"stopSequences": ["STOP", "HALT"]}


def test_vendor_tools_are_added_after_the_function_tools() -> None:
    lookup = ToolSpec("lookup", "Look a city up.", {"type": "object", "properties": {}})
    extra = {"toolSpec": {"name": "extra", "inputSchema": {"json": {"type": "object"}}}}
    with LoopbackServer([OK]) as server:
        p = provider(server)
        p.send(
            p.prepare(
                request(tools=[lookup], vendor={"bedrock": {"toolConfig": {"tools": [extra]}}})
            )
        )
        p.close()
        body = server.requests[0].json()
    names = [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]]
    assert names == ["lookup", "extra"]  # beside llmport's tools, never instead of them


def test_vendor_fields_never_modify_the_callers_options() -> None:
    thinking = {"type": "enabled", "budget_tokens": 1024}
    guardrail = {"guardrailIdentifier": "g1", "guardrailVersion": "1"}
    options = {
        "additional_model_request_fields": {"thinking": thinking},
        "guardrail_config": guardrail,
    }
    vendor = {
        "bedrock": {
            "additionalModelRequestFields": {"thinking": {"budget_tokens": 4096}},
            "guardrailConfig": {"trace": "enabled"},
        }
    }
    p = BedrockProvider({**CREDENTIALS, "region": REGION}, provider_info())
    req = request(options=options, vendor=vendor)
    req.model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    payload = p.prepare(req).payload
    assert payload["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 4096}
    }
    assert payload["guardrailConfig"] == {**guardrail, "trace": "enabled"}
    assert thinking == {"type": "enabled", "budget_tokens": 1024}
    assert guardrail == {"guardrailIdentifier": "g1", "guardrailVersion": "1"}


@pytest.mark.parametrize("mode", MODES)
async def test_tool_vendor_fields_are_merged_into_its_tool_spec(mode: str) -> None:
    strict_weather = ToolSpec(
        WEATHER.name,
        WEATHER.description,
        WEATHER.parameters,
        vendor={
            "bedrock": {
                "strict": True,  # not sent for Nova otherwise: only through vendor fields
                "inputSchema": {"json": {"additionalProperties": False}},
            },
            "anthropic": {"defer_loading": True},
        },
    )
    plain = ToolSpec("get_time", "The time.", {"type": "object", "properties": {}})
    with LoopbackServer([OK]) as server:
        p = provider(server)
        prepared = p.prepare(request(tools=[strict_weather, plain]))
        if mode == "sync":
            p.send(prepared)
        else:
            await p.asend(prepared)
        p.close()
        body = server.requests[0].json()
    weather_spec, time_spec = (t["toolSpec"] for t in body["toolConfig"]["tools"])
    assert weather_spec == {
        "name": "get_weather",
        "description": "Weather for a city.",
        "strict": True,
        "inputSchema": {
            "json": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": False,
            }
        },
    }
    assert time_spec == {
        "name": "get_time",
        "description": "The time.",
        "inputSchema": {"json": {"type": "object", "properties": {}}},
    }
    assert "additionalProperties" not in WEATHER.parameters  # the tool's own schema untouched


# --- input errors: before any request, chaining nothing -------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"inferenceConfig": {"maxTokens": "many"}}, "inferenceConfig.maxTokens"),
        ({"unknownField": 1}, "unknownField"),
    ],
)
async def test_vendor_fields_botocore_rejects_are_option_errors_before_any_request(
    mode: str, fields: dict[str, Any], words: str
) -> None:
    with LoopbackServer([OK]) as server:
        rt = runtime(server, max_retries=3)
        with pytest.raises(OptionError) as info:
            try:
                await run_via(mode, rt, "Hi", vendor={"bedrock": fields})
            finally:
                rt.close()
        assert server.requests == []
    err = info.value
    assert words in str(err) and "vendor=" in str(err)
    assert err.__cause__ is None and err.__context__ is None


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
async def test_botocore_param_validation_is_an_option_error_not_a_raw_library_error(
    mode: str, stream: bool
) -> None:
    # The core rejects temperature="hot" first; this sends it past the core on purpose.
    with LoopbackServer([OK]) as server:
        p = provider(server)
        prepared = p.prepare(request())
        prepared.payload["inferenceConfig"]["temperature"] = "hot"
        with pytest.raises(OptionError) as info:
            if stream and mode == "sync":
                list(p.send_stream(prepared))
            elif stream:
                [e async for e in p.asend_stream(prepared)]
            elif mode == "sync":
                p.send(prepared)
            else:
                await p.asend(prepared)
        p.close()
        assert server.requests == []
    err = info.value
    assert "inferenceConfig.temperature" in str(err)
    assert err.__cause__ is None and err.__context__ is None


@pytest.mark.parametrize("mode", MODES)
async def test_temperature_hot_is_an_option_error_before_any_request(mode: str) -> None:
    with LoopbackServer([OK]) as server:
        rt = runtime(server)
        with pytest.raises(OptionError, match="temperature"):
            try:
                await run_via(mode, rt, "Hi", temperature="hot")
            finally:
                rt.close()
        assert server.requests == []


# --- clients and the pool --------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_runtime_close_closes_the_clients_and_the_pool(mode: str) -> None:
    with LoopbackServer([OK, OK], repeat=True) as server:
        rt = runtime(server)
        await run_via(mode, rt, "Hi")
        await run_via(mode, rt, "Hi", timeout=30)  # a second client: another read timeout
        p = rt.route(MODEL)[0]
        assert isinstance(p, BedrockProvider)
        clients = [p.client(), p.client(30)]
        closed: list[float] = []
        for client in clients:
            real_close = client.close

            def close(real: Any = real_close, client: Any = client) -> None:
                closed.append(client.meta.config.read_timeout)
                real()

            client.close = close
        pool = p.executor()
        if mode == "sync":
            rt.close()
        else:
            await rt.aclose()
    assert sorted(closed) == [30, 300]
    assert pool._shutdown  # type: ignore[attr-defined]
