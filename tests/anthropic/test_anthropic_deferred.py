"""Deferred tools and tool search on Anthropic, against cassettes.

wire-samples/anthropic/tool-search.json: two ``defer_loading`` tools and the bm25
tool search tool; the answer's ``server_tool_use`` / ``tool_search_tool_result``
blocks (with ``tool_reference`` entries) go back exactly in the next request.
Exec, async exec, stream and async stream; bodies compared whole.
"""

from __future__ import annotations

from typing import Any

import pytest
from llmport import RunResult, Runtime
from llmport.messages.types import FinalEvent, ServerToolCall, ServerToolResult, TextBlock
from support.anthropic_scenarios import SCENARIOS, Scenario
from support.cassette_support import request_json
from support.tool_search_data import RATE_SCHEMA, STOCK_SCHEMA

MODES = ["sync", "async", "stream", "astream"]
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

QUESTION = "What is the current USD to EUR exchange rate?"
TOOLS = [
    {
        "defer_loading": True,
        "description": "Look up the current exchange rate between two currencies.",
        "input_schema": RATE_SCHEMA,
        "name": "get_exchange_rate",
    },
    {
        "defer_loading": True,
        "description": "Look up stock price by ticker symbol.",
        "input_schema": STOCK_SCHEMA,
        "name": "stock_lookup",
    },
    {"name": "tool_search_tool_bm25", "type": "tool_search_tool_bm25_20251119"},
]
SEARCH_USE = {
    "id": "srvtoolu_01HYRS22QTaC1QoZzAv2QBFE",
    "input": {"limit": 5, "query": "USD EUR exchange rate currency conversion"},
    "name": "tool_search_tool_bm25",
    "type": "server_tool_use",
}
SEARCH_RESULT = {
    "content": {
        "tool_references": [{"tool_name": "get_exchange_rate", "type": "tool_reference"}],
        "type": "tool_search_tool_search_result",
    },
    "tool_use_id": "srvtoolu_01HYRS22QTaC1QoZzAv2QBFE",
    "type": "tool_search_tool_result",
}
ASSISTANT = [
    {"text": "I'll search for a tool that can provide currency exchange rates.", "type": "text"},
    SEARCH_USE,
    SEARCH_RESULT,
    {
        "text": "Perfect! I found a tool to get the exchange rate. "
        "Let me use it to find the current USD to EUR exchange rate.",
        "type": "text",
    },
    {
        "id": "toolu_016VSqyszw35EYg7XCuPZ8cg",
        "input": {"from_currency": "USD", "to_currency": "EUR"},
        "name": "get_exchange_rate",
        "type": "tool_use",
    },
]


def body(stream: bool, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The recorded request body (``stream`` as llmport sends it)."""
    return {
        "max_tokens": 4096,
        "messages": messages,
        "model": "claude-sonnet-4-5",
        "stream": stream,
        "tool_choice": {"type": "auto"},
        "tools": TOOLS,
    }


async def play(mode: str, cassette: Any) -> tuple[RunResult, Any]:
    scenario: Scenario = SCENARIOS[("stream_" if "stream" in mode else "") + "tool_search"]
    rt = Runtime(
        model=scenario.model,
        providers={"anthropic": {"api_key": "test-key", "base_url": "https://api.anthropic.com"}},
    )
    with cassette(scenario.cassette) as cass:
        if mode == "sync":
            result = rt.run(**scenario.kwargs)
        elif mode == "async":
            result = await rt.arun(**scenario.kwargs)
        else:
            events = (
                list(rt.stream(**scenario.kwargs))
                if mode == "stream"
                else [e async for e in rt.astream(**scenario.kwargs)]
            )
            assert isinstance(events[-1], FinalEvent)
            result = events[-1].result
    return result, cass


@pytest.mark.parametrize("mode", MODES)
async def test_deferred_tools_and_tool_search_match_the_recording(mode: str, cassette: Any) -> None:
    result, cass = await play(mode, cassette)
    stream = "stream" in mode
    user = {"content": [{"text": QUESTION, "type": "text"}], "role": "user"}
    assert request_json(cass, 0) == body(stream, [user])
    # The tool result's text goes as a string (the recording has the one-text-block list:
    # the same content to the API); everything else is the recorded body, field for field.
    rate = {
        "content": "1 USD = 0.92 EUR",
        "is_error": False,
        "tool_use_id": "toolu_016VSqyszw35EYg7XCuPZ8cg",
        "type": "tool_result",
    }
    second = [
        user,
        {"content": ASSISTANT, "role": "assistant"},
        {"content": [rate], "role": "user"},
    ]
    assert request_json(cass, 1) == body(stream, second)
    blocks = result.messages[1].blocks
    assert [type(b) for b in blocks] == [TextBlock, ServerToolCall, ServerToolResult, TextBlock]
    assert blocks[1].raw == SEARCH_USE and blocks[2].raw == SEARCH_RESULT
    assert result.output.startswith("The current exchange rate is **1 USD = 0.92 EUR**")
