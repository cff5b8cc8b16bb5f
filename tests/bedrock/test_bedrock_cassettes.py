"""The Bedrock plugin against recorded cassettes (boto3 -> botocore -> vcrpy), sync and async.

The conftest matcher already requires every request body to be JSON-equal
to the cassette's; these tests also assert the exact bodies and what the
caller gets back.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from llmport import (
    Backoff,
    BadRequestError,
    ExecFailed,
    FinalEvent,
    RateLimitError,
    RunResult,
    Runtime,
    StreamRestarted,
    TextDelta,
    ToolCallStarted,
    ToolResultEvent,
)
from llmport.errors import OverloadedError
from support.bedrock_scenarios import CREDENTIALS, DATA, REGION, SCENARIOS, Scenario
from support.cassette_support import request_json

MODES = ["sync", "async"]


def runtime(scenario: Scenario, delays: list[float] | None = None, **kwargs: Any) -> Runtime:
    recorded = delays if delays is not None else []

    async def async_sleep(seconds: float) -> None:
        recorded.append(seconds)

    return Runtime(
        model=scenario.model,
        backoff=Backoff(sleep=recorded.append, async_sleep=async_sleep, jitter=False, initial=0.5),
        providers={"bedrock": {**CREDENTIALS, "region": REGION}},
        **kwargs,
    )


async def run(mode: str, scenario: Scenario, rt: Runtime | None = None) -> RunResult:
    rt = rt or runtime(scenario)
    try:
        if mode == "sync":
            return rt.run(**scenario.kwargs)
        return await rt.arun(**scenario.kwargs)
    finally:
        rt.close()


async def stream(mode: str, scenario: Scenario) -> list[Any]:
    rt = runtime(scenario)
    try:
        if mode == "sync":
            return list(rt.stream(**scenario.kwargs))
        return [event async for event in rt.astream(**scenario.kwargs)]
    finally:
        rt.close()


def b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


@pytest.mark.parametrize("mode", MODES)
async def test_text_with_system_prompt_and_inference_config(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["text"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    assert cass.requests[0].uri.endswith("/model/us.amazon.nova-micro-v1%3A0/converse")
    assert request_json(cass) == {
        "system": [{"text": "You are a chatbot."}],
        "messages": [{"role": "user", "content": [{"text": "Hello!"}]}],
        "inferenceConfig": {
            "maxTokens": 512,
            "temperature": 0.5,
            "topP": 0.9,
            "stopSequences": ["END"],
        },
    }
    assert result.output.startswith("Hello! How can I assist you today?")
    assert result.stop_reason == "end_turn"
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.requests) == (
        7,
        30,
        1,
    )


@pytest.mark.parametrize("mode", MODES)
async def test_image_as_bytes_with_format(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["image"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    assert request_json(cass) == {
        "system": [{"text": "You are a helpful chatbot."}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"text": "What fruit is in the image?"},
                    {"image": {"format": "png", "source": {"bytes": b64(DATA / "kiwi.png")}}},
                ],
            }
        ],
        "inferenceConfig": {},
    }
    assert "kiwi" in result.output


@pytest.mark.parametrize("mode", MODES)
async def test_documents_with_sanitised_names_and_inlined_json(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["document"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    pdf, csv, inlined, question = request_json(cass)["messages"][0]["content"]
    # "invoice_2024.03.pdf": extension dropped, "_" and "." become single spaces.
    assert pdf == {
        "document": {
            "format": "pdf",
            "name": "invoice 2024 03",
            "source": {"bytes": b64(DATA / "invoice_2024.03.pdf")},
        }
    }
    assert csv == {
        "document": {
            "format": "csv",
            "name": "prices",
            "source": {"bytes": b64(DATA / "prices.csv")},
        }
    }
    # JSON is not a Converse document format: the documented inlining rule applies.
    assert inlined == {
        "text": '<file name="settings.json" media_type="application/json">\n'
        '{"currency": "EUR", "vat": 0.2}\n\n</file>'
    }
    assert question == {"text": "What is the invoice total, and what does a pear cost?"}
    assert result.output == "The invoice total is 42 EUR. A pear costs 0.90 EUR."


@pytest.mark.parametrize("mode", MODES)
async def test_tool_round_trip_with_success_and_error_results(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["tool_roundtrip"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    first, second = request_json(cass, 0), request_json(cass, 1)
    tool_config = {
        "tools": [
            {
                "toolSpec": {
                    "name": "get_weather",
                    "inputSchema": {
                        "json": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                            "required": ["city"],
                            "additionalProperties": False,
                        }
                    },
                    "description": "Get the current weather for a city.",
                }
            }
        ],
        "toolChoice": {"auto": {}},
    }
    assert first["toolConfig"] == tool_config and second["toolConfig"] == tool_config
    user, assistant, results = second["messages"]
    assert user == {
        "role": "user",
        "content": [{"text": "What's the weather in Paris and in Atlantis?"}],
    }
    assert assistant == {
        "role": "assistant",
        "content": [
            {"text": "I'll check the weather in both places."},
            {
                "toolUse": {
                    "toolUseId": "tooluse_XjTErzm6TpyMMpDviNVY3g",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                }
            },
            {
                "toolUse": {
                    "toolUseId": "tooluse_Q8wLk2Rr5NmZpVe7Tx1Ya4",
                    "name": "get_weather",
                    "input": {"city": "Atlantis"},
                }
            },
        ],
    }
    assert results["role"] == "user"
    paris, atlantis = results["content"]
    assert paris == {
        "toolResult": {
            "toolUseId": "tooluse_XjTErzm6TpyMMpDviNVY3g",
            "content": [{"text": "Sunny, 22C"}],
            "status": "success",
        }
    }
    assert atlantis["toolResult"]["status"] == "error"
    assert atlantis["toolResult"]["toolUseId"] == "tooluse_Q8wLk2Rr5NmZpVe7Tx1Ya4"
    assert "no weather station in Atlantis" in atlantis["toolResult"]["content"][0]["text"]
    assert [c.call.arguments for c in result.tool_calls] == [
        {"city": "Paris"},
        {"city": "Atlantis"},
    ]
    assert result.output.startswith("Paris is sunny at 22C.")
    assert (result.usage.input_tokens, result.usage.requests) == (572 + 710, 2)


@pytest.mark.parametrize("mode", MODES)
async def test_structured_output_native_schema_as_string(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["structured"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    body = request_json(cass)
    assert "toolConfig" not in body
    json_schema = body["outputConfig"]["textFormat"]["structure"]["jsonSchema"]
    assert body["outputConfig"]["textFormat"]["type"] == "json_schema"
    assert json_schema["name"] == "response"
    assert isinstance(json_schema["schema"], str)  # a JSON string, as Bedrock wants
    assert json.loads(json_schema["schema"]) == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "country": {"type": "string"},
            "population": {"type": "integer", "description": "{minimum: 0}"},
        },
        "required": ["city", "country", "population"],
        "additionalProperties": False,
    }
    assert json.loads(result.output) == {
        "city": "Paris",
        "country": "France",
        "population": 2161000,
    }


@pytest.mark.parametrize("mode", MODES)
async def test_structured_output_forced_tool_fallback(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["structured_forced_tool"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    body = request_json(cass)
    assert "outputConfig" not in body
    assert body["toolConfig"]["toolChoice"] == {"tool": {"name": "response"}}
    (spec,) = body["toolConfig"]["tools"]
    assert spec["toolSpec"]["name"] == "response"
    assert spec["toolSpec"]["inputSchema"]["json"]["properties"]["population"] == {
        "type": "integer",
        "minimum": 0,
    }
    assert json.loads(result.output) == {
        "city": "Paris",
        "country": "France",
        "population": 2161000,
    }
    assert result.tool_calls == []  # the output tool is the answer, never run as a tool
    assert result.stop_reason == "end_turn"


@pytest.mark.parametrize("mode", MODES)
async def test_streaming_text_from_event_stream_frames(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["stream_text"]
    with cassette(scenario.cassette) as cass:
        events = await stream(mode, scenario)
    assert cass.requests[0].uri.endswith("/converse-stream")
    assert request_json(cass) == {
        "system": [{"text": "You are a helpful chatbot."}],
        "messages": [{"role": "user", "content": [{"text": "What is the capital of France?"}]}],
        "inferenceConfig": {"temperature": 0.0},
    }
    assert [e.text for e in events if isinstance(e, TextDelta)] == [
        "The",
        " capital of France is Paris.",
        " Paris is not",
        " only the capital city but also the most populous city in France.",
    ]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.output.startswith("The capital of France is Paris. Paris is not only")
    assert (final.result.usage.input_tokens, final.result.usage.output_tokens) == (13, 82)
    assert final.result.stop_reason == "end_turn"


@pytest.mark.parametrize("mode", MODES)
async def test_streaming_tool_use_fragments_assembled(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["stream_tools"]
    with cassette(scenario.cassette) as cass:
        events = await stream(mode, scenario)
    started = [e.call for e in events if isinstance(e, ToolCallStarted)]
    assert [(c.id, c.name, c.arguments) for c in started] == [
        ("tooluse_StreamParis0000000001", "get_weather", {"city": "Paris"}),
        ("tooluse_StreamLondon000000002", "get_weather", {"city": "London"}),
    ]
    assert [e.result.content for e in events if isinstance(e, ToolResultEvent)] == [
        "Sunny, 22C",
        "Light rain, 14C",
    ]
    second = request_json(cass, 1)
    assert second["messages"][1]["content"][1:] == [
        {
            "toolUse": {
                "toolUseId": "tooluse_StreamParis0000000001",
                "name": "get_weather",
                "input": {"city": "Paris"},
            }
        },
        {
            "toolUse": {
                "toolUseId": "tooluse_StreamLondon000000002",
                "name": "get_weather",
                "input": {"city": "London"},
            }
        },
    ]
    assert [b["toolResult"]["toolUseId"] for b in second["messages"][2]["content"]] == [
        "tooluse_StreamParis0000000001",
        "tooluse_StreamLondon000000002",
    ]
    assert events[-1].result.output == "Paris is sunny at 22C; London has light rain at 14C."


@pytest.mark.parametrize("mode", MODES)
async def test_exception_frame_in_stream_is_typed_and_retried(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["stream_exception"]
    scenario = replace(scenario, kwargs={**scenario.kwargs, "stream_retry": "restart"})
    with cassette(scenario.cassette):
        events = await stream(mode, scenario)
    final = events[-1].result
    failure = final.failures[0].error
    assert isinstance(failure, OverloadedError)
    assert (failure.code, failure.retryable, failure.status) == (
        "ModelStreamErrorException",
        True,
        424,
    )
    assert "stopped producing output" in str(failure)
    # The caller saw "Hel", was told the answer restarts, then got the whole retried one.
    restart = next(i for i, e in enumerate(events) if isinstance(e, StreamRestarted))
    assert "".join(e.text for e in events[:restart] if isinstance(e, TextDelta)) == "Hel"
    assert "".join(e.text for e in events[restart:] if isinstance(e, TextDelta)) == "Hello!"
    assert final.output == "Hello!"


@pytest.mark.parametrize("mode", MODES)
async def test_validation_exception_is_permanent(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["error_validation"]
    with cassette(scenario.cassette) as cass, pytest.raises(BadRequestError) as info:
        await run(mode, scenario, runtime(scenario, max_retries=3))
    assert len(cass.requests) == 1  # never retried
    assert request_json(cass)["inferenceConfig"] == {"maxTokens": 100000}
    err = info.value
    assert (err.status, err.retryable, err.provider, err.code) == (
        400,
        False,
        "bedrock",
        "ValidationException",
    )
    assert "exceeds the model limit" in str(err)


@pytest.mark.parametrize("mode", MODES)
async def test_throttling_exception_is_retried(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["error_throttling"]
    delays: list[float] = []
    with cassette(scenario.cassette):
        result = await run(mode, scenario, runtime(scenario, delays))
    assert delays == [0.5]  # no retry-after from Bedrock: llmport's backoff
    failure = result.failures[0].error
    assert isinstance(failure, RateLimitError)
    assert (failure.status, failure.code, failure.retryable) == (429, "ThrottlingException", True)
    assert result.output == "Hello! How can I help you today?"
    assert result.attempts == 2


@pytest.mark.parametrize("mode", MODES)
async def test_throttling_on_every_attempt_raises_exec_failed(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["error_throttling"]
    with cassette(scenario.cassette) as cass:
        cass.data = cass.data[:1]  # only the 429 is needed: one attempt allowed
        with pytest.raises(ExecFailed) as info:
            await run(mode, scenario, runtime(scenario, max_retries=1))
    assert isinstance(info.value.last_error, RateLimitError)
    assert "Attempt 1: RateLimitError: bedrock 429 ThrottlingException: Too many requests" in str(
        info.value
    )
