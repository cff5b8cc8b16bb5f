"""Neutral :class:`~llmport.types.Request` -> ``openai`` SDK keyword arguments.

Two target shapes: Chat Completions (``chat_kwargs``) and Responses
(``responses_kwargs``). Both take the model's capabilities and either
convert every block and option or raise a typed input error; nothing is
dropped. The conversion rules (also in docs/providers/openai.md):

* images: a ``data:`` URL of the cached base64, or the caller's URL;
* audio (Chat only, audio models): ``input_audio`` with format wav/mp3;
* PDF: a ``file`` / ``input_file`` part with base64 ``file_data``;
* other text-like files: inlined by :func:`llmport.content.inline_text_file`;
* anything else: :class:`~llmport.errors.UnsupportedContentError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from llmport.content import inline_text_file, is_text_like
from llmport.errors import UnsupportedContentError, UnsupportedFeatureError
from llmport.types import (
    Block,
    MediaBlock,
    Message,
    ModelCapabilities,
    Request,
    ResponseFormat,
    TextBlock,
    ToolCall,
    ToolChoice,
    ToolSpec,
)

AUDIO_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3"}
#: Options that become SDK call arguments rather than body fields.
CALL_OPTIONS = ("timeout", "extra_headers", "extra_query")
#: Body fields the plugin owns; an option may not overwrite them.
RESERVED = frozenset(
    {
        "model",
        "messages",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "response_format",
        "text",
        "stream",
        "stream_options",
    }
)


# ---------------------------------------------------------------------------
# Chat Completions
# ---------------------------------------------------------------------------


def chat_kwargs(
    request: Request,
    vendor: str,
    caps: ModelCapabilities,
    *,
    stream: bool = False,
    max_tokens_field: str = "max_completion_tokens",
) -> dict[str, Any]:
    """Keyword arguments for ``client.chat.completions.create``."""
    model = request.model
    kwargs: dict[str, Any] = {"model": model, "messages": chat_messages(request, vendor, caps)}
    if request.tools:
        kwargs["tools"] = [chat_tool(spec, vendor, model) for spec in request.tools]
        kwargs["tool_choice"] = chat_tool_choice(request.tool_choice)
        kwargs["parallel_tool_calls"] = request.parallel_tool_calls
    if request.response_format is not None:
        kwargs["response_format"] = {
            "type": "json_schema",
            "json_schema": json_schema_format(request.response_format, vendor, model),
        }
    body, call = split_options(request.options, vendor, model, api="chat")
    if "max_tokens" in body:
        body[max_tokens_field] = body.pop("max_tokens")
    kwargs.update(call)
    _merge_body(kwargs, body)
    if stream:
        kwargs["stream"] = True
        kwargs["stream_options"] = {"include_usage": True}
    return kwargs


def chat_messages(request: Request, vendor: str, caps: ModelCapabilities) -> list[dict[str, Any]]:
    """The ``messages`` list: system prompt, turns, tool calls and results."""
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        # Results answer the previous assistant turn, so they come first.
        for result in message.tool_results:
            out.append({"role": "tool", "tool_call_id": result.call_id, "content": result.content})
        if message.role == "assistant":
            out.append(chat_assistant(message, vendor, request.model))
        elif message.blocks:
            role = "system" if message.role == "system" else "user"
            out.append(
                {"role": role, "content": chat_content(message.blocks, vendor, request.model, caps)}
            )
    return out


def chat_content(
    blocks: tuple[Block, ...], vendor: str, model: str, caps: ModelCapabilities
) -> str | list[dict[str, Any]]:
    """A lone text block stays a string (as OpenAI's own examples send it)."""
    if len(blocks) == 1 and isinstance(blocks[0], TextBlock):
        return blocks[0].text
    return [chat_part(block, vendor, model, caps) for block in blocks]


def chat_part(block: Block, vendor: str, model: str, caps: ModelCapabilities) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    kind = media_kind(block, caps)
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": block.url or block.data_url()}}
    if kind == "audio":
        fmt = AUDIO_FORMATS.get(block.media_type)
        if fmt is None or "audio" not in caps.input_modalities:
            raise UnsupportedContentError(
                vendor,
                model,
                block.describe(),
                "Chat Completions takes audio only as wav or mp3, and only on audio models "
                "(e.g. gpt-4o-audio-preview)",
            )
        _need_inline(block, vendor, model)
        return {"type": "input_audio", "input_audio": {"data": block.base64(), "format": fmt}}
    if kind == "native_file":
        _need_inline(block, vendor, model)
        return {
            "type": "file",
            "file": {"filename": file_name(block), "file_data": block.data_url()},
        }
    return {"type": "text", "text": inline_file(block, kind, vendor, model).text}


def chat_assistant(message: Message, vendor: str, model: str) -> dict[str, Any]:
    for block in message.blocks:
        if not isinstance(block, TextBlock):
            raise UnsupportedContentError(
                vendor, model, block.describe(), "an assistant turn can only hold text"
            )
    out: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call_arguments(call)},
            }
            for call in message.tool_calls
        ]
    elif out["content"] is None:
        out["content"] = ""
    return out


def chat_tool(spec: ToolSpec, vendor: str, model: str) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "parameters": tool_parameters(spec, vendor, model),
    }
    if spec.strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def chat_tool_choice(choice: ToolChoice) -> Any:
    if isinstance(choice, Mapping):
        return {"type": "function", "function": {"name": choice["name"]}}
    return choice


# ---------------------------------------------------------------------------
# Responses
# ---------------------------------------------------------------------------

#: Where Response.extra keeps the reasoning items a reasoning model returned;
#: they are echoed back on the next turn (see convert_out).
REASONING_ITEMS = "openai_reasoning_items"


def responses_kwargs(
    request: Request, vendor: str, caps: ModelCapabilities, *, stream: bool = False
) -> dict[str, Any]:
    """Keyword arguments for ``client.responses.create``."""
    model = request.model
    kwargs: dict[str, Any] = {"model": model, "input": responses_input(request, vendor, caps)}
    if request.system:
        kwargs["instructions"] = request.system
    if request.tools:
        kwargs["tools"] = [responses_tool(spec, vendor, model) for spec in request.tools]
        choice = request.tool_choice
        kwargs["tool_choice"] = (
            {"type": "function", "name": choice["name"]} if isinstance(choice, Mapping) else choice
        )
        kwargs["parallel_tool_calls"] = request.parallel_tool_calls
    if request.response_format is not None:
        kwargs["text"] = {
            "format": {
                "type": "json_schema",
                **json_schema_format(request.response_format, vendor, model),
            }
        }
    body, call = split_options(request.options, vendor, model, api="responses")
    if "max_tokens" in body:
        body["max_output_tokens"] = body.pop("max_tokens")
    if "reasoning_effort" in body:
        body["reasoning"] = {**body.get("reasoning", {}), "effort": body.pop("reasoning_effort")}
    kwargs.update(call)
    _merge_body(kwargs, body)
    if stream:
        kwargs["stream"] = True
    return kwargs


def responses_input(request: Request, vendor: str, caps: ModelCapabilities) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in request.messages:
        for result in message.tool_results:
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": result.call_id,
                    "output": result.content,
                }
            )
        if message.role == "assistant":
            out.extend(responses_assistant(message, vendor, request.model))
        elif message.blocks:
            role = "system" if message.role == "system" else "user"
            blocks = message.blocks
            content: Any
            if len(blocks) == 1 and isinstance(blocks[0], TextBlock):
                content = blocks[0].text
            else:
                content = [responses_part(b, vendor, request.model, caps) for b in blocks]
            out.append({"role": role, "content": content})
    return out


def responses_part(
    block: Block, vendor: str, model: str, caps: ModelCapabilities
) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "input_text", "text": block.text}
    kind = media_kind(block, caps)
    if kind == "image":
        return {"type": "input_image", "image_url": block.url or block.data_url(), "detail": "auto"}
    if kind == "audio":
        raise UnsupportedContentError(
            vendor,
            model,
            block.describe(),
            "the Responses API takes no audio input; use 'openai:' "
            "(Chat Completions) with an audio model",
        )
    if kind == "native_file":
        if block.url is not None:
            return {"type": "input_file", "file_url": block.url}
        return {"type": "input_file", "filename": file_name(block), "file_data": block.data_url()}
    return {"type": "input_text", "text": inline_file(block, kind, vendor, model).text}


def responses_assistant(message: Message, vendor: str, model: str) -> list[dict[str, Any]]:
    """Reasoning items (echoed verbatim), the text, then the function calls."""
    items: list[dict[str, Any]] = [dict(item) for item in message.extra.get(REASONING_ITEMS, ())]
    for block in message.blocks:
        if not isinstance(block, TextBlock):
            raise UnsupportedContentError(
                vendor, model, block.describe(), "an assistant turn can only hold text"
            )
    if message.text:
        items.append({"role": "assistant", "content": message.text})
    for call in message.tool_calls:
        item: dict[str, Any] = {
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": call_arguments(call),
        }
        if call.extra.get("item_id"):
            item["id"] = call.extra["item_id"]
        items.append(item)
    return items


def responses_tool(spec: ToolSpec, vendor: str, model: str) -> dict[str, Any]:
    # The Responses API makes tools strict unless told otherwise: always say which.
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": tool_parameters(spec, vendor, model),
        "strict": spec.strict,
    }


# ---------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------


def media_kind(block: MediaBlock, caps: ModelCapabilities) -> str:
    """``image``, ``audio``, ``native_file`` (sent as a file part) or ``inline``.

    Raises nothing itself for capability reasons: :meth:`Provider.prepare`
    (``check_block``) has already ruled out what the model cannot take; the
    callers raise for what the API cannot take at all.
    """
    mt = block.media_type
    if block.type == "image" or mt.startswith("image/"):
        return "image"
    if block.type == "audio" or mt.startswith("audio/"):
        return "audio"
    if mt in caps.file_types:
        return "native_file"
    if is_text_like(mt):
        return "inline"
    return "unsupported"


def inline_file(block: MediaBlock, kind: str, vendor: str, model: str) -> TextBlock:
    """The documented rule for text-like files; anything else is refused by name."""
    if kind != "inline":
        raise UnsupportedContentError(
            vendor,
            model,
            block.describe(),
            f"files of type {block.media_type} are not accepted "
            "(native: PDF; text-like files are inlined)",
        )
    return inline_text_file(block, vendor, model)


def _need_inline(block: MediaBlock, vendor: str, model: str) -> None:
    if block.data is None:
        raise UnsupportedContentError(
            vendor, model, block.describe(), "this API needs the bytes inline, not a URL"
        )


def file_name(block: MediaBlock) -> str:
    if block.filename:
        return block.filename
    ext = {"application/pdf": ".pdf"}.get(block.media_type, "")
    return f"file-{block.index}{ext}"


def call_arguments(call: ToolCall) -> str:
    """The arguments text to echo: exactly what the model sent, when known."""
    return call.raw_arguments or json.dumps(call.arguments)


def tool_parameters(spec: ToolSpec, vendor: str, model: str) -> dict[str, Any]:
    params = spec.parameters or {"type": "object", "properties": {}}
    if spec.strict:
        return to_strict(params, vendor=vendor, model=model, feature=f"strict tool {spec.name!r}")
    return params


def json_schema_format(rf: ResponseFormat, vendor: str, model: str) -> dict[str, Any]:
    """``{"name", "schema", "strict"[, "description"]}``, strict-adapted when strict."""
    schema = (
        to_strict(rf.schema, vendor=vendor, model=model, feature="response_format")
        if rf.strict
        else rf.schema
    )
    out: dict[str, Any] = {"name": rf.name, "schema": schema, "strict": rf.strict}
    if rf.description:
        out["description"] = rf.description
    return out


def split_options(
    options: Mapping[str, Any], vendor: str, model: str, *, api: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(body fields, SDK call arguments). Unknown options go to the body as vendor extras."""
    body: dict[str, Any] = {}
    call: dict[str, Any] = {}
    for key, value in options.items():
        if value is None:
            continue
        if key in CALL_OPTIONS:
            call[key] = value
        elif key == "extra_body":
            if not isinstance(value, Mapping):
                raise TypeError("extra_body must be a mapping")
            body.update(value)
        elif key in RESERVED:
            raise UnsupportedFeatureError(
                vendor,
                model,
                f"option {key!r}",
                "llmport sets this field itself; use the matching exec() parameter",
            )
        elif key == "n" and value != 1:
            raise UnsupportedFeatureError(
                vendor, model, "option n != 1", "llmport reads one choice"
            )
        elif api == "responses" and key in ("stop", "seed"):
            raise UnsupportedFeatureError(
                vendor,
                model,
                f"option {key!r}",
                "the Responses API has no such parameter; use the 'openai:' "
                "prefix (Chat Completions)",
            )
        else:
            body[key] = value
    return body, call


def _merge_body(kwargs: dict[str, Any], body: dict[str, Any]) -> None:
    """Body fields go through ``extra_body`` so any vendor extra reaches the wire as given."""
    if body:
        kwargs["extra_body"] = body


# ---------------------------------------------------------------------------
# OpenAI strict mode
# ---------------------------------------------------------------------------
# Strict mode (``response_format`` json_schema and ``strict`` tools) accepts a
# subset of JSON Schema: the root is an object, every object lists all its
# properties in ``required`` and sets ``additionalProperties: false``, and
# some keywords are refused. ``to_strict`` rewrites a schema into that subset
# without changing which values it accepts, except that an optional property
# becomes a *required, nullable* one; ``drop_added_nulls`` (used on replies)
# turns such a ``null`` back into an absent key, so the reply validates
# against the caller's original schema. A schema the subset cannot express
# (an open map such as ``dict[str, int]``, ``allOf``, ``not``,
# conditionals, ...) raises UnsupportedFeatureError before any request:
# rewriting it would silently change its meaning.

#: Keywords strict mode refuses (OpenAI structured outputs guide).
UNSUPPORTED_KEYWORDS = (
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
# Annotations with no effect on validation that strict mode rejects.
_DROPPED = ("default",)


class StrictSchemaError(Exception):
    """Internal: where and why a schema cannot be made strict."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path or '<root>'}: {reason}")


def to_strict(schema: dict[str, Any], *, vendor: str, model: str, feature: str) -> dict[str, Any]:
    """A strict-mode copy of ``schema`` or :class:`UnsupportedFeatureError`."""
    try:
        if schema.get("type") != "object":
            raise StrictSchemaError("", "the root must be an object schema ('type': 'object')")
        converted: dict[str, Any] = _convert(schema, "")
        return converted
    except StrictSchemaError as exc:
        raise UnsupportedFeatureError(
            vendor,
            model,
            feature,
            f"OpenAI strict mode cannot express this schema ({exc}); "
            "rewrite the schema, or opt out of strict mode with "
            "{'type': 'json_schema', 'json_schema': {'schema': ..., 'strict': False}}",
        ) from None


def _convert(node: Any, path: str) -> Any:
    if isinstance(node, list):
        return [_convert(item, f"{path}/{i}") for i, item in enumerate(node)]
    if not isinstance(node, dict):
        return node
    for keyword in UNSUPPORTED_KEYWORDS:
        if keyword in node:
            raise StrictSchemaError(path, f"keyword {keyword!r} is not supported")
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key in ("properties", "$defs", "definitions"):
            out[key] = {name: _convert(sub, f"{path}/{key}/{name}") for name, sub in value.items()}
        elif key in ("items", "anyOf", "oneOf", "prefixItems"):
            out[key] = _convert(value, f"{path}/{key}")
        else:
            out[key] = value
    if "oneOf" in out:  # strict mode knows anyOf; for disjoint branches they are the same
        out["anyOf"] = out.pop("oneOf")
    if _is_object(node):
        _close_object(node, out, path)
    return out


def _is_object(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node


def _close_object(original: dict[str, Any], out: dict[str, Any], path: str) -> None:
    extra = original.get("additionalProperties")
    properties: dict[str, Any] = out.get("properties") or {}
    if extra not in (None, False):
        raise StrictSchemaError(
            path, "objects with additionalProperties (open maps) are not supported"
        )
    if not properties and extra is None:
        raise StrictSchemaError(
            path, "an object without 'properties' is an open map, which is not supported"
        )
    required = set(original.get("required") or ())
    for name in properties:
        if name not in required:
            properties[name] = _nullable(properties[name])
    out["properties"] = properties
    out["required"] = list(properties)
    out["additionalProperties"] = False


def _nullable(schema: Any) -> dict[str, Any]:
    if not isinstance(schema, dict) or _allows_null(schema):
        return schema  # type: ignore[no-any-return]
    kind = schema.get("type")
    if isinstance(kind, str) and "enum" not in schema and "const" not in schema:
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, list) and "enum" not in schema and "const" not in schema:
        return {**schema, "type": [*kind, "null"]}
    if "anyOf" in schema and len(schema) == 1:
        return {"anyOf": [*schema["anyOf"], {"type": "null"}]}
    return {"anyOf": [schema, {"type": "null"}]}


def _allows_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    branches = schema.get("anyOf") or schema.get("oneOf") or ()
    return any(isinstance(b, dict) and _allows_null(b) for b in branches)


def drop_added_nulls(original: dict[str, Any], value: Any) -> Any:
    """Remove ``null`` values strict mode forced onto optional properties.

    Walks ``value`` along the caller's ``original`` schema; a ``None`` is
    dropped only where the property was optional and its schema does not
    itself allow null.
    """
    defs = {**(original.get("definitions") or {}), **(original.get("$defs") or {})}
    return _drop(original, value, defs, 0)


def _resolve(schema: Any, defs: dict[str, Any]) -> Any:
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
        return defs.get(ref.rsplit("/", 1)[1], schema)
    return schema


def _drop(schema: Any, value: Any, defs: dict[str, Any], depth: int) -> Any:
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
                and not _allows_null(sub)
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
    """True if some object in ``schema`` has a property outside its ``required``."""
    if _depth > 64 or not isinstance(schema, (dict, list)):
        return False
    if isinstance(schema, list):
        return any(has_optional(item, _depth + 1) for item in schema)
    props = schema.get("properties")
    if isinstance(props, dict) and set(props) - set(schema.get("required") or ()):
        return True
    children: list[Any] = []
    for key in ("properties", "$defs", "definitions"):
        if isinstance(schema.get(key), dict):
            children.extend(schema[key].values())
    for key in ("items", "anyOf", "oneOf", "prefixItems"):
        if key in schema:
            children.append(schema[key])
    return any(has_optional(child, _depth + 1) for child in children)
