"""One output, whatever carries it.

A run with ``response_format`` ends with the same ``stop_reason`` ("end_turn":
the run ended with its output) and the same value whether the output
travels natively, through the output tool or through the prompt, run whole
or streamed, sync or async, on every vendor. Streamed, it also arrives as
``OutputDelta`` text and ``PartialOutput`` values, each a prefix of the final
value.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from llmport import FinalEvent, OutputDelta, PartialOutput, Runtime, UnsupportedFeatureError
from llmport.testing.loopback import LoopbackServer, Reply
from support.api_modes import MODES, events_via, run_via
from test_contract_structured import SCHEMA
from wire import TARGETS, Wire

Make = Callable[..., Runtime]
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

VALUE = {"city": "Paris", "population": 2161000}
TEXT = json.dumps(VALUE)
#: The output tool of SCHEMA (``output_mode="tool"``) is named after the response format.
OUTPUT_TOOL = "response"

#: output_mode given -> how the vendor answers: as text, or as a call to the output tool.
#: "forced" is the plugins' own output tool: no output_mode, on a model of the target
#: without native structured output (FORCED_MODELS), which the plugin answers through
#: a forced tool of its own.
OUTPUT_MODES: dict[str | None, str] = {
    None: "text",
    "native": "text",
    "prompted": "text",
    "tool": "tool",
    "forced": "tool",
}
#: Targets whose plugin has its own forced output tool, and a model that uses it.
FORCED_MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-20250514",
    "bedrock": "bedrock:us.anthropic.claude-3-7-sonnet-20250219-v1:0",
}
#: (target, output_mode) the vendor cannot do, refused typed before any request
#: (tested with the profile's refusals), and why.
REFUSED = {
    ("deepseek", "native"): "DeepSeek has JSON mode, no json_schema response format",
}
CASES = [
    (wire, mode)
    for wire in TARGETS
    for mode in OUTPUT_MODES
    if (mode != "forced" or wire.id in FORCED_MODELS) and (wire.id, mode) not in REFUSED
]
each_case = pytest.mark.parametrize(("wire", "output_mode"), CASES, ids=str)
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


def options(wire: Wire, output_mode: str | None) -> dict[str, Any]:
    given: dict[str, Any] = {"response_format": SCHEMA}
    if output_mode == "forced":
        given["model"] = FORCED_MODELS[wire.id]
    elif output_mode is not None:
        given["output_mode"] = output_mode
    return given


@each_stream
@each_api
@each_case
async def test_every_output_mode_ends_the_run_with_the_same_stop_reason_and_value(
    wire: Wire, output_mode: str | None, api: str, stream: bool, runtime: Make
) -> None:
    with LoopbackServer([answer(wire, output_mode, stream)]) as server:
        result = await run_via(
            api, runtime(wire, server), "Largest city?", stream=stream, **options(wire, output_mode)
        )
        assert len(server.requests) == 1
    if output_mode == "forced":  # the plugin's own tool, not the vendor's native format
        body = server.requests[0].json()
        assert "output_config" not in body and "outputConfig" not in body, body
        assert wire.structured_schema(body)["properties"] == SCHEMA["properties"]
    assert result.stop_reason == "end_turn"
    assert result.value == VALUE
    assert json.loads(result.output) == VALUE


def arrives_whole(wire: Wire, output_mode: str | None) -> bool:
    """Whether the output reaches the caller in one piece: a call-only plugin's whole
    answer replayed, or a Gemini function call (Gemini streams calls whole)."""
    return wire.id == "callonly" or (wire.api == "gemini" and OUTPUT_MODES[output_mode] == "tool")


def is_prefix(partial: Any, final: Any) -> bool:
    """Whether ``partial`` is what ``final`` looked like while it arrived.

    A string is a prefix of the final string; a list has the final list's
    leading items, each a prefix of its own (the last may be cut short); an
    object has some of the final object's keys, each value a prefix of its
    own; anything else (numbers, booleans, null) is complete or absent.
    """
    if isinstance(partial, str):
        return isinstance(final, str) and final.startswith(partial)
    if isinstance(partial, list):
        return (
            isinstance(final, list)
            and len(partial) <= len(final)
            and all(is_prefix(p, f) for p, f in zip(partial, final, strict=False))
        )
    if isinstance(partial, dict):
        return isinstance(final, dict) and all(
            key in final and is_prefix(value, final[key]) for key, value in partial.items()
        )
    return type(partial) is type(final) and partial == final


def test_prefix_is_what_a_value_looks_like_while_it_arrives() -> None:
    final = {"city": "Paris", "tags": ["a", "bc"], "n": 12, "ok": True}
    for partial in ({}, {"city": "Pa"}, {"city": "Paris", "tags": ["a", "b"]}, final):
        assert is_prefix(partial, final), partial
    not_prefixes = (
        {"city": "Px"},
        {"town": "Paris"},
        {"n": 1},
        {"tags": ["a", "bc", "d"]},
        {"ok": 1},
        [],
        "Paris",
    )
    for partial in not_prefixes:
        assert not is_prefix(partial, final), partial


@each_api
@each_case
async def test_streamed_output_arrives_as_json_text_and_partial_values_that_prefix_the_final(
    wire: Wire, output_mode: str | None, api: str, runtime: Make
) -> None:
    with LoopbackServer([answer(wire, output_mode, True, pieces=7)]) as server:
        events = await events_via(
            api, runtime(wire, server), "Largest city?", **options(wire, output_mode)
        )
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.value == VALUE
    assert final.result.stop_reason == "end_turn"
    deltas = [e.text for e in events if isinstance(e, OutputDelta)]
    assert json.loads("".join(deltas)) == VALUE
    partials = [e.value for e in events if isinstance(e, PartialOutput)]
    assert partials, "no PartialOutput"
    if not arrives_whole(wire, output_mode):  # the value grows as the output arrives
        assert len(partials) > 2, partials
    for partial in partials:
        assert is_prefix(partial, VALUE), partial
    assert partials[-1] == VALUE
    assert all(a != b for a, b in itertools.pairwise(partials)), "unchanged value sent"


@each_api
@pytest.mark.parametrize(("target", "output_mode"), list(REFUSED), ids=str)
async def test_an_output_mode_the_vendor_lacks_is_refused_before_any_request(
    target: str, output_mode: str, api: str, runtime: Make
) -> None:
    (wire,) = [w for w in TARGETS if w.id == target]
    with LoopbackServer([answer(wire, output_mode, False)]) as server:
        with pytest.raises(UnsupportedFeatureError, match=output_mode):
            await run_via(api, runtime(wire, server), "Largest city?", **options(wire, output_mode))
        assert server.requests == []


# --- a hostile model: deep nesting, non-finite and unreadable numbers -----------

#: The placeholder the hostile JSON replaces in a reply built by the wire (the wires
#: serialize replies with json.dumps, which cannot write these values).
PLACEHOLDER = "__HOSTILE__"
NUMBER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "number"}},
    "required": ["city", "population"],
}
HOSTILE_VALUES = {
    "nested-3000": "[" * 3000 + "]" * 3000,
    "nan": "NaN",
    "infinity": "Infinity",
    "minus-infinity": "-Infinity",
    "1e400": "1e400",
    "5000-digits": "9" * 5000,
}


def hostile_reply(wire: Wire, output_mode: str | None, stream: bool, raw: str) -> Reply:
    """The vendor's answer whose output's ``population`` is the JSON text ``raw``."""
    from llmport.testing.loopback import sse_bytes

    value = {"city": "Paris", "population": PLACEHOLDER}
    if OUTPUT_MODES[output_mode] == "tool":
        text = json.dumps(value)
        reply = (
            wire.stream_tool_call_reply(OUTPUT_TOOL, [text], "call_output_1")
            if stream
            else wire.tool_call_reply(OUTPUT_TOOL, value, "call_output_1")
        )
    else:
        text = json.dumps(value)
        reply = wire.stream_text_reply([text]) if stream else wire.structured_reply(text)
    if reply.sse is not None:
        body, reply.sse = sse_bytes(reply.sse).decode(), None
    elif reply.json is not None:
        body, reply.json = json.dumps(reply.json), None
    else:
        raise AssertionError(f"{wire.id}: a binary reply cannot carry raw JSON")
    # In an object the placeholder is a JSON string; inside a JSON string, an escaped one.
    body = body.replace(f'"{PLACEHOLDER}"', raw).replace(f'\\"{PLACEHOLDER}\\"', raw)
    reply.body = body.encode()
    if stream:
        reply.headers = {**reply.headers, "content-type": "text/event-stream"}
    return reply


#: Bedrock streams AWS event-stream frames (each checksummed): no raw text goes in.
HOSTILE_CASES = [
    (wire, mode, stream)
    for wire, mode in CASES
    for stream in (False, True)
    if not (stream and wire.id == "bedrock")
]


@pytest.mark.parametrize("raw", list(HOSTILE_VALUES.values()), ids=list(HOSTILE_VALUES))
@pytest.mark.parametrize(
    ("wire", "output_mode", "stream"),
    HOSTILE_CASES,
    ids=[f"{w}-{m}-{'stream' if s else 'whole'}" for w, m, s in HOSTILE_CASES],
)
async def test_output_that_is_not_finite_json_is_refused_typed_in_every_mode(
    wire: Wire, output_mode: str | None, stream: bool, raw: str, runtime: Make
) -> None:
    """Never a raw RecursionError/ValueError, never NaN or inf as a "number": a typed error."""
    from invariant_checks import foreign_exceptions
    from llmport.errors import LlmportError

    reply = hostile_reply(wire, output_mode, stream, raw)
    given = {**options(wire, output_mode), "response_format": NUMBER_SCHEMA}
    with LoopbackServer([reply], repeat=True) as server:
        try:
            result = await run_via(
                "sync", runtime(wire, server), "Largest city?", stream=stream, **given
            )
        except LlmportError as exc:
            assert not foreign_exceptions(exc), foreign_exceptions(exc)
        else:
            raise AssertionError(f"a hostile output was accepted: {result.value!r}")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("raw", list(HOSTILE_VALUES.values()), ids=list(HOSTILE_VALUES))
async def test_tool_arguments_that_are_not_finite_json_never_reach_the_tool(
    raw: str, mode: str, stream: bool
) -> None:
    """The same values as a tool call's arguments: an error result for the model, no call."""
    from llmport import ToolCall, tool
    from llmport.testing import Script, call_tools

    ran: list[Any] = []

    @tool
    def count(population: float) -> str:
        """Count."""
        ran.append(population)
        return "counted"

    hostile = ToolCall("call_1", "count", {}, '{"population": ' + raw + "}")
    script = Script([call_tools(hostile), "done"])
    result = await run_via(mode, script.runtime(), "q", tools=[count], stream=stream)
    assert ran == []
    assert [c.status for c in result.tool_calls] == ["invalid_arguments"]
    assert "not valid JSON" in result.tool_calls[0].result.content


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("raw", list(HOSTILE_VALUES.values()), ids=list(HOSTILE_VALUES))
async def test_a_choice_read_from_text_that_is_not_finite_json_is_a_decision_error(
    raw: str, mode: str
) -> None:
    """A model without native tools picks in text: the same values there are a DecisionError."""
    from llmport import DecisionError

    def answer(content: Any, model: str, response_format: Any) -> str:
        return '{"choice": "a", "arguments": {"x": ' + raw + "}}"

    rt = Runtime(call=answer)
    with pytest.raises(DecisionError, match="not JSON"):
        await run_via(mode, rt, "pick", choices={"a": lambda x: x, "b": 2})
