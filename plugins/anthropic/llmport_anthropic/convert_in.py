"""Neutral :class:`~llmport.messages.types.Request` -> Messages API keyword arguments.

:func:`build_request` runs once per model request (from ``AnthropicProvider.prepare``):
it applies every Anthropic rule that can reject a request, then produces the
``messages.create`` keyword arguments, with the caller's vendor fields
(``exec(vendor={"anthropic": {...}})``, ``Tool(vendor=...)``) merged in.
The core's :meth:`~llmport.provider.contract.Provider.check` has already checked
option names and each media block. Pure functions of the request: no SDK
import, no I/O.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from llmport.controls.options import unknown_option_error
from llmport.errors import OptionError, UnsupportedContentError, UnsupportedFeatureError
from llmport.messages.content import inline_text_file, is_text_like, utf8_text
from llmport.messages.order import in_order
from llmport.messages.types import (
    Block,
    CacheControl,
    Citation,
    ContextEditing,
    FileRef,
    MediaBlock,
    Message,
    ModelCapabilities,
    NativeTool,
    Request,
    ResponseFormat,
    ServerToolCall,
    ServerToolResult,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from llmport.output.structured import OutputTool, make_output_tool
from llmport.provider.contract import Prepared
from llmport.provider.thinking import EFFORT_BUDGETS, MIN_BUDGET, check_thinking_sampling
from llmport.provider.tool_media import move_answer_media
from llmport.provider.wire import Body, base64_of, plain
from llmport.schema.transform import ANTHROPIC

from .files import FILES_BETA, container_uploads, file_block
from .models import MAX_REQUEST_BYTES, WEB_FETCH_TOOL, WEB_SEARCH_TOOL, Family

VENDOR = "anthropic"

#: Where the code-execution container is kept (Response.extra / Message.extra) to reuse it.
CONTAINER_KEY = "anthropic_container"

#: Thinking budgets (``thinking.budget_tokens``) per effort on budget-only models
#: (shared with Claude on Bedrock; capped to the model's output limit minus ANSWER_ROOM).
THINKING_BUDGETS = EFFORT_BUDGETS
#: Room left for the answer when max_tokens is defaulted around a thinking budget.
ANSWER_ROOM = 4096
#: Anthropic requires budget_tokens >= 1024.
MIN_THINKING_BUDGET = MIN_BUDGET
#: The SDK refuses non-streamed requests expected to exceed 10 minutes (60 min per 128k tokens).
MAX_NONSTREAMING_TOKENS = 21_333

#: Options this plugin honours (``Provider.options``); anything else is rejected, never dropped.
KNOWN_OPTIONS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "max_tokens",
        "timeout",
        "stop",
        "seed",
        "metadata",
        "service_tier",
        "cache_control",
    }
)

#: ``messages.create`` keyword arguments that are not body fields: a vendor field of the
#: same name goes into the JSON body (``extra_body``), never into the SDK's argument.
_CALL_ONLY = frozenset({"timeout", "extra_body", "extra_headers", "extra_query"})


@dataclass(slots=True)
class AnthropicPrepared(Prepared):
    """A request converted once: ``payload`` is the ``messages.create`` keyword arguments.

    ``output_tool`` is the forced output tool (structured output on models
    without native support), which reading the answer needs.
    """

    output_tool: OutputTool | None = None
    #: The JSON body serialized on the first send and its request options, as prepared
    #: (``wire``) and streamed (``stream_wire``): every attempt posts the same bytes.
    #: Set by the provider, never by prepare (as Bedrock's); no dict held per request.
    wire: tuple[Body, dict[str, Any]] | None = field(default=None, repr=False, compare=False)
    stream_wire: tuple[Body, dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    @property
    def params(self) -> dict[str, Any]:
        """The ``messages.create`` keyword arguments (``payload``)."""
        params: dict[str, Any] = self.payload
        return params


# ---------------------------------------------------------------------------
# Checks (before any request)
# ---------------------------------------------------------------------------


def check(request: Request, caps: ModelCapabilities, family: Family) -> Thinking | None:
    """Raise a typed input error for anything this model cannot take.

    Returns the reasoning asked for (see :func:`thinking_for`), so
    :func:`build_request` works it out once.
    """
    model = request.model
    _check_size(request, caps)
    options = request.options
    # Source: Anthropic API reference, "Create a Message": there is no seed, and the
    # API answers 400 invalid_request_error to a body field it does not know.
    if options.get("seed") is not None:
        raise UnsupportedFeatureError(
            VENDOR, model, "seed", "the Messages API has no seed parameter"
        )
    _check_values(options)
    thinking = thinking_for(request, family)
    thinks = thinking is not None and thinking.param is not None
    _check_sampling(request, family, thinks)
    if request.cache is not None:
        _check_cache(request)
    # Source: Anthropic, "Structured outputs" (strict tool use): its list of supported models.
    for spec in request.tools:
        if spec.strict and not caps.native_structured_output:
            raise UnsupportedFeatureError(
                VENDOR,
                model,
                f"strict tool schema ({spec.name})",
                "this model has no strict tool use",
            )
    if request.response_format is not None and not caps.native_structured_output:
        _check_output_tool(request, _budgeted(thinking))
    # Source: Anthropic, "Building with extended thinking", "Extended thinking with tool
    # use" ("Tool use with thinking only supports tool_choice auto or none; any or tool
    # results in an error"): extended thinking with a budget (``type: enabled``). Not
    # adaptive thinking: a recorded exchange with claude-opus-4-6, ``thinking: {type:
    # adaptive}`` and ``tool_choice: {type: any}`` was answered 200 by both
    # /v1/messages/count_tokens and /v1/messages (a tool_use block).
    if _budgeted(thinking) and request.tools and request.tool_choice not in ("auto", "none"):
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            f"tool_choice={request.tool_choice!r} with reasoning",
            "with extended thinking Anthropic allows only tool_choice 'auto' or 'none'",
        )
    return thinking


def _budgeted(thinking: Thinking | None) -> bool:
    """True for extended thinking with a budget (``thinking: {type: enabled, ...}``)."""
    return thinking is not None and (thinking.param or {}).get("type") == "enabled"


def _check_size(request: Request, caps: ModelCapabilities) -> None:
    """The request's media, base64-encoded, must fit the model's request size limit."""
    size = 0
    for message in request.messages:
        for block in message.blocks:
            if isinstance(block, MediaBlock):
                size += (block.size * 4) // 3
    # Source: Anthropic API overview, "Request size limits" (Messages API: 32 MB).
    if caps.max_request_bytes is not None and size > caps.max_request_bytes:
        raise UnsupportedContentError(
            VENDOR,
            request.model,
            "this request",
            f"its media is ~{size} bytes base64-encoded, "
            f"over the {MAX_REQUEST_BYTES}-byte request limit",
        )


def _check_output_tool(request: Request, budgeted: bool) -> None:
    """Structured output through a forced tool: neither tool_choice="none" nor thinking allow it.

    Not a vendor rule of its own: llmport cannot deliver the output tool here
    ("none" forbids calling it; forcing it with thinking is the documented
    rejection named in :func:`check`).
    """
    # Source: Anthropic, "Implement tool use" (tool_choice none: "prevents Claude from using any
    #   tools"): the forced output tool could not be called.
    if request.tools and request.tool_choice == "none":
        raise UnsupportedFeatureError(
            VENDOR,
            request.model,
            'response_format with tool_choice="none"',
            "this model gives structured output through a forced tool, which 'none' forbids",
        )
    # Source: Anthropic, "Building with extended thinking", "Extended thinking with tool use":
    #   forcing the output tool (tool_choice tool) is rejected with budget thinking.
    if budgeted:
        raise UnsupportedFeatureError(
            VENDOR,
            request.model,
            "response_format with reasoning",
            "this model gives structured output through a forced tool, "
            "which extended thinking forbids",
        )


def _check_values(options: Mapping[str, Any]) -> None:
    """Anthropic's narrower ranges and the types of its own options (OptionError).

    The core checks the standard options' values for every vendor; these are
    checked here too, so a provider used directly never sends (or retries) a
    request that cannot succeed.
    """
    # Source: Anthropic API reference, "Create a Message": temperature and top_p in 0.0-1.0, top_k a
    #   positive integer, metadata an object, service_tier a string; timeout is the SDK's (seconds >
    #   0).
    temperature = options.get("temperature")
    if temperature is not None and not 0.0 <= _number("temperature", temperature) <= 1.0:
        raise OptionError(f"anthropic: temperature must be between 0 and 1, got {temperature!r}")
    top_p = options.get("top_p")
    if top_p is not None and not 0.0 <= _number("top_p", top_p) <= 1.0:
        raise OptionError(f"anthropic: top_p must be between 0 and 1, got {top_p!r}")
    top_k = options.get("top_k")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise OptionError(f"anthropic: top_k must be an integer >= 1, got {top_k!r}")
    timeout = options.get("timeout")
    if timeout is not None and not _number("timeout", timeout) > 0:
        raise OptionError(f"anthropic: timeout must be > 0 seconds, got {timeout!r}")
    metadata = options.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise OptionError(f"anthropic: metadata must be a dict, got {type(metadata).__name__}")
    tier = options.get("service_tier")
    if tier is not None and not isinstance(tier, str):
        raise OptionError(f"anthropic: service_tier must be a string, got {tier!r}")
    cache = options.get("cache_control")
    if cache is not None and not isinstance(cache, Mapping):
        raise OptionError(f"anthropic: cache_control must be a dict, got {cache!r}")


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise OptionError(f"anthropic: {name} must be a finite number, got {value!r}")
    return float(value)


def _check_cache(request: Request) -> None:
    """``cache=``: ``key`` and ``retention`` are OpenAI's; Anthropic has no such fields."""
    cache = request.cache
    assert cache is not None
    # Source: Anthropic, "Prompt caching": cache_control takes type and ttl only, no key or
    #   retention.
    for name in ("key", "retention"):
        if getattr(cache, name) is not None:
            raise UnsupportedFeatureError(
                VENDOR,
                request.model,
                f"cache {name}",
                "Anthropic caches by breakpoints (cache_control), with no cache key or "
                "retention setting: use cache='auto' / {'ttl': '1h'} or block marks",
            )


def _check_sampling(request: Request, family: Family, thinks: bool) -> None:
    options = request.options
    given = [k for k in ("temperature", "top_p", "top_k") if options.get(k) is not None]
    if not given:
        return
    model = request.model
    # Source: Anthropic, "Migrating to Claude Opus 4.7": temperature, top_p and top_k are no longer
    #   accepted (400) on Opus 4.7 and later.
    if family.sampling == "none":
        raise UnsupportedFeatureError(
            VENDOR, model, ", ".join(given), "this model takes no sampling parameters"
        )
    # Source: Anthropic, "Migrating to Claude 4.5" (sampling parameters: temperature or
    # top_p, not both).
    if family.sampling == "exclusive" and "temperature" in given and "top_p" in given:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            "temperature together with top_p",
            "this model takes one of them, not both",
        )
    # Source: Anthropic, "Building with extended thinking", "Feature compatibility"
    # (no temperature or top_k modification; top_p between 0.95 and 1).
    if thinks:
        check_thinking_sampling(VENDOR, model, options)


# ---------------------------------------------------------------------------
# Reasoning: thinking, effort and max_tokens
# ---------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Thinking:
    """What ``Request.reasoning`` becomes on this model.

    ``param`` is the ``thinking`` object (``None``: thinking stays off);
    ``effort`` the ``output_config.effort`` value (``None``: not sent).
    """

    param: dict[str, Any] | None
    effort: str | None = None
    budget: int = 0


def thinking_for(request: Request, family: Family) -> Thinking | None:
    """``Request.reasoning`` mapped onto this model family (None: nothing to send).

    * an effort on a model with adaptive thinking: ``thinking: {type:
      adaptive}`` and ``output_config.effort``;
    * an effort on a budget-only model: ``thinking: {type: enabled,
      budget_tokens}`` from :data:`THINKING_BUDGETS` (capped to leave
      :data:`ANSWER_ROOM` under the model's output limit), plus
      ``output_config.effort`` where the model takes effort (Opus 4.5);
    * ``budget_tokens=N``: ``thinking: {type: enabled, budget_tokens: N}``;
      ``-1`` (dynamic) is adaptive thinking;
    * ``budget_tokens=0`` with an effort: effort alone, thinking off;
    * ``effort="none"`` (or ``reasoning=False``): nothing is sent.

    ``summary`` sets ``thinking.display`` (``"summarized"``; ``False``:
    ``"omitted"``). What the model cannot do is an UnsupportedFeatureError.
    """
    reasoning = request.reasoning
    if reasoning is None:
        return None
    effort, budget, summary = reasoning.effort, reasoning.budget_tokens, reasoning.summary
    model = request.model
    # Not a vendor rule: a summary asked with reasoning off contradicts itself (nothing to
    #   summarise).
    if effort == "none" or (budget == 0 and effort is None):
        if summary not in (None, False):
            raise UnsupportedFeatureError(
                VENDOR, model, "reasoning summary with reasoning off", "no thinking to summarise"
            )
        return None
    # Source: Anthropic, "Building with extended thinking", "Supported models" (Claude 3.7 and
    #   later).
    if family.thinking == "none" and not family.efforts:
        raise UnsupportedFeatureError(VENDOR, model, "reasoning", "this model has no thinking")
    # Effort alone: Anthropic, "Effort" (output_config.effort works with thinking off); a summary
    #   asked with thinking off contradicts itself (not a vendor rule).
    if effort is not None and budget == 0:
        # Effort alone: how eagerly the model spends tokens, thinking stays off.
        if summary not in (None, False):
            raise UnsupportedFeatureError(
                VENDOR, model, "reasoning summary with budget_tokens=0", "thinking is off"
            )
        return Thinking(None, _effort(effort, family, model, "reasoning effort without thinking"))
    if budget is not None and budget > 0:
        return _budget_thinking(budget, effort, summary, family, model)
    if family.thinking in ("adaptive", "both"):
        # An effort (or budget -1, dynamic): adaptive thinking.
        sent = _effort(effort, family, model, "reasoning effort") if effort else None
        return Thinking(_display({"type": "adaptive"}, summary), sent)
    # Source: Anthropic, "Adaptive thinking", "Supported models" (Claude 4.6 and later): a budget-
    #   only model has no adaptive (dynamic) form.
    if budget == -1:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            "reasoning budget_tokens=-1 (dynamic)",
            "this model has budget thinking only: give a budget >= 1024 or an effort",
        )
    assert effort is not None
    return _effort_budget_thinking(effort, summary, family)


def _budget_thinking(
    budget: int, effort: str | None, summary: str | bool | None, family: Family, model: str
) -> Thinking:
    """``budget_tokens=N`` (N > 0): ``thinking: {type: enabled, budget_tokens: N}``."""
    # Source: Anthropic, "Migrating to Claude Opus 4.7": thinking.budget_tokens is rejected;
    #   adaptive thinking only.
    if family.thinking == "adaptive":
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            f"reasoning budget_tokens={budget}",
            f"this model has adaptive thinking only: give an effort ({', '.join(family.efforts)})",
        )
    # Source: Anthropic, "Building with extended thinking": the minimum budget_tokens is 1,024.
    if budget < MIN_THINKING_BUDGET:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            f"reasoning budget_tokens={budget}",
            f"a thinking budget must be >= {MIN_THINKING_BUDGET} tokens",
        )
    sent = _effort(effort, family, model, "reasoning effort with budget_tokens")
    param = {"type": "enabled", "budget_tokens": budget}
    return Thinking(_display(param, summary), sent, budget)


def _effort_budget_thinking(effort: str, summary: str | bool | None, family: Family) -> Thinking:
    """An effort on a budget-only model: the effort's budget, under the output limit."""
    caps_out = family.caps.max_output_tokens or 0
    budget = THINKING_BUDGETS[effort]
    if caps_out:
        budget = max(MIN_THINKING_BUDGET, min(budget, caps_out - ANSWER_ROOM))
    sent = effort if effort in family.efforts else None
    param = {"type": "enabled", "budget_tokens": budget}
    return Thinking(_display(param, summary), sent, budget)


def _effort(effort: str | None, family: Family, model: str, feature: str) -> str | None:
    if effort is None:
        return None
    # Source: Anthropic, "Effort": the models and levels output_config.effort takes (xhigh on Opus
    #   4.7 and later).
    if effort not in family.efforts:
        taken = ", ".join(family.efforts) if family.efforts else "none (no effort parameter)"
        raise UnsupportedFeatureError(
            VENDOR, model, f"{feature} ({effort!r})", f"effort levels taken: {taken}"
        )
    return effort


def _display(param: dict[str, Any], summary: str | bool | None) -> dict[str, Any]:
    if summary is None:
        return param
    return {**param, "display": "omitted" if summary is False else "summarized"}


def _max_tokens(request: Request, family: Family, thinking: Thinking | None) -> int:
    """``max_tokens``: the caller's, else the family default (widened around a thinking budget)."""
    model = request.model
    budget = thinking.budget if thinking else 0
    given = request.options.get("max_tokens")
    if given is None:
        value = (
            max(family.default_max_tokens, budget + ANSWER_ROOM)
            if budget
            else family.default_max_tokens
        )
    else:
        # Source: Anthropic API reference, "Create a Message": max_tokens is an integer >= 1.
        if isinstance(given, bool) or not isinstance(given, int) or given < 1:
            raise UnsupportedFeatureError(
                VENDOR, model, f"max_tokens={given!r}", "must be a positive integer"
            )
        # Source: Anthropic, "Building with extended thinking": budget_tokens must be less than
        #   max_tokens.
        if budget and given <= budget:
            raise OptionError(
                f"anthropic: max_tokens={given} must be larger than the thinking budget "
                f"({budget} tokens): raise max_tokens, lower budget_tokens, or leave "
                "max_tokens unset (llmport then gives the budget plus "
                f"{ANSWER_ROOM} tokens for the answer)"
            )
        value = given
    if (
        # Source: the anthropic SDK README, "Long requests": it refuses a non-streamed request that
        #   may exceed 10 minutes (large max_tokens) unless a timeout is given.
        not request.stream
        and request.options.get("timeout") is None
        and value > MAX_NONSTREAMING_TOKENS
    ):
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            f"max_tokens={value} without streaming",
            "the SDK refuses non-streamed requests this long: "
            "use stream()/astream() or pass timeout=",
        )
    return value


# ---------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------


def build_request(
    request: Request,
    caps: ModelCapabilities,
    family: Family,
    vendor: Mapping[str, Any] | None = None,
) -> AnthropicPrepared:
    """Check ``request`` and convert it, once: the ``messages.create`` keyword arguments.

    ``vendor`` holds the caller's body fields (``exec(vendor={"anthropic":
    {...}})``), merged in last (:func:`merge_vendor_fields`).
    """
    thinking = check(request, caps, family)
    model = request.model
    params = _base_params(request, family, thinking)

    output_config: dict[str, Any] = {}
    if thinking is not None:
        if thinking.param is not None:
            params["thinking"] = thinking.param
        if thinking.effort is not None:
            output_config["effort"] = thinking.effort
            if family.effort_beta:
                add_beta(params, family.effort_beta)

    if add_file_uploads(params, request, model):
        add_beta(params, FILES_BETA)
    tools = [tool_param(spec, caps) for spec in request.tools]
    if request.native_tools:
        tools += [native_tool_param(t, caps, family, model) for t in request.native_tools]
        if any(t.kind == "tool_search" for t in request.native_tools):
            add_beta(params, TOOL_SEARCH_BETA)
        container = _container(request.messages)
        if container is not None and any(t.kind == "code_execution" for t in request.native_tools):
            params["container"] = container
    output_tool: OutputTool | None = None
    rf = request.response_format
    if rf is not None:
        if caps.native_structured_output:
            output_config["format"] = {
                "type": "json_schema",
                "schema": ANTHROPIC.transform(rf.schema),
            }
        else:
            output_tool, spec = _output_tool(rf, {s.name for s in request.tools})
            tools.append(spec)
    if output_config:
        params["output_config"] = output_config
    if tools:
        params["tools"] = tools
        params["tool_choice"] = tool_choice_param(request, output_tool)
    if request.context_editing is not None:
        add_context_management(params, request.context_editing)
    if vendor:
        merge_vendor_fields(params, vendor, model)
    return AnthropicPrepared(request, params, output_tool)


def add_file_uploads(params: dict[str, Any], request: Request, model: str) -> bool:
    """Put ``NativeTool("code_execution", files=[...])`` in the last user turn; any file used?

    Files given to the code execution tool go in as ``container_upload``
    blocks of the user turn (the recorded Files API request in
    cassettes/README.md). True when the request references an uploaded file
    anywhere: then it needs the Files API beta header.
    """
    refs = [
        ref
        for tool in request.native_tools
        if tool.kind == "code_execution"
        for ref in tool.options.get("files", ())
    ]
    for ref in refs:
        if not isinstance(ref, FileRef) or ref.provider != VENDOR:
            raise OptionError(
                "NativeTool('code_execution', files=[...]) takes Anthropic FileRefs "
                f"(rt.upload(..., provider='anthropic')), got {ref!r:.80} for {model}"
            )
    turns = params["messages"]
    if refs and turns and turns[-1]["role"] == "user":
        content = turns[-1]["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        turns[-1]["content"] = [*content, *container_uploads(refs)]
    return bool(refs) or any(
        isinstance(b, FileRef)
        for m in request.messages
        for b in (*m.blocks, *(x for r in m.tool_results for x in r.blocks))
    )


def _base_params(request: Request, family: Family, thinking: Thinking | None) -> dict[str, Any]:
    """The ``messages.create`` arguments every request has: model, limits, messages, options."""
    model = request.model
    options = request.options
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": _max_tokens(request, family, thinking),
        "messages": messages_param(request.messages, model),
        "stream": request.stream,
    }
    system = system_param(request)
    if system:
        params["system"] = system
    stop = options.get("stop")
    if stop is not None:
        params["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    for key in ("metadata", "service_tier", "cache_control"):
        if options.get(key) is not None:
            params[key] = options[key]
    if options.get("timeout") is not None:
        params["timeout"] = options["timeout"]
    # temperature / top_p / top_k are not create() parameters in anthropic 2.x: body fields.
    extra_body = {
        k: options[k] for k in ("temperature", "top_p", "top_k") if options.get(k) is not None
    }
    if extra_body:
        params["extra_body"] = extra_body
    return params


#: The body fields ``messages.count_tokens`` takes (the rest of a generation request is dropped).
COUNT_FIELDS = frozenset(
    {
        "model",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "thinking",
        "output_config",
        "cache_control",
        "timeout",
        "extra_headers",
    }
)


#: The JSON body fields ``/v1/messages/count_tokens`` takes (Anthropic API reference, "Count
#: tokens in a Message"): a vendor field of one of these names is counted as exec sends it.
COUNT_BODY_FIELDS = frozenset(
    {
        "model",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "thinking",
        "output_config",
        "cache_control",
        "context_management",
        "mcp_servers",
    }
)


def build_count_request(prepared: AnthropicPrepared) -> dict[str, Any]:
    """The ``messages.count_tokens`` arguments for a prepared generation request.

    The same model, messages, system, tools, tool choice, thinking and output
    config; ``max_tokens``, ``stream``, sampling, stop sequences, metadata and
    other generation-only fields are left out.
    """
    # The SDK serializes this one: media as strings.
    out = {k: plain(v) for k, v in prepared.params.items() if k in COUNT_FIELDS}
    # Body fields given as vendor fields (``vendor={"anthropic": {"thinking": ...}}``) or
    # set as beta fields (context management) are counted as exec sends them: what is
    # cleared is not counted, and thinking changes the count.
    extra = prepared.params.get("extra_body") or {}
    counted = {k: v for k, v in extra.items() if k in COUNT_BODY_FIELDS}
    if counted:
        out["extra_body"] = counted
    return out


# ---------------------------------------------------------------------------
# Vendor fields
# ---------------------------------------------------------------------------


def add_context_management(params: dict[str, Any], editing: ContextEditing) -> None:
    """``context_management`` for ``ContextPolicy(strategy="vendor")``.

    As Anthropic's context editing page documents: old tool uses cleared past
    the trigger, the newest ``keep`` kept; old thinking cleared too when
    thinking is on (that edit must come first). A beta field: sent in the body
    beside the SDK's own fields, with its beta header.
    """
    tool_uses: dict[str, Any] = {"type": CLEAR_TOOL_USES}
    if editing.trigger_tokens is not None:
        tool_uses["trigger"] = {"type": "input_tokens", "value": editing.trigger_tokens}
    tool_uses["keep"] = {"type": "tool_uses", "value": editing.keep}
    edits = [tool_uses]
    thinking = params.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive"):
        turns = {"type": "thinking_turns", "value": max(1, editing.keep)}
        edits.insert(0, {"type": CLEAR_THINKING, "keep": turns})
    extra = dict(params.get("extra_body") or {})
    extra["context_management"] = {"edits": edits}
    params["extra_body"] = extra
    add_beta(params, CONTEXT_MANAGEMENT_BETA)


def add_beta(params: dict[str, Any], beta: str) -> None:
    """Add ``beta`` to the request's ``anthropic-beta`` header (a comma-separated list)."""
    headers = dict(params.get("extra_headers") or {})
    betas = [b for b in str(headers.get("anthropic-beta", "")).split(",") if b]
    if beta not in betas:
        betas.append(beta)
    headers["anthropic-beta"] = ",".join(betas)
    params["extra_headers"] = headers


def merge_vendor_fields(params: dict[str, Any], fields: Mapping[str, Any], model: str) -> None:
    """Merge the caller's body fields into ``params`` (in place).

    A field llmport already sets is merged into it (dicts recursively, any
    other value replaced, except ``tools``: those entries are added after the
    function tools); any other field goes into the JSON body as given
    (``extra_body``), so fields the SDK does not know still reach the wire.
    ``stream`` stays llmport's: use ``stream()`` / ``astream()``.
    """
    # Not a vendor rule: llmport must know whether it reads a stream; streaming is
    #   stream()/astream().
    if "stream" in fields:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            "vendor field 'stream'",
            "llmport sets it itself: use stream()/astream() to stream",
        )
    extra: dict[str, Any] = params.get("extra_body") or {}
    for key, value in fields.items():
        if key == "tools" and isinstance(value, list) and isinstance(params.get("tools"), list):
            # Server tools go beside the function tools, after them (as Anthropic's
            # own traffic orders them), never instead of them.
            params["tools"] = [*params["tools"], *copy.deepcopy(value)]
        elif key in params and key not in _CALL_ONLY:
            params[key] = merged(params[key], value)
        else:
            extra[key] = merged(extra.get(key), value)
    if extra:
        params["extra_body"] = extra


def merged(base: Any, over: Any) -> Any:
    """``over`` merged onto ``base``: dicts key by key (recursively), else ``over`` (a copy)."""
    if isinstance(base, Mapping) and isinstance(over, Mapping):
        out = dict(base)
        for key, value in over.items():
            out[key] = merged(base.get(key), value)
        return out
    return copy.deepcopy(over)


def system_param(request: Request) -> str | list[dict[str, Any]]:
    """``Request.system`` plus any system-role messages, in order.

    ``system=`` given as blocks (more than one, or one with a cache mark) is
    sent as a list of text blocks, the marked ones with ``cache_control``; a
    plain string (one unmarked block) stays a string.
    """
    if _system_as_blocks(request.system_blocks):
        blocks = [block_param(b, request.model) for b in request.system_blocks if b.text]
        blocks += [
            block_param(b, request.model)
            for m in request.messages
            if m.role == "system"
            for b in m.blocks
            if isinstance(b, TextBlock) and b.text
        ]
        return blocks
    parts = [request.system] if request.system else []
    parts += [m.text for m in request.messages if m.role == "system" and m.text]
    return "\n\n".join(parts)


def _system_as_blocks(blocks: tuple[TextBlock, ...]) -> bool:
    """Whether the system prompt goes out as blocks (given as blocks, sent as blocks).

    A string ``system=`` is one unmarked block; one unmarked block given as a list
    means the same to the model, so it goes out as that string too.
    """
    return len(blocks) > 1 or any(b.cache is not None for b in blocks)


def cache_param(cache: CacheControl, model: str = "") -> dict[str, Any]:
    """A cache mark as ``cache_control`` (``ttl`` only when given: 5m is the default)."""
    if cache.ttl is None:
        return {"type": "ephemeral"}
    # Source: Anthropic, "Prompt caching", "1-hour cache duration": ttl is "5m" or "1h".
    if cache.ttl not in ("5m", "1h"):
        raise UnsupportedFeatureError(
            VENDOR, model, f"cache ttl {cache.ttl!r}", "Anthropic takes '5m' or '1h'"
        )
    return {"type": "ephemeral", "ttl": cache.ttl}


def _container(messages: list[Message]) -> str | None:
    """The code-execution container of the latest assistant turn that had one (reused)."""
    for message in reversed(messages):
        if message.role == "assistant":
            container = message.extra.get(CONTAINER_KEY)
            if isinstance(container, dict):
                found = container.get("id")
                if isinstance(found, str):
                    return found
    return None


#: Options each native tool kind takes (passed through as given, ``None`` included).
_NATIVE_OPTIONS = {
    "web_search": frozenset({"max_uses", "allowed_domains", "blocked_domains", "user_location"}),
    "url_context": frozenset(
        {"max_uses", "allowed_domains", "blocked_domains", "citations", "max_content_tokens"}
    ),
    "code_execution": frozenset({"files"}),  # files: container_upload blocks, not the entry
    "tool_search": frozenset({"method"}),
}
#: Context editing (Anthropic's context editing page): its beta and its two edits.
CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
CLEAR_TOOL_USES = "clear_tool_uses_20250919"
CLEAR_THINKING = "clear_thinking_20251015"
#: The beta the tool search tool was released under (Anthropic's tool search tool page).
TOOL_SEARCH_BETA = "advanced-tool-use-2025-11-20"
#: The tool search tool of each ``NativeTool("tool_search", method=...)`` (bm25 by default).
TOOL_SEARCH_TOOLS = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}


def native_tool_param(
    tool: NativeTool, caps: ModelCapabilities, family: Family, model: str
) -> dict[str, Any]:
    """A :class:`NativeTool` as Anthropic's server-tool entry.

    ``web_search`` -> ``web_search_20250305``; ``url_context`` -> the web
    fetch tool ``web_fetch_20250910``; ``code_execution`` -> the model's code
    execution version. ``Provider.check`` already rejected kinds the model
    lacks (``file_search`` everywhere).
    """
    kind = tool.kind
    known = _NATIVE_OPTIONS.get(kind)
    # Source: Anthropic, "Web search tool"; Anthropic, "Web fetch tool"; Anthropic, "Code
    #   execution tool": their supported models (the capability table).
    if known is None or kind not in caps.native_tool_kinds:
        raise UnsupportedFeatureError(VENDOR, model, f"native tool {kind!r}")
    unknown = set(tool.options) - known
    if unknown:
        raise unknown_option_error(unknown, known, f"anthropic {kind} option")
    if kind == "tool_search":
        return tool_search_param(tool.options.get("method", "bm25"))
    if kind == "web_search":
        entry: dict[str, Any] = {"type": WEB_SEARCH_TOOL, "name": "web_search"}
    elif kind == "url_context":
        entry = {"type": WEB_FETCH_TOOL, "name": "web_fetch"}
    else:
        entry = {"type": family.code_execution, "name": "code_execution"}
    entry.update(copy.deepcopy({k: v for k, v in tool.options.items() if k != "files"}))
    return entry


def tool_search_param(method: Any) -> dict[str, Any]:
    """The tool search server tool that loads deferred tools."""
    entry = TOOL_SEARCH_TOOLS.get(method) if isinstance(method, str) else None
    if entry is None:
        raise OptionError(
            f"NativeTool('tool_search') method must be 'bm25' or 'regex' on Anthropic, "
            f"got {method!r}"
        )
    return dict(entry)


def tool_param(spec: ToolSpec, caps: ModelCapabilities) -> dict[str, Any]:
    """One tool definition (``input_schema`` is the tool's JSON schema).

    The tool's own vendor fields (``Tool(vendor={"anthropic": {"defer_loading":
    True}})``) are merged into its entry.
    """
    schema = spec.parameters or {"type": "object", "properties": {}}
    out: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "input_schema": ANTHROPIC.transform(schema) if spec.strict else schema,
    }
    if spec.strict and caps.native_structured_output:
        out["strict"] = True
    if spec.cache is not None:
        out["cache_control"] = cache_param(spec.cache)
    if spec.defer_loading:  # the core sends it only with a tool search tool
        out["defer_loading"] = True
    fields = spec.vendor.get(VENDOR) if spec.vendor else None
    if fields:
        merged_entry: dict[str, Any] = merged(out, fields)
        return merged_entry
    return out


def tool_choice_param(request: Request, output_tool: OutputTool | None) -> dict[str, Any]:
    """``auto``/``required``/``none``/``{"name"}`` -> Anthropic's ``tool_choice`` object.

    "required" is ``{"type": "any"}``; parallel calls are switched off with
    ``disable_parallel_tool_use``. With the forced output tool, the model must
    call a tool every turn (its final answer is the output tool).
    """
    choice = request.tool_choice
    if output_tool is not None and not request.tools:
        out: dict[str, Any] = {"type": "tool", "name": output_tool.name}
    elif isinstance(choice, dict):
        out = {"type": "tool", "name": choice["name"]}
    elif choice == "none":
        return {"type": "none"}
    elif choice == "required" or output_tool is not None:
        out = {"type": "any"}
    else:
        out = {"type": "auto"}
    if not request.parallel_tool_calls:
        out["disable_parallel_tool_use"] = True
    return out


def _output_tool(rf: ResponseFormat, taken: set[str]) -> tuple[OutputTool, dict[str, Any]]:
    tool, spec = make_output_tool(
        rf, taken, "Give your final answer by calling this tool with data matching its schema."
    )
    return tool, {
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.parameters,
    }


# ---------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------


def messages_param(messages: Iterable[Message], model: str) -> list[dict[str, Any]]:
    """Neutral messages -> Anthropic ``messages``.

    Tool results go in a user turn, before any other content of that turn;
    consecutive turns of the same role are merged (the API alternates roles).
    An assistant turn echoes its blocks in order: thinking (with its
    signature) and redacted thinking, text (with its citations), server-tool
    blocks verbatim, and its tool calls where the model put them (after the
    blocks, but for a call with a ``position``).
    """
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []  # tool_result blocks of the user turn being built
    content: list[dict[str, Any]] = []
    role: str | None = None
    # Source: Anthropic API reference, "Messages": images are user content; an earlier answer's
    #   image (another vendor's) goes in the next user turn, named in its place.
    messages = move_answer_media(messages)

    def flush() -> None:
        nonlocal results, content
        blocks = results + content if role == "user" else content
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
            for item in in_order(message.blocks, message.tool_calls):
                if isinstance(item, ToolCall):
                    content.append(
                        {
                            "type": "tool_use",
                            "id": item.id,
                            "name": item.name,
                            "input": item.arguments,
                        }
                    )
                elif not _empty(item):
                    content.append(assistant_block_param(item, model))
        else:
            results.extend(tool_result_param(r, model) for r in message.tool_results)
            content.extend(block_param(b, model) for b in message.blocks if not _empty(b))
    flush()
    return out


def tool_result_param(result: ToolResult, model: str) -> dict[str, Any]:
    """A tool result: its text, plus the media and documents it returned (``blocks``)."""
    content: Any = result.content
    if result.blocks:
        content = [{"type": "text", "text": result.content}] if result.content else []
        content += [block_param(b, model) for b in result.blocks if not _empty(b)]
    return {
        "type": "tool_result",
        "tool_use_id": result.call_id,
        "content": content,
        "is_error": result.is_error,
    }


def assistant_block_param(block: Block, model: str) -> dict[str, Any]:
    """One block of an assistant turn, as Anthropic must get it back."""
    if isinstance(block, ThinkingBlock):
        if block.redacted is not None:
            return {"type": "redacted_thinking", "data": block.redacted}
        return {"type": "thinking", "thinking": block.text, "signature": block.signature or ""}
    if isinstance(block, (ServerToolCall, ServerToolResult)):
        return copy.deepcopy(block.raw)
    return block_param(block, model)


def _empty(block: Any) -> bool:
    # The API rejects empty text blocks.
    return isinstance(block, TextBlock) and not block.text


def citation_param(citation: Citation) -> dict[str, Any]:
    """A citation as Anthropic gave it (its type and unmapped fields are in ``extra``)."""
    extra = citation.extra
    kind = extra.get("type")
    if kind is None:
        kind = "web_search_result_location" if citation.kind == "url" else "char_location"
    out: dict[str, Any] = {"type": kind, "cited_text": citation.cited_text or ""}
    if kind == "web_search_result_location":
        out["url"] = citation.url
        out["title"] = citation.title
    else:
        out["document_index"] = citation.document_index or 0
        out["document_title"] = citation.title
        start, end = CITATION_RANGE.get(kind, ("start_char_index", "end_char_index"))
        if citation.source_start is not None:
            out[start] = citation.source_start
        if citation.source_end is not None:
            out[end] = citation.source_end
        if citation.file_id is not None:
            out["file_id"] = citation.file_id
    out.update({k: v for k, v in extra.items() if k != "type"})
    return out


#: Anthropic's range fields per document citation type.
CITATION_RANGE = {
    "char_location": ("start_char_index", "end_char_index"),
    "page_location": ("start_page_number", "end_page_number"),
    "content_block_location": ("start_block_index", "end_block_index"),
}


def block_param(block: Block, model: str) -> dict[str, Any]:
    """One content block: text, image, document (PDF or plain text), or inlined text file.

    A cache mark becomes ``cache_control`` on the block; ``citations=True``
    on a document becomes ``"citations": {"enabled": true}``.
    """
    if isinstance(block, TextBlock):
        if block.cache is None and not block.citations:
            return {"type": "text", "text": block.text}
        out: dict[str, Any] = {"type": "text", "text": block.text}
        if block.citations:
            out["citations"] = [citation_param(c) for c in block.citations]
        if block.cache is not None:
            out["cache_control"] = cache_param(block.cache, model)
        return out
    if isinstance(block, FileRef):
        return file_block(block)
    if not isinstance(block, MediaBlock):
        raise UnsupportedContentError(
            VENDOR, model, f"{block.type} block", "only assistant turns carry it"
        )
    param = _media_param(block, model)
    if block.citations:
        if param["type"] != "document":
            raise UnsupportedContentError(
                VENDOR,
                model,
                block.describe(),
                "citations are given for documents only (PDF, or a text file sent natively)",
            )
        param["citations"] = {"enabled": True}
    if block.cache is not None:
        param["cache_control"] = cache_param(block.cache, model)
    return param


def _media_param(block: MediaBlock, model: str) -> dict[str, Any]:
    mt = block.media_type
    # Source: Anthropic API reference, "Create a Message": content blocks are text, image, document
    #   (no audio).
    if block.type == "audio" or mt.startswith("audio/"):
        raise UnsupportedContentError(
            VENDOR, model, block.describe(), "the Messages API has no audio input"
        )
    if block.type == "image" or mt.startswith("image/"):
        return {"type": "image", "source": _source(block)}
    if mt == "application/pdf":
        return _titled({"type": "document", "source": _source(block)}, block)
    if is_text_like(mt) and _as_document(block):
        text = utf8_text(block, VENDOR, model, "document")
        return _titled(
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": text},
            },
            block,
        )
    if is_text_like(mt):
        return {"type": "text", "text": inline_text_file(block, VENDOR, model).text}
    raise UnsupportedContentError(
        VENDOR, model, block.describe(), f"files of type {mt} are not accepted"
    )


def _as_document(block: MediaBlock) -> bool:
    """The file rule: text/plain, ``send="native"``, or citations asked for -> a document.

    ``send="text"`` always inlines; other text-like files (markdown, CSV,
    JSON, ...) are inlined under ``"auto"`` unless citations are asked for
    (citations need a document).
    """
    if block.send == "text":
        return False
    if block.send == "native" or block.citations:
        return True
    return block.media_type == "text/plain"


def _source(block: MediaBlock) -> dict[str, Any]:
    if block.url is not None:
        return {"type": "url", "url": block.url}
    # A splice: the body is serialized with the block's cached base64 bytes (llmport.provider.wire).
    return {"type": "base64", "media_type": block.media_type, "data": base64_of(block)}


def _titled(param: dict[str, Any], block: MediaBlock) -> dict[str, Any]:
    if block.filename:
        param["title"] = block.filename
    return param
