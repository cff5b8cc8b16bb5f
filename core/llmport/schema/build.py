"""JSON schemas from Python functions and types (type hints + docstrings).

:func:`function_schema` turns a function's signature into the ``parameters``
schema of a tool; :func:`type_schema` does one annotation. Supported:
``str int float bool None``, ``Any``, ``Literal``, ``Optional`` and unions
(``X | Y``), ``list / tuple / set / Sequence``, ``dict / Mapping``, enums,
dataclasses, ``TypedDict``, pydantic models, ``datetime / date / time /
UUID / Decimal / Path``, ``Annotated[X, "description"]`` and defaults.
Per-parameter descriptions come from Google, NumPy or Sphinx docstrings.

Annotations are resolved with :func:`typing.get_type_hints`, so a module
written with ``from __future__ import annotations`` yields the same schema.
A type that has no JSON form raises :class:`~llmport.errors.SchemaError`
naming the parameter (never a silent "anything goes").

:func:`coerce` turns validated JSON arguments back into the declared types
(a dict into the dataclass or pydantic model, a string into the enum, ...).
"""

from __future__ import annotations

import contextlib
import enum
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping, MutableMapping, MutableSequence, Sequence
from typing import Any

from ..errors import SchemaError
from ..patterns import pattern
from ..slotted import dataclass, field

__all__ = [
    "INJECTED",
    "FunctionSchema",
    "coerce",
    "dataclass_schema",
    "function_schema",
    "parse_docstring",
    "type_schema",
]

_SIMPLE: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    bytes: {"type": "string"},
}
# Standard-library types a signature may name, keyed by (module, name) so that
# their modules are not imported with llmport (uuid alone pulls in platform): a
# signature that names one has imported its module already.
_STDLIB_SIMPLE: dict[tuple[str, str], dict[str, Any]] = {
    ("datetime", "datetime"): {"type": "string", "format": "date-time"},
    ("datetime", "date"): {"type": "string", "format": "date"},
    ("datetime", "time"): {"type": "string", "format": "time"},
    ("uuid", "UUID"): {"type": "string", "format": "uuid"},
    ("decimal", "Decimal"): {"type": "number"},
    ("pathlib", "Path"): {"type": "string"},
}
# typing.List[...] etc. report the builtin as their origin, so builtins suffice here.
_ARRAYS = (list, tuple, set, frozenset, Sequence, MutableSequence, Iterable)
_MAPPINGS = (dict, Mapping, MutableMapping)


def _stdlib_key(annotation: Any) -> tuple[str, str] | None:
    """``(module, name)`` when ``annotation`` is exactly one of the standard-library types above."""
    if not isinstance(annotation, type):
        return None
    key = (annotation.__module__, annotation.__qualname__)
    if key in _STDLIB_SIMPLE and getattr(sys.modules.get(key[0]), key[1], None) is annotation:
        return key
    return None


def _simple_schema(annotation: Any) -> dict[str, Any] | None:
    """The fixed schema of a scalar type (``str``, ``datetime``, ``UUID``...), or ``None``."""
    found = _SIMPLE.get(annotation)
    if found is None:
        key = _stdlib_key(annotation)
        found = _STDLIB_SIMPLE[key] if key is not None else None
    return found


#: Set true on a class whose values llmport hands to a function itself, never the
#: model (the run context): a parameter of that type is left out of the schema.
#: A marker rather than an import keeps the schema layer below the tools.
INJECTED = "__llmport_injected__"


def _is_run_context(annotation: Any) -> bool:
    origin = typing.get_origin(annotation) or annotation
    return getattr(origin, INJECTED, False) is True


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp)


def _is_pydantic(tp: Any) -> bool:
    return (
        isinstance(tp, type) and hasattr(tp, "model_json_schema") and hasattr(tp, "model_validate")
    )


def _jsonable(value: Any) -> Any:
    """``value`` as JSON, or raise TypeError (defaults that cannot be shown are left out)."""
    if isinstance(value, enum.Enum):
        return _jsonable(value.value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _jsonable(v) for k, v in value.items()}
    raise TypeError(f"{type(value).__name__} is not JSON")


def _literal_schema(values: tuple[Any, ...]) -> dict[str, Any]:
    plain = [_jsonable(v) for v in values]
    kinds = {type(v) for v in plain}
    out: dict[str, Any] = {"enum": plain}
    if len(kinds) == 1:
        kind = kinds.pop()
        simple = _simple_schema(kind)
        if simple is not None and kind is not bytes:
            out = {**simple, "enum": plain}
    return out


class _Builder:
    """Builds schemas for one root, collecting ``$defs`` for recursive or pydantic types."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}
        self._stack: list[type] = []
        self._recursive: set[type] = set()

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.defs:
            schema = {**schema, "$defs": {**schema.get("$defs", {}), **self.defs}}
        return schema

    def of(self, annotation: Any, where: str) -> dict[str, Any]:
        import inspect  # in the functions that use it: its import costs ~10 ms of start-up

        if annotation is inspect.Parameter.empty or annotation is Any or annotation is object:
            return {}
        if isinstance(annotation, (str, typing.ForwardRef)):
            raise SchemaError(
                f"{where}: unresolved annotation {annotation!r} (is the name importable?)"
            )
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin in (typing.Required, typing.NotRequired):  # TypedDict markers
            return self.of(args[0], where)
        if origin is typing.Annotated:
            return self._annotated(args, where)
        simple = _simple_schema(annotation)
        if simple is not None:
            return dict(simple)
        if origin is typing.Literal:
            return _literal_schema(args)
        if origin in (typing.Union, types.UnionType):
            return self._union(args, where)
        container = self._container(annotation, origin, args, where)
        if container is not None:
            return container
        return self._named(annotation, where)

    def _annotated(self, args: tuple[Any, ...], where: str) -> dict[str, Any]:
        """``Annotated[T, ...]``: T's schema, described by a string (or ``.description``) in it."""
        schema = dict(self.of(args[0], where))
        for meta in args[1:]:
            desc = meta if isinstance(meta, str) else getattr(meta, "description", None)
            if isinstance(desc, str) and desc:
                schema["description"] = desc
        return schema

    def _union(self, args: tuple[Any, ...], where: str) -> dict[str, Any]:
        """A union: its distinct members' schemas (anything, if one member is)."""
        members = [self.of(a, where) for a in args]
        unique: list[dict[str, Any]] = []
        for m in members:
            if m not in unique:
                unique.append(m)
        if any(m == {} for m in unique):
            return {}
        return unique[0] if len(unique) == 1 else {"anyOf": unique}

    def _container(
        self, annotation: Any, origin: Any, args: tuple[Any, ...], where: str
    ) -> dict[str, Any] | None:
        """A fixed tuple, an array-like or a mapping type's schema; None: not a container."""
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if args == ((),):
                return {"type": "array", "maxItems": 0}
            return {
                "type": "array",
                "prefixItems": [self.of(a, where) for a in args],
                "minItems": len(args),
                "maxItems": len(args),
            }
        if annotation in _ARRAYS or origin in _ARRAYS:
            schema: dict[str, Any] = {"type": "array"}
            if args:
                item = self.of(args[0], where)
                if item:
                    schema["items"] = item
            if (origin or annotation) in (set, frozenset):
                schema["uniqueItems"] = True
            return schema
        if annotation in _MAPPINGS or origin in _MAPPINGS:
            schema = {"type": "object"}
            if len(args) == 2:
                value = self.of(args[1], where)
                if value:
                    schema["additionalProperties"] = value
            return schema
        return None

    def _named(self, annotation: Any, where: str) -> dict[str, Any]:
        """An enum, a class with fields, a TypeVar or a NewType; anything else has no schema."""
        import dataclasses  # here: it imports inspect

        if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            return _literal_schema(tuple(m.value for m in annotation))
        if isinstance(annotation, type) and (
            dataclasses.is_dataclass(annotation)
            or _is_typeddict(annotation)
            or _is_pydantic(annotation)
        ):
            return self._class(annotation, where)
        if isinstance(annotation, typing.TypeVar):
            bound = annotation.__bound__
            return self.of(bound, where) if bound is not None else {}
        if isinstance(annotation, typing.NewType):
            return self.of(annotation.__supertype__, where)
        raise SchemaError(
            f"{where}: no JSON schema for type {annotation!r}; use a JSON-friendly type, "
            "a dataclass, a TypedDict, a pydantic model or Any"
        )

    def _class(self, cls: type, where: str) -> dict[str, Any]:
        ref = {"$ref": f"#/$defs/{cls.__name__}"}
        if cls in self._stack:  # recursive type: refer to its definition
            self._recursive.add(cls)
            return ref
        self._stack.append(cls)
        try:
            schema = self._pydantic(cls) if _is_pydantic(cls) else self._fields(cls, where)
        finally:
            self._stack.pop()
        if cls in self._recursive:
            self.defs[cls.__name__] = schema
            return ref
        return schema

    def _pydantic(self, cls: Any) -> dict[str, Any]:
        schema = dict(cls.model_json_schema(ref_template="#/$defs/{model}"))
        self.defs.update(schema.pop("$defs", {}))
        return schema

    def _fields(self, cls: type, where: str) -> dict[str, Any]:
        import dataclasses  # here: it imports inspect

        hints = resolve_hints(cls)
        doc = parse_docstring(cls.__doc__ or "")
        props: dict[str, Any] = {}
        required: list[str] = []
        if dataclasses.is_dataclass(cls):
            for f in dataclasses.fields(cls):
                if not f.init:
                    continue
                prop = self.of(hints.get(f.name, Any), f"{where}.{f.name}")
                desc = f.metadata.get("description") or doc.params.get(f.name)
                if desc and "description" not in prop:
                    prop = {**prop, "description": desc}
                if f.default is not dataclasses.MISSING:
                    prop = _with_default(prop, f.default)
                elif f.default_factory is dataclasses.MISSING:
                    required.append(f.name)
                props[f.name] = prop
        else:  # TypedDict
            for name, hint in hints.items():
                prop = self.of(hint, f"{where}.{name}")
                if doc.params.get(name) and "description" not in prop:
                    prop = {**prop, "description": doc.params[name]}
                props[name] = prop
                # Read the markers from the resolved hints: with string annotations
                # Python 3.11 cannot see NotRequired and lists every key as required.
                marker = typing.get_origin(hint)
                if marker is typing.NotRequired:
                    continue
                if marker is typing.Required or getattr(cls, "__total__", True):
                    required.append(name)
        schema: dict[str, Any] = {
            "type": "object",
            "title": cls.__name__,
            "properties": props,
            "required": required,
        }
        if _is_typeddict(cls):
            schema["additionalProperties"] = False
        if doc.description and not doc.description.startswith(cls.__name__ + "("):
            schema["description"] = doc.description
        return schema


def _with_default(prop: dict[str, Any], default: Any) -> dict[str, Any]:
    try:
        return {**prop, "default": _jsonable(default)}
    except TypeError:
        return prop


def type_schema(annotation: Any) -> dict[str, Any]:
    """JSON schema for one annotation (``$defs`` included when needed)."""
    builder = _Builder()
    return builder.finish(builder.of(annotation, "type"))


def resolve_hints(obj: Any, localns: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Type hints of a function or class with string annotations resolved.

    With ``from __future__ import annotations`` every hint is a string.
    Names local to an enclosing function are found in ``localns`` (``@tool``
    passes the namespace it was called in), in the function's closure, and
    a class may name itself.
    """
    import inspect  # in the functions that use it: its import costs ~10 ms of start-up

    target = inspect.unwrap(obj) if callable(obj) and not isinstance(obj, type) else obj
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception as first:
        names: dict[str, Any] = dict(localns or {})
        if isinstance(target, type):
            names.setdefault(target.__name__, target)
        else:
            with contextlib.suppress(TypeError, ValueError):
                names.update(inspect.getclosurevars(target).nonlocals)
        try:
            return typing.get_type_hints(target, localns=names, include_extras=True)
        except Exception:
            name = getattr(target, "__qualname__", repr(target))
            raise SchemaError(
                f"cannot resolve the type hints of {name}: {first}; define the "
                "types it names at module level"
            ) from first


# --- docstrings -------------------------------------------------------------------

_GOOGLE_PARAMS = {
    "args",
    "arguments",
    "parameters",
    "params",
    "keyword args",
    "keyword arguments",
    "other parameters",
    "attributes",
}
_GOOGLE_SECTION = pattern(r"^([A-Za-z][A-Za-z ]*):\s*$")
_GOOGLE_ITEM = pattern(r"^\*{0,2}(\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")
_NUMPY_ITEM = pattern(r"^\*{0,2}(\w+)\s*(?::\s*(.*))?$")
_SPHINX_PARAM = pattern(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


@dataclass(slots=True, frozen=True)
class Docstring:
    """A parsed docstring: the description and per-parameter descriptions."""

    description: str = ""
    params: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str) -> Docstring:
    """Parse a Google, NumPy or Sphinx style docstring.

    ``description`` is the text before the first section (``Args:``,
    ``Parameters`` + underline, ``:param ...:``, ``Returns:``, ...);
    ``params`` maps each documented parameter to its description with
    continuation lines joined by spaces.
    """
    import inspect  # in the functions that use it: its import costs ~10 ms of start-up

    lines = inspect.cleandoc(doc).splitlines() if doc else []
    params: dict[str, str] = {}
    body_end = len(lines)
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        google = _GOOGLE_SECTION.match(line)
        numpy = i + 1 < len(lines) and line and set(lines[i + 1].strip()) == {"-"}
        if numpy:
            body_end = min(body_end, i)
            end = _numpy_section(lines, i + 2, params if line.lower() in _GOOGLE_PARAMS else None)
            i = end
            continue
        if google and (google.group(1).lower() in _GOOGLE_PARAMS or _looks_like_section(lines, i)):
            body_end = min(body_end, i)
            end = _google_section(
                lines, i + 1, params if google.group(1).lower() in _GOOGLE_PARAMS else None
            )
            i = end
            continue
        sphinx = _SPHINX_PARAM.match(line)
        if sphinx or line.startswith((":return", ":raises", ":rtype", ":type")):
            body_end = min(body_end, i)
            if sphinx:
                text = [sphinx.group(2)]
                j = i + 1
                while j < len(lines) and lines[j].startswith((" ", "\t")) and lines[j].strip():
                    text.append(lines[j].strip())
                    j += 1
                params[sphinx.group(1)] = " ".join(t for t in text if t)
                i = j
                continue
        i += 1
    description = "\n".join(lines[:body_end]).strip()
    return Docstring(description, params)


def _looks_like_section(lines: list[str], i: int) -> bool:
    """A ``Word:`` line followed by an indented block is a Google section."""
    return (
        i + 1 < len(lines) and lines[i + 1].startswith((" ", "\t")) and bool(lines[i + 1].strip())
    )


def _google_section(lines: list[str], start: int, out: dict[str, str] | None) -> int:
    j = start
    current: str | None = None
    item_indent: int | None = None
    while j < len(lines):
        raw = lines[j]
        if raw.strip() and not raw.startswith((" ", "\t")):
            break  # back at column 0: the section is over
        if not raw.strip():
            j += 1
            continue
        indent = len(raw) - len(raw.lstrip())
        if item_indent is None:
            item_indent = indent
        if indent <= item_indent:
            m = _GOOGLE_ITEM.match(raw.strip())
            current = m.group(1) if m else None
            if out is not None and m:
                out[current or ""] = m.group(3).strip()
        elif current and out is not None:
            out[current] = (out[current] + " " + raw.strip()).strip()
        j += 1
    return j


def _numpy_section(lines: list[str], start: int, out: dict[str, str] | None) -> int:
    j = start
    current: str | None = None
    while j < len(lines):
        raw = lines[j]
        nxt = lines[j + 1].strip() if j + 1 < len(lines) else ""
        if raw.strip() and nxt and set(nxt) == {"-"}:
            break  # the next section's header
        if not raw.strip():
            j += 1
            continue
        if not raw.startswith((" ", "\t")):
            m = _NUMPY_ITEM.match(raw.strip())
            current = m.group(1) if m else None
            if out is not None and current:
                out[current] = ""
        elif current and out is not None:
            out[current] = (out[current] + " " + raw.strip()).strip()
        j += 1
    return j


# --- functions ------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class FunctionSchema:
    """What :func:`function_schema` learned about a function."""

    parameters: dict[str, Any]
    description: str
    context_param: str | None
    annotations: dict[str, Any]
    accepts_kwargs: bool = False


def function_schema(
    fn: Callable[..., Any], localns: Mapping[str, Any] | None = None
) -> FunctionSchema:
    """The tool schema of ``fn``: parameters, description, run-context parameter.

    ``*args`` is not supported (a model sends named arguments); ``**kwargs``
    lets the model send extra properties. A parameter annotated
    ``RunContext[...]`` is injected by llmport and left out of the schema.
    """
    import inspect  # in the functions that use it: its import costs ~10 ms of start-up

    target = inspect.unwrap(fn)
    sig = inspect.signature(target)
    hints = resolve_hints(target, localns)
    doc = parse_docstring(inspect.getdoc(target) or "")
    builder = _Builder()
    props: dict[str, Any] = {}
    required: list[str] = []
    ctx_param: str | None = None
    annotations: dict[str, Any] = {}
    accepts_kwargs = False
    name = getattr(target, "__qualname__", repr(target))
    for pname, param in sig.parameters.items():
        if param.kind is param.VAR_KEYWORD:
            accepts_kwargs = True
            continue
        if param.kind is param.VAR_POSITIONAL:
            continue
        if param.kind is param.POSITIONAL_ONLY:
            raise SchemaError(
                f"{name}: positional-only parameter {pname!r} cannot be sent by a model"
            )
        annotation = hints.get(pname, param.annotation)
        if annotation is param.empty and param.default not in (param.empty, None):
            # No hint: a simple default says the type (``unit="c"`` -> string).
            kind = type(param.default)
            annotation = kind if _simple_schema(kind) is not None else annotation
        if _is_run_context(annotation):
            ctx_param = pname
            continue
        annotations[pname] = annotation
        prop = builder.of(annotation, f"{name}({pname})")
        desc = doc.params.get(pname)
        if desc and "description" not in prop:
            prop = {**prop, "description": desc}
        if param.default is inspect.Parameter.empty:
            required.append(pname)
        else:
            prop = _with_default(prop, param.default)
        props[pname] = prop
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    if not accepts_kwargs:
        schema["additionalProperties"] = False
    schema = builder.finish(schema)
    check_schema(schema)
    return FunctionSchema(schema, doc.description, ctx_param, annotations, accepts_kwargs)


def dataclass_schema(cls: type) -> dict[str, Any]:
    """JSON schema of a dataclass, TypedDict or pydantic model (``$defs`` included)."""
    return type_schema(cls)


# --- arguments back into Python values ------------------------------------------------


def coerce(value: Any, annotation: Any) -> Any:
    """Turn JSON ``value`` (already validated) into ``annotation``'s Python type."""
    import inspect  # in the functions that use it: its import costs ~10 ms of start-up

    if annotation is inspect.Parameter.empty or annotation is Any or value is None:
        return value
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated or origin in (typing.Required, typing.NotRequired):
        return coerce(value, args[0])
    if origin in (typing.Union, types.UnionType):
        return _coerce_union(value, args)
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    stdlib = _stdlib_key(annotation)
    if stdlib is not None and stdlib[0] == "datetime" and isinstance(value, str):
        return annotation.fromisoformat(value)
    if stdlib is not None and stdlib[0] != "datetime" and isinstance(value, (str, int, float)):
        return annotation(str(value) if stdlib[0] == "decimal" else value)
    if annotation is bytes and isinstance(value, str):
        return value.encode()
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation(value)
    if _is_pydantic(annotation):
        return annotation.model_validate(value)
    import dataclasses  # here: it imports inspect

    if (
        isinstance(annotation, type)
        and dataclasses.is_dataclass(annotation)
        and isinstance(value, dict)
    ):
        hints = resolve_hints(annotation)
        return annotation(**{k: coerce(v, hints.get(k, Any)) for k, v in value.items()})
    if _is_typeddict(annotation) and isinstance(value, dict):
        hints = resolve_hints(annotation)
        return {k: coerce(v, hints.get(k, Any)) for k, v in value.items()}
    if isinstance(value, list):
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            return tuple(coerce(v, a) for v, a in zip(value, args, strict=False))
        item = args[0] if args else Any
        items = [coerce(v, item) for v in value]
        kind = origin or annotation
        if kind is tuple:
            return tuple(items)
        if kind is set:
            return set(items)
        if kind is frozenset:
            return frozenset(items)
        return items
    if isinstance(value, dict) and len(args) == 2:
        return {k: coerce(v, args[1]) for k, v in value.items()}
    return value


def _coerce_union(value: Any, members: tuple[Any, ...]) -> Any:
    import jsonschema

    for member in members:
        if member is type(None):
            continue
        schema = type_schema(member)
        if not schema or jsonschema.Draft202012Validator(schema).is_valid(value):
            return coerce(value, member)
    return value


# --- checking schemas and values ---------------------------------------------------


def check_schema(schema: Any) -> None:
    """Raise SchemaError if ``schema`` is not a valid JSON schema (draft 2020-12)."""
    import jsonschema

    if not isinstance(schema, dict):
        raise SchemaError(f"a JSON schema must be an object, got {type(schema).__name__}")
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(map(str, exc.absolute_path)) or "<root>"
        raise SchemaError(f"invalid JSON schema at {where}: {exc.message}") from exc


def validation_errors(schema: dict[str, Any], value: Any) -> list[str]:
    """Every validation error of ``value`` against ``schema`` (empty if valid)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors]
