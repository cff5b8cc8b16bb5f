"""Vendor schema transformers: one walker, one subclass per vendor's subset of JSON Schema.

Every vendor takes JSON Schema for tool parameters and structured output, but
each accepts a different subset. :class:`JsonSchemaTransformer` walks a
schema once and builds a transformed copy (the caller's schema is never
modified); a subclass only says, through a few hooks, what changes at each
schema object:

* :meth:`~JsonSchemaTransformer.check`: refuse what the subset cannot express
  (:class:`SchemaSubsetError`, naming the JSON pointer);
* :attr:`~JsonSchemaTransformer.dropped_keywords`,
  :attr:`~JsonSchemaTransformer.renamed_keywords` and
  :meth:`~JsonSchemaTransformer.noted`: drop a keyword, rename it, or move
  it into the ``description`` as a note the model can still read;
* :meth:`~JsonSchemaTransformer.finish`: rewrite the object once its keywords
  are done (close objects, make optional properties nullable, ...).

The profiles, one ready instance per vendor subset:

* :data:`OPENAI_STRICT` (:class:`OpenAIStrictSchemaTransformer`): OpenAI's
  strict mode; :func:`drop_added_nulls` undoes on a reply the one change it
  makes to what a schema accepts.
* :data:`ANTHROPIC` (:class:`ClaudeSchemaTransformer`) and :data:`BEDROCK`
  (:class:`BedrockSchemaTransformer`): Claude's structured output, on the
  Messages API and on Bedrock's Converse.
* :data:`GEMINI` (:class:`GeminiSchemaTransformer`): Gemini's
  ``responseJsonSchema`` / ``parametersJsonSchema`` take JSON Schema as it is.

For a vendor of another dialect, :func:`inline_refs` (:class:`RefInliner`)
and :func:`drop_keywords` (:class:`KeywordDropper`) are generic steps.

Dropping or noting a constraint never weakens the guarantee: llmport
validates every reply against the caller's original schema.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from ..errors import SchemaError, SchemaSubsetError, UnsupportedFeatureError

__all__ = [
    "ANTHROPIC",
    "BEDROCK",
    "GEMINI",
    "OPENAI_STRICT",
    "SCHEMA_MAPS",
    "BedrockSchemaTransformer",
    "ClaudeSchemaTransformer",
    "GeminiSchemaTransformer",
    "JsonSchema",
    "JsonSchemaTransformer",
    "KeywordDropper",
    "OpenAIStrictSchemaTransformer",
    "RefInliner",
    "SchemaSubsetError",
    "allows_null",
    "close_object",
    "describe",
    "drop_added_nulls",
    "drop_keywords",
    "has_optional",
    "inline_refs",
    "is_object",
    "json_copy",
    "nullable",
    "resolve_ref",
    "strict_schema",
]

JsonSchema = dict[str, Any]

#: Keywords whose value maps names to schemas (property names are not keywords).
SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions"})


class JsonSchemaTransformer:
    """Walks a JSON schema and builds a copy transformed by the subclass's hooks.

    The walker recurses into the schemas under :data:`SCHEMA_MAPS` keywords
    and under :attr:`subschema_keywords`; any other keyword's value is copied
    as it is. The base class changes nothing: its :meth:`transform` is a deep
    copy. The vendor profiles hold no state, so one instance serves every call.

    What is the same for every value of a keyword is data (dropped, renamed,
    walked into), so the walk costs a set lookup per keyword; what depends on
    the value or the whole object is a method (:meth:`noted`, :meth:`check`,
    :meth:`finish`).
    """

    #: Keywords whose value is a schema or a list of schemas the walk rewrites too
    #: (``None``: every keyword's value is walked).
    subschema_keywords: frozenset[str] | None = frozenset(
        {"items", "prefixItems", "anyOf", "oneOf", "allOf", "not", "additionalProperties"}
    )
    #: Keywords left out of the copy, silently.
    dropped_keywords: frozenset[str] = frozenset()
    #: Keywords that take another name in the copy (in their place).
    renamed_keywords: Mapping[str, str] = MappingProxyType({})
    #: Whether :meth:`noted` is asked about each keyword (set for each subclass:
    #: whether it overrides :meth:`noted`), so a profile that notes nothing pays nothing.
    notes: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.notes = cls.noted is not JsonSchemaTransformer.noted

    def transform(self, schema: JsonSchema) -> JsonSchema:
        """The transformed copy of ``schema`` (or :class:`SchemaSubsetError`)."""
        out: JsonSchema = self.walk(schema, "")
        return out

    def walk(self, node: Any, path: str) -> Any:
        """``node`` transformed: a schema object, a list of them, or a value kept as is."""
        if isinstance(node, list):
            return [self.walk(item, f"{path}/{i}") for i, item in enumerate(node)]
        if not isinstance(node, dict):
            return node
        self.check(node, path)
        dropped, names = self.dropped_keywords, self.renamed_keywords
        walked, noting = self.subschema_keywords, self.notes
        out: JsonSchema = {}
        notes: list[str] = []
        for key, value in node.items():
            if key in dropped:
                continue
            if key in SCHEMA_MAPS and isinstance(value, dict):
                out[names.get(key, key)] = {
                    name: self.walk(sub, f"{path}/{key}/{name}") for name, sub in value.items()
                }
            elif walked is None or key in walked:
                out[names.get(key, key)] = self.walk(value, f"{path}/{key}")
            elif noting and self.noted(key, value):
                notes.append(f"{key}: {value}")
            elif isinstance(value, (dict, list)):  # copied: a body never shares the caller's
                out[names.get(key, key)] = json_copy(value)
            else:
                out[names.get(key, key)] = value
        out = self.finish(node, out, path)
        if notes:
            describe(out, notes)
        return out

    def check(self, node: JsonSchema, path: str) -> None:
        """Raise :class:`SchemaSubsetError` if the subset cannot express ``node``."""

    def noted(self, key: str, value: Any) -> bool:
        """Whether keyword ``key`` (not a subschema) moves into the description as a note."""
        return False

    def finish(self, original: JsonSchema, out: JsonSchema, path: str) -> JsonSchema:
        """The copy of schema object ``original`` once its keywords are transformed."""
        return out


def json_copy(value: Any) -> Any:
    """A copy of JSON data (objects and arrays copied, anything else shared: it is immutable).

    Several times faster than :func:`copy.deepcopy` on the small values of a
    schema (``required``, ``enum``), which the walk copies once per request.
    """
    if isinstance(value, dict):
        return {key: json_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_copy(item) for item in value]
    return value


def describe(out: JsonSchema, notes: Iterable[str]) -> None:
    """Append ``{key: value, ...}`` notes to the description of ``out`` (or start one)."""
    note = "{" + ", ".join(notes) + "}"
    description = out.get("description")
    out["description"] = f"{description}\n\n{note}" if description else note


# ---------------------------------------------------------------------------
# Generic subsets: no references, no such keywords
# ---------------------------------------------------------------------------


class KeywordDropper(JsonSchemaTransformer):
    """Leaves ``keywords`` out everywhere (property names are kept), for a vendor that refuses them.

    Every keyword's value is walked, so a keyword is dropped wherever a
    schema object holds it.
    """

    subschema_keywords = None

    def __init__(self, keywords: Collection[str]) -> None:
        self.dropped_keywords = frozenset(keywords)


class RefInliner(JsonSchemaTransformer):
    """Every local ``$ref`` replaced by its target and ``$defs`` removed (vendors without refs).

    Made for one schema (``root``, the schema references are resolved in):
    it keeps the references it is inside, so a recursive one is refused
    (:class:`~llmport.errors.SchemaError`) rather than inlined forever.
    Keywords beside a ``$ref`` win over its target's.
    """

    subschema_keywords = None
    dropped_keywords = frozenset({"$defs", "definitions"})

    def __init__(self, root: JsonSchema) -> None:
        self.root = root
        self.inside: list[str] = []

    def walk(self, node: Any, path: str) -> Any:
        if not (isinstance(node, dict) and "$ref" in node):
            return super().walk(node, path)
        ref, where = node["$ref"], f"#{path}"
        if ref in self.inside:
            raise SchemaError(f"{where}: recursive $ref {ref!r} cannot be inlined")
        target = resolve_ref(self.root, ref, where)
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        self.inside.append(ref)
        try:
            return self.walk(merged, path)
        finally:
            self.inside.pop()


def resolve_ref(root: JsonSchema, ref: str, where: str) -> JsonSchema:
    """The schema a local ``$ref`` (``#/...``) points to in ``root``, or :class:`SchemaError`."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        raise SchemaError(f"{where}: only local $refs (#/...) can be resolved, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise SchemaError(f"{where}: $ref {ref!r} points nowhere")
        node = node[part]
    if not isinstance(node, dict):
        raise SchemaError(f"{where}: $ref {ref!r} is not a schema")
    return node


def inline_refs(schema: JsonSchema) -> JsonSchema:
    """The schema with every local ``$ref`` replaced by its target and ``$defs`` removed.

    For vendors that do not resolve references. A recursive schema cannot
    be inlined: :class:`~llmport.errors.SchemaError`.
    """
    return RefInliner(schema).transform(schema)


def drop_keywords(schema: JsonSchema, keywords: Collection[str]) -> JsonSchema:
    """The schema without ``keywords`` anywhere (property *names* are kept)."""
    return KeywordDropper(keywords).transform(schema)


# ---------------------------------------------------------------------------
# Claude (Anthropic's Messages API, Bedrock's Converse)
# ---------------------------------------------------------------------------


class ClaudeSchemaTransformer(JsonSchemaTransformer):
    """Anthropic's structured output (``output_config.format`` and ``strict`` tools).

    Objects get ``additionalProperties: false``; ``oneOf`` becomes ``anyOf``
    (in place); only the keywords Anthropic takes are kept (string formats
    from its list, ``minItems`` of 0 or 1); any other moves into the
    description, which the model reads but the API does not enforce.
    """

    subschema_keywords = frozenset({"items", "anyOf", "oneOf", "allOf"})
    dropped_keywords = frozenset({"additionalProperties"})  # always false on objects (finish)
    renamed_keywords = MappingProxyType({"oneOf": "anyOf"})
    #: Keywords Anthropic's structured output takes as they are.
    kept_keywords: ClassVar[frozenset[str]] = frozenset(
        {
            "type",
            "properties",
            "required",
            "items",
            "anyOf",
            "allOf",
            "enum",
            "const",
            "description",
            "title",
            "$defs",
            "definitions",
            "$ref",
        }
    )
    #: String formats Anthropic's structured output takes.
    string_formats: ClassVar[frozenset[str]] = frozenset(
        {
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "uri",
            "ipv4",
            "ipv6",
            "uuid",
        }
    )

    def noted(self, key: str, value: Any) -> bool:
        kept = (
            key in self.kept_keywords
            or (key == "format" and value in self.string_formats)
            or (key == "minItems" and value in (0, 1))
        )
        return not kept

    def finish(self, original: JsonSchema, out: JsonSchema, path: str) -> JsonSchema:
        if out.get("type") == "object" or "properties" in out:
            out["additionalProperties"] = False
        return out


class BedrockSchemaTransformer(ClaudeSchemaTransformer):
    """Bedrock Converse's structured output (``outputConfig.textFormat``).

    As Claude's, but the other way round about keywords: every keyword is
    kept except the validation constraints the models do not enforce, which
    move into the description.
    """

    #: Constraints Bedrock's structured-output models do not enforce.
    noted_keywords: ClassVar[frozenset[str]] = frozenset(
        {
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "minLength",
            "maxLength",
            "pattern",
            "minProperties",
            "maxProperties",
            "uniqueItems",
            "maxItems",
        }
    )

    def noted(self, key: str, value: Any) -> bool:
        return key in self.noted_keywords


# ---------------------------------------------------------------------------
# Gemini
# ---------------------------------------------------------------------------


class GeminiSchemaTransformer(JsonSchemaTransformer):
    """Gemini's ``responseJsonSchema`` and ``parametersJsonSchema``: JSON Schema as it is.

    Both fields take JSON Schema with ``$ref``/``$defs``, unions and
    formats, so the copy is the schema unchanged; the class is where a
    future Gemini restriction goes.
    """


# ---------------------------------------------------------------------------
# OpenAI strict mode
# ---------------------------------------------------------------------------


class OpenAIStrictSchemaTransformer(JsonSchemaTransformer):
    """OpenAI's strict mode (``json_schema`` response formats and ``strict`` tools).

    Strict mode accepts a subset of JSON Schema: the root is an object, every
    object lists all its properties in ``required`` and sets
    ``additionalProperties: false``, and some keywords are refused. The copy
    accepts the same values, except that an optional property becomes a
    *required, nullable* one; :func:`drop_added_nulls` turns such a ``null``
    in a reply back into an absent key. A schema the subset cannot express
    (an open map such as ``dict[str, int]``, ``allOf``, ``not``,
    conditionals...) is refused: rewriting it would silently change its meaning.
    """

    subschema_keywords = frozenset({"items", "anyOf", "oneOf", "prefixItems"})
    #: Annotations with no effect on validation that strict mode rejects.
    dropped_keywords = frozenset({"default"})
    #: Keywords strict mode refuses (OpenAI structured outputs guide).
    unsupported_keywords: ClassVar[tuple[str, ...]] = (
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "patternProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "contains",
        "minContains",
        "maxContains",
    )

    def transform(self, schema: JsonSchema) -> JsonSchema:
        if schema.get("type") != "object":
            raise SchemaSubsetError("", "the root must be an object schema ('type': 'object')")
        return super().transform(schema)

    def check(self, node: JsonSchema, path: str) -> None:
        for keyword in self.unsupported_keywords:
            if keyword in node:
                raise SchemaSubsetError(path, f"keyword {keyword!r} is not supported")

    def finish(self, original: JsonSchema, out: JsonSchema, path: str) -> JsonSchema:
        if "oneOf" in out:  # strict mode knows anyOf; for disjoint branches they are the same
            out["anyOf"] = out.pop("oneOf")
        if is_object(original):
            close_object(original, out, path)
        return out


def is_object(node: JsonSchema) -> bool:
    """Whether schema object ``node`` describes a JSON object (by type or properties)."""
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node


def close_object(original: JsonSchema, out: JsonSchema, path: str) -> None:
    """Strict mode's object: every property required (optional ones nullable), no others."""
    extra = original.get("additionalProperties")
    properties: JsonSchema = out.get("properties") or {}
    if extra not in (None, False):
        raise SchemaSubsetError(
            path, "objects with additionalProperties (open maps) are not supported"
        )
    if not properties and extra is None:
        raise SchemaSubsetError(
            path, "an object without 'properties' is an open map, which is not supported"
        )
    required = set(original.get("required") or ())
    for name in properties:
        if name not in required:
            properties[name] = nullable(properties[name])
    out["properties"] = properties
    out["required"] = list(properties)
    out["additionalProperties"] = False


def nullable(schema: Any) -> Any:
    """``schema`` that also accepts ``null`` (as it is if it already does)."""
    if not isinstance(schema, dict) or allows_null(schema):
        return schema
    kind = schema.get("type")
    if isinstance(kind, str) and "enum" not in schema and "const" not in schema:
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, list) and "enum" not in schema and "const" not in schema:
        return {**schema, "type": [*kind, "null"]}
    if "anyOf" in schema and len(schema) == 1:
        return {"anyOf": [*schema["anyOf"], {"type": "null"}]}
    return {"anyOf": [schema, {"type": "null"}]}


def allows_null(schema: JsonSchema) -> bool:
    """Whether ``schema`` itself accepts ``null`` (its type, or one of its union's branches)."""
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    branches = schema.get("anyOf") or schema.get("oneOf") or ()
    return any(isinstance(b, dict) and allows_null(b) for b in branches)


def strict_schema(schema: JsonSchema, *, vendor: str, model: str, feature: str) -> JsonSchema:
    """:data:`OPENAI_STRICT`'s copy of ``schema``; what it cannot express refuses ``feature``.

    The refusal is :class:`~llmport.errors.UnsupportedFeatureError`, raised
    before any request, naming where the schema goes beyond strict mode.
    """
    try:
        # Source: OpenAI, "Structured Outputs", "Supported schemas" (what strict mode takes).
        return OPENAI_STRICT.transform(schema)
    except SchemaSubsetError as exc:
        raise UnsupportedFeatureError(
            vendor,
            model,
            feature,
            f"OpenAI strict mode cannot express this schema ({exc}); "
            "rewrite the schema, or opt out of strict mode with "
            "{'type': 'json_schema', 'json_schema': {'schema': ..., 'strict': False}}",
        ) from None


def drop_added_nulls(original: JsonSchema, value: Any) -> Any:
    """Remove from a reply the ``null`` values strict mode forced onto optional properties.

    Walks ``value`` along the caller's ``original`` schema; a ``None`` is
    dropped only where the property was optional and its schema does not
    itself allow null.
    """
    defs = {**(original.get("definitions") or {}), **(original.get("$defs") or {})}
    return _drop(original, value, defs, 0)


def _resolve(schema: Any, defs: JsonSchema) -> Any:
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
        return defs.get(ref.rsplit("/", 1)[1], schema)
    return schema


def _drop(schema: Any, value: Any, defs: JsonSchema, depth: int) -> Any:
    schema = _resolve(schema, defs)
    if depth > 64 or not isinstance(schema, dict):
        return value
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        required = set(schema.get("required") or ())
        out = {}
        for key, item in value.items():
            sub = _resolve(schema["properties"].get(key), defs)
            if (
                item is None
                and key not in required
                and isinstance(sub, dict)
                and not allows_null(sub)
            ):
                continue
            out[key] = _drop(sub, item, defs, depth + 1) if sub is not None else item
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_drop(schema["items"], item, defs, depth + 1) for item in value]
    for branch in schema.get("anyOf") or schema.get("oneOf") or ():
        if (
            isinstance(value, dict)
            and isinstance(_resolve(branch, defs), dict)
            and "properties" in _resolve(branch, defs)
        ):
            return _drop(branch, value, defs, depth + 1)
    return value


def has_optional(schema: Any, _depth: int = 0) -> bool:
    """True if some object in ``schema`` has a property outside its ``required``.

    Only then can a strict reply carry nulls that :func:`drop_added_nulls` removes.
    """
    if _depth > 64 or not isinstance(schema, (dict, list)):
        return False
    if isinstance(schema, list):
        return any(has_optional(item, _depth + 1) for item in schema)
    props = schema.get("properties")
    if isinstance(props, dict) and set(props) - set(schema.get("required") or ()):
        return True
    children: list[Any] = []
    for key in SCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            children.extend(schema[key].values())
    for key in ("items", "anyOf", "oneOf", "prefixItems"):  # the subschemas strict mode walks
        if key in schema:
            children.append(schema[key])
    return any(has_optional(child, _depth + 1) for child in children)


#: OpenAI's strict mode.
OPENAI_STRICT = OpenAIStrictSchemaTransformer()
#: Claude on Anthropic's Messages API.
ANTHROPIC = ClaudeSchemaTransformer()
#: Structured output on Bedrock's Converse (Claude and the other models that take it).
BEDROCK = BedrockSchemaTransformer()
#: Gemini (the schema as it is).
GEMINI = GeminiSchemaTransformer()
