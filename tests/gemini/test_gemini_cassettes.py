"""The Gemini plugin against recorded cassettes, sync and async.

The conftest matcher already requires every request body to be JSON-equal
to the cassette's; these tests also assert the fields that matter.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from gemini_helpers import isolated, run, runtime, stream  # noqa: F401  (isolated: autouse)
from llmport import (
    BadRequestError,
    ExecFailed,
    FinalEvent,
    RateLimitError,
    TextDelta,
    ToolCallStarted,
    ToolResultEvent,
)
from llmport_gemini.convert_in import SIGNATURE_KEY
from support.cassette_support import request_json
from support.gemini_scenarios import CITY_SCHEMA, DATA, SCENARIOS, SIGNATURE, SIGNATURE_URLSAFE

MODES = ["sync", "async"]
URL = "https://generativelanguage.googleapis.com/v1beta/models/{}:generateContent"


async def play(mode: str, name: str, cassette: Any, **rt_kwargs: Any) -> tuple[Any, Any]:
    scenario = SCENARIOS[name]
    with cassette(scenario.cassette) as cass:
        rt = runtime(scenario.model, **rt_kwargs)
        if scenario.stream:
            result = await stream(mode, rt, **scenario.kwargs)
        else:
            result = await run(mode, rt, **scenario.kwargs)
    return cass, result


@pytest.mark.parametrize("mode", MODES)
async def test_text_with_system_instruction_and_options(mode: str, cassette: Any) -> None:
    cass, result = await play(mode, "text", cassette)
    assert cass.requests[0].uri == URL.format("gemini-2.5-flash")
    assert request_json(cass) == {
        "contents": [{"parts": [{"text": "What is the capital of France?"}], "role": "user"}],
        "systemInstruction": {"parts": [{"text": "You are a helpful assistant."}], "role": "user"},
        "generationConfig": {
            "temperature": 0.5,
            "topP": 0.9,
            "maxOutputTokens": 256,
            "stopSequences": ["END"],
            "seed": 7,
            "thinkingConfig": {"thinkingBudget": 1024},
        },
    }
    assert result.output == "The capital of France is Paris."
    assert result.stop_reason == "end_turn"
    usage = result.usage
    # Thoughts are billed as output: output_tokens = candidates + thoughts.
    assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens) == (15, 7 + 101, 101)


@pytest.mark.parametrize("mode", MODES)
async def test_image_as_inline_data_in_url_safe_base64(mode: str, cassette: Any) -> None:
    cass, result = await play(mode, "image", cassette)
    assert cass.requests[0].uri == URL.format("gemini-2.5-flash")  # the "gemini-flash" alias
    text, image = request_json(cass)["contents"][0]["parts"]
    assert text == {"text": "What fruit is in the image?"}
    png = (DATA / "kiwi.png").read_bytes()
    assert image == {
        "inlineData": {"data": base64.urlsafe_b64encode(png).decode(), "mime_type": "image/png"}
    }
    assert result.output == "The fruit in the image is a kiwi."


@pytest.mark.parametrize("mode", MODES)
async def test_pdf_inline_and_csv_inlined_as_text(mode: str, cassette: Any) -> None:
    cass, result = await play(mode, "pdf", cassette)
    pdf, csv, question = request_json(cass)["contents"][0]["parts"]
    assert pdf["inlineData"]["mime_type"] == "application/pdf"
    assert (
        base64.urlsafe_b64decode(pdf["inlineData"]["data"]) == (DATA / "invoice.pdf").read_bytes()
    )
    # send="text": the documented inlining rule (llmport.messages.content.inline_text_file).
    assert csv == {
        "text": '<file name="prices.csv" media_type="text/csv">\n'
        "item,price\napple,1.20\npear,0.90\n\n</file>"
    }
    assert question == {"text": "What is the invoice total, and what do pears cost?"}
    assert result.output == "The invoice total is 42 EUR; pears cost 0.90."
    assert result.usage.reasoning_tokens == 88


@pytest.mark.parametrize("mode", MODES)
async def test_tool_round_trip_echoes_the_thought_signature(mode: str, cassette: Any) -> None:
    cass, result = await play(mode, "tools", cassette)
    first, second = request_json(cass, 0), request_json(cass, 1)
    declaration = {
        "description": "Get the current weather for a city.",
        "name": "get_weather",
        "parameters_json_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    }
    assert first["tools"] == [{"functionDeclarations": [declaration]}]
    assert first["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    user, model_turn, results = second["contents"]
    assert user == first["contents"][0]
    # The call goes back whole, with its signature (URL-safe base64, as google-genai sends it)
    # and without the id llmport made up (the API sent none).
    assert model_turn == {
        "role": "model",
        "parts": [
            {
                "functionCall": {"args": {"city": "Paris"}, "name": "get_weather"},
                "thoughtSignature": SIGNATURE_URLSAFE,
            }
        ],
    }
    assert results == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"output": "Sunny, 22C"}}}
        ],
    }
    (call,) = [c.call for c in result.tool_calls]
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})
    assert call.extra[SIGNATURE_KEY] == SIGNATURE  # kept as the API sent it
    assert result.output == "The weather in Paris is sunny with a temperature of 22C."
    assert result.usage.requests == 2
    assert result.usage.input_tokens == 49 + 88


@pytest.mark.parametrize("mode", MODES)
async def test_structured_output_via_response_json_schema(mode: str, cassette: Any) -> None:
    cass, result = await play(mode, "structured", cassette)
    config = request_json(cass)["generationConfig"]
    assert config == {"responseMimeType": "application/json", "responseJsonSchema": CITY_SCHEMA}
    assert json.loads(result.output) == {
        "city": "London",
        "country": "United Kingdom",
        "population": 9002488,
    }


@pytest.mark.parametrize("mode", MODES)
async def test_streaming_text(mode: str, cassette: Any) -> None:
    cass, events = await play(mode, "stream_text", cassette)
    assert cass.requests[0].uri == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:"
        "streamGenerateContent?alt=sse"
    )
    assert request_json(cass)["generationConfig"] == {"temperature": 0.0}
    assert [e.text for e in events if isinstance(e, TextDelta)] == [
        "The",
        " capital of France",
        " is Paris.\n",
    ]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.output == "The capital of France is Paris.\n"
    assert (final.result.usage.input_tokens, final.result.usage.output_tokens) == (13, 8)


@pytest.mark.parametrize("mode", MODES)
async def test_streaming_parallel_calls_arrive_whole(mode: str, cassette: Any) -> None:
    cass, events = await play(mode, "stream_tools", cassette)
    first, second = request_json(cass, 0), request_json(cass, 1)
    assert first["generationConfig"] == {"thinkingConfig": {"thinkingLevel": "HIGH"}}
    started = [e.call for e in events if isinstance(e, ToolCallStarted)]
    assert [(c.id, c.arguments) for c in started] == [
        ("fc_paris01", {"city": "Paris"}),
        ("fc_london02", {"city": "London"}),
    ]
    assert [e.result.content for e in events if isinstance(e, ToolResultEvent)] == [
        "Sunny, 22C",
        "Light rain, 14C",
    ]
    # Only the first call of a parallel turn carries the signature; ids go back as given.
    assert second["contents"][1]["parts"] == [
        {
            "functionCall": {"id": "fc_paris01", "args": {"city": "Paris"}, "name": "get_weather"},
            "thoughtSignature": SIGNATURE_URLSAFE,
        },
        {"functionCall": {"id": "fc_london02", "args": {"city": "London"}, "name": "get_weather"}},
    ]
    assert second["contents"][2]["parts"] == [
        {
            "functionResponse": {
                "id": "fc_paris01",
                "name": "get_weather",
                "response": {"output": "Sunny, 22C"},
            }
        },
        {
            "functionResponse": {
                "id": "fc_london02",
                "name": "get_weather",
                "response": {"output": "Light rain, 14C"},
            }
        },
    ]
    assert events[-1].result.output == "Paris is sunny at 22C; London has light rain at 14C."


@pytest.mark.parametrize("mode", MODES)
async def test_400_raises_bad_request_at_once(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["error_400"]
    with cassette(scenario.cassette) as cass, pytest.raises(BadRequestError) as info:
        await run(mode, runtime(scenario.model), **scenario.kwargs)
    assert len(cass.requests) == 1  # permanent: never retried
    assert request_json(cass)["generationConfig"] == {"topK": 100.0}
    err = info.value
    assert (err.status, err.retryable, err.provider, err.code) == (
        400,
        False,
        "gemini",
        "INVALID_ARGUMENT",
    )
    assert "topK value of 100" in str(err)


@pytest.mark.parametrize("mode", MODES)
async def test_429_waits_the_retry_info_delay(mode: str, cassette: Any) -> None:
    delays: list[float] = []
    cass, result = await play(mode, "error_429", cassette, delays=delays)
    assert len(cass.requests) == 2
    assert delays == [7.0]  # RetryInfo retryDelay "7s", honoured exactly
    failure = result.failures[0].error
    assert isinstance(failure, RateLimitError)
    assert (failure.status, failure.code, failure.retry_after) == (429, "RESOURCE_EXHAUSTED", 7.0)
    assert result.output == "Hello! How can I help you today?"


@pytest.mark.parametrize("mode", MODES)
async def test_429_exhausting_attempts_raises_exec_failed(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["error_429"]
    with cassette(scenario.cassette) as cass:
        cass.data = cass.data[:1]  # only the 429 is needed: one attempt allowed
        with pytest.raises(ExecFailed) as info:
            await run(mode, runtime(scenario.model, max_retries=1), **scenario.kwargs)
    assert isinstance(info.value.last_error, RateLimitError)
    assert "Attempt 1: RateLimitError: gemini 429 RESOURCE_EXHAUSTED" in str(info.value)


@pytest.mark.parametrize("name", ["text", "stream_text"])
async def test_async_cassettes_replay_through_aiohttp(
    name: str, cassette: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The async client's default transport is aiohttp; vcrpy answers it from the cassette.
    # (vcrpy matches the method as passed to aiohttp: the plugin's session upper-cases
    # google-genai's "post", or no cassette recorded on httpx would match.)
    from llmport_gemini import aio

    made: list[Any] = []

    def session() -> Any:
        made.append(aio_session())
        return made[-1]

    aio_session = aio.session
    monkeypatch.setattr(aio, "session", session)
    cass, result = await play("async", name, cassette)
    assert len(made) == 1 and made[0].closed  # one session, closed with the runtime
    assert cass.play_count == 1
    assert result  # the answers themselves are checked by the tests above
