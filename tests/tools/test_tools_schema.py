"""Schemas from type hints and docstrings, and arguments coerced back to types."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import importlib.util
import sys
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict, Union

import pydantic
import pytest
from llmport import RunContext, tool
from llmport.errors import SchemaError
from llmport.schema.build import coerce, function_schema, parse_docstring, type_schema


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Point:
    """A point on the plane."""

    x: float
    y: float = 0.0


class Address(TypedDict):
    street: str
    zip: NotRequired[str]


class Person(pydantic.BaseModel):
    name: str
    age: int = pydantic.Field(description="Age in years")


def test_simple_types_and_defaults() -> None:
    def f(a: str, b: int, c: float, d: bool, e: str = "x", f: int | None = None) -> None: ...

    s = function_schema(f).parameters
    assert s["properties"]["a"] == {"type": "string"}
    assert s["properties"]["b"] == {"type": "integer"}
    assert s["properties"]["c"] == {"type": "number"}
    assert s["properties"]["d"] == {"type": "boolean"}
    assert s["properties"]["e"] == {"type": "string", "default": "x"}
    assert s["properties"]["f"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}],
        "default": None,
    }
    assert s["required"] == ["a", "b", "c", "d"]
    assert s["additionalProperties"] is False


def test_literal_optional_union_containers_enum() -> None:
    def f(
        unit: Literal["c", "f"],
        maybe: Optional[str],  # noqa: UP045 - the old spelling must work too
        either: Union[int, str],  # noqa: UP007
        tags: list[str],
        counts: dict[str, int],
        pair: tuple[int, str],
        many: tuple[int, ...],
        unique: set[str],
        color: Color,
        anything: Any,
    ) -> None: ...

    p = function_schema(f).parameters["properties"]
    assert p["unit"] == {"type": "string", "enum": ["c", "f"]}
    assert p["maybe"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert p["either"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert p["tags"] == {"type": "array", "items": {"type": "string"}}
    assert p["counts"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert p["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert p["pair"]["minItems"] == p["pair"]["maxItems"] == 2
    assert p["many"] == {"type": "array", "items": {"type": "integer"}}
    assert p["unique"] == {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    assert p["color"] == {"type": "string", "enum": ["red", "blue"]}
    assert p["anything"] == {}


def test_nested_dataclass_typeddict_pydantic() -> None:
    def f(at: Point, home: Address, who: Person, path: list[Point]) -> None: ...

    s = function_schema(f).parameters
    at = s["properties"]["at"]
    assert at["type"] == "object" and at["required"] == ["x"]
    assert at["properties"]["y"] == {"type": "number", "default": 0.0}
    assert at["description"] == "A point on the plane."
    home = s["properties"]["home"]
    assert home["required"] == ["street"] and set(home["properties"]) == {"street", "zip"}
    who = s["properties"]["who"]
    assert who["properties"]["age"]["description"] == "Age in years"
    assert s["properties"]["path"]["items"]["title"] == "Point"


def test_recursive_dataclass_uses_defs() -> None:
    @dataclasses.dataclass
    class Node:
        name: str
        children: list[Node] = dataclasses.field(default_factory=list)

    schema = type_schema(Node)
    assert schema["$ref"] == "#/$defs/Node"
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}


def test_annotated_description_and_unhinted_default() -> None:
    def f(city: Annotated[str, "City name"], unit="c") -> None: ...

    p = function_schema(f).parameters["properties"]
    assert p["city"] == {"type": "string", "description": "City name"}
    assert p["unit"] == {"type": "string", "default": "c"}


def test_run_context_is_not_in_the_schema() -> None:
    @tool
    def lookup(ctx: RunContext[dict[str, str]], city: str) -> str:
        return city

    assert lookup.context_param == "ctx"
    assert list(lookup.parameters["properties"]) == ["city"]
    assert lookup.parameters["required"] == ["city"]


class Opaque:
    pass


def test_unsupported_type_is_an_error() -> None:
    def f(x: Opaque) -> None: ...

    with pytest.raises(SchemaError, match=r"f\(x\).*Opaque"):
        function_schema(f)


def test_local_types_resolve_through_the_tool_decorator() -> None:
    @dataclasses.dataclass
    class Local:
        n: int

    @tool
    def f(x: Local) -> int:
        return 1

    assert f.parameters["properties"]["x"]["properties"]["n"] == {"type": "integer"}
    assert f.bind({"x": {"n": 2}}, None) == {"x": Local(2)}


def test_bad_tool_name_rejected() -> None:
    with pytest.raises(ValueError, match="tool name"):
        tool(lambda: None, name="has space")


GOOGLE = """Get the weather.

    Looks it up in the cache first.

    Args:
        city (str): The city,
            with country.
        unit: Temperature unit.

    Returns:
        A sentence.
    """

NUMPY = """Get the weather.

    Parameters
    ----------
    city : str
        The city,
        with country.
    unit : str, optional
        Temperature unit.

    Returns
    -------
    str
        A sentence.
    """

SPHINX = """Get the weather.

    :param city: The city,
        with country.
    :param str unit: Temperature unit.
    :returns: A sentence.
    """


@pytest.mark.parametrize("doc", [GOOGLE, NUMPY, SPHINX], ids=["google", "numpy", "sphinx"])
def test_docstring_styles(doc: str) -> None:
    def weather(city: str, unit: str = "c") -> str:
        return city

    weather.__doc__ = doc
    found = function_schema(weather)
    assert found.parameters["properties"]["city"]["description"] == "The city, with country."
    assert found.parameters["properties"]["unit"]["description"] == "Temperature unit."
    assert found.description.startswith("Get the weather.")
    assert "Args" not in found.description and "Parameters" not in found.description
    assert "A sentence" not in found.description


def test_docstring_keeps_body_paragraphs() -> None:
    doc = parse_docstring(GOOGLE)
    assert doc.description == "Get the weather.\n\nLooks it up in the cache first."


MODULE = '''
import dataclasses
from typing import Literal, Optional
from llmport import RunContext, tool

@dataclasses.dataclass
class Box:
    """A box."""
    width: float
    label: Optional[str] = None

@tool
def pack(items: list[dict[str, int]], box: Box, mode: Literal["tight", "loose"] = "tight",
         note: str | None = None, ctx: RunContext[dict] = None) -> str:
    """Pack items.

    Args:
        items: What to pack.
        box: Where.
    """
    return "ok"
'''


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve their module's globals through sys.modules
    spec.loader.exec_module(module)
    return module


def test_future_annotations_do_not_change_the_schema(tmp_path: Path) -> None:
    plain = tmp_path / "plain_mod.py"
    future = tmp_path / "future_mod.py"
    plain.write_text(MODULE)
    future.write_text("from __future__ import annotations\n" + MODULE)
    try:
        a = _load(plain, "llmport_test_plain_mod").pack
        b = _load(future, "llmport_test_future_mod").pack
    finally:
        sys.modules.pop("llmport_test_plain_mod", None)
        sys.modules.pop("llmport_test_future_mod", None)
    assert isinstance(b.annotations["box"], type)  # resolved, not the string "Box"
    assert a.parameters == b.parameters
    assert a.context_param == b.context_param == "ctx"
    assert b.parameters["properties"]["box"]["properties"]["width"] == {"type": "number"}
    assert b.parameters["properties"]["mode"]["enum"] == ["tight", "loose"]


def test_coerce_into_declared_types() -> None:
    assert coerce({"x": 1, "y": 2}, Point) == Point(1.0, 2.0)
    assert isinstance(coerce({"x": 1}, Point).x, float)
    assert coerce("red", Color) is Color.RED
    assert coerce("2024-02-03", dt.date) == dt.date(2024, 2, 3)
    assert coerce([{"x": 1}], list[Point]) == [Point(1.0)]
    assert coerce({"x": 1}, Optional[Point]) == Point(1.0)  # noqa: UP045
    assert coerce(None, Optional[Point]) is None  # noqa: UP045
    assert coerce({"name": "a", "age": 3}, Person) == Person(name="a", age=3)
    assert coerce([1, "a"], tuple[int, str]) == (1, "a")


def test_standard_library_scalars_keep_their_schema_and_coercion() -> None:
    import decimal
    import uuid

    assert type_schema(dt.datetime) == {"type": "string", "format": "date-time"}
    assert type_schema(dt.time) == {"type": "string", "format": "time"}
    assert type_schema(uuid.UUID) == {"type": "string", "format": "uuid"}
    assert type_schema(decimal.Decimal) == {"type": "number"}
    assert type_schema(Path) == {"type": "string"}
    assert coerce("12:30:00", dt.time) == dt.time(12, 30)
    key = "12345678-1234-5678-1234-567812345678"
    assert coerce(key, uuid.UUID) == uuid.UUID(key)
    assert coerce(0.1, decimal.Decimal) == decimal.Decimal("0.1")  # through str: no float error
    assert coerce("a/b", Path) == Path("a/b")


def test_a_class_named_like_a_standard_library_type_is_not_one() -> None:
    class UUID:  # the name of uuid.UUID, another type
        pass

    UUID.__module__ = "uuid"
    with pytest.raises(SchemaError):
        type_schema(UUID)
