"""Structured output: normalise ``response_format``, check it, validate replies.

``response_format`` may be a JSON schema, a ``{"type": "json_schema", ...}``
wrapper (OpenAI's shape), a pydantic model class, a dataclass or a
TypedDict. The schema is itself checked with jsonschema before any request
(:class:`~llmport.errors.SchemaError`).

The reply is always validated against the caller's full schema, whatever
subset a vendor was sent. So the vendor schema transformers
(:mod:`llmport.schema.transform`: :func:`inline_refs`, :func:`drop_keywords`,
each vendor's profile) may drop constraints a vendor cannot express
(``uniqueItems``, ``default``...) without weakening the guarantee: a
reply that breaks one gets the repair round, then
:class:`~llmport.errors.StructuredOutputError`. What cannot be expressed
at all (a free-form ``dict``, a tuple) raises ``SchemaError`` naming the
JSON pointer, so a plugin can reject it with a clear error before sending.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection
from typing import Any

from ..errors import SchemaError, StructuredOutputError
from ..messages.check import nesting_problem
from ..messages.types import ResponseFormat, ToolSpec
from ..provider.wire import loads
from ..schema.build import check_schema, coerce, type_schema, validation_errors
from ..schema.transform import drop_keywords, inline_refs
from ..slotted import dataclass

__all__ = [
    "OutputTool",
    "check_schema",
    "drop_keywords",
    "inline_refs",
    "make_output_tool",
    "output_type",
    "parse_reply",
    "prepare",
    "schema_tool",
    "to_output",
    "validation_errors",
]


def _is_class_format(value: Any) -> bool:
    import typing

    return isinstance(value, type) and (
        hasattr(value, "model_json_schema")
        or dataclasses.is_dataclass(value)
        or typing.is_typeddict(value)
    )


def _schema_of_class(cls: type) -> tuple[dict[str, Any], str]:
    if not _is_class_format(cls):
        raise SchemaError(
            f"response_format class {cls.__name__} is not a pydantic model, a dataclass "
            "or a TypedDict"
        )
    schema = type_schema(cls)
    if "$ref" in schema:  # a recursive class: its definition is in $defs
        schema = {**schema["$defs"][cls.__name__], "$defs": schema["$defs"]}
    return schema, cls.__name__


def prepare(response_format: Any) -> ResponseFormat | None:
    """Normalise and check a ``response_format`` argument (None passes through)."""
    if response_format is None or isinstance(response_format, ResponseFormat):
        if response_format is not None:
            check_schema(response_format.schema)
        return response_format
    name = "response"
    strict = True
    description = None
    if isinstance(response_format, type):
        schema, name = _schema_of_class(response_format)
    elif isinstance(response_format, dict):
        if response_format.get("type") == "json_schema":
            inner = response_format.get("json_schema", response_format)
            if not isinstance(inner, dict):
                raise SchemaError("json_schema wrapper: 'json_schema' must be an object")
            found = inner.get("schema")
            name = inner.get("name", name)
            strict = bool(inner.get("strict", True))
            description = inner.get("description")
            if not isinstance(found, dict):
                raise SchemaError("json_schema wrapper needs a 'schema' object")
            schema = found
        else:
            schema = response_format
    else:
        raise SchemaError(
            f"response_format must be a JSON schema dict, a json_schema wrapper, a pydantic model, "
            f"a dataclass or a TypedDict, not {type(response_format).__name__}"
        )
    check_schema(schema)
    return ResponseFormat(
        schema=schema, name=_safe_name(str(name)), strict=strict, description=description
    )


def output_type(response_format: Any) -> type | None:
    """The class to build the parsed value into (pydantic model or dataclass), if one was given."""
    if isinstance(response_format, type) and _is_class_format(response_format):
        import typing

        return None if typing.is_typeddict(response_format) else response_format
    return None


def to_output(value: Any, cls: type | None) -> Any:
    """The parsed JSON as an instance of ``cls`` (None: the JSON value itself)."""
    if cls is None:
        return value
    return coerce(value, cls)


def _safe_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)
    return cleaned[:64] or "response"


def parse_reply(rf: ResponseFormat, text: str) -> tuple[Any, list[str]]:
    """(value, errors): the parsed JSON and what is wrong with it.

    What is not JSON (RFC 8259, :func:`~llmport.provider.wire.loads`) is an
    error of the reply, never an exception: ``NaN``/``Infinity`` and numbers
    out of a float's range, an integer too long to read, and a value nested
    deeper than :data:`~llmport.messages.check.MAX_DEPTH`.
    """
    stripped = strip_fences(text)
    try:
        value = loads(stripped)
    except json.JSONDecodeError as exc:
        return None, [f"reply is not JSON: {exc.msg} at position {exc.pos}"]
    problem = nesting_problem(value)
    if problem is not None:
        return None, [f"reply is {problem}"]
    return value, validation_errors(rf.schema, value)


def strip_fences(text: str) -> str:
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


def prompt_instruction(rf: ResponseFormat) -> str:
    """The system-prompt text of ``output_mode="prompted"``: the schema, and JSON only."""
    schema = json.dumps(rf.schema, ensure_ascii=False, sort_keys=True)
    about = f" ({rf.description})" if rf.description else ""
    return (
        f"Reply with a single JSON value{about} that matches this JSON schema, "
        f"and nothing else (no prose, no code fences):\n{schema}"
    )


def fail(errors: list[str], text: str) -> StructuredOutputError:
    return StructuredOutputError(
        "reply does not match the response schema after a repair round", errors, text
    )


def schema_tool(rf: ResponseFormat) -> ToolSpec:
    """The response schema as a tool to force, for vendors whose structured output is a tool call.

    The tool's arguments are the answer; a plugin that uses it returns
    ``json.dumps(arguments)`` as the reply text. A non-object schema is
    wrapped as ``{"value": ...}`` (unwrap it before returning).
    """
    params = (
        rf.schema
        if rf.schema.get("type") == "object"
        else {"type": "object", "properties": {"value": rf.schema}, "required": ["value"]}
    )
    return ToolSpec(
        rf.name, rf.description or "Reply with the answer as this tool's arguments.", params, True
    )


@dataclass(slots=True, frozen=True)
class OutputTool:
    """The forced tool that carries structured output, for models without native JSON output.

    ``wrapped``: the schema's root is not an object, so the tool's input is
    ``{"value": ...}`` and the reply is its ``value``.
    """

    name: str
    wrapped: bool

    def reply_text(self, arguments: Any) -> str:
        """The structured reply carried by the tool call's arguments, as JSON text."""
        if self.wrapped and isinstance(arguments, dict):
            arguments = arguments.get("value")
        return json.dumps(arguments, ensure_ascii=False)


def make_output_tool(
    rf: ResponseFormat, taken: Collection[str] = (), default_description: str | None = None
) -> tuple[OutputTool, ToolSpec]:
    """The forced output tool for ``rf`` and its spec, named apart from the request's tools.

    Plugins send the spec in their vendor's tool format, force it, and turn
    the call's arguments back into the reply with :meth:`OutputTool.reply_text`.
    """
    spec = schema_tool(rf)
    name = spec.name if spec.name not in taken else f"{spec.name}_output"
    description = rf.description or default_description or spec.description
    tool = OutputTool(name, rf.schema.get("type") != "object")
    return tool, ToolSpec(name, description, spec.parameters, spec.strict)
