"""Request building, pre-network rejections and answer reading (no network at all)."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import replace
from typing import Any

import pytest
import urllib3
from botocore.exceptions import (
    ClientError,
    CredentialRetrievalError,
    EventStreamError,
    ReadTimeoutError,
    UnauthorizedSSOTokenError,
    UnknownServiceError,
)
from llmport import Runtime
from llmport.errors import (
    AuthenticationError,
    BadRequestError,
    ContentError,
    MalformedResponseError,
    OptionError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    UnsupportedContentError,
    UnsupportedFeatureError,
)
from llmport.messages.types import (
    CacheControl,
    CacheSettings,
    MediaBlock,
    Message,
    NativeTool,
    Reasoning,
    Request,
    ResponseFormat,
    TextBlock,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from llmport.provider.assembly import assemble
from llmport.testing.loopback import LoopbackServer
from llmport_bedrock import convert_out
from llmport_bedrock.convert_in import (
    DOCUMENT_PROMPT,
    ConversePrepared,
    document_name,
)
from llmport_bedrock.errors import translate
from llmport_bedrock.models import MAX_DOCUMENT_BYTES
from llmport_bedrock.plugin import provider_info
from llmport_bedrock.provider import BedrockProvider
from support.bedrock_scenarios import CREDENTIALS, REGION

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32
PDF = b"%PDF-1.4 tiny"
SONNET = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
NOVA = "us.amazon.nova-pro-v1:0"
WEATHER = ToolSpec(
    "get_weather",
    "Weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


#: prepare() makes no client and sends nothing: one provider serves every test here.
PROVIDER = BedrockProvider({**CREDENTIALS, "region": REGION}, provider_info())


def build(model: str, *blocks: Any, **fields: Any) -> dict[str, Any]:
    """The Converse payload ``BedrockProvider.prepare`` makes (the runtime's path)."""
    messages = fields.pop("messages", None) or [Message("user", tuple(blocks))]
    payload: dict[str, Any] = PROVIDER.prepare(
        Request(model=model, messages=messages, **fields)
    ).payload
    return payload


def reject(model: str, *blocks: Any, **fields: Any) -> Exception:
    with pytest.raises((UnsupportedContentError, UnsupportedFeatureError, OptionError)) as info:
        build(model, *blocks, **fields)
    return info.value


def prepared_for(model: str) -> ConversePrepared:
    return ConversePrepared(Request(model=model, messages=[]), {"modelId": model})


# --- content -------------------------------------------------------------------------


def test_document_alone_gets_a_text_block_beside_it() -> None:
    body = build(SONNET, MediaBlock("file", "application/pdf", PDF, filename="a.pdf"))
    assert body["messages"][0]["content"] == [
        {"document": {"format": "pdf", "name": "a", "source": {"bytes": PDF}}},
        {"text": DOCUMENT_PROMPT},
    ]


@pytest.mark.parametrize(
    ("filename", "expected"),
    [
        ("q3_report.v2.pdf", "q3 report v2"),
        ("Résumé (final) [v2].docx", "R sum (final) [v2]"),
        ("  many   spaces.txt", "many spaces"),
        ("../../etc/passwd", "passwd"),  # only the last part of a path
        ("....pdf", "document 4"),
        (None, "document 4"),
    ],
)
def test_document_names_are_sanitised(filename: str | None, expected: str) -> None:
    assert document_name(filename, 4) == expected


def test_duplicate_document_names_are_made_unique() -> None:
    body = build(
        SONNET,
        MediaBlock("file", "text/csv", b"a,b", filename="data.csv"),
        MediaBlock("file", "text/csv", b"c,d", filename="data.csv"),
        TextBlock("compare"),
    )
    names = [b["document"]["name"] for b in body["messages"][0]["content"] if "document" in b]
    assert names == ["data", "data (2)"]


@pytest.mark.parametrize(
    ("media_type", "fmt"),
    [
        ("text/plain", "txt"),
        ("text/markdown", "md"),
        ("text/html", "html"),
        ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", "docx"),
    ],
)
def test_document_formats(media_type: str, fmt: str) -> None:
    body = build(SONNET, MediaBlock("file", media_type, b"x", filename="f"), TextBlock("?"))
    assert body["messages"][0]["content"][0]["document"]["format"] == fmt


def test_audio_is_rejected() -> None:
    err = reject(SONNET, MediaBlock("audio", "audio/wav", b"RIFF0000WAVE"))
    assert isinstance(err, UnsupportedContentError) and "audio" in str(err)


def test_http_urls_are_rejected_and_s3_locations_pass_where_supported() -> None:
    err = reject(NOVA, MediaBlock("image", "image/png", url="https://example.com/kiwi.png"))
    assert "s3://" in str(err)
    body = build(NOVA, MediaBlock("image", "image/png", url="s3://bucket/kiwi.png"), TextBlock("?"))
    assert body["messages"][0]["content"][0] == {
        "image": {"format": "png", "source": {"s3Location": {"uri": "s3://bucket/kiwi.png"}}}
    }
    assert "URL" in str(
        reject(SONNET, MediaBlock("image", "image/png", url="s3://bucket/kiwi.png"))
    )


def test_text_only_model_rejects_images_and_pdfs_but_inlines_csv() -> None:
    micro = "us.amazon.nova-micro-v1:0"
    reject(micro, MediaBlock("image", "image/png", PNG))
    reject(micro, MediaBlock("file", "application/pdf", PDF))
    body = build(micro, MediaBlock("file", "text/csv", b"a,b\n1,2\n", filename="t.csv"))
    assert body["messages"][0]["content"] == [
        {"text": '<file name="t.csv" media_type="text/csv">\na,b\n1,2\n\n</file>'}
    ]


def test_oversized_document_is_rejected() -> None:
    err = reject(SONNET, MediaBlock("file", "application/pdf", b"%PDF" + b"0" * MAX_DOCUMENT_BYTES))
    assert "over the Converse limit" in str(err)


def test_blank_text_blocks_are_not_sent() -> None:
    body = build(SONNET, TextBlock("  "), TextBlock("hi"))
    assert body["messages"] == [{"role": "user", "content": [{"text": "hi"}]}]


# --- tools and tool choice -------------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"auto": {}}),
        ("required", {"any": {}}),
        ({"name": "get_weather"}, {"tool": {"name": "get_weather"}}),
    ],
)
def test_tool_choice_forms(choice: Any, wire: dict[str, Any]) -> None:
    body = build(SONNET, TextBlock("hi"), tools=[WEATHER], tool_choice=choice)
    assert body["toolConfig"]["toolChoice"] == wire


def test_tool_choice_none_sends_no_tools() -> None:
    body = build(SONNET, TextBlock("hi"), tools=[WEATHER], tool_choice="none")
    assert "toolConfig" not in body


def test_tool_choice_none_after_tool_calls_is_rejected() -> None:
    history = [
        Message("user", (TextBlock("weather?"),)),
        Message("assistant", tool_calls=(ToolCall("t1", "get_weather", {"city": "Paris"}),)),
        Message("tool", tool_results=(ToolResult("t1", "get_weather", "sunny"),)),
    ]
    err = reject(SONNET, messages=history, tools=[WEATHER], tool_choice="none")
    assert 'tool_choice="none"' in str(err)


def test_choices_a_model_family_cannot_take_are_rejected() -> None:
    llama = "us.meta.llama3-1-70b-instruct-v1:0"
    assert "required" in str(
        reject(llama, TextBlock("hi"), tools=[WEATHER], tool_choice="required")
    )
    reject(llama, TextBlock("hi"), tools=[WEATHER], tool_choice={"name": "get_weather"})
    rf = ResponseFormat({"type": "object", "properties": {"a": {"type": "string"}}})
    assert "response_format" in str(reject(llama, TextBlock("hi"), response_format=rf))
    assert build(llama, TextBlock("hi"), tools=[WEATHER])["toolConfig"]["toolChoice"] == {
        "auto": {}
    }


def test_tool_results_without_status_field_on_models_that_lack_it() -> None:
    history = [
        Message("user", (TextBlock("weather?"),)),
        Message("assistant", tool_calls=(ToolCall("t1", "get_weather", {"city": "X"}),)),
        Message(
            "tool", tool_results=(ToolResult("t1", "get_weather", "no station", is_error=True),)
        ),
    ]
    llama = build("us.meta.llama3-1-70b-instruct-v1:0", messages=history, tools=[WEATHER])
    assert llama["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "t1", "content": [{"text": "Error: no station"}]}}
    ]
    claude = build(SONNET, messages=history, tools=[WEATHER])
    assert claude["messages"][2]["content"][0]["toolResult"]["status"] == "error"


def test_tool_result_media_follow_the_results_on_models_without_tool_result_media() -> None:
    # Converse takes media inside toolResult on Claude and Nova only; elsewhere the result names
    # the file and the image follows in the same user turn (roles must alternate).
    png = b"\x89PNG\r\n\x1a\n" + bytes(24)
    label = hashlib.sha1(png, usedforsecurity=False).hexdigest()[:6]
    shot = MediaBlock("image", "image/png", data=png)
    history = [
        Message("user", (TextBlock("look"),)),
        Message("assistant", tool_calls=(ToolCall("t1", "snap", {}),)),
        Message("tool", tool_results=(ToolResult("t1", "snap", "done", blocks=(shot,)),)),
    ]
    pixtral = build("us.mistral.pixtral-large-2502-v1:0", messages=history, tools=[WEATHER])
    result, intro, image = pixtral["messages"][2]["content"]
    assert result == {
        "toolResult": {"toolUseId": "t1", "content": [{"text": f"done\nSee file {label}."}]}
    }
    assert intro == {"text": f"This is file {label}:"}
    assert image["image"]["format"] == "png" and "bytes" in image["image"]["source"]
    claude = build(SONNET, messages=history, tools=[WEATHER])
    inside = claude["messages"][2]["content"][0]["toolResult"]["content"]
    assert [next(iter(b)) for b in inside] == ["text", "image"]
    # A model that takes no image at all refuses it, typed, before any request.
    with pytest.raises(UnsupportedContentError):
        build("us.meta.llama3-1-70b-instruct-v1:0", messages=history, tools=[WEATHER])


def test_forced_output_tool_beside_user_tools_uses_any() -> None:
    rf = ResponseFormat({"type": "array", "items": {"type": "string"}}, name="get_weather")
    body = build(
        "us.anthropic.claude-3-5-sonnet-20241022-v2:0",
        TextBlock("hi"),
        tools=[WEATHER],
        response_format=rf,
    )
    names = [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]]
    assert names == ["get_weather", "get_weather_output"]  # no clash with the user's tool
    assert body["toolConfig"]["toolChoice"] == {"any": {}}
    wrapped = body["toolConfig"]["tools"][1]["toolSpec"]["inputSchema"]["json"]
    assert wrapped["properties"]["value"] == {"type": "array", "items": {"type": "string"}}


def test_reasoning_blocks_are_echoed_before_the_tool_use() -> None:
    reasoning = {"reasoningContent": {"reasoningText": {"text": "think", "signature": "sig"}}}
    history = [
        Message("user", (TextBlock("weather?"),)),
        Message(
            "assistant",
            (ThinkingBlock("think", "sig", vendor="bedrock"),),
            tool_calls=(ToolCall("t1", "get_weather", {"city": "Paris"}),),
        ),
        Message("tool", tool_results=(ToolResult("t1", "get_weather", "sunny"),)),
    ]
    body = build(SONNET, messages=history, tools=[WEATHER], reasoning=Reasoning(effort="low"))
    assert body["messages"][1]["content"][0] == reasoning
    assert body["messages"][1]["content"][1]["toolUse"]["toolUseId"] == "t1"


# --- options --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "word"),
    [
        ({"seed": 1}, "seed"),
        ({"frequency_penalty": 0.5}, "frequency_penalty"),  # unknown name: the core's check
        ({"top_k": 5}, "top_k"),  # Claude only
        ({"temperature": 1.5}, "between 0 and 1"),  # Converse's range is narrower than 0-2
        ({"guardrail_config": "g1"}, "guardrail_config must be a dict"),
    ],
)
def test_unsupported_options_are_rejected(options: dict[str, Any], word: str) -> None:
    assert word in str(reject(NOVA, TextBlock("hi"), options=options))


@pytest.mark.parametrize("top_k", [0, "5", True])
def test_bad_top_k_values_are_option_errors(top_k: Any) -> None:
    err = reject(SONNET, TextBlock("hi"), options={"top_k": top_k})
    assert isinstance(err, OptionError) and "top_k" in str(err)


def test_passthrough_options_map_to_converse_fields() -> None:
    body = build(
        SONNET,
        TextBlock("hi"),
        options={
            "top_k": 40,
            "stop": "END",
            "additional_model_request_fields": {
                "thinking": {"type": "enabled", "budget_tokens": 2048}
            },
            "guardrail_config": {"guardrailIdentifier": "g1", "guardrailVersion": "1"},
            "performance_config": {"latency": "optimized"},
            "service_tier": {"type": "priority"},
        },
    )
    assert body["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "top_k": 40,
    }
    assert body["inferenceConfig"] == {"stopSequences": ["END"]}
    assert body["guardrailConfig"] == {"guardrailIdentifier": "g1", "guardrailVersion": "1"}
    assert body["performanceConfig"] == {"latency": "optimized"}
    assert body["serviceTier"] == {"type": "priority"}


def test_system_prompt_on_a_model_without_one_is_rejected() -> None:
    assert "system prompt" in str(
        reject("amazon.titan-text-express-v1", TextBlock("hi"), system="Be brief.")
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_bad_input_fails_before_any_request(mode: str) -> None:
    with LoopbackServer([]) as server:
        rt = Runtime(
            model=f"bedrock:{SONNET}",
            providers={"bedrock": {**CREDENTIALS, "region": REGION, "endpoint_url": server.url}},
        )
        for kwargs, error in [
            (
                {
                    "content": [
                        {"type": "audio", "data": b"RIFF0000WAVEfmt ", "media_type": "audio/wav"}
                    ]
                },
                UnsupportedContentError,
            ),
            ({"content": "hi", "seed": 7}, UnsupportedFeatureError),
            (
                {"content": [{"type": "image", "url": "https://example.com/x.png"}]},
                UnsupportedContentError,
            ),
            ({"content": [{"type": "file", "path": "missing.pdf"}]}, ContentError),
            ({"content": "hi", "temperature": "hot"}, OptionError),
            ({"content": "hi", "temperature": 1.5}, OptionError),
            ({"content": "hi", "max_tokens": 0}, OptionError),
            ({"content": "hi", "top_k": 5, "model": f"bedrock:{NOVA}"}, UnsupportedFeatureError),
            ({"content": "hi", "temprature": 0.2}, OptionError),
        ]:
            with pytest.raises(error):
                if mode == "sync":
                    rt.run(**kwargs)
                else:
                    await rt.arun(**kwargs)
        rt.close()
        assert server.requests == []


# --- answers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "neutral"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence"),
        ("guardrail_intervened", "content_filter"),
        ("content_filtered", "content_filter"),
        ("model_context_window_exceeded", "max_tokens"),
        ("malformed_tool_use", "other"),
        ("something_new", "other"),
    ],
)
def test_stop_reasons(raw: str, neutral: str) -> None:
    assert convert_out.stop_reason(raw) == neutral


def test_usage_counts_cache_reads_and_writes_in_the_prompt() -> None:
    use = convert_out.usage(
        {
            "inputTokens": 10,
            "outputTokens": 5,
            "cacheReadInputTokens": 100,
            "cacheWriteInputTokens": 20,
            "totalTokens": 135,
        }
    )
    assert (use.input_tokens, use.output_tokens, use.cache_read_tokens, use.cache_write_tokens) == (
        130,
        5,
        100,
        20,
    )


def test_answer_without_output_is_malformed() -> None:
    prepared = prepared_for(NOVA)
    with pytest.raises(MalformedResponseError):
        convert_out.response({"ResponseMetadata": {}, "message": "<html>"}, prepared)


def test_reasoning_content_is_kept_for_the_echo() -> None:
    prepared = prepared_for(SONNET)
    raw = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "s1"}}},
                    {"text": "Done."},
                ],
            }
        },
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 2},
        "ResponseMetadata": {"RequestId": "rid"},
    }
    response = convert_out.response(raw, prepared)
    assert (response.text, response.id, response.model) == ("Done.", "rid", SONNET)
    assert response.blocks == [
        ThinkingBlock("hmm", "s1", vendor="bedrock"),
        TextBlock("Done."),
    ]
    assert response.extra == {}


def test_streamed_reasoning_is_assembled() -> None:
    state = convert_out.StreamState(prepared_for(SONNET), "rid")
    events = [
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"text": "hm"}},
            }
        },
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"text": "m"}},
            }
        },
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"signature": "sig"}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"text": "Done."}}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]
    out = [e for event in events for e in state.feed(event)] + list(state.end())
    assert [e for e in out if isinstance(e, ThinkingDelta)] == [
        ThinkingDelta("hm", key=0, vendor="bedrock"),
        ThinkingDelta("m", key=0, vendor="bedrock"),
        ThinkingDelta(key=0, signature="sig", vendor="bedrock"),
    ]
    response = assemble(out)
    assert response.blocks == [
        ThinkingBlock("hmm", "sig", vendor="bedrock"),
        TextBlock("Done."),
    ]
    stop = out[-1]
    assert (stop.id, stop.model, stop.extra) == ("rid", SONNET, {})


# --- error classification -------------------------------------------------------------------


def client_error(
    code: str, status: int, message: str = "m", headers: dict[str, str] | None = None
) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": code, "Message": message},
            "ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": headers or {}},
        },
        "Converse",
    )


@pytest.mark.parametrize(
    ("exc", "cls", "retryable"),
    [
        (client_error("ThrottlingException", 429), RateLimitError, True),
        (client_error("ModelNotReadyException", 429), OverloadedError, True),
        (client_error("ServiceUnavailableException", 503), OverloadedError, True),
        (client_error("InternalServerException", 500), OverloadedError, True),
        (client_error("ModelTimeoutException", 408), ProviderTimeoutError, True),
        (client_error("ValidationException", 400), BadRequestError, False),
        (client_error("ServiceQuotaExceededException", 400), RateLimitError, False),
        (
            EventStreamError(
                {"Error": {"Code": "throttlingException", "Message": "slow"}}, "ConverseStream"
            ),
            RateLimitError,
            True,
        ),
        (ReadTimeoutError(endpoint_url="https://x"), ProviderTimeoutError, True),
        (CredentialRetrievalError(provider="sso", error_msg="expired"), AuthenticationError, False),
        (UnauthorizedSSOTokenError(), AuthenticationError, False),
        (UnknownServiceError(service_name="x", known_service_names="y"), ProviderError, False),
        (urllib3.exceptions.DecodeError("bad gzip"), ProviderConnectionError, True),
    ],
)
def test_error_classification(exc: Exception, cls: type, retryable: bool) -> None:
    error = translate(exc)
    assert isinstance(error, cls) and error.retryable is retryable and error.provider == "bedrock"


def test_unrelated_exceptions_are_not_translated() -> None:
    assert translate(ValueError("x")) is None
    assert translate(json.JSONDecodeError("x", "y", 0)) is None


def test_retry_after_header_is_honoured() -> None:
    error = translate(client_error("ThrottlingException", 429, headers={"Retry-After": "4"}))
    assert error is not None and error.retry_after == 4.0


# --- vendor depth: rejected before any request ----------------------------------------------

SONNET_37 = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
NOVA_2 = "us.amazon.nova-2-lite-v1:0"
HAIKU_3 = "anthropic.claude-3-haiku-20240307-v1:0"
TXT = b"plain text"


@pytest.mark.parametrize(
    ("model", "fields", "word"),
    [
        (NOVA, {"reasoning": Reasoning(effort="high")}, "reasoning"),  # Nova 1: no reasoning
        (HAIKU_3, {"reasoning": Reasoning(effort="low")}, "reasoning"),
        (NOVA_2, {"reasoning": Reasoning(budget_tokens=2048)}, "budget_tokens"),
        (NOVA_2, {"reasoning": Reasoning(effort="low", summary="auto")}, "summary"),
        (SONNET, {"reasoning": Reasoning(budget_tokens=-1)}, "budget_tokens=-1"),
        (SONNET, {"reasoning": Reasoning(budget_tokens=512)}, ">= 1024"),
        (
            SONNET,
            {"reasoning": Reasoning(budget_tokens=4096), "options": {"max_tokens": 4096}},
            "greater than the thinking budget",
        ),
        (
            SONNET,
            {"reasoning": Reasoning(effort="low"), "options": {"temperature": 0.2}},
            "sampling options",
        ),
        (
            SONNET,
            {"reasoning": Reasoning(effort="low"), "tools": [WEATHER], "tool_choice": "required"},
            "tool_choice",
        ),
        (
            SONNET_37,
            {"reasoning": Reasoning(effort="low"), "response_format": ResponseFormat({})},
            "response_format with reasoning",
        ),
        (NOVA, {"native_tools": [NativeTool("code_execution")]}, "code_execution"),
        (NOVA_2, {"native_tools": [NativeTool("web_search")]}, "web_search"),
        (SONNET, {"native_tools": [NativeTool("code_execution")]}, "code_execution"),
        (NOVA_2, {"native_tools": [NativeTool("code_execution", timeout=5)]}, "timeout"),
        (SONNET, {"cache": CacheSettings(key="k1")}, "cache key"),
        (SONNET, {"cache": CacheSettings(retention="24h")}, "cache retention"),
        (SONNET_37, {"system_blocks": (TextBlock("s", cache=CacheControl("1h")),)}, "ttl"),
        (SONNET, {"system_blocks": (TextBlock("s", cache=CacheControl("2h")),)}, "5m or 1h"),
        (HAIKU_3, {"tools": [replace(WEATHER, cache=CacheControl())]}, "prompt caching"),
        (
            "meta.llama3-70b-instruct-v1:0",
            {"system_blocks": (TextBlock("s", cache=CacheControl()),)},
            "prompt caching",
        ),
    ],
)
def test_what_bedrock_lacks_is_rejected_before_any_request(
    model: str, fields: dict[str, Any], word: str
) -> None:
    fields = dict(fields)
    system_blocks = fields.get("system_blocks")
    if system_blocks:
        fields["system"] = "".join(b.text for b in system_blocks)
    err = reject(model, TextBlock("hi"), **fields)
    assert word in str(err)
    if not isinstance(err, OptionError):
        assert "bedrock" in str(err) and model in str(err)


def test_count_tokens_is_claude_only() -> None:
    with pytest.raises(UnsupportedFeatureError, match="token counting"):
        PROVIDER.count_tokens(Request(model=NOVA, messages=[Message("user", (TextBlock("hi"),))]))


@pytest.mark.parametrize(
    ("block", "word"),
    [
        (MediaBlock("image", "image/png", PNG, citations=True), "citations"),  # Nova: none
        (MediaBlock("file", "text/plain", TXT, send="native"), "native"),  # nova-micro
    ],
)
def test_unsupported_file_options_are_content_errors(block: MediaBlock, word: str) -> None:
    err = reject("us.amazon.nova-micro-v1:0", block, TextBlock("hi"))
    assert isinstance(err, UnsupportedContentError) and word in str(err)


def test_citations_need_the_document_part() -> None:
    block = MediaBlock("file", "text/plain", TXT, citations=True, send="text")
    err = reject(SONNET, block, TextBlock("hi"))
    assert isinstance(err, UnsupportedContentError) and "Converse document" in str(err)


# --- vendor depth: conversions ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "reasoning", "fields"),
    [
        (
            SONNET,
            Reasoning(effort="medium"),
            {"thinking": {"type": "enabled", "budget_tokens": 8192}},
        ),
        (
            SONNET,
            Reasoning(effort="max"),
            {"thinking": {"type": "enabled", "budget_tokens": 32768}},  # the Anthropic table
        ),
        # Opus 4.1 writes at most 32k tokens: "max" is capped below it.
        (
            "us.anthropic.claude-opus-4-1-20250805-v1:0",
            Reasoning(effort="max"),
            {"thinking": {"type": "enabled", "budget_tokens": 31999}},
        ),
        (
            SONNET,
            Reasoning(budget_tokens=3000, effort="low"),
            {"thinking": {"type": "enabled", "budget_tokens": 3000}},
        ),
        (
            SONNET,
            Reasoning(summary="auto"),
            {"thinking": {"type": "enabled", "budget_tokens": 8192}},
        ),
        (
            NOVA_2,
            Reasoning(effort="minimal"),
            {"reasoningConfig": {"type": "enabled", "maxReasoningEffort": "low"}},
        ),
        (
            NOVA_2,
            Reasoning(effort="xhigh"),
            {"reasoningConfig": {"type": "enabled", "maxReasoningEffort": "high"}},
        ),
        (SONNET, Reasoning(effort="none"), None),
        (NOVA_2, Reasoning(budget_tokens=0), None),
    ],
)
def test_reasoning_maps_per_family(
    model: str, reasoning: Reasoning, fields: dict[str, Any] | None
) -> None:
    body = build(model, TextBlock("hi"), reasoning=reasoning)
    assert body.get("additionalModelRequestFields") == fields


def test_caller_fields_merge_over_the_reasoning_fields() -> None:
    body = build(
        SONNET,
        TextBlock("hi"),
        reasoning=Reasoning(effort="low"),
        options={"additional_model_request_fields": {"thinking": {"budget_tokens": 4000}}},
    )
    assert body["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 4000}
    }


def test_redacted_thinking_round_trips_as_bytes() -> None:
    raw = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"redactedContent": b"\x00opaque\xff"}},
                    {
                        "toolUse": {
                            "toolUseId": "t1",
                            "name": "get_weather",
                            "input": {"city": "Paris"},
                        }
                    },
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 1, "outputTokens": 2},
    }
    response = convert_out.response(raw, prepared_for(SONNET))
    (block,) = response.blocks
    assert block == ThinkingBlock(
        redacted=base64.b64encode(b"\x00opaque\xff").decode(), vendor="bedrock"
    )
    history = [Message("user", (TextBlock("weather?"),)), response.as_message()]
    history.append(Message("tool", tool_results=(ToolResult("t1", "get_weather", "sunny"),)))
    body = build(SONNET, messages=history, tools=[WEATHER])
    assert body["messages"][1]["content"][0] == {
        "reasoningContent": {"redactedContent": b"\x00opaque\xff"}
    }


def test_streamed_redacted_thinking_is_one_delta_at_block_end() -> None:
    state = convert_out.StreamState(prepared_for(SONNET))
    events = [
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"redactedContent": b"ab"}},
            }
        },
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"redactedContent": b"cd"}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 0}},
    ]
    out = [e for event in events for e in state.feed(event)]
    assert out == [
        ThinkingDelta(key=0, redacted=base64.b64encode(b"abcd").decode(), vendor="bedrock")
    ]


def test_other_vendors_thinking_is_not_sent() -> None:
    history = [
        Message("user", (TextBlock("hi"),)),
        Message("assistant", (ThinkingBlock("t", "s", vendor="anthropic"), TextBlock("hello"))),
        Message("user", (TextBlock("again"),)),
    ]
    body = build(SONNET, messages=history)
    assert body["messages"][1]["content"] == [{"text": "hello"}]


def test_plain_answers_leave_blocks_empty() -> None:
    raw = {
        "output": {"message": {"role": "assistant", "content": [{"text": "Hi."}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 2},
    }
    response = convert_out.response(raw, prepared_for(NOVA))
    assert (response.text, response.blocks) == ("Hi.", [])


@pytest.mark.parametrize(
    ("send", "model", "kind"),
    [
        ("auto", SONNET, "document"),
        ("native", SONNET, "document"),
        ("text", SONNET, "text"),
        ("auto", "us.amazon.nova-micro-v1:0", "text"),  # takes no documents: inlined
    ],
)
def test_text_file_send_modes(send: str, model: str, kind: str) -> None:
    block = MediaBlock("file", "text/markdown", b"# Notes", filename="notes.md", send=send)  # type: ignore[arg-type]
    first = build(model, block, TextBlock("summarise"))["messages"][0]["content"][0]
    assert next(iter(first)) == kind
    if kind == "document":
        assert first["document"]["format"] == "md"


def test_cache_ttl_on_claude_4_5() -> None:
    body = build(
        SONNET,
        TextBlock("long", cache=CacheControl("1h")),
        system="s",
        system_blocks=(TextBlock("s", cache=CacheControl("5m")),),
    )
    assert body["system"] == [{"text": "s"}, {"cachePoint": {"type": "default", "ttl": "5m"}}]
    assert body["messages"][0]["content"] == [
        {"text": "long"},
        {"cachePoint": {"type": "default", "ttl": "1h"}},
    ]


def test_capability_rows_carry_the_new_fields() -> None:
    info = provider_info()
    sonnet = info.capabilities_for(SONNET)
    assert (sonnet.context_window, sonnet.max_output_tokens) == (200_000, 64_000)
    assert sonnet.reasoning and sonnet.caching and sonnet.citations and sonnet.count_tokens
    assert sonnet.native_text_files == {"text/plain", "text/markdown", "text/csv", "text/html"}
    nova2 = info.capabilities_for(NOVA_2)
    assert nova2.native_tool_kinds == {"code_execution"} and nova2.reasoning
    assert not nova2.count_tokens and not nova2.citations
    micro = info.capabilities_for("us.amazon.nova-micro-v1:0")
    assert micro.caching and not micro.reasoning and micro.native_text_files == frozenset()
