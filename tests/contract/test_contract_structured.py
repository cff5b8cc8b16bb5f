"""Structured output: each vendor's native mechanism, validation, one repair round."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from llmport import Runtime
from llmport.testing.loopback import LoopbackServer
from support.api_modes import MODES, run_via
from wire import TARGETS, Wire, profile_modes

CASES = profile_modes(TARGETS, MODES)  # each built-in profile in one mode
each_case = pytest.mark.parametrize(("wire", "mode"), CASES, ids=[f"{w}-{m}" for w, m in CASES])
each_stream = pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
Make = Callable[..., Runtime]

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
    "additionalProperties": False,
}
GOOD = '{"city": "Paris", "population": 2161000}'
BAD = '{"city": "Paris"}'  # misses a required field


def reply(wire: Wire, text: str, stream: bool) -> object:
    if stream:
        half = len(text) // 2
        return wire.stream_text_reply([text[:half], text[half:]])
    return wire.structured_reply(text)


@each_stream
@each_case
async def test_schema_goes_through_the_native_mechanism(
    wire: Wire, mode: str, stream: bool, runtime: Make
) -> None:
    with LoopbackServer([reply(wire, GOOD, stream)]) as server:
        result = await run_via(
            mode, runtime(wire, server), "Largest city?", response_format=SCHEMA, stream=stream
        )
        assert len(server.requests) == 1
    assert json.loads(result.output) == {"city": "Paris", "population": 2161000}
    sent = wire.structured_schema(server.requests[0].json())
    assert set(sent.get("properties", {})) == {"city", "population"}, sent


@each_stream
@each_case
async def test_invalid_reply_gets_one_repair_round(
    wire: Wire, mode: str, stream: bool, runtime: Make
) -> None:
    with LoopbackServer([reply(wire, BAD, stream), reply(wire, GOOD, stream)]) as server:
        result = await run_via(
            mode, runtime(wire, server), "Largest city?", response_format=SCHEMA, stream=stream
        )
        assert len(server.requests) == 2
    assert json.loads(result.output) == {"city": "Paris", "population": 2161000}
    for request in server.requests:
        wire.structured_schema(request.json())  # the repair request uses it too
