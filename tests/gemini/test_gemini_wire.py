"""The JSON request body llmport builds is byte for byte the one google-genai would write.

``GeminiProvider.prepare`` builds the Developer API request as JSON
(``convert_in.wire_request``) instead of google-genai objects. Each case here
also runs the objects it stands for (``convert_in.sdk_payload``) through the
SDK's own converters, ``extra_body`` merge included, and compares
``json.dumps`` of both: same keys, same order, same values.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from llmport.types import (
    MediaBlock,
    Message,
    ModelCapabilities,
    NativeTool,
    Reasoning,
    Request,
    ResponseFormat,
    ServerToolCall,
    ServerToolResult,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from llmport_gemini import convert_in
from llmport_gemini.convert_in import SIGNATURE_KEY, SIGNED_PART_KEY, SYNTHETIC_ID_KEY, sdk_payload
from llmport_gemini.convert_out import response, response_json, sdk_response
from llmport_gemini.provider import GeminiProvider

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
SIG = base64.b64encode(b"\xfb\xff\xfe signature").decode()
TOOL = ToolSpec(
    "get_weather",
    "Weather of a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def user(*blocks: Any) -> Message:
    return Message("user", tuple(TextBlock(b) if isinstance(b, str) else b for b in blocks))


def sdk_body(provider: GeminiProvider, prepared: Any) -> str:
    """What ``models.generate_content`` sends for the same request (google-genai's converters)."""
    from google.genai import _common, models, types

    args = sdk_payload(prepared, provider.family(prepared.request.model))
    params = types._GenerateContentParameters(**args)
    api = provider.client()._api_client
    body = models._GenerateContentParameters_to_mldev(api, params, None, params)
    body.pop("config", None)
    body.pop("_url", None)
    body = _common.encode_unserializable_types(_common.convert_to_dict(body))
    http = params.config.http_options if params.config else None
    if http is not None and http.extra_body:
        _common.recursive_dict_update(body, http.extra_body)
    return json.dumps(body)


CALLS = (
    ToolCall("call-1", "get_weather", {"city": "Paris", "none": None}, extra={SIGNATURE_KEY: SIG}),
    ToolCall("made-up", "get_weather", {"city": "Rome"}, extra={SYNTHETIC_ID_KEY: True}),
)
RESULTS = (
    ToolResult("call-1", "get_weather", "sunny"),
    ToolResult("made-up", "get_weather", "boom", is_error=True),
)
HISTORY = [
    user("Weather in Paris and Rome?"),
    Message(
        "assistant",
        (
            ThinkingBlock("thinking...", SIG, vendor="gemini"),
            ThinkingBlock("", SIG, vendor="gemini", extra={SIGNED_PART_KEY: "text"}),
            TextBlock("Let me look."),
            ServerToolCall(
                "c1",
                "code_execution",
                {},
                "gemini",
                {"executableCode": {"language": "PYTHON", "code": "1+1"}},
            ),
            ServerToolResult(
                "c1",
                "code_execution",
                {},
                "gemini",
                {
                    "codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "2"},
                    "thoughtSignature": SIG,
                },
            ),
        ),
        tool_calls=CALLS,
    ),
    Message("user", (TextBlock("and then?"),), tool_results=RESULTS),
]

CASES: dict[str, dict[str, Any]] = {
    "plain": {"messages": [user("Hi")]},
    "options": {
        "messages": [user("Hi")],
        "system": "Be brief.",
        "options": {
            "temperature": 1,
            "top_p": 0.9,
            "top_k": 40,
            "max_tokens": 256,
            "stop": "END",
            "seed": 7,
            "presence_penalty": 0.5,
            "frequency_penalty": 0,
            "timeout": 2.5,
        },
    },
    "system_messages": {
        "messages": [Message("system", (TextBlock("Rule one."),)), user("Hi"), user("again")],
        "system": "Be brief.",
    },
    "tools_auto": {"messages": [user("Hi")], "tools": [TOOL]},
    "tools_named": {
        "messages": [user("Hi")],
        "tools": [
            TOOL,
            ToolSpec("noop", "Nothing.", {}, vendor={"gemini": {"behavior": "NON_BLOCKING"}}),
        ],
        "tool_choice": {"name": "noop"},
    },
    "tools_none": {"messages": [user("Hi")], "tools": [TOOL], "tool_choice": "none"},
    "tools_required": {"messages": [user("Hi")], "tools": [TOOL], "tool_choice": "required"},
    "schema": {
        "messages": [user("Hi")],
        "response_format": ResponseFormat(
            {"type": "object", "properties": {"a": {"type": "integer"}}}
        ),
    },
    "thinking_and_vendor": {
        "messages": [user("Hi")],
        "options": {"temperature": 0.2},
        "reasoning": Reasoning(budget_tokens=1024, summary=True),
        "vendor": {
            "gemini": {
                "generationConfig": {"responseModalities": ["TEXT"], "thinking_config": {"x": 1}},
                "tools": [{"googleSearch": {}}],
                "_private": 1,
            }
        },
        "tools": [TOOL],
    },
    "native_tools": {
        "model": "gemini-3-pro-preview",
        "messages": [user("Hi")],
        "native_tools": [NativeTool("web_search"), NativeTool("code_execution")],
    },
    "media": {
        "messages": [
            user(
                "What is this?",
                MediaBlock("image", "image/png", data=PNG),
                MediaBlock(
                    "file",
                    "application/pdf",
                    url="https://generativelanguage.googleapis.com/v1beta/files/abc",
                ),
                MediaBlock("file", "text/csv", data=b"a,b\n1,2\n", filename="t.csv", send="text"),
            )
        ]
    },
    "tool_round_trip": {"messages": HISTORY, "tools": [TOOL]},
    "media_in_tool_results": {
        "model": "gemini-3-pro-preview",
        "tools": [TOOL],
        "messages": [
            user("Show me"),
            Message("assistant", tool_calls=(CALLS[0],)),
            Message(
                "user",
                tool_results=(
                    ToolResult(
                        "call-1",
                        "get_weather",
                        "a map",
                        blocks=(
                            MediaBlock("image", "image/png", data=PNG),
                            MediaBlock(
                                "image",
                                "image/png",
                                url="https://generativelanguage.googleapis.com/v1beta/files/m",
                            ),
                        ),
                    ),
                ),
            ),
        ],
    },
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_json_body_is_the_one_google_genai_writes(name: str) -> None:
    case = dict(CASES[name])
    provider = GeminiProvider({"api_key": "k", "base_url": "http://127.0.0.1:9"})
    request = Request(model=case.pop("model", "gemini-2.5-flash"), **case)
    # convert_in.prepare directly: the media checks of the model's capabilities are not the point
    prepared = convert_in.prepare(
        request,
        ModelCapabilities(),
        provider.family(request.model),
        vertex=False,
        vendor=request.vendor.get("gemini", {}),
    )
    payload = prepared.payload
    assert "body" in payload  # the JSON path, not the SDK objects
    assert json.dumps(payload["body"]) == sdk_body(provider, prepared)
    timeout = request.options.get("timeout")
    assert (payload["http_options"] is None) == (timeout is None)


@pytest.mark.parametrize(
    "case",
    [
        {"vertex": True},
        {
            "options": {
                "safety_settings": [
                    {"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}
                ]
            }
        },
        {"stream": True},
    ],
)
def test_what_only_the_sdk_converts_keeps_the_sdk_path(case: dict[str, Any]) -> None:
    settings: dict[str, Any] = {"api_key": "k", "base_url": "http://127.0.0.1:9"}
    if case.pop("vertex", False):
        settings.update(vertexai=True, project="p", location="us-central1")
    provider = GeminiProvider(settings)
    payload = provider.prepare(
        Request(model="gemini-2.5-flash", messages=[user("Hi")], **case)
    ).payload
    assert set(payload) == {"model", "contents", "config"}


ANSWERS = [
    {
        "candidates": [
            {
                "content": {"parts": [{"text": "Paris."}], "role": "model"},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r1",
        "usageMetadata": {
            "promptTokenCount": 8,
            "candidatesTokenCount": 2,
            "thoughtsTokenCount": 5,
            "cachedContentTokenCount": 3,
            "toolUsePromptTokenCount": 1,
            "totalTokenCount": 15,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 8}],
        },
    },
    {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {"text": "hmm", "thought": True, "thoughtSignature": SIG},
                        {"text": "more", "thought": True},
                        {"text": "Calling.", "thoughtSignature": SIG},
                        {
                            "functionCall": {
                                "name": "get_weather",
                                "args": {"city": "Paris"},
                                "id": "c1",
                            }
                        },
                        {
                            "functionCall": {"name": "get_weather", "args": {"city": "Rome"}},
                            "thoughtSignature": SIG,
                        },
                        {"thoughtSignature": SIG},
                        {"text": ""},
                    ],
                    "role": "model",
                },
                "finishReason": "STOP",
            }
        ],
    },
    {"candidates": [{"content": {"parts": [{"text": "cut"}]}, "finishReason": "MAX_TOKENS"}]},
    {"candidates": [{"finishReason": "SAFETY"}]},
    {"candidates": [{"content": {"role": "model"}}]},
]


@pytest.mark.parametrize("index", range(len(ANSWERS)))
def test_an_answer_read_from_json_equals_the_one_read_from_sdk_objects(index: int) -> None:
    data = ANSWERS[index]
    fast = response_json(json.loads(json.dumps(data)), "gemini-2.5-flash")
    assert fast is not None
    assert fast == response(sdk_response(data, None), "gemini-2.5-flash")


@pytest.mark.parametrize(
    "data",
    [
        {"candidates": [{"content": {"parts": [{"text": "x"}]}, "groundingMetadata": {}}]},
        {"candidates": [{"content": {"parts": [{"executableCode": {"code": "1"}}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": "NEW_REASON"}]},
        {"candidates": [{"content": {"parts": [{"text": 3}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "x", "thoughtSignature": "-_8"}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "x"}]}}, {"content": {}}]},
        {"candidates": []},
        {"promptFeedback": {"blockReason": "SAFETY"}},
        {
            "candidates": [{"content": {"parts": [{"text": "x"}]}}],
            "usageMetadata": {"promptTokenCount": "8"},
        },
    ],
)
def test_anything_else_is_left_to_the_sdk_objects(data: dict[str, Any]) -> None:
    assert response_json(data, "m") is None
