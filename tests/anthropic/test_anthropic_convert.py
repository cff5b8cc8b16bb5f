"""Request conversion rules and the checks that run before any request."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from llmport import (
    ContentError,
    OptionError,
    Runtime,
    UnsupportedContentError,
    UnsupportedFeatureError,
)
from llmport.messages.content import normalize_content
from llmport.messages.types import (
    CacheControl,
    CacheSettings,
    Message,
    NativeTool,
    Reasoning,
    Request,
    ResponseFormat,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from llmport.testing.loopback import LoopbackServer
from llmport_anthropic import convert_in
from llmport_anthropic.models import MAX_IMAGE_BYTES, family_for
from llmport_anthropic.plugin import llmport_providers
from support.anthropic_scenarios import DATA

WEATHER = ToolSpec(
    "get_weather", "Weather.", {"type": "object", "properties": {"city": {"type": "string"}}}
)


def caps(model: str) -> Any:
    found: list[Any] = []
    llmport_providers(register=found.append)
    return found[0].capabilities_for(model)


def build(
    model: str = "claude-sonnet-4-5", vendor: dict[str, Any] | None = None, **kwargs: Any
) -> dict[str, Any]:
    request = Request(
        model=model,
        messages=kwargs.pop("messages", [Message("user", (TextBlock("Hi"),))]),
        **kwargs,
    )
    return convert_in.build_request(request, caps(model), family_for(model), vendor).params


# --- tool_choice ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", True, {"type": "auto"}),
        ("auto", False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", True, {"type": "any"}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        ("none", True, {"type": "none"}),
        ({"name": "get_weather"}, True, {"type": "tool", "name": "get_weather"}),
        (
            {"name": "get_weather"},
            False,
            {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True},
        ),
    ],
)
def test_tool_choice_mapping(choice: Any, parallel: bool, expected: dict[str, Any]) -> None:
    params = build(tools=[WEATHER], tool_choice=choice, parallel_tool_calls=parallel)
    assert params["tool_choice"] == expected
    assert params["tools"][0]["input_schema"] == WEATHER.parameters


def test_no_tools_means_no_tool_choice() -> None:
    assert "tool_choice" not in build(tool_choice="required")


# --- messages --------------------------------------------------------------------------


def test_tool_results_lead_the_user_turn_and_same_role_turns_merge() -> None:
    call = ToolCall("toolu_1", "get_weather", {"city": "Paris"}, '{"city": "Paris"}')
    messages = [
        Message("system", (TextBlock("Extra rule."),)),
        Message("user", (TextBlock("Weather?"),)),
        Message("assistant", (TextBlock(""),), (call,)),
        Message(
            "tool", tool_results=(ToolResult("toolu_1", "get_weather", "boom", is_error=True),)
        ),
        Message("user", (TextBlock("Try again."),)),
        Message("assistant", (TextBlock("A"),)),
        Message("assistant", (TextBlock("B"),)),
    ]
    params = build(messages=messages, system="Be brief.")
    assert params["system"] == "Be brief.\n\nExtra rule."
    assert params["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
        {
            "role": "assistant",
            "content": [  # empty text dropped: the API rejects it
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "boom",
                    "is_error": True,
                },
                {"type": "text", "text": "Try again."},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}],
        },
    ]


def test_tool_result_after_user_text_still_comes_first() -> None:
    messages = [
        Message("user", (TextBlock("note"),)),
        Message("tool", tool_results=(ToolResult("toolu_9", "f", "ok"),)),
    ]
    content = build(messages=messages)["messages"][0]["content"]
    assert [b["type"] for b in content] == ["tool_result", "text"]


def test_thinking_blocks_are_echoed_first_in_the_assistant_turn() -> None:
    call = ToolCall("toolu_1", "get_weather", {"city": "Paris"})
    blocks = (
        ThinkingBlock("Let me think.", signature="sig==", vendor="anthropic"),
        ThinkingBlock(redacted="opaque==", vendor="anthropic"),
        TextBlock("Checking."),
    )
    messages = [
        Message("user", (TextBlock("Weather?"),)),
        Message("assistant", blocks, tool_calls=(call,)),
        Message("tool", tool_results=(ToolResult("toolu_1", "get_weather", "sunny"),)),
    ]
    assistant = build(messages=messages)["messages"][1]["content"]
    assert assistant == [
        {"type": "thinking", "thinking": "Let me think.", "signature": "sig=="},
        {"type": "redacted_thinking", "data": "opaque=="},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
    ]


# --- options -----------------------------------------------------------------------------


def test_sampling_and_stop_options() -> None:
    params = build(
        options={
            "top_p": 0.9,
            "stop": "STOP",
            "max_tokens": 50,
            "timeout": 12.5,
            "top_k": 40,
            "metadata": {"user_id": "u-1"},
        }
    )
    assert params["extra_body"] == {"top_p": 0.9, "top_k": 40}
    assert params["stop_sequences"] == ["STOP"]
    assert params["max_tokens"] == 50
    assert params["timeout"] == 12.5
    assert params["metadata"] == {"user_id": "u-1"}


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-4-5", 16384),
        ("claude-3-5-haiku-20241022", 8192),
        ("claude-3-haiku-20240307", 4096),
        ("claude-opus-4-8", 16384),
        ("claude-some-future-model", 16384),
    ],
)
def test_max_tokens_default_per_family(model: str, expected: int) -> None:
    assert build(model)["max_tokens"] == expected


def test_reasoning_budget_models() -> None:
    params = build("claude-sonnet-4-5", reasoning=Reasoning("high"))
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert params["max_tokens"] == 16384 + convert_in.ANSWER_ROOM
    assert "output_config" not in params  # Sonnet 4.5 has no effort parameter
    params = build(
        "claude-sonnet-4-5", reasoning=Reasoning(budget_tokens=3000), options={"max_tokens": 8000}
    )
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 3000}
    assert params["max_tokens"] == 8000
    # max is capped to leave room for the answer under Opus 4.1's 32k output limit.
    params = build("claude-opus-4-1", reasoning=Reasoning("max"), stream=True)
    assert params["thinking"] == {
        "type": "enabled",
        "budget_tokens": 32000 - convert_in.ANSWER_ROOM,
    }
    assert params["max_tokens"] == 32000


def test_reasoning_adaptive_models() -> None:
    params = build("claude-opus-4-8", reasoning=Reasoning("xhigh"))
    assert params["thinking"] == {"type": "adaptive"}
    assert params["output_config"] == {"effort": "xhigh"}
    params = build(
        "claude-sonnet-4-6",
        reasoning=Reasoning("low"),
        response_format=ResponseFormat({"type": "object", "properties": {}}),
    )
    assert params["output_config"] == {
        "effort": "low",
        "format": {
            "type": "json_schema",
            "schema": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    }


def test_effort_without_thinking_and_other_reasoning_forms() -> None:
    # budget_tokens=0 with an effort: effort alone, thinking stays off (issue 11).
    params = build("claude-sonnet-4-6", reasoning=Reasoning("low", budget_tokens=0))
    assert "thinking" not in params
    assert params["output_config"] == {"effort": "low"}
    assert params["max_tokens"] == 16384
    # Effort and a budget together on Claude 4.6: manual thinking plus effort.
    params = build("claude-opus-4-6", reasoning=Reasoning("max", budget_tokens=4000))
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert params["output_config"] == {"effort": "max"}
    # Dynamic budget (-1) is adaptive thinking; summaries set thinking.display.
    params = build("claude-sonnet-4-6", reasoning=Reasoning(budget_tokens=-1, summary="auto"))
    assert params["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert "output_config" not in params
    params = build("claude-opus-4-8", reasoning=Reasoning("high", summary=False))
    assert params["thinking"] == {"type": "adaptive", "display": "omitted"}
    # Opus 4.5: budget thinking plus effort, behind its beta header.
    params = build("claude-opus-4-5", reasoning=Reasoning("medium"))
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert params["output_config"] == {"effort": "medium"}
    assert params["extra_headers"] == {"anthropic-beta": "effort-2025-11-24"}
    # Off: nothing sent.
    for off in (Reasoning("none"), Reasoning(budget_tokens=0)):
        params = build("claude-sonnet-4-5", reasoning=off)
        assert "thinking" not in params and "output_config" not in params


def test_max_tokens_not_above_the_budget_is_an_option_error() -> None:
    with pytest.raises(OptionError, match="larger than the thinking budget"):
        build("claude-sonnet-4-5", reasoning=Reasoning("high"), options={"max_tokens": 10000})


@pytest.mark.parametrize(
    ("model", "kwargs", "feature"),
    [
        ("claude-sonnet-4-5", {"options": {"seed": 7}}, "seed"),
        (
            "claude-sonnet-4-5",
            {"options": {"temperature": 0.2, "top_p": 0.9}},
            "temperature together with top_p",
        ),
        ("claude-opus-4-8", {"options": {"temperature": 0.2}}, "temperature"),
        ("claude-3-5-haiku-20241022", {"reasoning": Reasoning("low")}, "reasoning"),
        (
            "claude-sonnet-4-5",
            {"reasoning": Reasoning("low", budget_tokens=0)},
            "reasoning effort without thinking ('low')",
        ),
        (
            "claude-haiku-4-5",
            {"reasoning": Reasoning("high", budget_tokens=2000)},
            "reasoning effort with budget_tokens ('high')",
        ),
        (
            "claude-sonnet-4-6",
            {"reasoning": Reasoning("minimal")},
            "reasoning effort ('minimal')",
        ),
        (
            "claude-sonnet-4-6",
            {"reasoning": Reasoning("xhigh")},
            "reasoning effort ('xhigh')",
        ),
        (
            "claude-opus-4-8",
            {"reasoning": Reasoning(budget_tokens=4096)},
            "reasoning budget_tokens=4096",
        ),
        (
            "claude-sonnet-4-5",
            {"reasoning": Reasoning(budget_tokens=500)},
            "reasoning budget_tokens=500",
        ),
        (
            "claude-sonnet-4-5",
            {"reasoning": Reasoning(budget_tokens=-1)},
            "reasoning budget_tokens=-1 (dynamic)",
        ),
        (
            "claude-sonnet-4-5",
            {"reasoning": Reasoning("low"), "options": {"temperature": 0.3}},
            "sampling options with thinking",
        ),
        (
            "claude-sonnet-4-5",
            {"reasoning": Reasoning("low"), "tools": [WEATHER], "tool_choice": "required"},
            "tool_choice='required' with reasoning",
        ),
        (
            "claude-sonnet-4-5",
            {"cache": CacheSettings(key="k1")},
            "cache key",
        ),
        (
            "claude-sonnet-4-5",
            {"cache": CacheSettings(retention="24h")},
            "cache retention",
        ),
        (
            "claude-sonnet-4-5",
            {"native_tools": [NativeTool("file_search")]},
            "native tool 'file_search'",
        ),
        (
            "claude-3-5-haiku-20241022",
            {"native_tools": [NativeTool("code_execution")]},
            "native tool 'code_execution'",
        ),
        (
            "claude-3-haiku-20240307",
            {"native_tools": [NativeTool("web_search")]},
            "native tool 'web_search'",
        ),
        (
            "claude-sonnet-4-5",
            {"messages": [Message("user", (TextBlock("Hi", cache=CacheControl("2h")),))]},
            "cache ttl '2h'",
        ),
        (
            "claude-sonnet-4-5",
            {"options": {"max_tokens": 64000}},
            "max_tokens=64000 without streaming",
        ),
        ("claude-sonnet-4-5", {"options": {"max_tokens": 0}}, "max_tokens=0"),
        (
            "claude-3-7-sonnet-20250219",
            {
                "response_format": ResponseFormat({"type": "object"}),
                "tools": [WEATHER],
                "tool_choice": "none",
            },
            'response_format with tool_choice="none"',
        ),
        (
            "claude-3-7-sonnet-20250219",
            {"tools": [ToolSpec("f", "", {"type": "object"}, strict=True)]},
            "strict tool schema (f)",
        ),
    ],
)
def test_unsupported_features_rejected(model: str, kwargs: dict[str, Any], feature: str) -> None:
    with pytest.raises(UnsupportedFeatureError) as info:
        build(model, **kwargs)
    assert info.value.feature == feature
    assert info.value.vendor == "anthropic" and info.value.model == model


def test_long_max_tokens_allowed_when_streaming_or_with_timeout() -> None:
    assert build(options={"max_tokens": 64000}, stream=True)["max_tokens"] == 64000
    assert build(options={"max_tokens": 64000, "timeout": 900})["max_tokens"] == 64000


# --- structured output --------------------------------------------------------------------


def test_schema_adapted_to_anthropic_subset() -> None:
    schema = {
        "type": "object",
        "additionalProperties": True,
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}, "minItems": 2},
            "kind": {
                "oneOf": [
                    {"type": "string", "format": "email"},
                    {"type": "integer", "multipleOf": 3},
                ]
            },
            "nested": {"type": "object", "properties": {"x": {"type": "number"}}},
        },
        "required": ["tags"],
    }
    params = build("claude-sonnet-4-6", response_format=ResponseFormat(schema))
    adapted = params["output_config"]["format"]["schema"]
    assert adapted == {
        "type": "object",
        "properties": {
            "tags": {
                "type": "array",
                "items": {"type": "string", "description": "{maxLength: 5}"},
                "description": "{minItems: 2}",
            },
            "kind": {
                "anyOf": [
                    {"type": "string", "format": "email"},
                    {"type": "integer", "description": "{multipleOf: 3}"},
                ]
            },
            "nested": {
                "type": "object",
                "properties": {"x": {"type": "number"}},
                "additionalProperties": False,
            },
        },
        "required": ["tags"],
        "additionalProperties": False,
    }
    assert schema["additionalProperties"] is True  # the caller's schema is untouched


def test_forced_tool_wraps_a_non_object_schema() -> None:
    rf = ResponseFormat({"type": "array", "items": {"type": "integer"}}, name="numbers")
    request = Request(
        "claude-3-7-sonnet-20250219", [Message("user", (TextBlock("List"),))], response_format=rf
    )
    prepared = convert_in.build_request(request, caps(request.model), family_for(request.model))
    assert prepared.output_tool == convert_in.OutputTool("numbers", wrapped=True)
    assert prepared.params["tools"][0]["input_schema"] == {
        "type": "object",
        "properties": {"value": rf.schema},
        "required": ["value"],
    }
    assert prepared.params["tool_choice"] == {"type": "tool", "name": "numbers"}


def test_forced_tool_with_user_tools_requires_a_tool_each_turn() -> None:
    params = build(
        "claude-3-7-sonnet-20250219",
        tools=[WEATHER],
        response_format=ResponseFormat({"type": "object"}, name="get_weather"),
    )
    assert [t["name"] for t in params["tools"]] == ["get_weather", "get_weather_output"]
    assert params["tool_choice"] == {"type": "any"}


# --- content rejected before any request (sync and async) ----------------------------------


def _png(size: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"\x00" * (size - 8)


REJECTED = {
    "audio": (
        [{"type": "audio", "data": b"RIFF\x00\x00\x00\x00WAVEfmt ", "media_type": "audio/wav"}],
        UnsupportedContentError,
        "model takes no audio input",
    ),
    "unknown media type": (
        [{"type": "file", "data": b"PK\x03\x04rest", "filename": "report.docx"}],
        UnsupportedContentError,
        "files of type application/vnd.openxml",
    ),
    "heic image": (
        [{"type": "image", "data": b"\x00\x00\x00\x18ftypheic", "media_type": "image/heic"}],
        UnsupportedContentError,
        "image type image/heic not accepted",
    ),
    "oversize image": (
        [{"type": "image", "data": _png(MAX_IMAGE_BYTES + 1)}],
        UnsupportedContentError,
        f"over the vendor limit of {MAX_IMAGE_BYTES}",
    ),
    "seed": ("Hello", UnsupportedFeatureError, "does not support seed"),
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("case", list(REJECTED))
async def test_rejected_before_any_request(case: str, mode: str) -> None:
    content, error, text = REJECTED[case]
    options = {"seed": 1} if case == "seed" else {}
    with LoopbackServer([]) as server:
        rt = Runtime(
            model="anthropic:claude-sonnet-4-5",
            providers={"anthropic": {"api_key": "test-key", "base_url": server.url}},
        )
        with pytest.raises(error) as info:
            if mode == "sync":
                rt.exec(content, **options)
            else:
                await rt.async_exec(content, **options)
        assert server.requests == []  # nothing was sent
    assert text in str(info.value)
    assert "anthropic" in str(info.value)


def test_text_document_must_be_utf8() -> None:
    blocks = normalize_content(
        [{"type": "file", "data": b"\xff\xfe\x00bad", "media_type": "text/plain"}]
    )
    with pytest.raises(UnsupportedContentError, match="not UTF-8"):
        build(messages=[Message("user", tuple(blocks))])


def test_bad_block_is_a_content_error_naming_its_index() -> None:
    rt = Runtime(model="anthropic:claude-sonnet-4-5", providers={"anthropic": {"api_key": "k"}})
    with pytest.raises(ContentError, match="content block 1"):
        rt.exec(["Look:", {"type": "image", "path": str(DATA / "missing.png")}])


def test_claude_3_takes_no_pdf() -> None:
    blocks = normalize_content([{"type": "file", "path": str(DATA / "invoice.pdf")}])
    from llmport_anthropic.plugin import _factory

    found: list[Any] = []
    llmport_providers(register=found.append)
    provider = _factory({"api_key": "k"}, found[0])
    with pytest.raises(UnsupportedContentError, match="application/pdf"):
        provider.prepare(Request("claude-3-haiku-20240307", [Message("user", tuple(blocks))]))


# --- registration and laziness ---------------------------------------------------------------


def test_registration_capabilities_and_aliases() -> None:
    found: list[Any] = []
    llmport_providers(register=found.append)
    assert [i.prefix for i in found] == ["anthropic", "anthropic-vertex"]
    info = found[0]
    assert set(info.aliases) == {"sonnet", "haiku", "opus"}
    sonnet = info.capabilities_for("claude-sonnet-4-5-20250929")
    assert sonnet.native_structured_output and sonnet.max_image_bytes == MAX_IMAGE_BYTES
    assert "audio" not in sonnet.input_modalities and not sonnet.audio_types
    assert {"application/pdf", "text/plain"} <= sonnet.file_types
    assert not info.capabilities_for("claude-3-7-sonnet-20250219").native_structured_output


def test_plugin_import_does_not_import_the_sdk() -> None:
    import subprocess

    code = (
        "import sys, llmport, llmport_anthropic.plugin, llmport_anthropic.models, "
        "llmport_anthropic.convert_in, llmport_anthropic.convert_out, llmport_anthropic.errors\n"
        "print('anthropic' in sys.modules)\n"
        # Creating the provider and preparing a request import no SDK either: only sending does.
        "from llmport.messages.types import Message, Request, TextBlock\n"
        "from llmport_anthropic.provider import AnthropicProvider\n"
        "p = AnthropicProvider({'api_key': 'test-key'})\n"
        "p.prepare(Request('claude-sonnet-4-6', [Message('user', (TextBlock('Hi'),))]))\n"
        "print('anthropic' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_secrets_stay_out_of_reprs_and_errors() -> None:
    from llmport_anthropic.provider import AnthropicProvider

    provider = AnthropicProvider({"api_key": "sk-ant-secret-123", "base_url": "http://127.0.0.1:9"})
    assert "sk-ant-secret-123" not in repr(provider)
    with pytest.raises(Exception) as info:
        AnthropicProvider({"api_key": "sk-ant-secret-123", "bogus": 1})
    assert "sk-ant-secret-123" not in str(info.value) and "bogus" in str(info.value)
