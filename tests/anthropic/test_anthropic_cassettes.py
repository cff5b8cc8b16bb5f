"""The Anthropic plugin against recorded cassettes, sync and async.

The conftest matcher already requires every request body to be JSON-equal
to the cassette's; these tests also assert the fields that matter.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from llmport import (
    Backoff,
    BadRequestError,
    ExecFailed,
    FinalEvent,
    OverloadedError,
    RateLimitError,
    RunResult,
    Runtime,
    TextDelta,
    ToolCallStarted,
    ToolResultEvent,
)
from support.anthropic_scenarios import CITY_SCHEMA, IMAGE_URL, SCENARIOS, Scenario
from support.cassette_support import request_json

MODES = ["sync", "async"]
# The SDK warns on every call to a model it lists as deprecated (3.7, 4.5 Sonnet): expected here.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")


def runtime(scenario: Scenario, delays: list[float] | None = None, **kwargs: Any) -> Runtime:
    recorded = delays if delays is not None else []

    async def async_sleep(seconds: float) -> None:
        recorded.append(seconds)

    return Runtime(
        model=scenario.model,
        backoff=Backoff(sleep=recorded.append, async_sleep=async_sleep),
        providers={"anthropic": {"api_key": "test-key", "base_url": "https://api.anthropic.com"}},
        **kwargs,
    )


async def run(mode: str, scenario: Scenario, rt: Runtime | None = None) -> RunResult:
    rt = rt or runtime(scenario)
    if mode == "sync":
        return rt.run(**scenario.kwargs)
    return await rt.arun(**scenario.kwargs)


async def stream(mode: str, scenario: Scenario) -> list[Any]:
    rt = runtime(scenario)
    if mode == "sync":
        return list(rt.stream(**scenario.kwargs))
    return [event async for event in rt.astream(**scenario.kwargs)]


@pytest.mark.parametrize("mode", MODES)
async def test_text_with_system_prompt_and_options(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["text"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    body = request_json(cass)
    assert body["system"] == "You are a helpful assistant."
    assert body["model"] == "claude-sonnet-4-5"
    assert body["max_tokens"] == 1024
    assert body["temperature"] == 0.5
    assert body["stop_sequences"] == ["END"]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]}
    ]
    assert "top_p" not in body and "seed" not in body
    assert result.output == "The capital of France is Paris."
    assert result.stop_reason == "end_turn"
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.requests) == (
        20,
        10,
        1,
    )


@pytest.mark.parametrize("mode", MODES)
async def test_images_base64_and_url(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["image"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    body = request_json(cass)
    assert body["model"] == "claude-haiku-4-5"  # the "haiku" alias
    assert body["max_tokens"] == 16384  # the family default
    text, inline, remote = body["messages"][0]["content"]
    assert text == {"type": "text", "text": "What fruit is in these two images?"}
    assert inline["type"] == "image"
    assert inline["source"]["type"] == "base64" and inline["source"]["media_type"] == "image/png"
    assert inline["source"]["data"].startswith("iVBORw0KGgo")
    assert remote == {"type": "image", "source": {"type": "url", "url": IMAGE_URL}}
    assert "kiwi" in result.output


@pytest.mark.parametrize("mode", MODES)
async def test_pdf_as_document_block(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["pdf"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    document, question = request_json(cass)["messages"][0]["content"]
    assert document["type"] == "document" and document["title"] == "invoice.pdf"
    assert document["source"]["type"] == "base64"
    assert document["source"]["media_type"] == "application/pdf"
    assert document["source"]["data"].startswith("JVBERi0")  # %PDF-
    assert question == {"type": "text", "text": "What is the invoice total?"}
    assert result.output == "The invoice total is 42 EUR."


@pytest.mark.parametrize("mode", MODES)
async def test_text_document_and_inlined_csv(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["text_document"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    notes, csv, question = request_json(cass)["messages"][0]["content"]
    assert notes == {
        "type": "document",
        "title": "notes.txt",
        "source": {
            "type": "text",
            "media_type": "text/plain",
            "data": "Meeting notes, 3 March\n- ship the Anthropic plugin\n- write the docs\n",
        },
    }
    # The documented inlining rule (llmport.messages.content.inline_text_file).
    assert csv == {
        "type": "text",
        "text": '<file name="prices.csv" media_type="text/csv">\n'
        "item,price\napple,1.20\npear,0.90\n\n</file>",
    }
    assert question["text"] == "Summarise the notes and list the prices."
    assert "apple 1.20" in result.output


@pytest.mark.parametrize("mode", MODES)
async def test_tool_round_trip_with_two_calls(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["tools"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    first, second = request_json(cass, 0), request_json(cass, 1)
    assert first["tool_choice"] == {"type": "auto"}
    assert first["cache_control"] == {"type": "ephemeral"}
    assert first["tools"] == [
        {
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": False,
            },
        }
    ]
    user, assistant, results = second["messages"]
    assert user["role"] == "user"
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "I'll check the weather in both cities."},
            {
                "type": "tool_use",
                "id": "toolu_01WN4AuToBnJyXNQXwQBBebj",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
            {
                "type": "tool_use",
                "id": "toolu_01Lq8mY3vRkUe2sZtD9cXwPo",
                "name": "get_weather",
                "input": {"city": "London"},
            },
        ],
    }
    # Both results in one user turn, in call order, each with is_error.
    assert results == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01WN4AuToBnJyXNQXwQBBebj",
                "content": "Sunny, 22C",
                "is_error": False,
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01Lq8mY3vRkUe2sZtD9cXwPo",
                "content": "Light rain, 14C",
                "is_error": False,
            },
        ],
    }
    assert [r.call.arguments for r in result.tool_calls] == [{"city": "Paris"}, {"city": "London"}]
    assert result.output == "Paris is sunny at 22C; London has light rain at 14C."
    # Cache reads and writes are reported; input_tokens is the whole prompt.
    assert result.usage.cache_write_tokens == 572
    assert result.usage.cache_read_tokens == 572
    assert result.usage.input_tokens == (8 + 572) + (61 + 572)
    assert result.usage.requests == 2


@pytest.mark.parametrize("mode", MODES)
async def test_structured_output_native(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["structured"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    body = request_json(cass)
    assert "tools" not in body
    assert body["output_config"] == {
        "format": {
            "type": "json_schema",
            "schema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "country": {"type": "string"},
                    "population": {"type": "integer", "description": "{minimum: 0}"},
                },
                "required": ["city", "country", "population"],
                "additionalProperties": False,
            },
        }
    }
    assert json.loads(result.output) == {
        "city": "London",
        "country": "United Kingdom",
        "population": 9002488,
    }


@pytest.mark.parametrize("mode", MODES)
async def test_structured_output_forced_tool_fallback(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["structured_forced_tool"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    body = request_json(cass)
    assert "output_config" not in body
    assert body["tool_choice"] == {"type": "tool", "name": "response"}
    assert body["tools"][0]["name"] == "response"
    assert body["tools"][0]["input_schema"] == CITY_SCHEMA
    assert json.loads(result.output) == {
        "city": "London",
        "country": "United Kingdom",
        "population": 9002488,
    }
    assert result.tool_calls == []  # the output tool is the answer, never run as a tool
    assert result.stop_reason == "end_turn"


@pytest.mark.parametrize("mode", MODES)
async def test_streaming_text(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["stream_text"]
    with cassette(scenario.cassette) as cass:
        events = await stream(mode, scenario)
    body = request_json(cass)
    assert body["stream"] is True and body["temperature"] == 1.0
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo", "!"]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.output == "Hello!"
    assert (final.result.usage.input_tokens, final.result.usage.output_tokens) == (10, 5)


@pytest.mark.parametrize("mode", MODES)
async def test_streaming_tool_use_fragments_assembled(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["stream_tools"]
    with cassette(scenario.cassette) as cass:
        events = await stream(mode, scenario)
    started = [e.call for e in events if isinstance(e, ToolCallStarted)]
    assert [(c.id, c.name, c.arguments) for c in started] == [
        ("toolu_01StreamParis0000000001", "get_weather", {"city": "Paris"}),
        ("toolu_01StreamLondon00000002", "get_weather", {"city": "London"}),
    ]
    assert [e.result.content for e in events if isinstance(e, ToolResultEvent)] == [
        "Sunny, 22C",
        "Light rain, 14C",
    ]
    second = request_json(cass, 1)
    assert second["messages"][1]["content"][1]["input"] == {"city": "Paris"}
    assert [b["tool_use_id"] for b in second["messages"][2]["content"]] == [
        "toolu_01StreamParis0000000001",
        "toolu_01StreamLondon00000002",
    ]
    assert events[-1].result.output == "Paris is sunny at 22C; London has light rain at 14C."


@pytest.mark.parametrize("mode", MODES)
async def test_400_raises_bad_request_at_once(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["error_400"]
    with cassette(scenario.cassette) as cass, pytest.raises(BadRequestError) as info:
        await run(mode, scenario)
    assert len(cass.requests) == 1  # permanent: never retried
    assert request_json(cass)["max_tokens"] == 100000
    err = info.value
    assert (err.status, err.retryable, err.provider, err.code) == (
        400,
        False,
        "anthropic",
        "invalid_request_error",
    )
    assert "maximum allowed number of output tokens" in str(err)


@pytest.mark.parametrize("mode", MODES)
async def test_429_retried_after_the_vendor_delay(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["error_429"]
    delays: list[float] = []
    with cassette(scenario.cassette):
        result = await run(mode, scenario, runtime(scenario, delays))
    assert delays == [7.0]  # retry-after: 7, honoured exactly
    assert result.output == "Hello! How can I help you today?"
    assert result.attempts == 2
    assert isinstance(result.failures[0].error, RateLimitError)
    assert result.failures[0].error.retry_after == 7.0


@pytest.mark.parametrize("mode", MODES)
async def test_529_overloaded_is_transient(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["error_529"]
    with cassette(scenario.cassette):
        result = await run(mode, scenario)
    failure = result.failures[0].error
    assert isinstance(failure, OverloadedError)
    assert (failure.status, failure.retryable, failure.code) == (529, True, "overloaded_error")
    assert result.output == "Hello! How can I help you today?"


@pytest.mark.parametrize("mode", MODES)
async def test_529_exhausting_attempts_raises_exec_failed(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["error_529"]
    # Only the first interaction is needed: one attempt allowed.
    with cassette(
        scenario.cassette,
    ) as cass:
        cass.data = cass.data[:1]
        with pytest.raises(ExecFailed) as info:
            await run(mode, scenario, runtime(scenario, max_retries=1))
    assert isinstance(info.value.last_error, OverloadedError)
    assert "Attempt 1: OverloadedError: anthropic 529 overloaded_error: Overloaded" in str(
        info.value
    )
