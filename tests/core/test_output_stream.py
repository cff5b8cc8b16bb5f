"""Streamed structured output read as it arrives (llmport.output.streaming, SPEC §23)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from llmport import OutputDelta, PartialOutput, TextDelta
from llmport.messages.types import ToolCallDelta
from llmport.output.streaming import OutputStream
from llmport.output.structured import OutputTool


def partials(stream: OutputStream, pieces: list[str]) -> list[Any]:
    events = [e for piece in pieces for e in stream.text(piece)]
    assert "".join(e.text for e in events if isinstance(e, OutputDelta)) in "".join(pieces)
    return [e.value for e in events if isinstance(e, PartialOutput)]


def test_a_number_at_the_end_waits_until_it_is_complete() -> None:
    got = partials(OutputStream(None), ['{"n": 21', "61000", ', "s": "ab', 'c"}'])
    assert got == [{}, {"n": 2161000, "s": "ab"}, {"n": 2161000, "s": "abc"}]


def test_an_unchanged_value_is_not_sent_again() -> None:
    got = partials(OutputStream(None), ['{"a": "x"', " ", " ", "}"])
    assert got == [{"a": "x"}]


def test_a_code_fence_is_read_past() -> None:
    got = partials(OutputStream(None), ["```", "json\n", '{"a": "b', '"}\n```'])
    assert got == [{"a": "b"}]


def test_prose_is_not_output() -> None:
    stream = OutputStream(None)
    assert stream.text("Let me check. ") == []
    assert stream.text('{"a": 1}') == []


def test_a_retry_starts_a_new_output() -> None:
    stream = OutputStream(None)
    assert partials(stream, ['{"a": "x"}']) == [{"a": "x"}]
    stream.reset()
    assert partials(stream, ['{"a": "x"}']) == [{"a": "x"}]


def test_only_the_output_tools_fragments_carry_output() -> None:
    stream = OutputStream(OutputTool("response", wrapped=True))
    assert stream.text('{"a": 1}') == []
    events = [
        *stream.call(ToolCallDelta(0, '{"q": "other"}', "c0", "lookup")),
        *stream.call(ToolCallDelta(1, "", "c1", "response")),
        *stream.call(ToolCallDelta(1, '{"value": ["x", "y')),
        *stream.call(ToolCallDelta(1, '"]}')),
    ]
    assert [e.text for e in events if isinstance(e, OutputDelta)] == ['{"value": ["x", "y', '"]}']
    # A non-object schema travels wrapped: the partial value is the unwrapped one.
    assert [e.value for e in events if isinstance(e, PartialOutput)] == [["x", "y"]]


def test_stream_events_round_trip_through_json() -> None:
    for event in (TextDelta("hi", key="1:0"), OutputDelta('{"a'), PartialOutput({"a": [1]})):
        data = json.loads(json.dumps(dataclasses.asdict(event)))
        assert type(event)(**data) == event
