"""Neutral :class:`~llmport.types.Request` -> boto3 ``converse`` keyword arguments.

:func:`build` checks every rule that can reject a request (``prepare()``
calls it before any network call) and produces the keyword arguments of
``client.converse`` / ``client.converse_stream``. Pure functions of the
request: no boto3 import, no I/O. Binary fields (image and document
``bytes``) are raw bytes: botocore base64-encodes them on the wire.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from llmport.content import inline_text_file, is_text_like
from llmport.errors import OptionError, UnsupportedContentError, UnsupportedFeatureError
from llmport.provider import Prepared
from llmport.structured import OutputTool, make_output_tool
from llmport.types import MediaBlock, Message, ModelCapabilities, Request, TextBlock, ToolSpec

from .models import DOCUMENT_FORMATS, MAX_DOCUMENT_BYTES, Family

VENDOR = "bedrock"

#: Where assistant ``reasoningContent`` blocks are kept (Response.extra / Message.extra)
#: so a tool loop echoes them back, as Bedrock requires with extended thinking.
REASONING_KEY = "bedrock_reasoning"

#: The options this plugin models (``BedrockProvider.options``): the core rejects any
#: other name before a request. ``timeout`` is applied by the provider (a client with
#: that read timeout); ``seed`` and ``reasoning_effort`` are rejected with the reason.
KNOWN_OPTIONS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "max_tokens",
        "stop",
        "timeout",
        "seed",
        "reasoning_effort",
        "additional_model_request_fields",
        "additional_model_response_field_paths",
        "guardrail_config",
        "performance_config",
        "request_metadata",
        "service_tier",
    }
)

IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}

#: The text added beside documents when the user turn has none (Bedrock requires one).
DOCUMENT_PROMPT = "See the attached document."

#: JSON-schema keywords the structured-output models do not enforce; they move into
#: the description (llmport still validates the reply against the original schema).
_SCHEMA_NOTED = frozenset(
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


#: Converse's own range for ``inferenceConfig.temperature`` (the core allows 0-2).
MAX_TEMPERATURE = 1.0

#: Passthrough options whose value must be a JSON object.
_DICT_OPTIONS = (
    "additional_model_request_fields",
    "guardrail_config",
    "performance_config",
    "request_metadata",
    "service_tier",
)


@dataclass(slots=True)
class ConversePrepared(Prepared):
    """A request converted once: ``payload`` is the ``converse`` keyword arguments.

    ``output_tool``: the forced tool standing for ``response_format`` (its
    input is the reply), if any. ``read_timeout``: the call's ``timeout``
    option (None: the provider's setting), which picks the client.
    """

    output_tool: OutputTool | None = None
    read_timeout: float | None = None

    @property
    def model(self) -> str:
        """The model id sent (``modelId``)."""
        return str(self.payload["modelId"])


# ---------------------------------------------------------------------------
# Build (checks first)
# ---------------------------------------------------------------------------


def build(
    request: Request,
    caps: ModelCapabilities,
    family: Family,
    vendor: Mapping[str, Any] | None = None,
) -> ConversePrepared:
    """``request`` converted for Converse; raises typed input errors, sends nothing.

    ``vendor`` holds the ``vendor={"bedrock": {...}}`` fields: top-level
    Converse fields in boto3's casing, merged into the payload last (dicts
    recursively, anything else replaced). Each tool's own
    ``ToolSpec.vendor["bedrock"]`` is merged into its ``toolSpec``.
    """
    model = request.model
    _check_options(request, family)

    kwargs: dict[str, Any] = {"modelId": model}
    system = _system(request)
    if system:
        if not family.system_prompt:
            raise UnsupportedFeatureError(
                VENDOR, model, "a system prompt", "this model takes no system prompt on Converse"
            )
        kwargs["system"] = [{"text": system}]

    tools, choice, output_tool = _tools(request, caps, family)
    messages = messages_param(request.messages, model, family)
    if choice is None and _has_tool_blocks(messages):
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            'tool_choice="none" (or no tools) after tool calls in the conversation',
            "Converse needs the tool definitions whenever the messages hold toolUse/toolResult "
            'blocks, and has no "none" choice; pass the tools with tool_choice="auto"',
        )
    kwargs["messages"] = messages
    kwargs["inferenceConfig"] = _inference_config(request)
    if tools:
        config: dict[str, Any] = {"tools": tools}
        if choice is not None:
            config["toolChoice"] = choice
        kwargs["toolConfig"] = config

    rf = request.response_format
    if rf is not None and output_tool is None:
        kwargs["outputConfig"] = {
            "textFormat": {
                "type": "json_schema",
                "structure": {"jsonSchema": _json_schema(rf.schema, rf.name, rf.description)},
            }
        }
    _extras(request, family, kwargs)
    if vendor:
        merge(kwargs, vendor)
    return ConversePrepared(
        request, kwargs, output_tool=output_tool, read_timeout=request.options.get("timeout")
    )


def merge(target: dict[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """Merge JSON ``fields`` into ``target`` in place: dicts recursively, the rest replaced.

    A ``tools`` list (``toolConfig.tools``) is added after the function tools
    llmport built, never instead of them.

    Every dict on a merge path is copied before it changes, and the merged
    values are copied too: neither the caller's fields nor dicts the payload
    shares with the request (options, tool schemas) are ever modified.
    """
    for key, value in fields.items():
        current = target.get(key)
        if isinstance(value, Mapping) and isinstance(current, dict):
            target[key] = merge(dict(current), value)
        elif key == "tools" and isinstance(value, list) and isinstance(current, list):
            target[key] = [*current, *copy.deepcopy(value)]  # beside the function tools
        else:
            target[key] = copy.deepcopy(value)
    return target


def _check_options(request: Request, family: Family) -> None:
    """Bedrock's own option rules (option names and standard values: the core's)."""
    model = request.model
    options = request.options
    if options.get("seed") is not None:
        raise UnsupportedFeatureError(VENDOR, model, "seed", "the Converse API has no seed")
    if options.get("reasoning_effort") is not None:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            "reasoning_effort",
            "Converse has no common reasoning switch; pass the model's own field through "
            "additional_model_request_fields (e.g. {'thinking': {'type': 'enabled', "
            "'budget_tokens': 2048}} for Claude)",
        )
    top_k = options.get("top_k")
    if top_k is not None:
        if not family.top_k:
            raise UnsupportedFeatureError(
                VENDOR, model, "top_k", "only Anthropic models on Bedrock document top_k"
            )
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise OptionError(f"{VENDOR}: top_k must be an integer >= 1, got {top_k!r}")
    temperature = options.get("temperature")
    if isinstance(temperature, (int, float)) and temperature > MAX_TEMPERATURE:
        raise OptionError(
            f"{VENDOR}: temperature must be between 0 and {MAX_TEMPERATURE:g} on Converse, "
            f"got {temperature!r}"
        )
    for key in _DICT_OPTIONS:
        if options.get(key) is not None and not isinstance(options[key], dict):
            raise OptionError(
                f"{VENDOR}: {key} must be a dict (the Converse field's JSON), "
                f"got {type(options[key]).__name__}"
            )


def _system(request: Request) -> str:
    """``Request.system`` plus any system-role messages, in order."""
    parts = [request.system] if request.system else []
    parts += [m.text for m in request.messages if m.role == "system" and m.text]
    return "\n\n".join(parts)


def _inference_config(request: Request) -> dict[str, Any]:
    options = request.options
    config: dict[str, Any] = {}
    if options.get("max_tokens") is not None:
        config["maxTokens"] = options["max_tokens"]
    if options.get("temperature") is not None:
        config["temperature"] = options["temperature"]
    if options.get("top_p") is not None:
        config["topP"] = options["top_p"]
    stop = options.get("stop")
    if stop is not None:
        config["stopSequences"] = [stop] if isinstance(stop, str) else list(stop)
    return config


def _extras(request: Request, family: Family, kwargs: dict[str, Any]) -> None:
    """Vendor extras: passed through as the Converse fields of the same name."""
    options = request.options
    fields = dict(options.get("additional_model_request_fields") or {})
    if options.get("top_k") is not None:
        fields["top_k"] = options["top_k"]  # documented for Claude via additionalModelRequestFields
    if fields:
        kwargs["additionalModelRequestFields"] = fields
    mapping = {
        "additional_model_response_field_paths": "additionalModelResponseFieldPaths",
        "guardrail_config": "guardrailConfig",
        "performance_config": "performanceConfig",
        "request_metadata": "requestMetadata",
        "service_tier": "serviceTier",
    }
    for option, field in mapping.items():
        if options.get(option) is not None:
            kwargs[field] = options[option]


# ---------------------------------------------------------------------------
# Tools, tool choice, structured output
# ---------------------------------------------------------------------------


def _tools(
    request: Request, caps: ModelCapabilities, family: Family
) -> tuple[list[dict[str, Any]], dict[str, Any] | None, OutputTool | None]:
    """(``toolConfig.tools``, ``toolChoice`` or None, the forced output tool if any).

    ``tool_choice="none"`` has no Converse form: the request is sent without
    tools, which is exactly "the model may not call a tool" (documented).
    """
    model = request.model
    specs = [] if request.tool_choice == "none" else list(request.tools)
    rf = request.response_format
    output_tool: OutputTool | None = None
    if rf is not None and not caps.native_structured_output:
        if request.tools and request.tool_choice == "none":
            raise UnsupportedFeatureError(
                VENDOR,
                model,
                'response_format with tool_choice="none"',
                "this model gives structured output through a forced tool, which 'none' forbids",
            )
        if not caps.native_tools:
            raise UnsupportedFeatureError(
                VENDOR,
                model,
                "response_format",
                "this model has neither structured output nor tools",
            )
        output_tool, spec = make_output_tool(rf, {s.name for s in specs})
        specs.append(ToolSpec(spec.name, spec.description, spec.parameters))
    if not specs:
        return [], None, None
    if not caps.native_tools:
        raise UnsupportedFeatureError(
            VENDOR, model, "tools", "this model has no tool use on Converse"
        )
    choice = _tool_choice(request, family, output_tool)
    return [tool_param(s, caps) for s in specs], choice, output_tool


def _tool_choice(
    request: Request, family: Family, output_tool: OutputTool | None
) -> dict[str, Any]:
    """``auto``/``required``/``{"name"}`` -> Converse ``toolChoice``, checked against the family."""
    choice = request.tool_choice
    if output_tool is not None and not request.tools:
        form, out = "tool", {"tool": {"name": output_tool.name}}
    elif isinstance(choice, dict):
        form, out = "tool", {"tool": {"name": choice["name"]}}
    elif choice == "required" or output_tool is not None:
        # With the output tool among other tools the model must call one of them;
        # its final answer is the output tool.
        form, out = "any", {"any": {}}
    else:
        form, out = "auto", {"auto": {}}
    if form not in family.tool_choices:
        what = {"tool": "a named tool_choice", "any": 'tool_choice="required"'}[form]
        if output_tool is not None:
            what = "response_format (a forced output tool)"
        raise UnsupportedFeatureError(
            VENDOR,
            request.model,
            what,
            f"this model takes toolChoice {', '.join(sorted(family.tool_choices))} only",
        )
    return out


def tool_param(spec: ToolSpec, caps: ModelCapabilities) -> dict[str, Any]:
    """One ``toolSpec`` (its input schema under ``inputSchema.json``).

    The tool's ``vendor["bedrock"]`` fields are merged into the ``toolSpec``.
    """
    schema = spec.parameters or {"type": "object", "properties": {}}
    body: dict[str, Any] = {"name": spec.name, "inputSchema": {"json": schema}}
    if spec.description:
        body["description"] = spec.description  # must be non-empty when present
    if spec.strict and caps.native_structured_output:
        body["strict"] = True
    fields = spec.vendor.get(VENDOR)
    if fields:
        merge(body, fields)
    return {"toolSpec": body}


def _json_schema(schema: dict[str, Any], name: str, description: str | None) -> dict[str, Any]:
    """``outputConfig.textFormat.structure.jsonSchema``: the schema as a JSON *string*."""
    out: dict[str, Any] = {"name": name, "schema": json.dumps(adapt_schema(schema))}
    if description:
        out["description"] = description
    return out


def adapt_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` in the subset Bedrock's structured output takes.

    Objects get ``additionalProperties: false``; ``oneOf`` becomes ``anyOf``;
    constraints the models do not enforce move into the description.
    """
    return _adapt(copy.deepcopy(schema))  # type: ignore[no-any-return]


def _adapt(node: Any) -> Any:
    if isinstance(node, list):
        return [_adapt(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    notes: list[str] = []
    for key, value in node.items():
        if key in ("properties", "$defs", "definitions"):
            out[key] = {name: _adapt(sub) for name, sub in value.items()}
        elif key == "oneOf":
            out["anyOf"] = _adapt(value)
        elif key in ("items", "anyOf", "allOf"):
            out[key] = _adapt(value)
        elif key in _SCHEMA_NOTED:
            notes.append(f"{key}: {value}")
        elif key != "additionalProperties":
            out[key] = value
    if out.get("type") == "object" or "properties" in out:
        out["additionalProperties"] = False
    if notes:
        note = "{" + ", ".join(notes) + "}"
        out["description"] = f"{out['description']}\n\n{note}" if out.get("description") else note
    return out


# ---------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------


def messages_param(messages: Iterable[Message], model: str, family: Family) -> list[dict[str, Any]]:
    """Neutral messages -> Converse ``messages``.

    Tool results go in a user turn as ``toolResult`` blocks, before any other
    content of that turn; consecutive turns of the same role are merged
    (Converse alternates roles). A user turn holding documents but no text
    gets :data:`DOCUMENT_PROMPT` (Bedrock requires a text block beside a
    document).
    """
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    role: str | None = None
    names: dict[str, int] = {}  # document names used so far (must be unique per request)

    def flush() -> None:
        nonlocal results, content
        blocks = results + content if role == "user" else content
        if (
            role == "user"
            and any("document" in b for b in blocks)
            and not any("text" in b for b in blocks)
        ):
            blocks.append({"text": DOCUMENT_PROMPT})
        if blocks:
            out.append({"role": role, "content": blocks})
        results, content = [], []

    for message in messages:
        if message.role == "system":
            continue  # sent as the top-level system prompt
        turn = "assistant" if message.role == "assistant" else "user"
        if turn != role:
            flush()
            role = turn
        if turn == "assistant":
            content.extend(message.extra.get(REASONING_KEY, ()))
            content.extend(
                block_param(b, model, family, names) for b in message.blocks if not _blank(b)
            )
            content.extend(
                {"toolUse": {"toolUseId": c.id, "name": c.name, "input": c.arguments}}
                for c in message.tool_calls
            )
        else:
            results.extend(
                _tool_result(r.call_id, r.content, r.is_error, family) for r in message.tool_results
            )
            content.extend(
                block_param(b, model, family, names) for b in message.blocks if not _blank(b)
            )
    flush()
    return out


def _tool_result(call_id: str, text: str, is_error: bool, family: Family) -> dict[str, Any]:
    body: dict[str, Any] = {"toolUseId": call_id}
    if family.tool_result_status:
        body["content"] = [{"text": text}] if text else []
        body["status"] = "error" if is_error else "success"
    else:
        # The model takes no status field: the error is said in the text instead.
        shown = f"Error: {text}" if is_error else text
        body["content"] = [{"text": shown}] if shown else []
    return {"toolResult": body}


def _has_tool_blocks(messages: list[dict[str, Any]]) -> bool:
    return any("toolUse" in b or "toolResult" in b for m in messages for b in m["content"])


def _blank(block: Any) -> bool:
    # Converse rejects blank text blocks.
    return isinstance(block, TextBlock) and not block.text.strip()


def block_param(
    block: TextBlock | MediaBlock, model: str, family: Family, names: dict[str, int]
) -> dict[str, Any]:
    """One content block: text, image, document, or an inlined text file."""
    if isinstance(block, TextBlock):
        return {"text": block.text}
    mt = block.media_type
    if block.type == "audio" or mt.startswith("audio/"):
        raise UnsupportedContentError(
            VENDOR, model, block.describe(), "llmport-bedrock sends no audio to Converse"
        )
    if block.type == "image" or mt.startswith("image/"):
        fmt = IMAGE_FORMATS.get(mt)
        if fmt is None:
            raise UnsupportedContentError(
                VENDOR, model, block.describe(), "give its media_type (png, jpeg, gif or webp)"
            )
        return {"image": {"format": fmt, "source": _source(block, model, family)}}
    fmt = DOCUMENT_FORMATS.get(mt)
    if fmt is not None and mt in _native_files(family):
        if block.data is not None and block.size > MAX_DOCUMENT_BYTES:
            raise UnsupportedContentError(
                VENDOR,
                model,
                block.describe(),
                f"document is {block.size} bytes, over the Converse limit of {MAX_DOCUMENT_BYTES}",
            )
        name = unique_name(document_name(block.filename, block.index), names)
        return {"document": {"format": fmt, "name": name, "source": _source(block, model, family)}}
    if is_text_like(mt):
        return {"text": inline_text_file(block, VENDOR, model).text}
    raise UnsupportedContentError(
        VENDOR, model, block.describe(), f"files of type {mt} are not accepted"
    )


def _native_files(family: Family) -> frozenset[str]:
    return family.caps.file_types


def _source(block: MediaBlock, model: str, family: Family) -> dict[str, Any]:
    if block.url is None:
        assert block.data is not None
        return {"bytes": block.data}
    if block.url.startswith("s3://"):
        if not family.s3:
            raise UnsupportedContentError(
                VENDOR, model, block.describe(), "this model takes no s3:// locations"
            )
        return {"s3Location": {"uri": block.url}}
    raise UnsupportedContentError(
        VENDOR,
        model,
        block.describe(),
        "Converse takes media as inline bytes or s3:// locations, not URLs; pass the bytes",
    )


_NAME_JUNK = re.compile(r"[^A-Za-z0-9\-()\[\]]+")


def document_name(filename: str | None, index: int) -> str:
    """A Converse-safe document name (SPEC §10).

    Only letters, digits, single spaces, hyphens, parentheses and square
    brackets are allowed: the extension is dropped (the format says it) and
    every other run of characters becomes one space. ``"q3_report.v2.pdf"``
    -> ``"q3 report v2"``; no usable name -> ``"document N"``.
    """
    stem = re.split(r"[\\/]", filename or "")[-1]  # a path's last part only
    head, dot, _ = stem.rpartition(".")
    if dot and head:
        stem = head
    name = _NAME_JUNK.sub(" ", stem).strip()[:200].strip()
    return name or f"document {index}"


def unique_name(name: str, used: dict[str, int]) -> str:
    """``name``, or ``name (2)``, ``name (3)``... if already used in this request."""
    count = used.get(name, 0) + 1
    used[name] = count
    return name if count == 1 else f"{name} ({count})"
