"""JSON schemas from Python functions (type hints + docstrings)."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any


def _is_run_context(annotation: Any) -> bool:
    from .tools import RunContext

    origin = typing.get_origin(annotation) or annotation
    return origin is RunContext


def type_schema(annotation: Any) -> dict[str, Any]:
    """JSON schema for one annotation (basic types; extended by the tools work)."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if annotation in simple:
        return {"type": simple[annotation]}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple, set):
        item = type_schema(args[0]) if args else {}
        return {"type": "array", "items": item} if item else {"type": "array"}
    if origin is dict or annotation is dict:
        return {"type": "object"}
    if origin is typing.Literal:
        return {"enum": list(args)}
    return {}


def function_schema(fn: Callable[..., Any]) -> tuple[dict[str, Any], str, str | None]:
    """(parameters schema, description, name of the RunContext parameter or None)."""
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = {}
    props: dict[str, Any] = {}
    required: list[str] = []
    ctx_param: str | None = None
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(pname, param.annotation)
        if _is_run_context(annotation):
            ctx_param = pname
            continue
        props[pname] = type_schema(annotation)
        if param.default is inspect.Parameter.empty:
            required.append(pname)
        else:
            props[pname]["default"] = param.default
    doc = inspect.getdoc(fn) or ""
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    return schema, doc.split("\n\n", 1)[0].strip(), ctx_param


def dataclass_schema(cls: type) -> dict[str, Any]:
    """JSON schema of a dataclass's fields."""
    import dataclasses

    hints = typing.get_type_hints(cls)
    props: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        props[f.name] = type_schema(hints.get(f.name, Any))
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    return {"type": "object", "properties": props, "required": required, "title": cls.__name__}
