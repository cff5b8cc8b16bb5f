"""The vendor schema transformers: each profile on one table of schemas.

Expected copies are compared as JSON text, so key order counts too: it is
what goes into request bodies.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from llmport.errors import SchemaError, UnsupportedFeatureError
from llmport.schema.build import validation_errors
from llmport.schema.transform import (
    ANTHROPIC,
    BEDROCK,
    GEMINI,
    OPENAI_STRICT,
    JsonSchemaTransformer,
    SchemaSubsetError,
    drop_added_nulls,
    drop_keywords,
    has_optional,
    inline_refs,
    strict_schema,
)

CLOSED: dict[str, Any] = {"additionalProperties": False}

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 1}},
    "required": ["name"],
}
REFS = {
    "type": "object",
    "properties": {"owner": {"$ref": "#/$defs/Person"}},
    "required": ["owner"],
    "$defs": {"Person": PERSON},
}
NESTED = {
    "type": "object",
    "properties": {
        "point": {
            "type": "object",
            "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            "required": ["x"],
        },
        "label": {"type": "string", "default": "p"},
    },
    "required": ["point"],
}
ENUMS = {
    "type": "object",
    "properties": {
        "color": {"enum": ["red", "green"]},
        "size": {"type": "string", "enum": ["S", "M"]},
    },
    "required": ["color"],
}
UNIONS = {
    "type": "object",
    "properties": {
        "id": {
            "oneOf": [{"type": "string", "format": "uuid"}, {"type": "integer", "minimum": 0}],
            "title": "Id",
        }
    },
    "required": ["id"],
}
FORMATS = {
    "type": "object",
    "properties": {
        "when": {"type": "string", "format": "date-time"},
        "re": {"type": "string", "format": "regex", "description": "A pattern"},
        "n": {"type": "integer", "format": "int32"},
    },
    "required": ["when", "re", "n"],
}
ARRAY = {
    "type": "array",
    "items": {"type": "object", "properties": {"k": {"type": "string"}}},
    "minItems": 1,
    "maxItems": 3,
    "uniqueItems": True,
}
OPEN_MAP = {"type": "object", "additionalProperties": {"type": "integer"}}

PERSON_CLAUDE = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "{minLength: 1}"}},
    "required": ["name"],
    **CLOSED,
}
REFS_CLAUDE = {
    "type": "object",
    "properties": {"owner": {"$ref": "#/$defs/Person"}},
    "required": ["owner"],
    "$defs": {"Person": PERSON_CLAUDE},
    **CLOSED,
}
UNIONS_CLAUDE = {
    "type": "object",
    "properties": {
        "id": {
            "anyOf": [
                {"type": "string", "format": "uuid"},
                {"type": "integer", "description": "{minimum: 0}"},
            ],
            "title": "Id",
        }
    },
    "required": ["id"],
    **CLOSED,
}
ARRAY_CLAUDE = {
    "type": "array",
    "items": {"type": "object", "properties": {"k": {"type": "string"}}, **CLOSED},
    "minItems": 1,
    "description": "{maxItems: 3, uniqueItems: True}",
}
POINT_CLOSED = {
    "type": "object",
    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
    "required": ["x"],
    **CLOSED,
}

TABLE: list[tuple[str, JsonSchemaTransformer, dict[str, Any], dict[str, Any]]] = [
    # --- $ref / $defs: references stay, definitions are transformed in place
    (
        "openai-refs",
        OPENAI_STRICT,
        REFS,
        {**REFS, "$defs": {"Person": {**PERSON, **CLOSED}}, **CLOSED},
    ),
    ("anthropic-refs", ANTHROPIC, REFS, REFS_CLAUDE),
    ("bedrock-refs", BEDROCK, REFS, REFS_CLAUDE),
    ("gemini-refs", GEMINI, REFS, REFS),
    # --- nested objects and optional fields
    (
        "openai-nested",
        OPENAI_STRICT,
        NESTED,
        {
            "type": "object",
            "properties": {
                "point": {
                    "type": "object",
                    "properties": {"x": {"type": "number"}, "y": {"type": ["number", "null"]}},
                    "required": ["x", "y"],
                    **CLOSED,
                },
                "label": {"type": ["string", "null"]},
            },
            "required": ["point", "label"],
            **CLOSED,
        },
    ),
    (
        "anthropic-nested",
        ANTHROPIC,
        NESTED,
        {
            "type": "object",
            "properties": {
                "point": POINT_CLOSED,
                "label": {"type": "string", "description": "{default: p}"},
            },
            "required": ["point"],
            **CLOSED,
        },
    ),
    (
        "bedrock-nested",
        BEDROCK,
        NESTED,
        {
            "type": "object",
            "properties": {"point": POINT_CLOSED, "label": {"type": "string", "default": "p"}},
            "required": ["point"],
            **CLOSED,
        },
    ),
    ("gemini-nested", GEMINI, NESTED, NESTED),
    # --- enums: an optional enum becomes a nullable union in strict mode
    (
        "openai-enums",
        OPENAI_STRICT,
        ENUMS,
        {
            "type": "object",
            "properties": {
                "color": {"enum": ["red", "green"]},
                "size": {"anyOf": [{"type": "string", "enum": ["S", "M"]}, {"type": "null"}]},
            },
            "required": ["color", "size"],
            **CLOSED,
        },
    ),
    ("anthropic-enums", ANTHROPIC, ENUMS, {**ENUMS, **CLOSED}),
    ("bedrock-enums", BEDROCK, ENUMS, {**ENUMS, **CLOSED}),
    ("gemini-enums", GEMINI, ENUMS, ENUMS),
    # --- unions: oneOf becomes anyOf (strict mode moves it last, Claude keeps its place)
    (
        "openai-unions",
        OPENAI_STRICT,
        UNIONS,
        {
            "type": "object",
            "properties": {
                "id": {
                    "title": "Id",
                    "anyOf": [
                        {"type": "string", "format": "uuid"},
                        {"type": "integer", "minimum": 0},
                    ],
                }
            },
            "required": ["id"],
            **CLOSED,
        },
    ),
    ("anthropic-unions", ANTHROPIC, UNIONS, UNIONS_CLAUDE),
    ("bedrock-unions", BEDROCK, UNIONS, UNIONS_CLAUDE),
    ("gemini-unions", GEMINI, UNIONS, UNIONS),
    # --- formats: Anthropic keeps the formats on its list and notes the others
    ("openai-formats", OPENAI_STRICT, FORMATS, {**FORMATS, **CLOSED}),
    (
        "anthropic-formats",
        ANTHROPIC,
        FORMATS,
        {
            "type": "object",
            "properties": {
                "when": {"type": "string", "format": "date-time"},
                "re": {"type": "string", "description": "A pattern\n\n{format: regex}"},
                "n": {"type": "integer", "description": "{format: int32}"},
            },
            "required": ["when", "re", "n"],
            **CLOSED,
        },
    ),
    ("bedrock-formats", BEDROCK, FORMATS, {**FORMATS, **CLOSED}),
    ("gemini-formats", GEMINI, FORMATS, FORMATS),
    # --- arrays and open maps (Claude closes every object; strict mode refuses these)
    ("anthropic-array", ANTHROPIC, ARRAY, ARRAY_CLAUDE),
    ("bedrock-array", BEDROCK, ARRAY, ARRAY_CLAUDE),
    ("gemini-array", GEMINI, ARRAY, ARRAY),
    ("anthropic-open-map", ANTHROPIC, OPEN_MAP, {"type": "object", **CLOSED}),
    ("bedrock-open-map", BEDROCK, OPEN_MAP, {"type": "object", **CLOSED}),
    ("gemini-open-map", GEMINI, OPEN_MAP, OPEN_MAP),
]


@pytest.mark.parametrize(
    ("profile", "schema", "expected"),
    [case[1:] for case in TABLE],
    ids=[case[0] for case in TABLE],
)
def test_each_profile_on_the_table(
    profile: JsonSchemaTransformer, schema: dict[str, Any], expected: dict[str, Any]
) -> None:
    before = copy.deepcopy(schema)
    out = profile.transform(schema)
    assert json.dumps(out) == json.dumps(expected)
    assert schema == before, "the caller's schema is not modified"


def scribble(node: Any) -> None:
    """Change every list and object in ``node`` (so any one shared with a schema shows)."""
    if isinstance(node, list):
        for item in list(node):
            scribble(item)
        node.append("scribbled")
    elif isinstance(node, dict):
        for item in list(node.values()):
            scribble(item)
        node["scribbled"] = True


@pytest.mark.parametrize("profile", [OPENAI_STRICT, ANTHROPIC, BEDROCK, GEMINI])
@pytest.mark.parametrize("schema", [REFS, NESTED, ENUMS, UNIONS, FORMATS])
def test_the_copy_shares_nothing_with_the_callers_schema(
    profile: JsonSchemaTransformer, schema: dict[str, Any]
) -> None:
    given = copy.deepcopy(schema)
    scribble(profile.transform(given))
    assert given == schema


@pytest.mark.parametrize(
    ("schema", "path", "reason"),
    [
        (ARRAY, "", "the root must be an object schema"),
        (OPEN_MAP, "", "additionalProperties (open maps)"),
        (
            {"type": "object", "properties": {"meta": {"type": "object"}}},
            "/properties/meta",
            "an object without 'properties' is an open map",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"anyOf": [{"allOf": [{"type": "string"}]}]}},
            },
            "/properties/a/anyOf/0",
            "keyword 'allOf' is not supported",
        ),
    ],
)
def test_strict_mode_refuses_what_it_cannot_express_naming_the_place(
    schema: dict[str, Any], path: str, reason: str
) -> None:
    with pytest.raises(SchemaSubsetError) as caught:
        OPENAI_STRICT.transform(schema)
    assert caught.value.path == path and reason in caught.value.reason
    assert isinstance(caught.value, SchemaError)
    with pytest.raises(UnsupportedFeatureError, match="OpenAI strict mode cannot express"):
        strict_schema(schema, vendor="openai", model="m", feature="response_format")


def test_a_strict_reply_validates_against_the_original_once_added_nulls_are_dropped() -> None:
    strict = OPENAI_STRICT.transform(NESTED)
    reply = {"point": {"x": 1.5, "y": None}, "label": None}
    assert validation_errors(strict, reply) == []
    assert validation_errors(NESTED, reply) != []
    restored = drop_added_nulls(NESTED, reply)
    assert restored == {"point": {"x": 1.5}}
    assert validation_errors(NESTED, restored) == []
    assert has_optional(NESTED) and not has_optional(UNIONS)


def test_the_base_walker_is_a_copy_and_subclasses_change_it_through_hooks() -> None:
    class NoTitles(JsonSchemaTransformer):
        dropped_keywords = frozenset({"title"})

    assert json.dumps(JsonSchemaTransformer().transform(UNIONS)) == json.dumps(UNIONS)
    out = NoTitles().transform(UNIONS)
    assert "title" not in out["properties"]["id"]
    assert out["properties"]["id"]["oneOf"] == UNIONS["properties"]["id"]["oneOf"]  # type: ignore[index]


def test_generic_steps_treat_property_names_as_names_not_keywords() -> None:
    schema = {
        "type": "object",
        "properties": {
            "$defs": {"$ref": "#/$defs/City"},
            "default": {"type": "string", "default": "x"},
        },
        "$defs": {"City": {"type": "string", "title": "City"}},
    }
    assert inline_refs(schema) == {
        "type": "object",
        "properties": {
            "$defs": {"type": "string", "title": "City"},
            "default": {"type": "string", "default": "x"},
        },
    }
    assert drop_keywords(schema, {"default", "title"})["properties"] == {
        "$defs": {"$ref": "#/$defs/City"},
        "default": {"type": "string"},
    }
