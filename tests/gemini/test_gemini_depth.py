"""Vendor depth against cassettes: exec, async_exec, stream, astream.

Every cassette's request bodies are matched exactly by the conftest matcher;
the tests also assert the fields of each feature. Answers are built from the
second batch of ../shared/wire-samples/gemini/ (see gemini_scenarios.py).
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from gemini_helpers import isolated, run, runtime, stream  # noqa: F401  (isolated: autouse)
from llmport import AuthenticationError, FinalEvent
from llmport.messages.types import (
    CitationEvent,
    Message,
    ServerToolCall,
    ServerToolEvent,
    ServerToolResult,
    TextBlock,
    ThinkingBlock,
    ThinkingDelta,
)
from llmport_gemini.convert_in import SIGNED_PART_KEY
from llmport_gemini.provider import GeminiProvider
from support.cassette_support import request_json
from support.gemini_scenarios import (
    CACHE_NAME,
    CODE_PARTS,
    CROSS,
    EIFFEL,
    PYDANTIC_AI,
    SCENARIOS,
    SIG_CALL,
    SIG_TEXT,
    STORE,
    THOUGHTS,
    TOMORROW,
    WEATHER_SF,
)

MODES = ["sync", "async"]


def urlsafe(signature: str) -> str:
    """A signature as google-genai sends it back: the same bytes, URL-safe alphabet."""
    return signature.replace("+", "-").replace("/", "_")


def echoed(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for p in parts:
        p = dict(p)
        if "thoughtSignature" in p:
            p["thoughtSignature"] = urlsafe(p["thoughtSignature"])
        out.append(p)
    return out


async def play(mode: str, name: str, cassette: Any) -> tuple[Any, Any]:
    """Run a scenario (and its follow-up) under its cassette; the result or the events."""
    scenario = SCENARIOS[name]
    with cassette(scenario.cassette) as cass:
        rt = runtime(scenario.model)
        if scenario.stream:
            out: Any = await stream(mode, rt, close=scenario.follow_up is None, **scenario.kwargs)
            if scenario.follow_up is not None:
                final = out[-1]
                more = await stream(mode, rt, **scenario.continued(final.result.messages))
                out = (out, more)
        else:
            out = await run(mode, rt, close=scenario.follow_up is None, **scenario.kwargs)
            if scenario.follow_up is not None:
                out = (out, await run(mode, rt, **scenario.continued(out.messages)))
    return cass, out


def final(events: list[Any]) -> Any:
    last = events[-1]
    assert isinstance(last, FinalEvent)
    return last.result


# --- reasoning -------------------------------------------------------------------------

REASONING_BODY = {
    "contents": [{"parts": [{"text": "How do I cross the street?"}], "role": "user"}],
    "systemInstruction": {"parts": [{"text": "You are a helpful assistant."}], "role": "user"},
    "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
}


def _check_reasoning_answer(result: Any, thoughts: list[str]) -> None:
    assert result.output == "".join(CROSS)  # thoughts are not part of the answer
    assert result.thinking == "".join(THOUGHTS)
    blocks = result.messages[-1].blocks
    *thinking, carrier, text = blocks
    assert [b.text for b in thinking] == thoughts
    assert all(isinstance(b, ThinkingBlock) and b.vendor == "gemini" for b in thinking)
    assert isinstance(carrier, ThinkingBlock) and carrier.text == ""
    assert (carrier.signature, carrier.extra) == (SIG_TEXT, {SIGNED_PART_KEY: "text"})
    assert isinstance(text, TextBlock) and text.text == "".join(CROSS)
    assert result.usage.reasoning_tokens == 787


@pytest.mark.parametrize("mode", MODES)
async def test_reasoning_summaries(mode: str, cassette: Any) -> None:
    cass, result = await play(mode, "reasoning", cassette)
    assert request_json(cass) == REASONING_BODY  # wire-samples/gemini/reasoning-stream.json
    _check_reasoning_answer(result, THOUGHTS)  # one block per thought part


@pytest.mark.parametrize("mode", MODES)
async def test_reasoning_summaries_streamed(mode: str, cassette: Any) -> None:
    cass, events = await play(mode, "reasoning_stream", cassette)
    assert request_json(cass) == REASONING_BODY
    deltas = [e for e in events if isinstance(e, ThinkingDelta)]
    assert [d.text for d in deltas] == [*THOUGHTS, ""]
    assert deltas[-1].signature == SIG_TEXT
    # Consecutive thought chunks are one block.
    _check_reasoning_answer(final(events), ["".join(THOUGHTS)])


LOOP_MODEL_TURN = {
    "role": "model",
    "parts": [
        {"text": "**Multiplying**\n\nI'll call multiply.", "thought": True},
        {"text": "Let me multiply.", "thoughtSignature": urlsafe(SIG_TEXT)},
        {
            "functionCall": {"args": {"y": 3, "x": 5}, "name": "multiply"},
            "thoughtSignature": urlsafe(SIG_CALL),
        },
    ],
}


@pytest.mark.parametrize("mode", MODES)
async def test_thinking_tool_loop_echoes_every_signature(mode: str, cassette: Any) -> None:
    cass, result = await play(mode, "thinking_tool_loop", cassette)
    first, second = request_json(cass, 0), request_json(cass, 1)
    assert first["generationConfig"] == {
        "thinkingConfig": {"thinkingLevel": "LOW", "includeThoughts": True}
    }
    # Thought part, signed text part and signed call go back as received, in order.
    assert second["contents"][1] == LOOP_MODEL_TURN
    assert second["contents"][2] == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "multiply", "response": {"output": "15"}}}],
    }
    assert result.output == "5 times 3 is 15."


@pytest.mark.parametrize("mode", MODES)
async def test_thinking_tool_loop_streamed(mode: str, cassette: Any) -> None:
    # wire-samples/gemini/reasoning-tool-loop-stream.json
    cass, events = await play(mode, "thinking_tool_loop_stream", cassette)
    second = request_json(cass, 1)
    assert second["contents"][1] == {
        "role": "model",
        "parts": [
            {
                "functionCall": {"args": {"y": 3, "x": 5}, "name": "multiply"},
                "thoughtSignature": urlsafe(SIG_CALL),
            }
        ],
    }
    # The same bytes the API sent.
    sent = base64.urlsafe_b64decode(second["contents"][1]["parts"][0]["thoughtSignature"])
    assert sent == base64.b64decode(SIG_CALL)
    assert final(events).output == "5 times 3 is 15."


# --- grounding and native tools ----------------------------------------------------------


def _check_weather(result: Any) -> None:
    (block,) = result.messages[-1].blocks
    assert isinstance(block, TextBlock) and block.text == WEATHER_SF
    first, second = block.citations
    segment = "There is a 19% chance of rain, and the humidity is around 94%."
    # Gemini's offsets are UTF-8 bytes (171..233); the text has two "°" before them.
    assert (first.start, first.end) == (171 - 4, 233 - 4)
    assert WEATHER_SF[first.start : first.end] == segment
    assert (first.kind, first.cited_text, first.vendor) == ("url", segment, "gemini")
    assert first.url == "https://www.google.com/search?q=time+in+San+Francisco,+CA,+US"
    assert second.title == "Weather information for San Francisco, CA, US"
    grounding = result.messages[-1].extra["gemini_grounding"]
    assert grounding["webSearchQueries"] == [
        "current time in San Francisco",
        "weather in San Francisco right now",
    ]
    assert grounding["searchEntryPoint"]["renderedContent"].startswith("<div")
    assert result.usage.input_tokens == 11 + 90  # tool-use prompt tokens count as input


@pytest.mark.parametrize("mode", MODES)
async def test_web_search_grounding_citations(mode: str, cassette: Any) -> None:
    cass, result = await play(mode, "grounding", cassette)
    body = request_json(cass)
    assert body["tools"] == [{"googleSearch": {}}]  # citations-grounding-web-search.json
    assert "toolConfig" not in body
    _check_weather(result)


@pytest.mark.parametrize("mode", MODES)
async def test_web_search_grounding_streamed(mode: str, cassette: Any) -> None:
    cass, events = await play(mode, "grounding_stream", cassette)
    assert request_json(cass)["tools"] == [{"googleSearch": {}}]
    cited = [e.citation for e in events if isinstance(e, CitationEvent)]
    assert len(cited) == 2
    _check_weather(final(events))


def _check_url(result: Any) -> None:
    (block,) = result.messages[-1].blocks
    assert isinstance(block, TextBlock)
    (citation,) = block.citations
    assert (citation.url, citation.start, citation.end) == ("https://ai.pydantic.dev", 0, 131)
    assert citation.cited_text == PYDANTIC_AI
    meta = result.messages[-1].extra["gemini_url_context"]
    assert meta["urlMetadata"][0]["urlRetrievalStatus"] == "URL_RETRIEVAL_STATUS_SUCCESS"


@pytest.mark.parametrize("mode", MODES)
async def test_url_context(mode: str, cassette: Any) -> None:
    cass, result = await play(mode, "url_context", cassette)
    assert request_json(cass)["tools"] == [{"urlContext": {}}]  # native-url-context.json
    _check_url(result)


@pytest.mark.parametrize("mode", MODES)
async def test_url_context_streamed(mode: str, cassette: Any) -> None:
    cass, events = await play(mode, "url_context_stream", cassette)
    assert request_json(cass)["tools"] == [{"urlContext": {}}]
    _check_url(final(events))


def _check_code(first: Any, cass: Any) -> None:
    blocks = first.messages[-1].blocks
    kinds = [type(b).__name__ for b in blocks]
    assert kinds == [
        "ServerToolCall",
        "ServerToolResult",
        "ServerToolCall",
        "ServerToolResult",
        "ThinkingBlock",
        "TextBlock",
    ]
    call, result = blocks[0], blocks[1]
    assert isinstance(call, ServerToolCall) and isinstance(result, ServerToolResult)
    assert (call.id, call.name, call.input["language"]) == ("h0mwtrhs", "code_execution", "PYTHON")
    assert call.raw == CODE_PARTS[0]  # verbatim, signature included
    assert result.content == {
        "outcome": "OUTCOME_OK",
        "output": "Current day in Utrecht: Tuesday, May 05, 2026\n",
    }
    # native-code-execution.json, second turn: the parts go back verbatim.
    second = request_json(cass, 1)
    assert second["tools"] == [{"codeExecution": {}}]
    assert second["contents"][1] == {"role": "model", "parts": echoed(CODE_PARTS)}
    assert second["contents"][2] == {"role": "user", "parts": [{"text": "What day is tomorrow?"}]}


@pytest.mark.parametrize("mode", MODES)
async def test_code_execution_round_trip(mode: str, cassette: Any) -> None:
    cass, (first, second) = await play(mode, "code_execution", cassette)
    _check_code(first, cass)
    assert second.output == TOMORROW


@pytest.mark.parametrize("mode", MODES)
async def test_code_execution_streamed(mode: str, cassette: Any) -> None:
    cass, (events, more) = await play(mode, "code_execution_stream", cassette)
    servers = [e.block for e in events if isinstance(e, ServerToolEvent)]
    assert [type(b).__name__ for b in servers] == ["ServerToolCall", "ServerToolResult"] * 2
    _check_code(final(events), cass)
    assert final(more).output == TOMORROW


def _check_files(result: Any) -> None:
    (block,) = result.messages[-1].blocks
    assert isinstance(block, TextBlock) and block.text == EIFFEL
    a, b = block.citations
    assert (a.kind, a.file_id, a.start, a.end) == ("file", STORE, 0, 31)
    assert (b.start, b.end) == (32, 103) and EIFFEL[b.start : b.end] == b.cited_text
    assert a.extra["text"].startswith("Paris is the capital of France.")


FILE_BODY_TOOLS = [{"fileSearch": {"file_search_store_names": [STORE]}}]


@pytest.mark.parametrize("mode", MODES)
async def test_file_search(mode: str, cassette: Any) -> None:
    cass, result = await play(mode, "file_search", cassette)
    assert request_json(cass)["tools"] == FILE_BODY_TOOLS  # native-file-search.json
    _check_files(result)


@pytest.mark.parametrize("mode", MODES)
async def test_file_search_streamed(mode: str, cassette: Any) -> None:
    cass, events = await play(mode, "file_search_stream", cassette)
    assert request_json(cass)["tools"] == FILE_BODY_TOOLS
    _check_files(final(events))


# --- caching -----------------------------------------------------------------------------


def _check_cached(result: Any) -> None:
    u = result.usage
    assert (u.input_tokens, u.cache_read_tokens, u.reasoning_tokens) == (3520, 3512, 42)
    assert result.output == "Paris."
    assert result.messages[-1].blocks == (TextBlock("Paris."),)  # plain text: fast path


@pytest.mark.parametrize("mode", MODES)
async def test_explicit_cached_content_through_vendor_fields(mode: str, cassette: Any) -> None:
    cass, result = await play(mode, "cached_content", cassette)
    assert request_json(cass)["cachedContent"] == CACHE_NAME  # cached-content.json
    _check_cached(result)


@pytest.mark.parametrize("mode", MODES)
async def test_cached_content_streamed_with_cache_auto(mode: str, cassette: Any) -> None:
    # cache="auto" is accepted (Gemini caches implicitly) and changes nothing on the wire.
    cass, events = await play(mode, "cached_content_stream", cassette)
    assert request_json(cass)["cachedContent"] == CACHE_NAME
    _check_cached(final(events))


# --- token counting ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("name", "expected"), [("count_tokens", 12), ("count_tokens_full", 41)])
async def test_count_tokens(mode: str, name: str, expected: int, cassette: Any) -> None:
    scenario = SCENARIOS[name]
    assert scenario.count is not None
    provider = GeminiProvider({"api_key": "test-key"})
    with cassette(scenario.cassette) as cass:
        if mode == "sync":
            total = provider.count_tokens(scenario.count())
            provider.close()
        else:
            total = await provider.acount_tokens(scenario.count())
            await provider.aclose()
    assert total == expected
    assert cass.requests[0].uri.endswith("/models/gemini-2.5-flash:countTokens")
    body = request_json(cass)
    fox = [{"parts": [{"text": "The quick brown fox jumps over the lazydog."}], "role": "user"}]
    assert body["contents"] == fox  # count-tokens.json
    if name == "count_tokens_full":
        full = body["generateContentRequest"]
        assert full["model"] == "models/gemini-2.5-flash"
        assert full["contents"] == fox
        assert full["systemInstruction"] == {"parts": [{"text": "You are a helpful assistant."}]}
        assert full["tools"][0]["functionDeclarations"][0]["name"] == "multiply"
    else:
        assert set(body) == {"contents"}


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_invalid_key_is_an_authentication_error(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["error_api_key"]
    with cassette(scenario.cassette) as cass, pytest.raises(AuthenticationError) as info:
        await run(mode, runtime(scenario.model), **scenario.kwargs)
    assert len(cass.requests) == 1  # never retried
    err = info.value
    assert (err.status, err.code, err.retryable) == (400, "API_KEY_INVALID", False)


def test_a_stored_conversation_resumes_with_the_same_echo() -> None:
    # Blocks survive Message.to_dict / from_dict, so the echo of a stored turn is identical.
    from llmport_gemini.convert_in import contents

    blocks = (
        ThinkingBlock("a thought", vendor="gemini"),
        ThinkingBlock("", SIG_TEXT, vendor="gemini", extra={SIGNED_PART_KEY: "text"}),
        TextBlock("answer"),
    )
    message = Message("assistant", blocks)
    again = Message.from_dict(message.to_dict())
    assert [c.model_dump() for c in contents([again], "m")] == [
        c.model_dump() for c in contents([message], "m")
    ]
