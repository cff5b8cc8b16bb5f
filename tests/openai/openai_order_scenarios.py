"""Cassette scenarios for Responses item order and tool search.

* ``responses_interleaved*``: a reasoning model that reasons, calls, reasons
  again and calls again in one answer. The items are those of
  ``wire-samples/openai-responses/reasoning-tool-loop.json`` (reasoning item,
  ``function_call``), the pair repeated with new ids: no recording has two such
  pairs in one answer, and the order is what is tested.
* ``responses_tool_search*``: ``wire-samples/openai-responses/tool-search.json``
  (gpt-5.4, the hosted ``tool_search`` tool, two deferred function tools; its
  output items ``tool_search_call``, ``tool_search_output``, ``function_call``),
  both calls of the recording, with the request bodies it shows.
"""

from __future__ import annotations

import copy
from typing import Any

from llmport.messages.types import NativeTool, Reasoning
from llmport.testing.loopback import Reply
from llmport.tools.tool import Tool
from openai_depth_scenarios import (
    ENCRYPTED_3,
    PLAN_CALL,
    POEM,
    REASONING_PLAN,
    _msg,
    plan_tool,
    responses_sse,
)
from support.openai_scenarios import Scenario, message_item, ok, response_obj
from support.tool_search_data import (
    RATE_DESCRIPTION,
    RATE_SCHEMA,
    STOCK_DESCRIPTION,
    STOCK_SCHEMA,
    get_exchange_rate,
    stock_lookup,
)

REASONING_AGAIN = {
    "encrypted_content": ENCRYPTED_3,
    "id": "rs_68c42d3f0b6c8196a1d5e4c2f7b9a0130e8bc41441c948f6",
    "summary": [{"type": "summary_text", "text": "**Checking the plan**\n\nOne more step."}],
    "type": "reasoning",
}
PLAN_CALL_AGAIN = {
    "arguments": '{"plan":"4) Check every capital."}',
    "call_id": "call_Q2w8RbT1sLx0Vn4EkZ7yPc3M",
    "id": "fc_68c42d3fa1c88196b0e2f4d6a8c0e2f40e8bc41441c948f6",
    "name": "update_plan",
    "status": "completed",
    "type": "function_call",
}
#: One answer: reasoning, call, reasoning, call (the order the test holds).
INTERLEAVED = [REASONING_PLAN, PLAN_CALL, REASONING_AGAIN, PLAN_CALL_AGAIN]

# --- tool-search.json ---------------------------------------------------------------------

SEARCH_QUESTION = "What is the current USD to EUR exchange rate?"
RATE_TOOL = {
    "defer_loading": True,
    "description": RATE_DESCRIPTION,
    "name": "get_exchange_rate",
    "parameters": RATE_SCHEMA,
    "strict": True,
    "type": "function",
}
STOCK_TOOL = {
    "defer_loading": True,
    "description": STOCK_DESCRIPTION,
    "name": "stock_lookup",
    "parameters": STOCK_SCHEMA,
    "strict": True,
    "type": "function",
}
SEARCH_CALL = {
    "arguments": {"paths": ["get_exchange_rate"]},
    "call_id": None,
    "execution": "server",
    "id": "tsc_0ab095b1426acab50069f17095bdb481968dc6fe8187caa2e0",
    "status": "completed",
    "type": "tool_search_call",
}
SEARCH_OUTPUT = {
    "call_id": None,
    "execution": "server",
    "id": "tso_0ab095b1426acab50069f17095e2b08196922f617e9b78df21",
    "status": "completed",
    "tools": [RATE_TOOL],
    "type": "tool_search_output",
}
RATE_CALL = {
    "arguments": '{"from_currency":"USD","to_currency":"EUR"}',
    "call_id": "call_S3NEVtiFX40NHVwtLaoz5NRN",
    "id": "fc_0ab095b1426acab50069f170964d148196a5fba8b365a1bcbd",
    "name": "get_exchange_rate",
    "namespace": "get_exchange_rate",
    "status": "completed",
    "type": "function_call",
}
RATE_TEXT = "Current rate: **1 USD = 0.92 EUR**."


def search_tools() -> list[Any]:
    """The recording's two deferred tools (strict) and the hosted tool search."""
    return [
        NativeTool("tool_search"),
        Tool.from_schema(
            "get_exchange_rate",
            RATE_DESCRIPTION,
            RATE_SCHEMA,
            get_exchange_rate,
            strict=True,
            defer_loading=True,
        ),
        Tool.from_schema(
            "stock_lookup",
            STOCK_DESCRIPTION,
            STOCK_SCHEMA,
            stock_lookup,
            strict=True,
            defer_loading=True,
        ),
    ]


def _response(id: str, output: list[dict[str, Any]], usage: tuple[int, int, int, int]) -> Any:
    return response_obj(id, copy.deepcopy(output), usage=usage, model="gpt-5.4-2026-03-05")


def order_scenarios() -> list[Scenario]:
    interleaved_1 = response_obj(
        "resp_68c42d28772c819684459966ee2201ef",
        copy.deepcopy(INTERLEAVED),
        usage=(124, 1990, 0, 1840),
        model="gpt-5-2025-08-07",
    )
    interleaved_2 = response_obj(
        "resp_68c42d3fd6a08196bce23d6be960ff8c",
        [_msg("msg_68c42d408eec8196ae1c5883e07c093f", POEM)],
        usage=(2151, 124, 2048, 0),
        model="gpt-5-2025-08-07",
    )
    plan = lambda: dict(  # noqa: E731
        content='Compose a 6-line poem whose odd lines spell "SAM" and even lines "DAW".',
        tools=[plan_tool()],
        reasoning=Reasoning(effort="low", summary="detailed"),
    )
    search_1 = _response(
        "resp_0ab095b1426acab50069f17094fb68819692bd37a480ae58b6",
        [SEARCH_CALL, SEARCH_OUTPUT, RATE_CALL],
        (600, 47, 0, 21),
    )
    search_2 = _response(
        "resp_0ab095b1426acab50069f1709703248196a36772ba2573e387",
        [message_item("msg_0ab095b1426acab50069f17097664c819695bbe5dc82284705", RATE_TEXT)],
        (496, 18, 0, 0),
    )
    search = lambda: dict(content=SEARCH_QUESTION, tools=search_tools())  # noqa: E731
    interleaved_how = (
        "wire-samples/openai-responses/reasoning-tool-loop.json: its reasoning and "
        "function_call items, the pair repeated in one answer (new ids)"
    )
    search_how = "wire-samples/openai-responses/tool-search.json (both calls)"
    return [
        Scenario(
            "responses_interleaved",
            "openai-responses:gpt-5",
            plan,
            [ok(interleaved_1, "req_rorder01"), ok(interleaved_2, "req_rorder02")],
            how=interleaved_how,
        ),
        Scenario(
            "responses_interleaved_stream",
            "openai-responses:gpt-5",
            plan,
            [Reply(sse=responses_sse(interleaved_1)), Reply(sse=responses_sse(interleaved_2))],
            stream=True,
            how=interleaved_how + ", streamed in the event order of reasoning-stream.json",
        ),
        Scenario(
            "responses_tool_search",
            "openai-responses:gpt-5.4",
            search,
            [ok(search_1, "req_rsearch01"), ok(search_2, "req_rsearch02")],
            how=search_how,
        ),
        Scenario(
            "responses_tool_search_stream",
            "openai-responses:gpt-5.4",
            search,
            [Reply(sse=responses_sse(search_1)), Reply(sse=responses_sse(search_2))],
            stream=True,
            how=search_how + ", streamed in the event order of stream-text.json",
        ),
    ]
