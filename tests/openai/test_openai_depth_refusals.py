"""What the OpenAI APIs cannot do is refused before any request, and the
conversions that need no cassette: tool results with media, cache marks and ttl,
files by send mode, budgets and efforts per model family.
"""

from __future__ import annotations

import hashlib
from typing import Any

import llmport_openai.plugin as plugin
import pytest
from llmport import OptionError, UnsupportedContentError, UnsupportedFeatureError
from llmport.messages.types import (
    CacheControl,
    CacheSettings,
    MediaBlock,
    Message,
    NativeTool,
    Reasoning,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
)
from llmport.testing.loopback import LoopbackServer, Reply
from support.openai_scenarios import DATA, FAKE_KEY, chat_usage, completion

OK = Reply(json=completion("chatcmpl-ok", content="fine", usage=chat_usage(3, 1)))


def refused(drive: Any, runtime: Any, model: str, error: type[Exception], **kwargs: Any) -> Any:
    with LoopbackServer([OK]) as server:
        rt = runtime(model, base_url=server.url + "/v1")
        with pytest.raises(error) as info:
            drive.run(rt, **kwargs)
    assert server.requests == [], "a request was sent"
    return info.value


@pytest.mark.parametrize(
    "model, kwargs, feature",
    [
        ("openai:gpt-4o-mini", {"tools": [NativeTool("code_execution")]}, "code_execution"),
        ("openai:gpt-4o-mini", {"tools": [NativeTool("web_search")]}, "web_search"),
        ("openai:gpt-4o-mini", {"tools": [NativeTool("file_search")]}, "file_search"),
        ("openai-responses:gpt-5", {"tools": [NativeTool("url_context")]}, "url_context"),
        ("openai:gpt-5", {"tools": [NativeTool("url_context")]}, "url_context"),
        ("openai:o3-mini", {"reasoning": 2048}, "budget_tokens"),
        ("openai-responses:gpt-5", {"reasoning": {"budget_tokens": 1024}}, "budget_tokens"),
        ("openai-responses:gpt-5", {"reasoning": "max"}, "effort 'max'"),
        ("openai:o3-mini", {"reasoning": "minimal"}, "effort 'minimal'"),  # o-series: low..high
        ("openai:gpt-5-mini", {"reasoning": "none"}, "effort 'none'"),  # gpt-5: minimal..high
        ("openai:gpt-4o-mini", {"reasoning": "low"}, "reasoning"),  # not a reasoning model
        (
            "openai:o3-mini",
            {"reasoning": Reasoning(effort="low", summary="auto")},
            "reasoning summaries",
        ),
        (
            "openai-responses:gpt-5",
            {"tools": [NativeTool("web_search", max_uses=3)]},
            "'max_uses'",
        ),
        ("openai-responses:gpt-5.6-sol", {"cache": {"ttl": "1h"}}, "cache ttl '1h'"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_unsupported_features_are_refused_before_any_request(
    drive: Any, runtime: Any, model: str, kwargs: dict[str, Any], feature: str
) -> None:
    err = refused(drive, runtime, model, UnsupportedFeatureError, content="hi", **kwargs)
    assert feature in str(err) and err.vendor == model.split(":")[0]


@pytest.mark.parametrize("model", ["openai:gpt-4o-mini", "openai-responses:gpt-5"])
def test_document_citations_are_refused(drive: Any, runtime: Any, model: str) -> None:
    block = {"type": "file", "path": str(DATA / "report.pdf"), "citations": True}
    err = refused(
        drive,
        runtime,
        model,
        (UnsupportedFeatureError, UnsupportedContentError),
        content=["Cite it", block],
    )
    assert "citations" in str(err)


def test_chat_refuses_a_native_text_file(drive: Any, runtime: Any) -> None:
    block = {"type": "file", "path": str(DATA / "note.txt"), "send": "native"}
    err = refused(drive, runtime, "openai:gpt-4o-mini", UnsupportedContentError, content=[block])
    assert 'send="native"' in str(err)


def test_file_search_needs_vector_store_ids(drive: Any, runtime: Any) -> None:
    err = refused(
        drive,
        runtime,
        "openai-responses:gpt-4o",
        OptionError,
        content="hi",
        tools=[NativeTool("file_search")],
    )
    assert "vector_store_ids" in str(err)


# --- conversions at the provider level ----------------------------------------------------


def provider(name: str) -> Any:
    info = next(i for i in plugin.provider_infos() if i.prefix == name)
    return info.create({"api_key": FAKE_KEY})


def body(name: str, request: Request) -> dict[str, Any]:
    p = provider(name)
    prepared = p.prepare(request)
    kwargs = prepared.payload
    out = {"model": kwargs["model"], **kwargs.get("extra_body", {})}
    out["messages" if "messages" in kwargs else "input"] = kwargs.get(
        "messages", kwargs.get("input")
    )
    return out


PNG = (DATA / "kiwi.png").read_bytes() if (DATA / "kiwi.png").exists() else b""


def tool_turns(blocks: tuple[Any, ...]) -> list[Message]:
    return [
        Message("user", (TextBlock("Show me the chart"),)),
        Message("assistant", (), (ToolCall("call_1", "chart", {}),)),
        Message("tool", tool_results=(ToolResult("call_1", "chart", "the chart", blocks=blocks),)),
    ]


def test_responses_tool_result_with_media_is_a_list_of_input_parts() -> None:
    image = MediaBlock("image", "image/png", data=PNG, filename="chart.png")
    req = Request(model="gpt-5", messages=tool_turns((image,)))
    output = body("openai-responses", req)["input"][-1]
    assert output == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [
            {"type": "input_text", "text": "the chart"},
            {"type": "input_image", "image_url": image.data_url(), "detail": "auto"},
        ],
    }


def test_chat_tool_result_media_follow_in_a_user_message() -> None:
    # As recorded (wire-samples openai-chat/tool-result-image.json): a tool message holds text.
    image = MediaBlock("image", "image/png", data=PNG, filename="chart.png")
    url = MediaBlock("image", "image/png", url="https://example.com/b.png")
    req = Request(model="gpt-4o-mini", messages=tool_turns((image, url)))
    first = hashlib.sha1(PNG, usedforsecurity=False).hexdigest()[:6]
    second = hashlib.sha1(url.url.encode(), usedforsecurity=False).hexdigest()[:6]  # type: ignore[union-attr]
    assert body("openai", req)["messages"][2:] == [
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": f"the chart\nSee file {first}.\nSee file {second}.",
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": f"This is file {first}:"},
                {"type": "image_url", "image_url": {"url": image.data_url()}},
                {"type": "text", "text": f"This is file {second}:"},
                {"type": "image_url", "image_url": {"url": "https://example.com/b.png"}},
            ],
        },
    ]


def test_chat_refuses_thinking_in_an_assistant_turn() -> None:
    turns = [
        Message("user", (TextBlock("hi"),)),
        Message("assistant", (ThinkingBlock("hmm", vendor="openai"), TextBlock("hello"))),
        Message("user", (TextBlock("again"),)),
    ]
    with pytest.raises(UnsupportedContentError, match="thinking block"):
        provider("openai").prepare(Request(model="gpt-4o-mini", messages=turns))


def test_cache_marks_on_implicit_models_change_nothing() -> None:
    """OpenAI caches every prefix itself: marks are accepted and send no field."""
    marked = Message("user", (TextBlock("long prefix", cache=CacheControl("1h")), TextBlock("q")))
    req = Request(
        model="gpt-4o-mini",
        messages=[marked],
        cache=CacheSettings(key="tenant-7", retention="24h"),
    )
    assert body("openai", req) == {
        "model": "gpt-4o-mini",
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "long prefix"}, {"type": "text", "text": "q"}],
            }
        ],
        "prompt_cache_key": "tenant-7",
        "prompt_cache_retention": "24h",
    }


def test_explicit_breakpoints_on_the_responses_system_prompt() -> None:
    system = (TextBlock("You are terse.", cache=CacheControl()),)
    req = Request(
        model="gpt-5.6-sol",
        messages=[Message("user", (TextBlock("hi"),))],
        system="You are terse.",
        system_blocks=system,
    )
    sent = body("openai-responses", req)
    assert "instructions" not in sent
    assert sent["input"][0] == {
        "role": "system",
        "content": [
            {
                "type": "input_text",
                "text": "You are terse.",
                "prompt_cache_breakpoint": {"mode": "explicit"},
            }
        ],
    }
    assert sent["prompt_cache_options"] == {"mode": "explicit", "ttl": "30m"}


def test_send_text_inlines_a_file_responses_would_take_natively() -> None:
    note = MediaBlock("file", "text/plain", data=b"Buy kiwis.\n", filename="note.txt", send="text")
    req = Request(model="gpt-4.1-mini", messages=[Message("user", (note,))])
    (part,) = body("openai-responses", req)["input"][0]["content"]
    assert part == {
        "type": "input_text",
        "text": '<file name="note.txt" media_type="text/plain">\nBuy kiwis.\n\n</file>',
    }


def test_effort_with_a_budget_sends_the_effort() -> None:
    req = Request(
        model="gpt-5",
        messages=[Message("user", (TextBlock("hi"),))],
        reasoning=Reasoning(effort="medium", budget_tokens=4096),
    )
    assert body("openai-responses", req)["reasoning"] == {"effort": "medium"}
    assert body("openai", req)["reasoning_effort"] == "medium"


def test_reasoning_and_count_capabilities_per_model() -> None:
    chat = next(i for i in plugin.provider_infos() if i.prefix == "openai")
    responses = next(i for i in plugin.provider_infos() if i.prefix == "openai-responses")
    assert (
        chat.capabilities_for("o3-mini").reasoning and not chat.capabilities_for("gpt-4o").reasoning
    )
    assert not chat.capabilities_for("gpt-5").count_tokens
    assert responses.capabilities_for("gpt-5").count_tokens
    assert responses.capabilities_for("gpt-5").native_tool_kinds == {
        "web_search",
        "code_execution",
        "file_search",
        "tool_search",
        "image_generation",
    }
    assert chat.capabilities_for("gpt-4o-search-preview").native_tool_kinds == {"web_search"}
    assert chat.capabilities_for("gpt-4.1").context_window == 1_047_576


@pytest.mark.parametrize(
    ("name", "model", "acknowledged"),
    [
        # wire-samples openai-compat-groq/tool-result-image.json: the user message follows.
        ("groq", "meta-llama/llama-4-maverick-17b-128e-instruct", False),
        # wire-samples mistral/tool-result-multiple-images.json: an assistant "OK" between.
        ("mistral", "mistral-medium-latest", True),
    ],
)
def test_compatible_services_take_tool_media_as_the_recordings_show(
    name: str, model: str, acknowledged: bool
) -> None:
    image = MediaBlock("image", "image/png", data=PNG)
    label = hashlib.sha1(PNG, usedforsecurity=False).hexdigest()[:6]
    sent = body(name, Request(model=model, messages=tool_turns((image,))))["messages"]
    tool, *between, user = sent[2:]
    assert tool == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": f"the chart\nSee file {label}.",
    }
    assert [m["role"] for m in between] == (["assistant"] if acknowledged else [])
    # Mistral's recorded assistant turns, the "OK" among them, carry "prefix": false.
    assert all(m.get("prefix") is False for m in between)
    assert user["role"] == "user"
    assert user["content"] == [
        {"type": "text", "text": f"This is file {label}:"},
        {"type": "image_url", "image_url": {"url": image.data_url()}},
    ]
