"""The JSON request body llmport builds is byte for byte the one google-genai would write.

``GeminiProvider.prepare`` builds the Developer API request as JSON
(``convert_in.wire_request``) instead of google-genai objects. Each case here
also runs the objects it stands for (``convert_in.sdk_payload``) through the
SDK's own converters, ``extra_body`` merge included, and compares
``json.dumps`` of both: same keys, same order, same values; the bytes llmport
posts (``convert_in.wire_body``: serialized once, media spliced in as bytes)
are that ``json.dumps`` string, encoded.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from llmport.messages.content import load_block
from llmport.messages.types import (
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
from llmport.provider import wire
from llmport.provider.wire import plain
from llmport.testing.loopback import LoopbackServer, Reply
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
    # build_request directly: the media checks of the model's capabilities are not the point
    prepared = convert_in.build_request(
        request,
        ModelCapabilities(),
        provider.family(request.model),
        vertex=False,
        vendor=request.vendor.get("gemini", {}),
    )
    payload = prepared.payload
    assert "body" in payload  # the JSON path, not the SDK objects
    expected = sdk_body(provider, prepared)
    assert json.dumps(plain(payload["body"])) == expected
    assert convert_in.wire_body(payload).bytes() == expected.encode()
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


@pytest.mark.parametrize("transport", ["sync", "aiohttp", "httpx"])
async def test_the_bytes_posted_are_the_ones_google_genai_posted(
    transport: str, tmp_path: Path
) -> None:
    """The body (an image, non-ASCII text), URL, headers: as ``api_client.request`` sends them."""
    (tmp_path / "chart.png").write_bytes(PNG)
    image = load_block({"type": "image", "path": str(tmp_path / "chart.png")}, 1)
    assert isinstance(image, MediaBlock)
    request = Request(
        model="gemini-2.5-flash",
        messages=[user("Qu'est-ce que c'est ? \u2603", image)],
        options={"timeout": 30},
    )
    settings: dict[str, Any] = {"api_key": "k"}
    if transport != "sync":
        settings["async_transport"] = transport
    ok = Reply(json=ANSWERS[0])
    with LoopbackServer([ok, ok]) as server:
        provider = GeminiProvider({**settings, "base_url": server.url})
        prepared = convert_in.build_request(
            request, ModelCapabilities(), provider.family(request.model), vertex=False, vendor={}
        )
        payload = prepared.payload
        # What the plugin posted before: the body as a dict, json.dumps-ed by google-genai.
        args = ("post", payload["path"] + ":generateContent", plain(payload["body"]))
        if transport == "sync":
            provider.client()._api_client.request(*args, payload["http_options"])
            answer = provider.send(prepared)
            provider.close()
        else:
            api = (await provider.async_client())._api_client
            await api.async_request(*args, payload["http_options"])
            answer = await provider.asend(prepared)
            await provider.aclose()
    before, after = server.requests
    assert answer.text == "Paris."
    assert after.body == before.body
    assert b"\\u2603" in after.body and base64.urlsafe_b64encode(PNG) in after.body
    assert (after.method, after.path) == (before.method, before.path)
    assert after.headers == before.headers
    assert image._raw() is None  # read from a path: released once its base64 is cached
    assert image.urlsafe_base64_bytes() == base64.urlsafe_b64encode(PNG)


# --- the pieces the body is made of: URL-safe base64 bytes, json.dumps's format -------------


def test_the_python_style_is_json_dumps_with_its_defaults() -> None:
    image = MediaBlock("image", "image/png", data=PNG)
    body = {"a": ["\u00e9t\u00e9 \u2603", 1.5, None], "b": {"data": wire.urlsafe_base64_of(image)}}
    expected = json.dumps(wire.plain(body)).encode()
    assert wire.dumps(body, style="python") == expected
    assert b'"b": {"data": "' in expected and b"\\u2603" in expected
    assert wire.dumps({"x": float("nan")}, style="python") == b'{"x": NaN}'  # as json.dumps
    assert wire.dumps(body) != expected  # the default stays compact UTF-8


def test_urlsafe_splices_compare_and_show_no_bytes() -> None:
    image = MediaBlock("image", "image/png", data=PNG, filename="chart.png")
    safe = wire.urlsafe_base64_of(image)
    assert safe == base64.urlsafe_b64encode(PNG).decode()
    assert safe == wire.urlsafe_base64_of(image) and safe != wire.base64_of(image)
    assert hash(safe) != hash(wire.base64_of(image))
    assert "chart.png" in repr(safe) and "urlsafe=True" in repr(safe)
    assert base64.urlsafe_b64encode(PNG).decode()[:20] not in repr(safe)


B64 = base64.b64encode(PNG)  # computed before any counting
SAFE = base64.urlsafe_b64encode(PNG)


@pytest.fixture
def encodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    import binascii

    calls: list[int] = []
    real = binascii.b2a_base64

    def counting(data: Any, *args: Any, **kw: Any) -> bytes:
        calls.append(len(data))
        return real(data, *args, **kw)

    monkeypatch.setattr(binascii, "b2a_base64", counting)
    return calls


def test_urlsafe_bytes_are_encoded_once_and_release_bytes_read_from_a_path(
    tmp_path: Path, encodes: list[int]
) -> None:
    (tmp_path / "chart.png").write_bytes(PNG)
    block = load_block({"type": "image", "path": str(tmp_path / "chart.png")}, 0)
    assert isinstance(block, MediaBlock)
    copy = dataclasses.replace(block, index=3)
    safe = block.urlsafe_base64_bytes()
    assert safe == SAFE and copy.urlsafe_base64_bytes() is safe
    assert not block._b64b  # the standard form made on the way is not kept
    assert block._raw() is None and copy._raw() is None  # released, for every copy
    assert block.inline and block.size == len(PNG) and block.data == PNG  # decoded on demand
    # Every other form comes from the cached one, without encoding again.
    assert block.base64_bytes() == B64
    assert block.base64() == B64.decode()
    assert block.urlsafe_base64() == safe.decode()
    assert block.data_url() == "data:image/png;base64," + B64.decode()
    assert encodes == [len(PNG)]
    back = Message.from_dict(json.loads(json.dumps(user("x", block).to_dict())))
    assert back.blocks[1].data == PNG  # type: ignore[union-attr]


def test_urlsafe_bytes_come_from_a_cached_form(encodes: list[int]) -> None:
    for first in ("base64_bytes", "base64", "data_url", "urlsafe_base64"):
        block = MediaBlock("image", "image/png", data=PNG)
        getattr(block, first)()
        assert block.urlsafe_base64_bytes() == SAFE
        assert block.data is PNG  # the caller's own bytes are kept
    assert len(encodes) == 4  # one per block
    with pytest.raises(ValueError):
        MediaBlock("image", "image/png", url="https://example.com/a.png").urlsafe_base64_bytes()
