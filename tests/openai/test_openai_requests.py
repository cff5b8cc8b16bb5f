"""What reaches the wire for each parameter, and what is refused before the wire.

Requests go to a LoopbackServer; "no request happened" is checked on its
record. Every test runs sync and async.
"""

from __future__ import annotations

from typing import Any

import pytest
from llmport import ConfigError, OptionError, UnsupportedContentError, UnsupportedFeatureError
from llmport.testing.loopback import LoopbackServer, Reply
from support.openai_scenarios import (
    DATA,
    _stream_text_chunks,
    chat_usage,
    completion,
    message_item,
    response_obj,
    weather_tool,
)

OK = Reply(json=completion("chatcmpl-ok", content="fine", usage=chat_usage(3, 1)))
OK_RESPONSES = Reply(
    json=response_obj("resp_ok", [message_item("msg_ok", "fine")], usage=(3, 1, 0, 0))
)


def sent(
    drive: Any,
    runtime: Any,
    model: str,
    reply: Reply = OK,
    settings: dict[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Run one exec against a loopback server and return the JSON body it received."""
    with LoopbackServer([reply]) as server:
        rt = runtime(model, base_url=server.url + "/v1", **(settings or {}))
        drive.run(rt, **kwargs)
    assert len(server.requests) == 1
    return server.requests[0].json()  # type: ignore[no-any-return]


def refused(
    drive: Any, runtime: Any, model: str, error: type[Exception], **kwargs: Any
) -> Exception:
    """Run one exec that must fail before any HTTP request."""
    with LoopbackServer([OK]) as server:
        rt = runtime(model, base_url=server.url + "/v1")
        with pytest.raises(error) as info:
            drive.run(rt, **kwargs)
    assert server.requests == [], "a request was sent"
    return info.value


# --- refused before any request -------------------------------------------------------


def test_docx_file_is_refused(drive: Any, runtime: Any) -> None:
    err = refused(
        drive,
        runtime,
        "openai:gpt-4o-mini",
        UnsupportedContentError,
        content=["Summarise", {"type": "file", "path": str(DATA / "notes.docx")}],
    )
    assert err.vendor == "openai" and err.model == "gpt-4o-mini"  # type: ignore[attr-defined]
    assert "file block #1" in str(err) and "notes.docx" in str(err)


def test_audio_to_a_model_without_audio_is_refused(drive: Any, runtime: Any) -> None:
    err = refused(
        drive,
        runtime,
        "openai:gpt-4o-mini",
        UnsupportedContentError,
        content=[{"type": "audio", "path": str(DATA / "hello.wav")}],
    )
    assert "audio" in str(err) and "gpt-4o-mini" in str(err)


def test_audio_to_the_responses_api_is_refused(drive: Any, runtime: Any) -> None:
    refused(
        drive,
        runtime,
        "openai-responses:gpt-4o-audio-preview",
        UnsupportedContentError,
        content=[{"type": "audio", "path": str(DATA / "hello.wav")}],
    )


def test_audio_in_an_unsupported_format_is_refused(drive: Any, runtime: Any) -> None:
    err = refused(
        drive,
        runtime,
        "openai:gpt-4o-audio-preview",
        UnsupportedContentError,
        content=[{"type": "audio", "data": b"OggS" + b"\x00" * 60, "media_type": "audio/ogg"}],
    )
    assert "audio/ogg" in str(err)


def test_image_to_a_text_only_model_is_refused(drive: Any, runtime: Any) -> None:
    refused(
        drive,
        runtime,
        "openai:gpt-3.5-turbo",
        UnsupportedContentError,
        content=[{"type": "image", "path": str(DATA / "kiwi.png")}],
    )


def test_pdf_by_url_is_refused_by_chat_completions(drive: Any, runtime: Any) -> None:
    err = refused(
        drive,
        runtime,
        "openai:gpt-4o-mini",
        UnsupportedContentError,
        content=[{"type": "file", "url": "https://example.com/report.pdf"}],
    )
    assert "inline" in str(err)


@pytest.mark.parametrize(
    "schema, why",
    [
        ({"type": "object", "additionalProperties": {"type": "integer"}}, "open map"),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "additionalProperties": True,
            },
            "additionalProperties",
        ),
        ({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}}, "allOf"),
        ({"type": "array", "items": {"type": "string"}}, "root must be an object"),
    ],
    ids=["dict", "open-object", "allOf", "array-root"],
)
def test_schema_strict_mode_cannot_express_is_refused(
    drive: Any, runtime: Any, schema: dict[str, Any], why: str
) -> None:
    err = refused(
        drive,
        runtime,
        "openai:gpt-4o-mini",
        UnsupportedFeatureError,
        content="hi",
        response_format=schema,
    )
    assert why in str(err) and "strict" in str(err)


def test_strict_tool_with_an_open_schema_is_refused(drive: Any, runtime: Any) -> None:
    from llmport.tools.tool import Tool

    loose = Tool.from_schema(
        "tag",
        "Tag things.",
        {"type": "object", "additionalProperties": True},
        lambda **kw: "ok",
        strict=True,
    )
    err = refused(
        drive, runtime, "openai:gpt-4o-mini", UnsupportedFeatureError, content="hi", tools=[loose]
    )
    assert "strict tool 'tag'" in str(err)


@pytest.mark.parametrize("option", ["stop", "seed"])
def test_responses_api_refuses_stop_and_seed(drive: Any, runtime: Any, option: str) -> None:
    err = refused(
        drive,
        runtime,
        "openai-responses:gpt-5-mini",
        UnsupportedFeatureError,
        content="hi",
        **{option: ["x"] if option == "stop" else 1},
    )
    assert option in str(err)


def test_an_option_may_not_overwrite_a_field_llmport_owns(drive: Any, runtime: Any) -> None:
    refused(
        drive,
        runtime,
        "openai:gpt-4o-mini",
        OptionError,
        content="hi",
        messages=[{"role": "user", "content": "smuggled"}],
    )


def test_no_key_and_no_base_url_is_a_config_error(drive: Any, runtime: Any) -> None:
    rt = runtime("openai:gpt-4o-mini", api_key=None)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        drive.run(rt, content="hi")


# --- what reaches the wire ----------------------------------------------------------


@pytest.mark.parametrize(
    "choice, wire",
    [
        ("required", "required"),
        ("none", "none"),
        ({"name": "get_weather"}, {"type": "function", "function": {"name": "get_weather"}}),
    ],
)
def test_tool_choice_mapping(drive: Any, runtime: Any, choice: Any, wire: Any) -> None:
    body = sent(
        drive,
        runtime,
        "openai:gpt-4o-mini",
        content="hi",
        tools=[weather_tool()],
        tool_choice=choice,
        parallel_tool_calls=False,
    )
    assert body["tool_choice"] == wire and body["parallel_tool_calls"] is False


def test_responses_tool_choice_by_name(drive: Any, runtime: Any) -> None:
    body = sent(
        drive,
        runtime,
        "openai-responses:gpt-5-mini",
        OK_RESPONSES,
        content="hi",
        tools=[weather_tool()],
        tool_choice={"name": "get_weather"},
    )
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}


def test_no_tools_means_no_tool_fields(drive: Any, runtime: Any) -> None:
    body = sent(drive, runtime, "openai:gpt-4o-mini", content="hi")
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(body)


def test_modelled_openai_options_reach_the_chat_body(drive: Any, runtime: Any) -> None:
    with LoopbackServer([OK]) as server:
        rt = runtime("openai:gpt-5-mini", base_url=server.url + "/v1")
        drive.run(
            rt,
            content="hi",
            reasoning_effort="low",
            service_tier="flex",
            metadata={"team": "a"},
            store=False,
            prompt_cache_key="tenant-7",
            prompt_cache_retention="24h",
            safety_identifier="user-hash-1",
            verbosity="low",
            extra_headers={"x-trace": "t-1"},
        )
    body = server.requests[0].json()
    assert {k: v for k, v in body.items() if k not in ("model", "messages")} == {
        "reasoning_effort": "low",
        "service_tier": "flex",
        "metadata": {"team": "a"},
        "store": False,
        "prompt_cache_key": "tenant-7",
        "prompt_cache_retention": "24h",
        "safety_identifier": "user-hash-1",
        "verbosity": "low",
    }
    assert server.requests[0].headers["x-trace"] == "t-1"


def test_verbosity_and_effort_move_into_the_responses_shape(drive: Any, runtime: Any) -> None:
    body = sent(
        drive,
        runtime,
        "openai-responses:gpt-5-mini",
        Reply(json=response_obj("r", [message_item("m", '{"a": "x"}')], usage=(3, 1, 0, 0))),
        content="hi",
        response_format={"type": "object", "properties": {"a": {"type": "string"}}},
        verbosity="high",
        reasoning_effort="minimal",
        max_tokens=99,
    )
    assert body["text"]["verbosity"] == "high" and body["text"]["format"]["type"] == "json_schema"
    assert body["reasoning"] == {"effort": "minimal"} and body["max_output_tokens"] == 99
    assert "verbosity" not in body and "reasoning_effort" not in body


@pytest.mark.parametrize(
    "model", ["openai:gpt-4o-mini", "openai-responses:gpt-5-mini"], ids=["chat", "responses"]
)
@pytest.mark.parametrize(
    "option",
    [
        {"presence_penalty": 0.5},  # an OpenAI field llmport does not model: vendor= sends it
        {"user": "u-42"},
        {"extra_body": {"user": "u-42"}},  # the old pass-through is gone
        {"temprature": 0.2},  # a typo
    ],
    ids=["presence_penalty", "user", "extra_body", "typo"],
)
def test_unknown_option_is_an_option_error_before_any_request(
    drive: Any, runtime: Any, model: str, option: dict[str, Any]
) -> None:
    err = refused(drive, runtime, model, OptionError, content="hi", **option)
    assert repr(next(iter(option))) in str(err) and "vendor=" in str(err)
    if "temprature" in option:
        assert "did you mean 'temperature'" in str(err)


@pytest.mark.parametrize(
    "option, message",
    [
        ({"reasoning_effort": "maximal"}, "reasoning_effort must be one of"),  # the core's check
        ({"service_tier": "turbo"}, "service_tier must be one of"),
        ({"verbosity": "loud"}, "verbosity must be one of"),
        ({"prompt_cache_retention": "1h"}, "prompt_cache_retention must be one of"),
        ({"metadata": {"n": 1}}, "metadata must be a dict of strings"),
        ({"store": "yes"}, "store must be True or False"),
        ({"extra_headers": ["x"]}, "extra_headers must be a dict"),
        ({"timeout": -1}, "timeout must be > 0"),  # the core's check (was a raw ValueError)
        ({"temperature": 5}, "temperature must be between 0 and 2"),
    ],
    ids=lambda v: next(iter(v)) if isinstance(v, dict) else "",
)
def test_bad_option_values_are_option_errors_before_any_request(
    drive: Any, runtime: Any, option: dict[str, Any], message: str
) -> None:
    err = refused(drive, runtime, "openai:gpt-5-mini", OptionError, content="hi", **option)
    assert message in str(err)


# --- vendor= fields -------------------------------------------------------------------


def test_vendor_fields_merge_into_the_chat_body(drive: Any, runtime: Any) -> None:
    body = sent(
        drive,
        runtime,
        "openai:gpt-4o-mini",
        content="hi",
        metadata={"team": "a"},
        temperature=0.3,
        vendor={
            "openai": {
                "presence_penalty": 0.5,
                "logit_bias": {"50256": -100},
                "metadata": {"run": "7"},  # dicts merge recursively with what llmport set
                "temperature": 0.9,  # anything else: the vendor field wins
            },
            "openai-responses": {"user": "not-for-chat"},
            "anthropic": {"top_k": 5},
        },
    )
    assert body == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "hi"}],
        "metadata": {"team": "a", "run": "7"},
        "temperature": 0.9,
        "presence_penalty": 0.5,
        "logit_bias": {"50256": -100},
    }


def test_vendor_fields_merge_into_a_streamed_chat_body(drive: Any, runtime: Any) -> None:
    words = ["po", "ng"]
    with LoopbackServer([Reply(sse=_stream_text_chunks("s", words))]) as server:
        rt = runtime("openai:gpt-4o-mini", base_url=server.url + "/v1")
        events = drive.stream(
            rt, content="hi", vendor={"openai": {"stream_options": {"include_obfuscation": False}}}
        )
    assert events[-1].result.output == "pong"
    body = server.requests[0].json()
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True, "include_obfuscation": False}


def test_responses_takes_openai_then_openai_responses_fields(drive: Any, runtime: Any) -> None:
    body = sent(
        drive,
        runtime,
        "openai-responses:gpt-5-mini",
        OK_RESPONSES,
        content="hi",
        reasoning_effort="low",
        vendor={
            "openai": {"user": "shared", "store": False, "reasoning": {"summary": "concise"}},
            "openai-responses": {"user": "responses", "reasoning": {"summary": "auto"}},
        },
    )
    assert body["user"] == "responses" and body["store"] is False
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}


@pytest.mark.parametrize("field", ["model", "messages", "stream"])
def test_vendor_fields_may_not_replace_what_llmport_sends(
    drive: Any, runtime: Any, field: str
) -> None:
    err = refused(
        drive,
        runtime,
        "openai:gpt-4o-mini",
        OptionError,
        content="hi",
        vendor={"openai": {field: "x"}},
    )
    assert repr(field) in str(err)


def test_vendor_tools_are_sent_beside_the_function_tools(drive: Any, runtime: Any) -> None:
    body = sent(
        drive,
        runtime,
        "openai-responses:gpt-5-mini",
        OK_RESPONSES,
        content="hi",
        tools=[weather_tool()],
        vendor={"openai-responses": {"tools": [{"type": "web_search"}]}},
    )
    assert [t["type"] for t in body["tools"]] == ["web_search", "function"]
    assert body["tools"][1]["name"] == "get_weather"


def test_vendor_tools_must_be_a_list_of_objects(drive: Any, runtime: Any) -> None:
    refused(
        drive,
        runtime,
        "openai:gpt-4o-mini",
        OptionError,
        content="hi",
        vendor={"openai": {"tools": {"type": "web_search"}}},
    )


def test_non_strict_response_format_is_sent_as_given(drive: Any, runtime: Any) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    reply = Reply(json=completion("c", content='{"a": "x"}', usage=chat_usage(3, 1)))
    body = sent(
        drive,
        runtime,
        "openai:gpt-4o-mini",
        reply,
        content="hi",
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "thing", "schema": schema, "strict": False},
        },
    )
    assert body["response_format"]["json_schema"] == {
        "name": "thing",
        "schema": schema,
        "strict": False,
    }


def test_max_tokens_field_for_older_compatible_servers(drive: Any, runtime: Any) -> None:
    body = sent(
        drive,
        runtime,
        "openai:llama3.2",
        settings={"max_tokens_field": "max_tokens"},
        content="hi",
        max_tokens=12,
    )
    assert body["max_tokens"] == 12 and "max_completion_tokens" not in body


def test_local_server_needs_no_key(drive: Any, runtime: Any) -> None:
    with LoopbackServer([OK]) as server:
        rt = runtime("openai:llama3.2", api_key=None, base_url=server.url + "/v1")
        assert drive.run(rt, content="hi").output == "fine"
    assert server.requests[0].path == "/v1/chat/completions"


def test_base_url_from_the_environment(
    drive: Any, runtime: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LoopbackServer([OK]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        rt = runtime("openai:gpt-4o-mini")
        assert drive.run(rt, content="hi").output == "fine"
    assert server.requests[0].headers["authorization"] == "Bearer sk-test-not-a-key"


def test_azure_deployment_url_and_key_header(drive: Any, runtime: Any) -> None:
    with LoopbackServer([OK]) as server:
        rt = runtime(
            "openai:gpt-4o-mini",
            azure_endpoint=server.url,
            api_version="2024-10-21",
            azure_deployment="prod-mini",
            api_key="azure-test-key",
        )
        assert drive.run(rt, content="hi").output == "fine"
    request = server.requests[0]
    assert request.path == "/openai/deployments/prod-mini/chat/completions?api-version=2024-10-21"
    assert request.headers["api-key"] == "azure-test-key"


def test_azure_without_api_version_is_a_config_error(drive: Any, runtime: Any) -> None:
    rt = runtime("openai:gpt-4o-mini", azure_endpoint="https://x.openai.azure.com", api_key="k")
    with pytest.raises(ConfigError, match="api_version"):
        drive.run(rt, content="hi")


def test_one_runtime_across_two_event_loops_then_closed(runtime: Any) -> None:
    """ClientCache: each asyncio.run gets its own async client, closed with its loop."""
    import asyncio

    with LoopbackServer([OK, OK, OK]) as server:
        rt = runtime("openai:gpt-4o-mini", base_url=server.url + "/v1", max_retries=1)
        provider = rt.route(None)[0]
        clients: list[Any] = []

        async def call() -> str:
            out = await rt.async_exec("hi")
            clients.append(provider.clients.for_loop())
            return out  # type: ignore[no-any-return]

        assert asyncio.run(call()) == "fine"
        assert asyncio.run(call()) == "fine"  # a closed loop's client is never reused
        assert rt.exec("hi") == "fine"
        sync_client = provider.clients.sync()
        assert not sync_client.is_closed()
        rt.close()
    assert len(server.requests) == 3
    assert clients[0] is not clients[1]
    assert clients[0].is_closed() and clients[1].is_closed()  # closed inside their own loops
    assert sync_client.is_closed() and provider.clients.open_loops == 0


def test_aclose_closes_the_running_loops_client(runtime: Any) -> None:
    import asyncio

    with LoopbackServer([OK]) as server:
        rt = runtime("openai:gpt-4o-mini", base_url=server.url + "/v1", max_retries=1)

        async def main() -> bool:
            async with rt:
                assert await rt.async_exec("hi") == "fine"
                client = rt.route(None)[0].clients.for_loop()
                assert not client.is_closed()
            return client.is_closed()  # asked while this loop still runs: aclose() did it

        assert asyncio.run(main())
