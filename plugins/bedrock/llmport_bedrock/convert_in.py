"""Neutral :class:`~llmport.messages.types.Request` -> boto3 ``converse`` keyword arguments.

:func:`build_request` checks every rule that can reject a request (``prepare()``
calls it before any network call) and produces the keyword arguments of
``client.converse`` / ``client.converse_stream``. Pure functions of the
request: no boto3 import, no I/O. Inline media (image, document and video
``bytes``) are :class:`MediaBytes` markers standing for the block's bytes:
the direct path splices the block's cached base64 into the serialized body,
and :func:`materialize` gives the real bytes to anything that calls boto3.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from llmport.errors import (
    ContentError,
    OptionError,
    UnsupportedContentError,
    UnsupportedFeatureError,
)
from llmport.messages.content import inline_text_file, is_text_like
from llmport.messages.types import (
    Block,
    CacheControl,
    FileRef,
    MediaBlock,
    Message,
    ModelCapabilities,
    NativeTool,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolResult,
    ToolSpec,
)
from llmport.output.structured import OutputTool, make_output_tool
from llmport.provider.contract import Prepared
from llmport.provider.media import check_block
from llmport.provider.thinking import EFFORT_BUDGETS, MIN_BUDGET, check_thinking_sampling
from llmport.provider.tool_media import move_answer_media, move_tool_media
from llmport.schema.transform import BEDROCK

from .files import as_block, s3_uri_problem
from .models import CLAUDE_THINKING, DOCUMENT_FORMATS, MAX_DOCUMENT_BYTES, Family

VENDOR = "bedrock"

#: Thinking budgets (``thinking.budget_tokens``) for Claude per reasoning effort: the
#: same table as llmport-anthropic (``llmport.provider.thinking``), capped below the output limit.
CLAUDE_BUDGETS = EFFORT_BUDGETS
#: Claude requires ``budget_tokens >= 1024``.
MIN_THINKING_BUDGET = MIN_BUDGET
#: Nova 2 ``reasoningConfig.maxReasoningEffort`` per reasoning effort.
NOVA_EFFORTS = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}
#: The effort used when ``reasoning=`` gives neither an effort nor a budget (summary only).
DEFAULT_EFFORT = "medium"
#: NativeTool kind -> Converse ``systemTool.name``.
SYSTEM_TOOLS = {"code_execution": "nova_code_interpreter"}
#: ``cachePoint.ttl`` values Converse documents.
CACHE_TTLS = ("5m", "1h")

#: The options this plugin models (``BedrockProvider.options``): the core rejects any
#: other name before a request. ``timeout`` is applied by the provider (a client with
#: that read timeout); ``seed`` is rejected with the reason. ``reasoning=`` and its
#: alias ``reasoning_effort=`` arrive as ``Request.reasoning`` (the core normalises them).
KNOWN_OPTIONS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "max_tokens",
        "stop",
        "timeout",
        "seed",
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
    ``wire`` / ``stream_wire``: the URL path and JSON body of Converse /
    ConverseStream, serialized on the first send and reused by every attempt
    (set by the provider, never by prepare).
    """

    output_tool: OutputTool | None = None
    read_timeout: float | None = None
    wire: tuple[str, bytes] | None = None
    stream_wire: tuple[str, bytes] | None = None

    @property
    def model(self) -> str:
        """The model id sent (``modelId``)."""
        return str(self.payload["modelId"])


class MediaBytes(bytes):
    """A media block's bytes in a prepared payload, standing in for them until sent.

    Its value is a short marker unique to the block: the direct path
    serializes the payload with it and splices the block's cached base64
    (:meth:`MediaBlock.base64_bytes`, one encode per exec) in its place, so no
    turn of a tool loop encodes the image again and no copy of its raw bytes
    sits in the payload. Whatever hands a payload to boto3 itself (the
    fallback, token counting, batch files) takes :func:`materialize`. Compares
    equal to the bytes it stands for.
    """

    block: MediaBlock

    @classmethod
    def of(cls, block: MediaBlock) -> MediaBytes:
        marker = cls(b"llmport-media:" + os.urandom(12))
        marker.block = block
        return marker

    def real(self) -> bytes:
        """The block's bytes (decoded again if llmport released them)."""
        data = self.block.data
        assert data is not None
        return data

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MediaBytes):
            return other.block is self.block
        if isinstance(other, bytes | bytearray):
            return bytes(other) == self.block.data
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(id(self.block))

    def __copy__(self) -> MediaBytes:
        return self

    def __deepcopy__(self, memo: Any) -> MediaBytes:
        return self  # the block is shared, never copied (it may hold megabytes)

    def __repr__(self) -> str:
        return f"MediaBytes({self.block.describe()})"


def materialize(value: Any) -> Any:
    """``value`` with every :class:`MediaBytes` replaced by the bytes it stands for.

    Returns ``value`` itself when it holds none (no copy of a plain payload).
    """
    if isinstance(value, MediaBytes):
        return value.real()
    if isinstance(value, dict):
        items = {k: materialize(v) for k, v in value.items()}
        return value if all(items[k] is value[k] for k in value) else items
    if isinstance(value, list):
        out = [materialize(v) for v in value]
        return value if all(a is b for a, b in zip(out, value, strict=True)) else out
    return value


def media_of(value: Any, found: list[MediaBytes] | None = None) -> list[MediaBytes]:
    """Every :class:`MediaBytes` in ``value`` (a payload), in order."""
    found = [] if found is None else found
    if isinstance(value, MediaBytes):
        found.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            media_of(v, found)
    elif isinstance(value, list):
        for v in value:
            media_of(v, found)
    return found


# ---------------------------------------------------------------------------
# Build (checks first)
# ---------------------------------------------------------------------------


def build_request(
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
    if request.cache is not None:
        _check_cache_settings(request)
    thinking = reasoning_fields(request, caps, family) if request.reasoning is not None else None

    kwargs: dict[str, Any] = {"modelId": model}
    system = _system_field(request, family)
    if system:
        kwargs["system"] = system

    tools, choice, output_tool = _tools(request, caps, family)
    if thinking is not None and "thinking" in thinking:
        _check_claude_thinking(request, output_tool)
    messages = messages_param(request.messages, model, family, caps)
    if choice is None and _has_tool_blocks(messages):
        _no_tools_after_tool_calls(model)
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
    _extras(request, family, kwargs, thinking)
    if vendor:
        merge(kwargs, vendor)
    return ConversePrepared(
        request, kwargs, output_tool=output_tool, read_timeout=request.options.get("timeout")
    )


#: The Converse request's fields that CountTokens counts (the rest costs no input).
COUNT_FIELDS = ("messages", "system", "toolConfig", "additionalModelRequestFields")


def build_count_request(payload: Mapping[str, Any], model: str) -> dict[str, Any]:
    """The ``count_tokens`` keyword arguments for a built Converse request.

    CountTokens takes the base model id (``anthropic.claude-...``, without the
    ``us.`` inference-profile prefix) and the Converse request's ``messages``,
    ``system``, ``toolConfig`` and ``additionalModelRequestFields``.
    """
    converse = {key: payload[key] for key in COUNT_FIELDS if key in payload}
    return {"modelId": model, "input": {"converse": converse}}


def _system_field(request: Request, family: Family) -> list[dict[str, Any]] | None:
    """The ``system`` field, if the request has a system prompt the model takes."""
    system = system_param(request, family)
    # Source: Bedrock, "Supported models and model features" (Converse): the system prompt
    #   column (Titan, Mistral 7B/Mixtral, Cohere Command have none).
    if system and not family.system_prompt:
        raise UnsupportedFeatureError(
            VENDOR,
            request.model,
            "a system prompt",
            "this model takes no system prompt on Converse",
        )
    return system or None


# Source: Bedrock Converse API reference, "ToolConfiguration": the API answers ValidationException
#   when messages hold toolUse/toolResult blocks and toolConfig is absent.
def _no_tools_after_tool_calls(model: str) -> None:
    raise UnsupportedFeatureError(
        VENDOR,
        model,
        'tool_choice="none" (or no tools) after tool calls in the conversation',
        "Converse needs the tool definitions whenever the messages hold toolUse/toolResult "
        'blocks, and has no "none" choice; pass the tools with tool_choice="auto"',
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
    # Source: Bedrock Converse API reference, "InferenceConfiguration": maxTokens, stopSequences,
    #   temperature, topP only (no seed).
    if options.get("seed") is not None:
        raise UnsupportedFeatureError(VENDOR, model, "seed", "the Converse API has no seed")
    top_k = options.get("top_k")
    if top_k is not None:
        # Source: Bedrock, "Inference request parameters" (per model): top_k in
        #   additionalModelRequestFields is Anthropic Claude's; other models name it differently
        #   (Nova: inferenceConfig.topK), so vendor= carries it there.
        if not family.top_k:
            raise UnsupportedFeatureError(
                VENDOR, model, "top_k", "only Anthropic models on Bedrock document top_k"
            )
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise OptionError(f"{VENDOR}: top_k must be an integer >= 1, got {top_k!r}")
    temperature = options.get("temperature")
    # Source: Bedrock Converse API reference, "InferenceConfiguration": temperature 0-1.
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


def system_param(request: Request, family: Family) -> list[dict[str, Any]]:
    """Converse ``system``: one text block, or the system blocks with their cache points.

    A system prompt given as several blocks, or with a cache mark, is sent as
    separate blocks (each marked one followed by ``cachePoint``: given as blocks, sent as blocks);
    system-role messages follow as one more text block.
    """
    blocks = request.system_blocks
    if len(blocks) < 2 and not any(b.cache is not None for b in blocks):
        text = _system(request)
        return [{"text": text}] if text else []
    out: list[dict[str, Any]] = []
    for block in request.system_blocks:
        if block.text:
            out.append({"text": block.text})
        if block.cache is not None:
            out.append(cache_point(block.cache, request.model, family))
    rest = [m.text for m in request.messages if m.role == "system" and m.text]
    if rest:
        out.append({"text": "\n\n".join(rest)})
    return out


# ---------------------------------------------------------------------------
# Prompt caching and reasoning
# ---------------------------------------------------------------------------


def cache_point(mark: CacheControl, model: str, family: Family) -> dict[str, Any]:
    """The ``cachePoint`` entry for a cache mark (``ttl`` only where Bedrock documents it)."""
    if mark.ttl is None:
        return {"cachePoint": {"type": "default"}}
    # Source: Bedrock Converse API reference, "CachePointBlock"; Bedrock, "Prompt caching": ttl
    #   "5m" or "1h", documented for Claude 4.5 and later (the family table).
    if mark.ttl not in CACHE_TTLS:
        raise UnsupportedFeatureError(
            VENDOR, model, f"cache ttl {mark.ttl!r}", "Converse's cachePoint takes ttl 5m or 1h"
        )
    if not family.cache_ttl:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            f"cache ttl {mark.ttl!r}",
            "Bedrock documents cachePoint ttl only for Claude 4.5 and later",
        )
    return {"cachePoint": {"type": "default", "ttl": mark.ttl}}


def _check_cache_settings(request: Request) -> None:
    cache = request.cache
    if cache is None:
        return
    # Source: Bedrock Converse API reference, "CachePointBlock": type and ttl only (no key or
    #   retention).
    for name, value in (("key", cache.key), ("retention", cache.retention)):
        if value is not None:
            raise UnsupportedFeatureError(
                VENDOR,
                request.model,
                f"cache {name}",
                "Bedrock has no prompt-cache key or retention: it caches at cachePoint marks",
            )


def reasoning_fields(
    request: Request, caps: ModelCapabilities, family: Family
) -> dict[str, Any] | None:
    """``Request.reasoning`` as ``additionalModelRequestFields`` (None: nothing to send).

    Claude: ``thinking: {type: enabled, budget_tokens}`` (an effort becomes a
    budget by :data:`CLAUDE_BUDGETS`). Nova 2: ``reasoningConfig: {type:
    enabled, maxReasoningEffort}`` (by :data:`NOVA_EFFORTS`; no budget).
    Effort ``none`` or a budget of 0 sends nothing (reasoning is off by
    default on both). Other models: UnsupportedFeatureError.
    """
    r = request.reasoning
    if r is None:
        return None
    model = request.model
    # Source: Bedrock, "Inference request parameters" (per model): the reasoning field is model-
    #   specific (Claude thinking, Nova reasoningConfig); others go through
    #   additional_model_request_fields.
    if family.reasoning is None:
        raise UnsupportedFeatureError(
            VENDOR, model, "reasoning", "Bedrock documents no reasoning field for this model"
        )
    if r.effort == "none" or r.budget_tokens == 0:
        return None
    if family.reasoning == CLAUDE_THINKING:
        return {"thinking": {"type": "enabled", "budget_tokens": _claude_budget(request, caps)}}
    # Nova 2
    # Source: Bedrock, "Amazon Nova 2 extended thinking": reasoningConfig takes
    #   maxReasoningEffort (low, medium, high), no token budget or summaries.
    if r.budget_tokens is not None:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            "reasoning budget_tokens",
            "Nova takes an effort (low, medium, high) in reasoningConfig, not a token budget",
        )
    if r.summary:
        raise UnsupportedFeatureError(
            VENDOR, model, "reasoning summary", "Nova has no reasoning summaries"
        )
    effort = NOVA_EFFORTS[r.effort or DEFAULT_EFFORT]
    return {"reasoningConfig": {"type": "enabled", "maxReasoningEffort": effort}}


def _claude_budget(request: Request, caps: ModelCapabilities) -> int:
    r = request.reasoning
    assert r is not None
    model = request.model
    budget = r.budget_tokens
    limit = caps.max_output_tokens
    if budget is None:
        budget = CLAUDE_BUDGETS[r.effort or DEFAULT_EFFORT]
        if limit is not None:
            budget = min(budget, limit - 1)  # "max" on a model with a smaller output limit
    # Source: Anthropic, "Building with extended thinking" (Bedrock's Claude fields): thinking takes
    #   budget_tokens >= 1,024; adaptive thinking is not documented on Bedrock for these models.
    elif budget < 0:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            f"reasoning budget_tokens={budget}",
            "Claude on Bedrock takes a fixed thinking budget (>= 1024), not a dynamic one",
        )
    elif budget < MIN_THINKING_BUDGET:
        raise OptionError(
            f"{VENDOR}: Claude's thinking budget must be >= {MIN_THINKING_BUDGET} tokens, "
            f"got {budget}"
        )
    max_tokens = request.options.get("max_tokens")
    if max_tokens is not None and max_tokens <= budget:
        raise OptionError(
            f"{VENDOR}: max_tokens ({max_tokens}) must be greater than the thinking budget "
            f"({budget}) for Claude"
        )
    return budget


def _check_claude_thinking(request: Request, output_tool: OutputTool | None) -> None:
    """What Claude's extended thinking forbids, rejected before any request."""
    model = request.model
    options = request.options
    # Source: Anthropic, "Building with extended thinking", "Extended thinking with tool use" (same
    #   on Bedrock): tool_choice any or tool is rejected with thinking.
    if output_tool is not None:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            "response_format with reasoning",
            "this model gives structured output through a forced tool, which thinking forbids",
        )
    if request.tools and request.tool_choice not in ("auto", "none"):
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            f"tool_choice={request.tool_choice!r} with reasoning",
            "with extended thinking Claude allows only tool_choice 'auto' or 'none'",
        )
    check_thinking_sampling(VENDOR, model, options)


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


def _extras(
    request: Request,
    family: Family,
    kwargs: dict[str, Any],
    reasoning: dict[str, Any] | None = None,
) -> None:
    """Vendor extras: passed through as the Converse fields of the same name.

    ``reasoning`` (from :func:`reasoning_fields`) goes into
    ``additionalModelRequestFields`` first; the caller's
    ``additional_model_request_fields`` are merged over it.
    """
    options = request.options
    fields = dict(reasoning) if reasoning else {}
    given = options.get("additional_model_request_fields")
    if given:
        merge(fields, given)
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
    none = request.tool_choice == "none"
    specs = [] if none else list(request.tools)
    natives = (
        [native_tool_param(t, model) for t in request.native_tools]
        if request.native_tools and not none
        else []
    )
    rf = request.response_format
    output_tool: OutputTool | None = None
    if rf is not None and not caps.native_structured_output:
        # Source: Bedrock Converse API reference, "ToolChoice": no "none" (the request goes
        #   without tools), so the forced output tool could not be offered.
        if request.tools and request.tool_choice == "none":
            raise UnsupportedFeatureError(
                VENDOR,
                model,
                'response_format with tool_choice="none"',
                "this model gives structured output through a forced tool, which 'none' forbids",
            )
        # Source: Bedrock, "Supported models and model features": the tool use column (the
        #   capability table).
        if not caps.native_tools:
            raise UnsupportedFeatureError(
                VENDOR,
                model,
                "response_format",
                "this model has neither structured output nor tools",
            )
        output_tool, spec = make_output_tool(rf, {s.name for s in specs})
        specs.append(ToolSpec(spec.name, spec.description, spec.parameters))
    if not specs and not natives:
        return [], None, None
    # Source: Bedrock, "Supported models and model features": the tool use column (the
    #   capability table).
    if specs and not caps.native_tools:
        raise UnsupportedFeatureError(
            VENDOR, model, "tools", "this model has no tool use on Converse"
        )
    choice = _tool_choice(request, family, output_tool)
    tools: list[dict[str, Any]] = []
    for spec in specs:
        tools.append(tool_param(spec, caps))
        if spec.cache is not None:
            tools.append(cache_point(spec.cache, model, family))
    tools.extend(natives)
    return tools, choice, output_tool


def native_tool_param(tool: NativeTool, model: str) -> dict[str, Any]:
    """A provider-native tool as a Converse ``systemTool`` (Nova's code interpreter)."""
    name = SYSTEM_TOOLS.get(tool.kind)
    # Source: Bedrock Converse API reference, "SystemTool": nova_code_interpreter is the one
    #   system tool llmport maps.
    if name is None:
        raise UnsupportedFeatureError(VENDOR, model, f"native tool {tool.kind!r}")
    if tool.options:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            f"native tool {tool.kind!r} option(s) {', '.join(sorted(tool.options))}",
            f"Converse's {name} system tool takes no options",
        )
    return {"systemTool": {"name": name}}


def _tool_choice(
    request: Request, family: Family, output_tool: OutputTool | None
) -> dict[str, Any]:
    """``auto``/``required``/``{"name"}`` -> Converse ``toolChoice``, checked against the family."""
    choice = request.tool_choice
    if output_tool is not None and not request.tools and not request.native_tools:
        form, out = "tool", {"tool": {"name": output_tool.name}}
    elif isinstance(choice, dict):
        form, out = "tool", {"tool": {"name": choice["name"]}}
    elif choice == "required" or output_tool is not None:
        # With the output tool among other tools the model must call one of them;
        # its final answer is the output tool.
        form, out = "any", {"any": {}}
    else:
        form, out = "auto", {"auto": {}}
    # Source: Bedrock Converse API reference, "ToolChoice": "any" and "tool" are supported by
    #   Anthropic Claude 3+, Mistral Large (any) and Nova; others take auto only.
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
    out: dict[str, Any] = {"name": name, "schema": json.dumps(BEDROCK.transform(schema))}
    if description:
        out["description"] = description
    return out


# ---------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------


def messages_param(
    messages: Iterable[Message],
    model: str,
    family: Family,
    caps: ModelCapabilities | None = None,
) -> list[dict[str, Any]]:
    """Neutral messages -> Converse ``messages``.

    Tool results go in a user turn as ``toolResult`` blocks, before any other
    content of that turn; consecutive turns of the same role are merged
    (Converse alternates roles). A user turn holding documents but no text
    gets :data:`DOCUMENT_PROMPT` (Bedrock requires a text block beside a
    document). A block with a cache mark is followed by a ``cachePoint``.
    Assistant turns carry Bedrock's own thinking (``reasoningContent``) and
    server-tool blocks verbatim, in order, before the ``toolUse`` blocks.
    """
    caps = caps if caps is not None else family.caps
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    role: str | None = None
    names: dict[str, int] = {}  # document names used so far (must be unique per request)
    if not family.tool_result_status:
        # Source: Bedrock, "Supported models and model features": media in tool results on
        #   Claude 3/4 and Nova only; elsewhere they follow the results in the user turn.
        messages = move_tool_media(messages, lambda block: isinstance(block, TextBlock))
    # Source: Bedrock Converse API reference, "Message": images and documents in user turns
    #   only; an earlier answer's image (another vendor's) goes in the next one, named in place.
    messages = move_answer_media(messages)

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
        if turn == "user":
            results.extend(
                _tool_result(r, model, family, caps, names) for r in message.tool_results
            )
        for block in message.blocks:
            if type(block) is TextBlock and block.cache is None:  # the common case, inline
                if block.text.strip():
                    content.append({"text": block.text})
            else:
                _content(block, content, model, family, names)
        if turn == "assistant":
            content.extend(
                {"toolUse": {"toolUseId": c.id, "name": c.name, "input": c.arguments}}
                for c in message.tool_calls
            )
    flush()
    return out


def _content(
    block: Block, out: list[dict[str, Any]], model: str, family: Family, names: dict[str, int]
) -> None:
    """Append one neutral block (and its cache point) to a turn's Converse content."""
    if isinstance(block, FileRef):  # an S3 object (llmport_bedrock.files)
        block = as_block(block)
    if isinstance(block, (TextBlock, MediaBlock)):
        # Blank text is not sent, except a non-empty one that anchors a cache point
        # (prompt-cache.json: Bedrock takes {"text": "\n"} before a cachePoint).
        if not _blank(block) or (
            block.cache is not None and isinstance(block, TextBlock) and block.text
        ):
            out.append(block_param(block, model, family, names))
        if block.cache is not None and out:
            out.append(cache_point(block.cache, model, family))
    elif block.vendor != VENDOR:
        return  # another vendor's thinking or server tool (the core lists it as dropped)
    elif isinstance(block, ThinkingBlock):
        out.append(thinking_param(block))
    else:  # ServerToolCall / ServerToolResult: the vendor's own block, verbatim
        out.append(copy.deepcopy(block.raw))


def thinking_param(block: ThinkingBlock) -> dict[str, Any]:
    """A Bedrock ThinkingBlock as the ``reasoningContent`` it came from."""
    if block.redacted is not None:
        try:
            data = base64.b64decode(block.redacted, validate=True)
        except (binascii.Error, ValueError):
            data = block.redacted.encode()
        return {"reasoningContent": {"redactedContent": data}}
    text: dict[str, Any] = {"text": block.text}
    if block.signature is not None:
        text["signature"] = block.signature
    return {"reasoningContent": {"reasoningText": text}}


def _tool_result(
    result: ToolResult,
    model: str,
    family: Family,
    caps: ModelCapabilities,
    names: dict[str, int],
) -> dict[str, Any]:
    text, is_error = result.content, result.is_error
    body: dict[str, Any] = {"toolUseId": result.call_id}
    if family.tool_result_status:
        body["content"] = [{"text": text}] if text else []
        body["status"] = "error" if is_error else "success"
    else:
        # The model takes no status field: the error is said in the text instead.
        shown = f"Error: {text}" if is_error else text
        body["content"] = [{"text": shown}] if shown else []
    for block in result.blocks:
        body["content"].append(_result_block(block, model, family, caps, names))
    return {"toolResult": body}


def _result_block(
    block: Block, model: str, family: Family, caps: ModelCapabilities, names: dict[str, int]
) -> dict[str, Any]:
    """One block a tool returned: text, image, document, or JSON (``application/json``)."""
    if isinstance(block, TextBlock):
        return {"text": block.text}
    if not isinstance(block, MediaBlock):
        raise UnsupportedContentError(
            VENDOR, model, f"{block.type} block in a tool result", "tools return text or media"
        )
    check_block(VENDOR, model, caps, block)
    if block.media_type == "application/json" and block.data is not None and block.send != "text":
        try:
            return {"json": json.loads(block.data)}
        except (ValueError, UnicodeDecodeError):
            pass  # not JSON after all: the inline rule below
    return block_param(block, model, family, names)


def _has_tool_blocks(messages: list[dict[str, Any]]) -> bool:
    return any("toolUse" in b or "toolResult" in b for m in messages for b in m["content"])


def _blank(block: Any) -> bool:
    # Converse rejects blank text blocks.
    return isinstance(block, TextBlock) and not block.text.strip()


def block_param(
    block: TextBlock | MediaBlock, model: str, family: Family, names: dict[str, int]
) -> dict[str, Any]:
    """One content block: text, image, document, or an inlined text file.

    Text-like files (txt, md, csv, html) go as Converse ``document`` blocks
    where the model takes documents (``send="auto"`` or ``"native"``), else
    (or with ``send="text"``) inlined by the documented rule. ``citations=True``
    adds ``citations: {enabled: true}`` to the document.
    """
    if isinstance(block, TextBlock):
        return {"text": block.text}
    mt = block.media_type
    # Source: Bedrock Converse API reference, "ContentBlock": no audio block in Converse messages.
    if block.type == "audio" or mt.startswith("audio/"):
        raise UnsupportedContentError(
            VENDOR, model, block.describe(), "llmport-bedrock sends no audio to Converse"
        )
    if block.type == "image" or mt.startswith("image/"):
        if block.citations:
            raise UnsupportedContentError(
                VENDOR, model, block.describe(), "citations are for documents, not images"
            )
        fmt = IMAGE_FORMATS.get(mt)
        # Source: Bedrock Converse API reference, "ImageBlock": format png, jpeg, gif, webp.
        if fmt is None:
            raise UnsupportedContentError(
                VENDOR, model, block.describe(), "give its media_type (png, jpeg, gif or webp)"
            )
        return {"image": {"format": fmt, "source": _source(block, model, family)}}
    fmt = DOCUMENT_FORMATS.get(mt)
    text_like = is_text_like(mt)
    if fmt is not None and mt in _native_files(family) and not (block.send == "text" and text_like):
        # Source: Bedrock Converse API reference, "DocumentBlock": 4.5 MB per document.
        if block.data is not None and block.size > MAX_DOCUMENT_BYTES:
            raise UnsupportedContentError(
                VENDOR,
                model,
                block.describe(),
                f"document is {block.size} bytes, over the Converse limit of {MAX_DOCUMENT_BYTES}",
            )
        name = unique_name(document_name(block.filename, block.index), names)
        document: dict[str, Any] = {
            "format": fmt,
            "name": name,
            "source": _source(block, model, family),
        }
        if block.citations:
            document["citations"] = {"enabled": True}
        return {"document": document}
    if block.citations:
        raise UnsupportedContentError(
            VENDOR,
            model,
            block.describe(),
            'citations need the file sent as a Converse document (not send="text" or inlined)',
        )
    if text_like:
        return {"text": inline_text_file(block, VENDOR, model).text}
    raise UnsupportedContentError(
        VENDOR, model, block.describe(), f"files of type {mt} are not accepted"
    )


def _native_files(family: Family) -> frozenset[str]:
    return family.caps.file_types


def _source(block: MediaBlock, model: str, family: Family) -> dict[str, Any]:
    if block.url is None:
        assert block.inline
        return {"bytes": MediaBytes.of(block)}
    if block.url.startswith("s3://"):
        # Source: Bedrock Converse API reference, "S3Location": documented for Nova models only.
        if not family.s3:
            raise UnsupportedContentError(
                VENDOR, model, block.describe(), "this model takes no s3:// locations"
            )
        problem = s3_uri_problem(block.url)  # a content block or a FileRef, as upload checks
        if problem is not None:
            raise ContentError(block.index, f"{block.url!r} is no S3 object: {problem}")
        return {"s3Location": {"uri": block.url}}
    raise UnsupportedContentError(
        VENDOR,
        model,
        block.describe(),
        "Converse takes media as inline bytes or s3:// locations, not URLs; pass the bytes",
    )


_NAME_JUNK = re.compile(r"[^A-Za-z0-9\-()\[\]]+")


def document_name(filename: str | None, index: int) -> str:
    """A Converse-safe document name.

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
