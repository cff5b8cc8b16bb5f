"""Cassette replays: the exact request body for every conversion, and the parsed reply.

Each test runs once sync and once async (the ``drive`` fixture). The
``cassette`` fixture replays with record_mode="none", requires a JSON-equal
request body and fails if an interaction is left unplayed; the key fields
are asserted explicitly as well.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from llmport import AuthenticationError, BadRequestError, RateLimitError
from llmport.messages.types import FinalEvent, TextDelta, ToolCallStarted, ToolResultEvent
from openai_helpers import request_json
from support.openai_scenarios import CSV_TEXT, DATA, scenarios

SC = scenarios()


def replay(name: str, cassette: Any, drive: Any, runtime: Any) -> tuple[Any, Any]:
    sc = SC[name]
    rt = runtime(sc.model)
    with cassette(sc.cassette) as cass:
        if sc.stream:
            result = drive.stream(rt, model=sc.model, **sc.kwargs())
        else:
            result = drive.run(rt, model=sc.model, **sc.kwargs())
    return result, cass


def test_text_with_system_prompt_and_options(cassette: Any, drive: Any, runtime: Any) -> None:
    run, cass = replay("text", cassette, drive, runtime)
    assert request_json(cass, 0) == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Answer in one short sentence."},
            {"role": "user", "content": "What is the capital of France?"},
        ],
        "temperature": 0.2,
        "max_completion_tokens": 50,
        "seed": 7,
        "stop": ["\n\n"],
        "top_p": 0.9,
    }
    assert run.output == "The capital of France is Paris."
    assert run.stop_reason == "end_turn"
    assert run.usage.input_tokens == 27 and run.usage.output_tokens == 8 and run.usage.requests == 1


def test_image_inline_and_url(cassette: Any, drive: Any, runtime: Any) -> None:
    run, cass = replay("image", cassette, drive, runtime)
    parts = request_json(cass, 0)["messages"][0]["content"]
    png = base64.b64encode((DATA / "kiwi.png").read_bytes()).decode()
    assert parts == [
        {"type": "text", "text": "What fruit colour is this image?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/kiwi.jpg"}},
    ]
    assert run.output == "Both images show kiwi green."
    assert run.usage.cache_read_tokens == 1024


def test_audio_to_an_audio_model(cassette: Any, drive: Any, runtime: Any) -> None:
    run, cass = replay("audio", cassette, drive, runtime)
    body = request_json(cass, 0)
    assert body["model"] == "gpt-4o-audio-preview"
    part = body["messages"][0]["content"][1]
    assert part == {
        "type": "input_audio",
        "input_audio": {
            "data": base64.b64encode((DATA / "hello.wav").read_bytes()).decode(),
            "format": "wav",
        },
    }
    assert run.output == "Only silence."


def test_pdf_as_file_part(cassette: Any, drive: Any, runtime: Any) -> None:
    run, cass = replay("pdf", cassette, drive, runtime)
    part = request_json(cass, 0)["messages"][0]["content"][1]
    pdf = base64.b64encode((DATA / "report.pdf").read_bytes()).decode()
    assert part == {
        "type": "file",
        "file": {"filename": "report.pdf", "file_data": f"data:application/pdf;base64,{pdf}"},
    }
    assert run.output == "Q3 revenue was 4.2M."


def test_csv_is_inlined_as_text(cassette: Any, drive: Any, runtime: Any) -> None:
    run, cass = replay("inline_text", cassette, drive, runtime)
    parts = request_json(cass, 0)["messages"][0]["content"]
    assert parts[1] == {
        "type": "text",
        "text": f'<file name="sales.csv" media_type="text/csv">\n{CSV_TEXT}\n</file>',
    }
    assert run.output == "South (2.7 vs 1.5)."


def test_tool_round_trip_with_two_parallel_calls(cassette: Any, drive: Any, runtime: Any) -> None:
    run, cass = replay("tool_roundtrip", cassette, drive, runtime)
    first, second = request_json(cass, 0), request_json(cass, 1)
    assert first["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the current weather for a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                    "additionalProperties": False,
                },
                "strict": True,
            },
        }
    ]
    assert first["tool_choice"] == "auto" and first["parallel_tool_calls"] is True
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_paris_8GZ2",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                },
                {
                    "id": "call_london_k1Q7",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"London"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_paris_8GZ2", "content": "Sunny, 22C in Paris"},
        {
            "role": "tool",
            "tool_call_id": "call_london_k1Q7",
            "content": "Light rain, 14C in London",
        },
    ]
    assert [r.call.arguments for r in run.tool_calls] == [{"city": "Paris"}, {"city": "London"}]
    assert run.output == "Paris is sunny at 22C; London has light rain at 14C."
    assert run.iterations == 2
    assert run.usage.input_tokens == 61 + 131 and run.usage.cache_read_tokens == 64
    assert run.usage.requests == 2


def test_structured_output_is_strict_and_optional_nulls_are_dropped(
    cassette: Any, drive: Any, runtime: Any
) -> None:
    run, cass = replay("structured", cassette, drive, runtime)
    assert request_json(cass, 0)["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "response",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "country": {"type": "string"},
                    "population": {"type": ["integer", "null"]},
                },
                "required": ["city", "country", "population"],
                "additionalProperties": False,
            },
        },
    }
    # The model had to send population: null; the caller's schema says "integer or absent".
    assert json.loads(run.output) == {"city": "Mexico City", "country": "Mexico"}


def test_streaming_text(cassette: Any, drive: Any, runtime: Any) -> None:
    events, cass = replay("stream_text", cassette, drive, runtime)
    body = request_json(cass, 0)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "The capital of Mexico is Mexico City."
    assert sum(isinstance(e, TextDelta) for e in events) == 8
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.output == text and final.result.usage.output_tokens == 8


def test_streaming_tool_calls_are_assembled_by_index(
    cassette: Any, drive: Any, runtime: Any
) -> None:
    events, cass = replay("stream_tools", cassette, drive, runtime)
    started = [e.call for e in events if isinstance(e, ToolCallStarted)]
    assert [(c.id, c.name, c.arguments) for c in started] == [
        ("call_paris_8GZ2", "get_weather", {"city": "Paris"}),
        ("call_london_k1Q7", "get_weather", {"city": "London"}),
    ]
    assert [e.result.content for e in events if isinstance(e, ToolResultEvent)] == [
        "Sunny, 22C in Paris",
        "Light rain, 14C in London",
    ]
    # The fragments were joined before being echoed back.
    echoed = request_json(cass, 1)["messages"][1]["tool_calls"]
    assert [c["function"]["arguments"] for c in echoed] == ['{"city":"Paris"}', '{"city":"London"}']
    assert events[-1].result.output == "Paris sunny; London rainy."


def test_400_is_a_bad_request_error(cassette: Any, drive: Any, runtime: Any) -> None:
    with pytest.raises(BadRequestError) as info, cassette(SC["error_400"].cassette) as cass:
        drive.run(runtime(SC["error_400"].model), **SC["error_400"].kwargs())
    # The vendor= fields reached the body as given; only the server could refuse them.
    assert request_json(cass, 0) == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "Hello"}],
        "logprobs": True,
        "top_logprobs": 25,
    }
    err = info.value
    assert err.status == 400 and err.provider == "openai" and not err.retryable
    assert err.code == "integer_above_max_value"
    assert "top_logprobs" in str(err) and err.__cause__ is None


def test_429_honours_retry_after_ms_then_succeeds(
    cassette: Any, drive: Any, runtime: Any, delays: list[float]
) -> None:
    run, _ = replay("error_429", cassette, drive, runtime)
    assert delays == [0.25]  # retry-after-ms wins over retry-after: 1
    assert run.output == "Hello! How can I help?"
    assert run.attempts == 2
    failure = run.failures[0].error
    assert (
        isinstance(failure, RateLimitError)
        and failure.retry_after == 0.25
        and failure.status == 429
    )


def test_401_raises_at_once_and_hides_the_key(
    cassette: Any, drive: Any, runtime: Any, delays: list[float]
) -> None:
    with pytest.raises(AuthenticationError) as info:
        replay(
            "error_401", cassette, drive, runtime
        )  # one interaction: a retry would fail the replay
    assert delays == []
    assert info.value.status == 401 and not info.value.retryable
    assert "sk-***" in str(info.value) and "ab12" not in str(info.value)


# --- the Responses API (openai-responses:) ------------------------------------------


def test_responses_text(cassette: Any, drive: Any, runtime: Any) -> None:
    run, cass = replay("responses_text", cassette, drive, runtime)
    assert request_json(cass, 0) == {
        "model": "gpt-5-mini",
        "instructions": "Be terse.",
        "input": [{"role": "user", "content": "Reply with exactly: pong"}],
        "max_output_tokens": 64,
        "reasoning": {"effort": "low"},  # reasoning_effort= is the core's alias of reasoning=
        # A reasoning model's items are echoed statelessly: always ask for their encrypted form.
        "include": ["reasoning.encrypted_content"],
    }
    assert run.output == "pong" and run.usage.input_tokens == 19


def test_responses_tool_round_trip_echoes_reasoning(
    cassette: Any, drive: Any, runtime: Any
) -> None:
    run, cass = replay("responses_tool_roundtrip", cassette, drive, runtime)
    first, second = request_json(cass, 0), request_json(cass, 1)
    assert first["tools"][0]["strict"] is True and first["tools"][0]["name"] == "get_weather"
    assert second["input"][1:] == [
        {
            "id": "rs_0a1b2c3d4e5f",
            "type": "reasoning",
            "summary": [],
            "encrypted_content": "gAAAAABopaque-reasoning-state-for-tests",
        },
        {
            "type": "function_call",
            "call_id": "call_paris_8GZ2",
            "name": "get_weather",
            "arguments": '{"city":"Paris"}',
            "id": "fc_0paris",
        },
        {
            "type": "function_call_output",
            "call_id": "call_paris_8GZ2",
            "output": "Sunny, 22C in Paris",
        },
    ]
    assert run.output == "It is sunny in Paris, 22C."
    assert run.usage.reasoning_tokens == 64


def test_responses_structured_output(cassette: Any, drive: Any, runtime: Any) -> None:
    run, cass = replay("responses_structured", cassette, drive, runtime)
    fmt = request_json(cass, 0)["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["strict"] is True and fmt["name"] == "response"
    assert fmt["schema"]["required"] == ["city", "country", "population"]
    assert json.loads(run.output) == {"city": "Mexico City", "country": "Mexico"}


def test_responses_streaming(cassette: Any, drive: Any, runtime: Any) -> None:
    events, cass = replay("responses_stream", cassette, drive, runtime)
    assert request_json(cass, 0)["stream"] is True
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["po", "ng"]
    assert events[-1].result.output == "pong" and events[-1].result.usage.output_tokens == 5
