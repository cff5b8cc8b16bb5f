"""One output, whatever carries it (SPEC §21 Output modes, §23 Streaming structured output).

A run with ``response_format`` ends with the same ``stop_reason`` ("end_turn":
the run ended with its output) and the same value whether the output
travels natively, through the output tool or through the prompt, run whole
or streamed, sync or async, on every vendor. Streamed, it also arrives as
``OutputDelta`` text and ``PartialOutput`` values, each a prefix of the final
value.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from api_modes import MODES, run_via
from llmport import Runtime
from llmport.testing.loopback import LoopbackServer, Reply
from wire import TARGETS, Wire

Make = Callable[..., Runtime]

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
    "additionalProperties": False,
}
VALUE = {"city": "Paris", "population": 2161000}
TEXT = json.dumps(VALUE)
#: The output tool of SCHEMA (``output_mode="tool"``) is named after the response format.
OUTPUT_TOOL = "response"

#: output_mode given -> how the vendor answers: as text, or as a call to the output tool.
OUTPUT_MODES: dict[str | None, str] = {
    None: "text",
    "native": "text",
    "prompted": "text",
    "tool": "tool",
}
each_target = pytest.mark.parametrize("wire", TARGETS, ids=str)
each_output_mode = pytest.mark.parametrize("output_mode", list(OUTPUT_MODES), ids=str)
each_api = pytest.mark.parametrize("api", MODES)
each_stream = pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])


def answer(wire: Wire, output_mode: str | None, stream: bool, pieces: int = 2) -> Reply:
    """The vendor's reply carrying TEXT in ``pieces`` fragments (when streamed)."""
    step = -(-len(TEXT) // pieces)
    chunks = [TEXT[i : i + step] for i in range(0, len(TEXT), step)]
    if OUTPUT_MODES[output_mode] == "tool":
        if stream:
            return wire.stream_tool_call_reply(OUTPUT_TOOL, chunks, "call_output_1")
        return wire.tool_call_reply(OUTPUT_TOOL, VALUE, "call_output_1")
    return wire.stream_text_reply(chunks) if stream else wire.structured_reply(TEXT)


def options(output_mode: str | None) -> dict[str, Any]:
    given: dict[str, Any] = {"response_format": SCHEMA}
    if output_mode is not None:
        given["output_mode"] = output_mode
    return given


@each_stream
@each_api
@each_output_mode
@each_target
async def test_every_output_mode_ends_the_run_with_the_same_stop_reason_and_value(
    wire: Wire, output_mode: str | None, api: str, stream: bool, runtime: Make
) -> None:
    with LoopbackServer([answer(wire, output_mode, stream)]) as server:
        result = await run_via(
            api, runtime(wire, server), "Largest city?", stream=stream, **options(output_mode)
        )
        assert len(server.requests) == 1
    assert result.stop_reason == "end_turn"
    assert result.value == VALUE
    assert json.loads(result.output) == VALUE
