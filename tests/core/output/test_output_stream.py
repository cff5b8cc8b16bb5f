"""Streamed structured output read as it arrives (llmport.output.streaming)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from llmport import FinalEvent, OutputDelta, PartialOutput, TextDelta
from llmport.messages.types import ToolCallDelta
from llmport.output.streaming import ForcedToolText, OutputStream
from llmport.output.structured import OutputTool
from llmport.testing import Script

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
}


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
    got = partials(OutputStream(None), ["``", "`json", "\n", '{"a": "b', '"}\n```'])
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


def test_a_long_output_is_parsed_less_often_and_its_end_gives_the_whole_value() -> None:
    value = {"items": [{"name": f"item {i}", "n": i} for i in range(200)]}
    text = json.dumps(value)
    stream = OutputStream(None)
    events = [e for i in range(0, len(text), 10) for e in stream.text(text[i : i + 10])]
    deltas = [e for e in events if isinstance(e, OutputDelta)]
    values = [e.value for e in events if isinstance(e, PartialOutput)]
    assert "".join(d.text for d in deltas) == text
    assert 10 < len(values) < len(deltas) / 4  # not one parse of the whole text per delta
    (last,) = stream.flush()
    assert isinstance(last, PartialOutput) and last.value == value
    assert stream.flush() == []


def test_a_streamed_run_ends_its_partial_values_with_the_whole_output() -> None:
    value = {"city": "Paris " * 300, "population": 2161000}
    script = Script([json.dumps(value)])
    events = list(script.runtime().stream("Largest city?", response_format=SCHEMA))
    values = [e.value for e in events if isinstance(e, PartialOutput)]
    assert values[-1] == value
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.result.value == value


def test_a_repair_round_streams_its_output_from_the_start() -> None:
    bad, good = {"city": "Paris"}, {"city": "Paris", "population": 2161000}
    script = Script([json.dumps(bad), json.dumps(good)])
    events = list(script.runtime().stream("Largest city?", response_format=SCHEMA))
    values = [e.value for e in events if isinstance(e, PartialOutput)]
    assert values == [{}, bad, {}, {"city": "Paris"}, good]
    assert len(script.requests) == 2


def test_a_plugins_forced_tool_sends_an_objects_json_as_it_arrives() -> None:
    text = ForcedToolText(OutputTool("response", wrapped=False))
    assert [text.fragment(p) for p in ('{"a": ', "", '"b"}')] == ['{"a": ', "", '"b"}']
    assert text.end() == ""


def test_a_plugins_forced_tool_sends_a_wrapped_value_whole_at_its_end() -> None:
    text = ForcedToolText(OutputTool("response", wrapped=True))
    assert [text.fragment(p) for p in ('{"value": ', "[1, 2]}")] == ["", ""]
    assert text.end() == "[1, 2]"


def test_a_plugins_forced_tool_without_arguments_answers_an_empty_object() -> None:
    assert ForcedToolText(OutputTool("response", wrapped=False)).end() == "{}"
