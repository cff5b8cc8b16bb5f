"""response_format: checked, sent natively, validated, repaired once; vendor-subset helpers."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any, TypedDict

import pydantic
import pytest
from llmport.errors import SchemaError, StructuredOutputError
from llmport.messages.types import ResponseFormat
from llmport.output.structured import drop_keywords, inline_refs, schema_tool
from llmport.testing import Script, call_tools
from llmport.tools.tool import tool

Run = Callable[..., Any]
CITY = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "pop": {"type": "integer"}},
    "required": ["name", "pop"],
}


class City(pydantic.BaseModel):
    name: str
    pop: int


@dataclasses.dataclass
class CityDC:
    name: str
    pop: int


class CityTD(TypedDict):
    name: str
    pop: int


def test_schema_is_sent_natively_and_json_text_returned(run: Run, execute: Run) -> None:
    script = Script(['{"name": "Oslo", "pop": 700000}'])
    result = run(script.runtime(), "go", response_format=CITY)
    assert result.output == '{"name": "Oslo", "pop": 700000}'
    assert result.value == {"name": "Oslo", "pop": 700000}
    rf = script.requests[0].response_format
    assert isinstance(rf, ResponseFormat) and rf.schema == CITY and rf.strict
    script = Script(['```json\n{"name": "Oslo", "pop": 1}\n```'])
    assert execute(script.runtime(), "go", response_format=CITY) == '{"name": "Oslo", "pop": 1}'


def test_json_schema_wrapper(run: Run) -> None:
    wrapper = {
        "type": "json_schema",
        "json_schema": {"name": "city info", "schema": CITY, "strict": False},
    }
    script = Script(['{"name": "Oslo", "pop": 1}'])
    run(script.runtime(), "go", response_format=wrapper)
    rf = script.requests[0].response_format
    assert rf is not None and rf.name == "city_info" and rf.strict is False and rf.schema == CITY


@pytest.mark.parametrize("cls", [City, CityDC, CityTD], ids=["pydantic", "dataclass", "typeddict"])
def test_classes_as_response_format(run: Run, cls: Any) -> None:
    script = Script(['{"name": "Oslo", "pop": 1}'])
    result = run(script.runtime(), "go", response_format=cls)
    assert script.requests[0].response_format.schema["required"] == ["name", "pop"]
    assert result.output == '{"name": "Oslo", "pop": 1}'
    if cls is CityTD:
        assert result.value == {"name": "Oslo", "pop": 1}
    else:
        assert result.value == cls(name="Oslo", pop=1)


@pytest.mark.parametrize("bad", [{"type": "strnig"}, {"properties": 3}, "not a schema"])
def test_invalid_schema_fails_before_any_request(run: Run, bad: Any) -> None:
    script = Script(["never"])
    with pytest.raises(SchemaError):
        run(script.runtime(), "go", response_format=bad)
    assert script.requests == []


def test_one_repair_round(run: Run) -> None:
    script = Script(['{"name": "Oslo"}', '{"name": "Oslo", "pop": 5}'])
    result = run(script.runtime(), "go", response_format=CITY)
    assert result.value == {"name": "Oslo", "pop": 5}
    repair = script.requests[1].messages[-1].text
    assert "'pop' is a required property" in repair
    assert script.requests[1].response_format is not None and script.requests[1].tools == []


def test_structured_output_error_after_the_repair(run: Run) -> None:
    script = Script(["not json", '{"name": 1, "pop": "x"}', "unused"])
    with pytest.raises(StructuredOutputError) as info:
        run(script.runtime(), "go", response_format=CITY)
    assert len(script.requests) == 2
    assert any("name: 1 is not of type 'string'" in e for e in info.value.errors)
    assert info.value.text == '{"name": 1, "pop": "x"}'


def test_pydantic_validator_stricter_than_schema_gets_repaired(run: Run) -> None:
    class Positive(pydantic.BaseModel):
        n: int

        @pydantic.field_validator("n")
        @classmethod
        def positive(cls, v: int) -> int:
            if v <= 0:
                raise ValueError("must be positive")
            return v

    script = Script(['{"n": -1}', '{"n": 2}'])
    assert run(script.runtime(), "go", response_format=Positive).value == Positive(n=2)
    assert "must be positive" in script.requests[1].messages[-1].text


def test_tools_then_structured_answer(run: Run) -> None:
    @tool
    def population(city: str) -> int:
        return 700000

    script = Script(
        [call_tools(("population", {"city": "Oslo"})), '{"name": "Oslo", "pop": 700000}']
    )
    result = run(script.runtime(), "go", tools=[population], response_format=CITY)
    assert result.value["pop"] == 700000 and len(result.tool_calls) == 1


# --- vendor subset helpers ------------------------------------------------------------------

NESTED = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "nick": {"type": "string", "default": "x"},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "home": {"$ref": "#/$defs/Place", "description": "Where they live"},
        "work": {"$ref": "#/$defs/Place"},
        "kind": {"enum": ["a", "b"]},
        "either": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
    },
    "required": ["name", "home"],
    "$defs": {
        "Place": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": ["string", "integer"]}},
            "required": ["city"],
        }
    },
}


def test_inline_refs_and_drop_keywords() -> None:
    flat = inline_refs(NESTED)
    assert "$defs" not in flat and "$ref" not in json.dumps(flat)
    assert flat["properties"]["work"]["properties"]["city"] == {"type": "string"}
    recursive = {
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}},
    }
    with pytest.raises(SchemaError, match="recursive"):
        inline_refs(recursive)
    dropped = drop_keywords(
        {"type": "object", "properties": {"default": {"type": "string", "default": "a"}}},
        {"default"},
    )
    assert dropped == {"type": "object", "properties": {"default": {"type": "string"}}}


def test_schema_tool() -> None:
    spec = schema_tool(ResponseFormat(CITY, name="city"))
    assert spec.name == "city" and spec.parameters == CITY
    wrapped = schema_tool(ResponseFormat({"type": "array"}, name="xs"))
    assert wrapped.parameters["required"] == ["value"]


def test_make_output_tool_names_apart_and_unwraps() -> None:
    from llmport.output.structured import OutputTool, make_output_tool

    rf = ResponseFormat({"type": "array", "items": {"type": "integer"}}, name="numbers")
    tool, spec = make_output_tool(rf, taken={"numbers"}, default_description="Answer here.")
    assert tool == OutputTool("numbers_output", wrapped=True)
    assert spec.name == "numbers_output" and spec.description == "Answer here."
    assert spec.parameters["properties"]["value"] == rf.schema
    assert tool.reply_text({"value": [1, 2]}) == "[1, 2]"
    plain, plain_spec = make_output_tool(ResponseFormat(CITY, name="city"))
    assert not plain.wrapped and plain_spec.parameters == CITY
    assert plain.reply_text({"name": "Oslo"}) == '{"name": "Oslo"}'
