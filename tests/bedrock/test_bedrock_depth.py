"""Vendor depth on Bedrock: reasoning, caching, native tools, files in tool
results, citations and CountTokens, against cassettes (sync, async and streamed).

The conftest matcher requires every request body to be JSON-equal to the cassette's; the
tests also assert the parts of the bodies each feature is about, and what the caller gets.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from llmport import FinalEvent, RunResult, TextDelta
from llmport.messages.types import (
    Citation,
    CitationEvent,
    Message,
    ServerToolCall,
    ServerToolEvent,
    ServerToolResult,
    TextBlock,
    ThinkingBlock,
    ThinkingDelta,
)
from llmport_bedrock.plugin import provider_info
from llmport_bedrock.provider import BedrockProvider
from support.bedrock_scenarios import (
    CREDENTIALS,
    DATA,
    POLICY,
    REGION,
    SCENARIOS,
    SONNET_4,
    STREAM_SIGNATURE,
    STREAM_THINKING,
    SYSTEM_LONG,
    THINKING_SIGNATURE,
    THINKING_TEXT,
    Scenario,
)
from support.cassette_support import request_json
from test_bedrock_cassettes import MODES, run, stream


async def final(mode: str, scenario: Scenario) -> tuple[list[Any], RunResult[Any]]:
    events = await stream(mode, scenario)
    last = events[-1]
    assert isinstance(last, FinalEvent)
    return events, last.result


def assistant(result: RunResult[Any], n: int = 0) -> Message:
    return [m for m in result.messages if m.role == "assistant"][n]


# --- reasoning ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_claude_thinking_tool_loop_echoes_reasoning_content(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["reasoning_tool_loop"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    first, second = request_json(cass, 0), request_json(cass, 1)
    thinking = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    assert first["additionalModelRequestFields"] == thinking
    assert second["additionalModelRequestFields"] == thinking
    # The second request carries the first turn's reasoningContent exactly as received,
    # before the text and the toolUse (wire-samples/bedrock/reasoning-tool-loop.json).
    assert second["messages"][1] == {
        "role": "assistant",
        "content": [
            {
                "reasoningContent": {
                    "reasoningText": {"text": THINKING_TEXT, "signature": THINKING_SIGNATURE}
                }
            },
            {"text": "I'll need to check what country you're from to answer that question."},
            {
                "toolUse": {
                    "toolUseId": "tooluse_W9DaUFg4Tj2cRPpndqxWSg",
                    "name": "get_user_country",
                    "input": {},
                }
            },
        ],
    }
    assert second["messages"][2]["content"][0]["toolResult"]["content"] == [{"text": "Mexico"}]
    assert assistant(result).blocks[0] == ThinkingBlock(
        THINKING_TEXT, THINKING_SIGNATURE, vendor="bedrock"
    )
    assert result.thinking == THINKING_TEXT
    assert result.output.startswith("Based on your location in Mexico")


@pytest.mark.parametrize("mode", MODES)
async def test_streamed_thinking_is_assembled_and_echoed(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["reasoning_stream"]
    with cassette(scenario.cassette) as cass:
        events, result = await final(mode, scenario)
    deltas = [e for e in events if isinstance(e, ThinkingDelta)]
    assert [d.text for d in deltas if d.text] == STREAM_THINKING
    assert [d.signature for d in deltas if d.signature] == [STREAM_SIGNATURE]
    assert {d.vendor for d in deltas} == {"bedrock"}
    # reasoning="minimal" -> the smallest Claude budget.
    assert request_json(cass, 0)["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 1024}
    }
    echoed = request_json(cass, 1)["messages"][1]["content"][0]
    assert echoed == {
        "reasoningContent": {
            "reasoningText": {"text": "".join(STREAM_THINKING), "signature": STREAM_SIGNATURE}
        }
    }
    assert result.output == "Mexico City is the largest city in Mexico."


@pytest.mark.parametrize("mode", MODES)
async def test_nova_2_reasoning_config(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["reasoning_nova"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    assert request_json(cass)["additionalModelRequestFields"] == {
        "reasoningConfig": {"type": "enabled", "maxReasoningEffort": "high"}
    }
    assert assistant(result).blocks == (
        ThinkingBlock("[REDACTED]", vendor="bedrock"),
        TextBlock("No: 221 = 13 x 17."),
    )
    assert result.output == "No: 221 = 13 x 17."


# --- prompt caching ----------------------------------------------------------------------------


CACHE_POINT = {"cachePoint": {"type": "default"}}


def assert_cache_points(body: dict[str, Any]) -> None:
    """The cachePoint placement of wire-samples/bedrock/prompt-cache.json."""
    assert body["system"] == [{"text": SYSTEM_LONG}, CACHE_POINT]
    content = body["messages"][0]["content"]
    assert [next(iter(b)) for b in content] == [
        "text",
        "document",
        "text",
        "cachePoint",
        "text",
        "cachePoint",
    ]
    assert content[1]["document"]["name"] == "Document 1"
    assert content[1]["document"]["format"] == "txt"
    assert content[2] == {"text": "\n"}
    assert body["toolConfig"]["tools"][-1] == CACHE_POINT
    assert [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"][:-1]] == [
        "catalog_lookup",
        "diagnostics",
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_cache_points_and_cache_write_usage(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["prompt_cache"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    assert_cache_points(request_json(cass))
    u = result.usage
    # Bedrock's inputTokens excludes cache reads and writes: input_tokens is the sum.
    assert (u.input_tokens, u.cache_write_tokens, u.cache_read_tokens) == (1324, 1322, 0)
    assert result.output == "21"


@pytest.mark.parametrize("mode", MODES)
async def test_streamed_cache_read_usage(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["prompt_cache_stream"]
    with cassette(scenario.cassette) as cass:
        _, result = await final(mode, scenario)
    assert_cache_points(request_json(cass))
    u = result.usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens) == (1324, 1322, 0)


# --- native tools ------------------------------------------------------------------------------


CALL_RAW = {
    "toolUse": {
        "toolUseId": "tooluse_dV5ehBNfl1hUE-UTM9cIww",
        "name": "nova_code_interpreter",
        "input": {"snippet": "1234 * 5678"},
        "type": "server_tool_use",
    }
}
RESULT_RAW = {
    "toolResult": {
        "toolUseId": "tooluse_dV5ehBNfl1hUE-UTM9cIww",
        "content": [{"json": {"stdOut": "7006652", "stdErr": "", "exitCode": 0, "isError": False}}],
        "type": "nova_code_interpreter_result",
        "status": "success",
    }
}


@pytest.mark.parametrize("mode", MODES)
async def test_nova_code_interpreter_blocks_are_echoed_verbatim(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["code_interpreter"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    first, second = request_json(cass, 0), request_json(cass, 1)
    assert first["toolConfig"]["tools"][-1] == {"systemTool": {"name": "nova_code_interpreter"}}
    # wire-samples/bedrock/native-code-interpreter.json: the server toolUse and toolResult go
    # back in the assistant turn as received, before the function tool's toolUse.
    assert second["messages"][1]["content"] == [
        CALL_RAW,
        RESULT_RAW,
        {
            "toolUse": {
                "toolUseId": "tooluse_DaRsVjwcShCI_3pOsIsWqg",
                "name": "final_result",
                "input": {"result": 7006652.0},
            }
        },
    ]
    call, outcome = assistant(result).blocks
    assert isinstance(call, ServerToolCall) and isinstance(outcome, ServerToolResult)
    assert (call.name, call.input, call.vendor) == (
        "nova_code_interpreter",
        {"snippet": "1234 * 5678"},
        "bedrock",
    )
    assert (outcome.name, outcome.content[0]["json"]["stdOut"]) == (
        "nova_code_interpreter",
        "7006652",
    )
    assert [c.call.name for c in result.tool_calls] == ["final_result"]  # server tools never run
    assert result.output == "1234 * 5678 = 7006652."


@pytest.mark.parametrize("mode", MODES)
async def test_streamed_code_interpreter_gives_server_tool_events(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["code_interpreter_stream"]
    with cassette(scenario.cassette) as cass:
        events, result = await final(mode, scenario)
    assert request_json(cass)["toolConfig"] == {
        "tools": [{"systemTool": {"name": "nova_code_interpreter"}}],
        "toolChoice": {"auto": {}},
    }
    call, outcome = (e.block for e in events if isinstance(e, ServerToolEvent))
    assert isinstance(call, ServerToolCall) and call.raw == CALL_RAW
    assert isinstance(outcome, ServerToolResult) and outcome.raw == RESULT_RAW
    assert result.tool_calls == []
    assert result.output == "1234 * 5678 = 7006652."


# --- files and media in tool results -------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_tool_result_image_and_json_blocks(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["tool_result_blocks"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    results = request_json(cass)["messages"][2]["content"]
    png = base64.b64encode((DATA / "kiwi.png").read_bytes()).decode()
    assert results == [
        {
            "toolResult": {
                "toolUseId": "tooluse_Camera00000000000001",
                "content": [
                    {"text": "Photo taken."},
                    {"image": {"format": "png", "source": {"bytes": png}}},
                    {"json": {"fruits": 1, "bowl": "blue"}},
                ],
                "status": "success",
            }
        },
        {"text": "Which fruit is in the bowl?"},
    ]
    assert result.output == "A kiwi, in a blue bowl."


@pytest.mark.parametrize("mode", MODES)
async def test_streamed_tool_result_blocks(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["tool_result_blocks_stream"]
    with cassette(scenario.cassette) as cass:
        _, result = await final(mode, scenario)
    content = request_json(cass)["messages"][2]["content"][0]["toolResult"]["content"]
    assert [next(iter(b)) for b in content] == ["text", "image", "json"]
    assert result.output == "A kiwi, in a blue bowl."


# --- citations ---------------------------------------------------------------------------------


POLICY_DOC = {
    "document": {
        "format": "txt",
        "name": "refund policy",
        "source": {"bytes": base64.b64encode(POLICY).decode()},
        "citations": {"enabled": True},
    }
}
EXPECTED_CITATION = Citation(
    "document",
    title="refund policy",
    cited_text="Customers may return any item within 30 days of delivery.",
    document_index=0,
    vendor="bedrock",
    extra={"location": {"documentChar": {"documentIndex": 0, "start": 15, "end": 73}}},
)


@pytest.mark.parametrize("mode", MODES)
async def test_document_citations(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["citations"]
    with cassette(scenario.cassette) as cass:
        result = await run(mode, scenario)
    assert request_json(cass)["messages"][0]["content"][0] == POLICY_DOC
    plain, cited = assistant(result).blocks
    assert plain == TextBlock("According to the policy, ")
    assert isinstance(cited, TextBlock) and cited.text == "you have 30 days to return an item."
    assert cited.citations == (EXPECTED_CITATION,)
    assert cited.citations[0].extra == EXPECTED_CITATION.extra
    assert result.output == "According to the policy, you have 30 days to return an item."


@pytest.mark.parametrize("mode", MODES)
async def test_streamed_citations(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["citations_stream"]
    with cassette(scenario.cassette) as cass:
        events, result = await final(mode, scenario)
    assert request_json(cass)["messages"][0]["content"][0] == POLICY_DOC
    assert [e.citation for e in events if isinstance(e, CitationEvent)] == [EXPECTED_CITATION]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == (
        "You have 30 days to return an item."
    )
    (block,) = assistant(result).blocks
    assert isinstance(block, TextBlock) and block.citations == (EXPECTED_CITATION,)


# --- CountTokens -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_count_tokens(mode: str, cassette: Any) -> None:
    scenario = SCENARIOS["count_tokens"]
    provider = BedrockProvider({**CREDENTIALS, "region": REGION}, provider_info())
    try:
        with cassette(scenario.cassette) as cass:
            request = scenario.kwargs["request"]
            if mode == "sync":
                count = provider.count_tokens(request)
            else:
                count = await provider.acount_tokens(request)
    finally:
        provider.close()
    assert count == 375
    # The base model id (no "us." prefix), as in wire-samples/bedrock/count-tokens.json.
    assert cass.requests[0].uri.endswith(
        "/model/anthropic.claude-sonnet-4-20250514-v1%3A0/count-tokens"
    )
    assert SONNET_4.startswith("us.")
    assert request_json(cass) == {
        "input": {
            "converse": {
                "messages": [
                    {"role": "user", "content": [{"text": "What is the weather in Paris?"}]}
                ],
                "toolConfig": {
                    "tools": [
                        {
                            "toolSpec": {
                                "name": "get_weather",
                                "inputSchema": {
                                    "json": {
                                        "type": "object",
                                        "properties": {"location": {"type": "string"}},
                                    }
                                },
                                "description": "Get the weather for a location",
                            }
                        }
                    ],
                    "toolChoice": {"auto": {}},
                },
            }
        }
    }
