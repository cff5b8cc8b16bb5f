"""Vendor depth against cassettes: exec, async exec and stream for each feature.

Responses come from ../shared/wire-samples/anthropic/ (document citations from the
documented format); request bodies were made by the real SDK (make_cassettes.py), and
the cassette matcher requires every request body to be JSON-equal to the recorded one.
"""

from __future__ import annotations

from typing import Any

import pytest
from llmport import (
    NativeTool,
    Reasoning,
    RunResult,
    Runtime,
    UnsupportedContentError,
    UnsupportedFeatureError,
)
from llmport.messages.types import (
    CitationEvent,
    FinalEvent,
    ServerToolCall,
    ServerToolEvent,
    ServerToolResult,
    TextBlock,
    ThinkingBlock,
    ThinkingDelta,
)
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_anthropic.provider import AnthropicProvider
from support.anthropic_scenarios import COUNT_TOKENS, NOTES, SCENARIOS, Scenario, count_request
from support.cassette_support import request_json

MODES = ["sync", "async", "stream", "astream"]
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")


def runtime(model: str) -> Runtime:
    return Runtime(
        model=model,
        providers={"anthropic": {"api_key": "test-key", "base_url": "https://api.anthropic.com"}},
    )


async def call(mode: str, rt: Runtime, kwargs: dict[str, Any]) -> tuple[RunResult, list[Any]]:
    if mode == "sync":
        return rt.run(**kwargs), []
    if mode == "async":
        return await rt.arun(**kwargs), []
    if mode == "stream":
        events = list(rt.stream(**kwargs))
    else:
        events = [e async for e in rt.astream(**kwargs)]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    return final.result, events


async def play(mode: str, name: str, cassette: Any) -> tuple[list[RunResult], list[Any], Any]:
    """Run scenario ``name`` (its ``stream_`` twin when streaming), follow-up turn included."""
    scenario: Scenario = SCENARIOS[("stream_" if "stream" in mode else "") + name]
    rt = runtime(scenario.model)
    results: list[RunResult] = []
    events: list[Any] = []
    with cassette(scenario.cassette) as cass:
        kwargs = dict(scenario.kwargs)
        result, evs = await call(mode, rt, kwargs)
        results.append(result)
        events += evs
        if scenario.then:
            kwargs["content"] = [*result.messages, scenario.then]
            result, evs = await call(mode, rt, kwargs)
            results.append(result)
            events += evs
    return results, events, cass


def assistant_blocks(result: RunResult, n: int = 0) -> tuple[Any, ...]:
    return [m for m in result.messages if m.role == "assistant"][n].blocks


# --- thinking ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_thinking_tool_loop_round_trips_the_signed_thinking(mode: str, cassette: Any) -> None:
    (result,), events, cass = await play(mode, "thinking_tools", cassette)
    first, second = request_json(cass, 0), request_json(cass, 1)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 3000}
    assert first["max_tokens"] == 4096
    thinking = assistant_blocks(result)[0]
    assert isinstance(thinking, ThinkingBlock) and thinking.vendor == "anthropic"
    assert thinking.signature.startswith("EqEECkYICxgCKkAo3UA4")
    assert thinking.text.startswith("The user is asking about the largest city")
    # The second request carries the first turn exactly as received: thinking first.
    assistant = second["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["thinking", "text", "tool_use"]
    assert assistant[0] == {
        "type": "thinking",
        "thinking": thinking.text,
        "signature": thinking.signature,
    }
    assert second["messages"][2]["content"][0]["content"] == "Mexico"
    assert "Mexico City" in result.output
    if events:
        deltas = [e for e in events if isinstance(e, ThinkingDelta)]
        assert "".join(d.text for d in deltas) == thinking.text
        assert [d.signature for d in deltas if d.signature] == [thinking.signature]


@pytest.mark.parametrize("mode", MODES)
async def test_redacted_thinking_is_echoed_in_the_next_turn(mode: str, cassette: Any) -> None:
    (first, second), _, cass = await play(mode, "thinking_redacted", cassette)
    assert request_json(cass, 0)["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    redacted = assistant_blocks(first)[0]
    assert isinstance(redacted, ThinkingBlock) and redacted.text == ""
    assert redacted.redacted.startswith("EvgFCkYIBxgCKkBmxKtC")
    echoed = request_json(cass, 1)["messages"][1]["content"]
    assert echoed[0] == {"type": "redacted_thinking", "data": redacted.redacted}
    assert echoed[1]["type"] == "text"
    assert request_json(cass, 1)["messages"][2]["content"] == [
        {"type": "text", "text": "What was that?"}
    ]
    assert second.output.startswith("That message appeared to be")


# --- caching -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_cache_marks_on_blocks_and_system(mode: str, cassette: Any) -> None:
    (result,), _, cass = await play(mode, "cache_blocks", cassette)
    body = request_json(cass)
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    ]
    marked, question = body["messages"][0]["content"]
    assert marked["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert question == {"type": "text", "text": "Reply with OK."}
    # input_tokens is the whole prompt: Anthropic's uncached count plus cache writes/reads.
    assert (result.usage.cache_write_tokens, result.usage.cache_read_tokens) == (1590, 0)
    assert result.usage.input_tokens == 12 + 1590


@pytest.mark.parametrize("mode", MODES)
async def test_cache_auto_marks_tools_system_and_last_user_turn(mode: str, cassette: Any) -> None:
    (result,), _, cass = await play(mode, "cache_auto", cassette)
    body = request_json(cass)
    mark = {"type": "ephemeral", "ttl": "5m"}
    assert body["tools"][-1]["cache_control"] == mark
    assert body["system"][-1]["cache_control"] == mark
    assert body["messages"][-1]["content"][-1]["cache_control"] == mark
    assert "cache_control" not in body  # block breakpoints, not the top-level form
    assert result.usage.cache_read_tokens == 1711
    assert result.usage.input_tokens == 12 + 1711


# --- citations and native tools -------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_web_search_citations_and_server_blocks(mode: str, cassette: Any) -> None:
    (result,), events, cass = await play(mode, "citations_web_search", cassette)
    body = request_json(cass)
    assert body["tools"] == [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "allowed_domains": None,
            "blocked_domains": None,
            "max_uses": None,
            "user_location": None,
        }
    ]
    blocks = assistant_blocks(result)
    kinds = [type(b).__name__ for b in blocks[:4]]
    assert kinds == ["ThinkingBlock", "ServerToolCall", "ServerToolResult", "TextBlock"]
    call, found = blocks[1], blocks[2]
    assert isinstance(call, ServerToolCall) and call.input == {"query": "top news today"}
    assert isinstance(found, ServerToolResult) and found.name == "web_search"
    assert found.raw["type"] == "web_search_tool_result" and len(found.content) == 10
    cited = [c for b in blocks if isinstance(b, TextBlock) for c in b.citations]
    assert len(cited) == 3
    first = cited[0]
    assert first.kind == "url" and first.vendor == "anthropic"
    assert first.url.startswith("https://www.cbsnews.com/")
    assert first.extra["encrypted_index"].startswith("Eo8BCioIEBgC")
    assert "Iran and Israel" in result.output
    if events:
        assert len([e for e in events if isinstance(e, CitationEvent)]) == 3
        assert [type(e.block).__name__ for e in events if isinstance(e, ServerToolEvent)] == [
            "ServerToolCall",
            "ServerToolResult",
        ]


@pytest.mark.parametrize("mode", MODES)
async def test_document_citations(mode: str, cassette: Any) -> None:
    (result,), _, cass = await play(mode, "citations_document", cassette)
    document = request_json(cass)["messages"][0]["content"][0]
    assert document["citations"] == {"enabled": True}
    assert document["source"] == {"type": "text", "media_type": "text/plain", "data": NOTES}
    cited = [c for b in assistant_blocks(result) if isinstance(b, TextBlock) for c in b.citations]
    assert len(cited) == 1
    c = cited[0]
    assert (c.kind, c.document_index, c.title, c.source_start, c.source_end) == (
        "document",
        0,
        "notes.txt",
        23,
        51,
    )
    assert c.extra == {"type": "char_location"}
    assert result.output == "According to the notes, the plan is to ship the Anthropic plugin."


@pytest.mark.parametrize("mode", MODES)
async def test_code_execution_replays_server_blocks_and_container(mode: str, cassette: Any) -> None:
    (first, second), _, cass = await play(mode, "code_execution", cassette)
    body = request_json(cass, 0)
    assert body["tools"] == [{"type": "code_execution_20260120", "name": "code_execution"}]
    assert "container" not in body
    call, outcome = assistant_blocks(first)[1:3]
    assert isinstance(call, ServerToolCall) and call.name == "bash_code_execution"
    assert isinstance(outcome, ServerToolResult) and outcome.content["stdout"] == "37170\n"
    replay = request_json(cass, 1)
    assert replay["container"] == "container_011CaNRhtVsGiXZx1CgSETLH"
    echoed = replay["messages"][1]["content"]
    assert [b["type"] for b in echoed] == [
        "thinking",
        "server_tool_use",
        "bash_code_execution_tool_result",
        "text",
    ]
    assert echoed[1] == call.raw and echoed[2] == outcome.raw
    assert "49,560" in second.output


# --- files -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_tool_result_carries_a_text_document(mode: str, cassette: Any) -> None:
    (result,), _, cass = await play(mode, "tool_result_document", cassette)
    tool_result = request_json(cass)["messages"][2]["content"][0]
    assert tool_result["content"] == [
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "Dummy TXT file\n"},
        }
    ]
    assert "Dummy TXT file" in result.output


# --- token counting -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_count_tokens_endpoint(mode: str, cassette: Any) -> None:
    provider = AnthropicProvider({"api_key": "test-key", "base_url": "https://api.anthropic.com"})
    with cassette(COUNT_TOKENS) as cass:
        if mode == "sync":
            counted = provider.count_tokens(count_request())
        else:
            counted = await provider.acount_tokens(count_request())
    assert counted == 19
    assert cass.requests[0].path == "/v1/messages/count_tokens"
    assert request_json(cass) == {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "The quick brown fox jumps over the lazydog."}
                ],
            }
        ],
        "model": "claude-sonnet-4-5",
    }


# --- what Anthropic lacks: rejected before any request ----------------------------------------


@pytest.mark.parametrize(
    ("model", "kwargs", "error", "feature"),
    [
        (
            "claude-sonnet-4-5",
            {"tools": [NativeTool("file_search")]},
            UnsupportedFeatureError,
            None,
        ),
        (
            "claude-3-haiku-20240307",
            {"tools": [NativeTool("web_search")]},
            UnsupportedFeatureError,
            None,
        ),
        ("claude-3-5-haiku-20241022", {"reasoning": "high"}, UnsupportedFeatureError, None),
        (
            "claude-haiku-4-5",
            {"reasoning": Reasoning("low", budget_tokens=0)},
            UnsupportedFeatureError,
            "reasoning effort without thinking ('low')",
        ),
        ("claude-opus-4-8", {"reasoning": 4096}, UnsupportedFeatureError, None),
        ("claude-sonnet-4-5", {"cache": {"key": "k"}}, UnsupportedFeatureError, "cache key"),
        (
            "claude-sonnet-4-5",
            {"cache": {"ttl": "5m", "retention": "24h"}},
            UnsupportedFeatureError,
            "cache retention",
        ),
        (
            "claude-sonnet-4-5",
            {"tools": [NativeTool("web_search", radius=3)]},
            Exception,
            None,
        ),
        (
            "claude-sonnet-4-5",
            {
                "content": [
                    {"type": "image", "data": b"\x89PNG\r\n\x1a\n" + b"0" * 64, "citations": True}
                ]
            },
            UnsupportedContentError,
            None,
        ),
    ],
)
def test_unsupported_rejected_before_any_request(
    model: str, kwargs: dict[str, Any], error: type[Exception], feature: str | None
) -> None:
    with LoopbackServer([Reply(json={})]) as server:
        rt = Runtime(
            model=f"anthropic:{model}",
            providers={"anthropic": {"api_key": "k", "base_url": server.url}},
        )
        kwargs = {"content": "Hi", **kwargs}
        with pytest.raises(error) as info:
            rt.run(**kwargs)
        assert server.requests == []
    if isinstance(info.value, UnsupportedFeatureError):
        assert info.value.vendor == "anthropic" and info.value.model == model
        if feature is not None:
            assert info.value.feature == feature
