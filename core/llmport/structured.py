"""Structured output: normalise ``response_format``, check it, validate replies.

``response_format`` may be a JSON schema, a ``{"type": "json_schema", ...}``
wrapper (OpenAI's shape), a pydantic model class or a dataclass. The schema
is itself checked with jsonschema before any request.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from .errors import SchemaError, StructuredOutputError
from .types import ResponseFormat


def _schema_of_class(cls: type) -> tuple[dict[str, Any], str]:
    if hasattr(cls, "model_json_schema"):  # pydantic v2
        return dict(cls.model_json_schema()), cls.__name__
    if dataclasses.is_dataclass(cls):
        from .schema import dataclass_schema

        return dataclass_schema(cls), cls.__name__
    raise SchemaError(f"response_format class {cls.__name__} is neither a pydantic model nor a dataclass")


def prepare(response_format: Any) -> ResponseFormat | None:
    """Normalise and check a ``response_format`` argument (None passes through)."""
    if response_format is None or isinstance(response_format, ResponseFormat):
        return response_format
    name = "response"
    strict = True
    description = None
    if isinstance(response_format, type):
        schema, name = _schema_of_class(response_format)
    elif isinstance(response_format, dict):
        if response_format.get("type") == "json_schema":
            inner = response_format.get("json_schema", response_format)
            schema = inner.get("schema")
            name = inner.get("name", name)
            strict = bool(inner.get("strict", True))
            description = inner.get("description")
            if not isinstance(schema, dict):
                raise SchemaError("json_schema wrapper needs a 'schema' object")
        else:
            schema = response_format
    else:
        raise SchemaError(
            f"response_format must be a JSON schema dict, a json_schema wrapper, a pydantic model "
            f"or a dataclass, not {type(response_format).__name__}"
        )
    check_schema(schema)
    return ResponseFormat(schema=schema, name=_safe_name(name), strict=strict, description=description)


def _safe_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)
    return cleaned[:64] or "response"


def check_schema(schema: dict[str, Any]) -> None:
    """Raise SchemaError if ``schema`` is not a valid JSON schema."""
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise SchemaError(f"invalid JSON schema: {exc.message}") from exc


def validation_errors(schema: dict[str, Any], value: Any) -> list[str]:
    """Every validation error of ``value`` against ``schema`` (empty if valid)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors]


def parse_reply(rf: ResponseFormat, text: str) -> tuple[Any, list[str]]:
    """(value, errors): the parsed JSON and what is wrong with it."""
    stripped = _strip_fences(text)
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError as exc:
        return None, [f"reply is not JSON: {exc.msg} at position {exc.pos}"]
    return value, validation_errors(rf.schema, value)


def _strip_fences(text: str) -> str:
    s = text.strip()
    if s.startswith("```"):
        s = s.split("\n", 1)[1] if "\n" in s else ""
        if s.rstrip().endswith("```"):
            s = s.rstrip()[:-3]
    return s.strip()


def repair_prompt(errors: list[str]) -> str:
    return (
        "Your previous reply did not match the required JSON schema:\n"
        + "\n".join(f"- {e}" for e in errors)
        + "\nReply again with only the corrected JSON."
    )


def fail(errors: list[str], text: str) -> StructuredOutputError:
    return StructuredOutputError("reply does not match the response schema after a repair round",
                                 errors, text)
