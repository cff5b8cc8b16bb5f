"""Neutral :class:`~llmport.messages.types.Request` -> ``generate_content`` arguments, once.

:func:`build_request` runs once per model request (``GeminiProvider.prepare``,
after the core's :meth:`~llmport.provider.contract.Provider.check`): it raises every
Gemini-specific input error and builds the ``model`` / ``contents`` /
``config`` arguments as ``google.genai.types`` objects, so the SDK
serialises them with its own field names. Every attempt resends the result.
No I/O here; the SDK's ``types`` module is imported on first use (never at
plugin import).

**Vendor fields.** ``exec(vendor={"gemini": {...}})`` and the ``"gemini"``
entry of ``ToolSpec.vendor`` are the only way to send a field llmport does
not model. Both travel in the request's ``http_options.extra_body``, which
google-genai merges into the JSON body it built (after converting the
config to the wire's camelCase): objects merge recursively (keys matched
case-insensitively across camelCase / snake_case), any other value (a list
included) replaces what llmport would send, except ``tools``, whose entries
are added after llmport's function declarations. Function declarations are
built here as JSON (``functionDeclarations`` with ``parameters_json_schema``,
the shape google-genai sends) so a tool's vendor fields merge into its own
declaration.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from llmport.errors import OptionError, UnsupportedContentError, UnsupportedFeatureError
from llmport.messages.content import inline_text_file, is_text_like
from llmport.messages.types import (
    FileRef,
    MediaBlock,
    Message,
    ModelCapabilities,
    NativeTool,
    Request,
    ServerToolCall,
    ServerToolResult,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
)
from llmport.provider.contract import Prepared
from llmport.provider.tool_media import FOLLOW_UP_KEY, move_tool_media
from llmport.provider.wire import Body, encode, urlsafe_base64_of
from llmport.schema.transform import GEMINI

from . import sdk_internals
from .files import part as file_part
from .models import AUDIO_TYPES, FILE_TYPES, IMAGE_TYPES, NATIVE_TEXT_FILES, Family

VENDOR = "gemini"

#: Where a thought signature is kept on a function call: ``ToolCall.extra``
#: (standard base64). Earlier versions also kept a text part's signature in
#: ``Message.extra`` under this key; such stored messages are still echoed.
SIGNATURE_KEY = "gemini_thought_signature"
#: ``ThinkingBlock.extra`` marker: this block only carries the ``thoughtSignature``
#: of the (non-thought) text part that follows it (value ``"text"``).
SIGNED_PART_KEY = "gemini_signs"
#: ``ToolCall.extra`` flag: the API sent no call id, llmport made one up (never sent back).
SYNTHETIC_ID_KEY = "gemini_synthetic_id"

#: Thinking budgets (tokens) per reasoning effort on models that take a budget.
THINKING_BUDGETS = {"minimal": 512, "low": 1024, "medium": 8192, "high": 24576}
#: Gemini takes at most five stop sequences.
MAX_STOP_SEQUENCES = 5

#: Options this plugin honours (``GeminiProvider.options``); anything else is an
#: ``OptionError`` from the core before any request.
KNOWN_OPTIONS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "max_tokens",
        "timeout",
        "stop",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "safety_settings",
        "cached_content",
        "labels",
    }
)
#: Options passed to ``GenerateContentConfig``, by their name there.
_CONFIG_NAMES = {
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "max_tokens": "max_output_tokens",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "safety_settings": "safety_settings",
    "cached_content": "cached_content",
    "labels": "labels",
}
_OPTION_NAMES = {config: option for option, config in _CONFIG_NAMES.items()}
_OPTION_NAMES["stop_sequences"] = "stop"

#: URL prefixes the Gemini Developer API reads as ``file_data`` (Files API uploads, YouTube).
_FILES_API_PREFIXES = ("https://generativelanguage.googleapis.com/",)
_YOUTUBE_PREFIXES = ("https://www.youtube.com/", "https://youtube.com/", "https://youtu.be/")


# ---------------------------------------------------------------------------
# Prepare: every check and every conversion, once
# ---------------------------------------------------------------------------


def build_request(
    request: Request,
    caps: ModelCapabilities,
    family: Family,
    *,
    vertex: bool,
    vendor: Mapping[str, Any],
) -> Prepared:
    """Check ``request`` against Gemini's rules and build the ``generate_content`` arguments.

    ``caps`` / ``family`` are the model's (looked up once by the caller, after
    ``Provider.check`` ran the generic checks); ``vendor`` the request's
    ``vendor["gemini"]`` fields. ``Prepared.payload`` is the request as
    JSON (:func:`wire_request`: sent through google-genai's API client,
    without building its pydantic models), or, on Vertex AI and for the
    options only the SDK converts (:data:`_SDK_OPTIONS`), the keyword
    arguments of ``models.generate_content`` (or ``_stream``). Streams
    take the same JSON body.
    """
    model = request.model
    _check_media(request, caps, vertex=vertex)
    options = request.options
    # Source: Gemini API reference, "GenerateContentRequest" (Developer API): no labels field;
    #   labels are Vertex AI's (Vertex AI "GenerateContentRequest").
    if options.get("labels") is not None and not vertex:
        raise UnsupportedFeatureError(VENDOR, model, "labels", "labels are a Vertex AI feature")
    if (
        request.response_format is not None
        and request.tools
        and request.tool_choice != "none"
        # Source: Gemini API, "Structured output": combining function calling with a response schema
        #   is documented for Gemini 3 models.
        and not family.tools_with_schema
    ):
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            "response_format together with tools",
            "this model cannot combine function calling with a JSON response schema "
            "(Gemini 3 models can)",
        )
    if request.native_tools:
        _check_native(request, family)
        # Source: Gemini API reference, "FunctionCallingConfig": its modes force function calls
        #   only; with no function declared there is nothing to force (the choice would be lost).
        if not request.tools and request.tool_choice not in ("auto", "none"):
            raise UnsupportedFeatureError(
                VENDOR,
                model,
                f"tool_choice={request.tool_choice!r} with only native tools",
                "Gemini's function calling modes force function calls, not its built-in tools",
            )
    if request.cache is not None:
        _check_cache(request)
    stops = _stop_sequences(request)
    timeout = _timeout_ms(request)
    body = body_fields(request, vendor, thinking_config(request, family))
    if (
        vertex
        or any(options.get(name) is not None for name in _SDK_OPTIONS)
        or any(c in model for c in _SDK_MODEL_MARKS)
    ):
        payload = sdk_arguments(request, stops, timeout, body)
        payload["contents"] = contents(request.messages, model, family)
        return Prepared(request, payload)
    return Prepared(request, wire_request(request, stops, timeout, body, family))


#: Options whose wire form only google-genai's converters know (nested models,
#: resource names): a request using one goes through the SDK's own path.
_SDK_OPTIONS = ("safety_settings", "cached_content", "labels")
#: Model names google-genai refuses (a ValueError of its own): left to the SDK.
_SDK_MODEL_MARKS = ("..", "?", "&")
#: Options sent in ``generationConfig``, wire name by option, in google-genai's order.
_GENERATION_FIELDS = (
    ("temperature", "temperature", "temperature"),
    ("top_p", "top_p", "topP"),
    ("top_k", "top_k", "topK"),
    ("max_tokens", "max_output_tokens", "maxOutputTokens"),
)
_PENALTY_FIELDS = (
    ("presence_penalty", "presence_penalty", "presencePenalty"),
    ("frequency_penalty", "frequency_penalty", "frequencyPenalty"),
    ("seed", "seed", "seed"),
)
_MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE"}


def sdk_arguments(
    request: Request,
    stops: list[str] | None,
    timeout: int | None,
    body: dict[str, Any],
) -> dict[str, Any]:
    """``model`` and ``config`` of ``models.generate_content`` as google-genai objects.

    Vertex AI requests and requests with safety settings, a cached content
    name or labels are sent this way (the SDK's converters write their wire
    form); the batch backend and token counting also start from these.
    ``contents`` is added by the caller.
    """
    from google.genai import types
    from pydantic import ValidationError

    options = request.options
    config: dict[str, Any] = {
        name: options[key] for key, name in _CONFIG_NAMES.items() if options.get(key) is not None
    }
    if stops is not None:
        config["stop_sequences"] = stops
    system = _system(request)
    if len(system) == 1:
        config["system_instruction"] = system[0]
    elif system:
        parts = [types.Part(text=text) for text in system]
        config["system_instruction"] = types.Content(parts=parts, role="user")
    http: dict[str, Any] = {}
    if timeout is not None:
        http["timeout"] = timeout
    if body:
        http["extra_body"] = body
    if http:
        config["http_options"] = types.HttpOptions(**http)
    if request.tools:
        config["tool_config"] = types.ToolConfig(function_calling_config=function_calling(request))
    rf = request.response_format
    if rf is not None:
        config["response_mime_type"] = "application/json"
        config["response_json_schema"] = GEMINI.transform(rf.schema)
    if request.output_modalities:
        config["response_modalities"] = response_modalities(request)
    # The SDK would otherwise run Python callables itself; llmport runs the tool loop.
    config["automatic_function_calling"] = types.AutomaticFunctionCallingConfig(disable=True)
    try:
        generate_config = types.GenerateContentConfig(**config)
    except ValidationError as exc:
        raise _option_error(exc, options) from None
    return {"model": request.model, "config": generate_config}


def wire_request(
    request: Request,
    stops: list[str] | None,
    timeout: int | None,
    body: dict[str, Any],
    family: Family,
) -> dict[str, Any]:
    """The Developer API's ``generateContent`` call as JSON, exactly as google-genai writes it.

    The payload holds ``path`` (``models/<model>``, without the method),
    ``body`` (the request JSON, ``body_fields`` merged in the way the SDK
    merges ``extra_body``; media as :class:`llmport.provider.wire.Splice`, sent by
    :func:`wire_body`), ``http_options`` (``None``, or the request's timeout) and the
    ``response_json_schema`` (for a fallback to the SDK's response objects).
    Key order, value types (the SDK's coercion of option values included)
    and base64 flavour match what ``generate_content`` sends for the same
    request (``tests/gemini/test_gemini_wire.py``).
    """
    from google.genai import types

    model = request.model
    generation = _generation_config(request.options, stops)
    rf = request.response_format
    if rf is not None:
        generation["responseMimeType"] = "application/json"
        generation["responseJsonSchema"] = GEMINI.transform(rf.schema)
    if request.output_modalities:
        generation["responseModalities"] = response_modalities(request)
    parts = contents(request.messages, model, family, wire=True)
    wire: dict[str, Any] = {"contents": parts}
    system = _system(request)
    if system:
        wire["systemInstruction"] = {"parts": [{"text": text} for text in system], "role": "user"}
    if request.tools:
        wire["toolConfig"] = {"functionCallingConfig": _function_calling_wire(request)}
    wire["generationConfig"] = generation
    if body:
        sdk_internals.merge_body(wire, body)
    path = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
    return {
        "model": model,
        "path": path,
        "body": wire,
        "http_options": None if timeout is None else types.HttpOptions(timeout=timeout),
        "response_json_schema": None if rf is None else rf.schema,
        "empty": not parts,  # google-genai refuses a request without contents
        "extra_body": body,
    }


def response_modalities(request: Request) -> list[str]:
    """``output_modalities=`` as ``generationConfig.responseModalities`` (``["TEXT", "IMAGE"]``).

    As recorded (wire-samples ``gemini/image-output.json``, ``image-output-only.json``);
    the core has refused a modality the model cannot answer with.
    """
    return [name.upper() for name in request.output_modalities]


def _generation_config(options: Mapping[str, Any], stops: list[str] | None) -> dict[str, Any]:
    """``generationConfig``'s sampling fields and stop sequences, as google-genai sends them.

    The values go through the SDK's own validation and coercion (``top_k=40``
    is sent as ``40.0``); a value it refuses is an OptionError.
    """
    from google.genai import types
    from pydantic import ValidationError

    given = {key: options[key] for key, _, _ in _GENERATION_FIELDS if options.get(key) is not None}
    given.update(
        {key: options[key] for key, _, _ in _PENALTY_FIELDS if options.get(key) is not None}
    )
    generation: dict[str, Any] = {}
    if not given and stops is None:
        return generation
    fields = {_CONFIG_NAMES[key]: value for key, value in given.items()}
    if stops is not None:
        fields["stop_sequences"] = stops
    try:
        checked = types.GenerateContentConfig(**fields)
    except ValidationError as exc:
        raise _option_error(exc, options) from None
    for key, name, field in _GENERATION_FIELDS:
        if key in given:
            generation[field] = getattr(checked, name)
    if stops is not None:
        generation["stopSequences"] = checked.stop_sequences
    for key, name, field in _PENALTY_FIELDS:
        if key in given:
            generation[field] = getattr(checked, name)
    return generation


def wire_body(payload: dict[str, Any]) -> Body:
    """The JSON payload's body serialized once, as google-genai's ``json.dumps`` writes it.

    Media go in as cached URL-safe base64 bytes (:mod:`llmport.provider.wire`); the
    result is kept in the payload, so every attempt sends the same pieces.
    """
    body: Body | None = payload.get("wire")
    if body is None:
        body = payload["wire"] = encode(payload["body"], style="python")
    return body


def sdk_payload(prepared: Prepared, family: Family) -> dict[str, Any]:
    """``models.generate_content`` arguments (google-genai objects) for a prepared request.

    What the batch backend and token counting start from; a JSON payload
    (:func:`wire_request`) is rebuilt as the objects it stands for.
    """
    payload: dict[str, Any] = prepared.payload
    if "body" not in payload:
        return payload
    request = prepared.request
    args = sdk_arguments(
        request, _stop_sequences(request), _timeout_ms(request), payload["extra_body"]
    )
    args["contents"] = contents(request.messages, request.model, family)
    return args


def build_count_request(payload: dict[str, Any], model: str, *, vertex: bool) -> dict[str, Any]:
    """``models.count_tokens`` arguments for a converted generation request (``sdk_payload``).

    Contents alone (the Developer API's ``contents`` form) when the request
    has no system prompt and no tools; otherwise the whole request goes in
    ``generateContentRequest`` (contents, system instruction, tools), which
    the Developer API counts as the generation request (google-genai's
    ``count_tokens`` refuses ``system_instruction`` / ``tools`` there, so they
    travel in ``http_options.extra_body``). On Vertex AI they go as top-level
    ``systemInstruction`` / ``tools``.
    """
    from google.genai import types

    config = payload["config"]
    contents = payload["contents"]
    http: dict[str, Any] = {}
    if config.http_options is not None and config.http_options.timeout is not None:
        http["timeout"] = config.http_options.timeout
    extra: dict[str, Any] = {}
    system = config.system_instruction
    if isinstance(system, types.Content):  # several system blocks: one part each
        extra["systemInstruction"] = {"parts": [{"text": p.text} for p in system.parts or ()]}
    elif system is not None:
        extra["systemInstruction"] = {"parts": [{"text": system}]}
    body = dict(config.http_options.extra_body or {}) if config.http_options else {}
    if body.get("tools"):
        extra["tools"] = body["tools"]
    if extra:
        if vertex:
            http["extra_body"] = extra
        else:
            wire = [c.model_dump(mode="json", exclude_none=True) for c in contents]
            http["extra_body"] = {
                "generateContentRequest": {
                    "model": model if model.startswith("models/") else f"models/{model}",
                    "contents": wire,
                    **extra,
                }
            }
    args: dict[str, Any] = {"model": model, "contents": contents}
    if http:
        args["config"] = types.CountTokensConfig(http_options=types.HttpOptions(**http))
    return args


def _function_calling_wire(request: Request) -> dict[str, Any]:
    choice = request.tool_choice
    if isinstance(choice, dict):
        return {"allowedFunctionNames": [choice["name"]], "mode": "ANY"}
    return {"mode": _MODES[choice]}


def _option_error(exc: Any, options: Mapping[str, Any]) -> OptionError:
    """A pydantic error about the config as an OptionError naming the option and its value."""
    problems = []
    for item in exc.errors():
        loc = item.get("loc") or ("?",)
        option = _OPTION_NAMES.get(str(loc[0]), str(loc[0]))
        value = options.get(option, item.get("input"))
        problems.append(f"{option}={value!r}: {item.get('msg', 'invalid')}")
    return OptionError(f"{VENDOR}: bad option value(s): {'; '.join(problems)}")


def _check_media(request: Request, caps: ModelCapabilities, *, vertex: bool) -> None:
    """URLs Gemini can read, and the inline-data size limit (blocks are checked by the core)."""
    model = request.model
    size = 0
    for message in request.messages:
        for block in message.blocks:
            if isinstance(block, MediaBlock):
                if block.url is not None:
                    _check_url(block, model, vertex=vertex)
                size += ((block.size + 2) // 3) * 4
    # Source: Gemini API, "File input methods": inline data is limited to 20 MB per request (larger
    #   files go through the Files API).
    if caps.max_request_bytes is not None and size > caps.max_request_bytes:
        raise UnsupportedContentError(
            VENDOR,
            model,
            "this request",
            f"its inline media is ~{size} bytes base64-encoded, over the "
            f"{caps.max_request_bytes}-byte request limit (upload large files with the Files API "
            "and pass their URL)",
        )


def _check_url(block: MediaBlock, model: str, *, vertex: bool) -> None:
    url = block.url or ""
    mt = block.media_type
    # Source: Gemini API reference, "FileData": mimeType is required.
    if mt.endswith("/*") or mt == "application/octet-stream":
        raise UnsupportedContentError(
            VENDOR, model, block.describe(), "Gemini needs the media type of a URL: pass media_type"
        )
    if vertex and url.startswith(("gs://", "https://")):
        return
    if url.startswith(_FILES_API_PREFIXES):
        return
    if url.startswith(_YOUTUBE_PREFIXES) and mt.startswith("video/"):
        return
    # Source: Gemini API, "File input methods"; Gemini API reference, "FileData": the Developer
    #   API reads Files API URIs and YouTube URLs; Vertex AI reads gs:// and https.
    where = "gs:// and https URLs" if vertex else "Files API URLs (and YouTube videos)"
    raise UnsupportedContentError(
        VENDOR,
        model,
        block.describe(),
        f"this backend reads only {where} as file_data; upload the file with the Files API "
        "or pass its bytes",
    )


def _stop_sequences(request: Request) -> list[str] | None:
    """The ``stop`` option as a list (values checked by the core; Gemini takes at most 5)."""
    stop = request.options.get("stop")
    if stop is None:
        return None
    stops = [stop] if isinstance(stop, str) else list(stop)
    # Source: Gemini API reference, "GenerationConfig": stopSequences, at most 5.
    if len(stops) > MAX_STOP_SEQUENCES:
        raise UnsupportedFeatureError(
            VENDOR,
            request.model,
            f"{len(stops)} stop sequences",
            f"Gemini takes at most {MAX_STOP_SEQUENCES}",
        )
    return stops


def _timeout_ms(request: Request) -> int | None:
    """The ``timeout`` option (seconds) in the milliseconds ``HttpOptions`` wants."""
    timeout = request.options.get("timeout")
    if timeout is None:
        return None
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise OptionError(f"timeout must be > 0 seconds, got {timeout!r}")
    return max(1, math.ceil(timeout * 1000))


def thinking_config(request: Request, family: Family) -> dict[str, Any] | None:
    """``generationConfig.thinkingConfig`` (wire JSON) for ``Request.reasoning``; None: default.

    Gemini 3 (``"level"``) takes an effort as ``thinkingLevel`` (the levels the
    model has) and a bare budget as ``thinkingBudget``; Gemini 2.5 takes a
    ``thinkingBudget``: ``budget_tokens`` as given (``-1`` dynamic, ``0`` off
    where the model can switch thinking off), else the effort through
    :data:`THINKING_BUDGETS` (``"none"``: 0). A truthy ``summary`` asks for
    thought summaries (``includeThoughts``). Anything else is an
    UnsupportedFeatureError before any request.
    """
    reasoning = request.reasoning
    if reasoning is None:
        return None
    model = request.model
    # Source: Gemini API, "Gemini thinking": thinking is documented for Gemini 2.5 and 3 models
    #   only.
    if family.thinking == "none":
        raise UnsupportedFeatureError(VENDOR, model, "reasoning", "this model has no thinking")
    effort, budget = reasoning.effort, reasoning.budget_tokens
    out: dict[str, Any] = {}
    if family.thinking == "level" and effort is not None:
        # Source: Gemini API, "Gemini thinking", "Thinking levels": the levels each Gemini 3 model
        #   takes; thinking cannot be turned off on Gemini 3 Pro.
        if effort not in family.levels:
            raise UnsupportedFeatureError(
                VENDOR,
                model,
                f"reasoning={effort!r}",
                f"accepted: {', '.join(family.levels)} (thinking cannot be switched off)",
            )
        out["thinkingLevel"] = effort.upper()
    elif budget is not None:
        out["thinkingBudget"] = _budget(budget, family, model)
    elif effort is not None:
        if effort == "none":
            # Source: Gemini API, "Gemini thinking", "Set budgets": thinking cannot be turned off on
            #   2.5 Pro or Gemini 3.
            if family.thinking != "budget":
                raise UnsupportedFeatureError(
                    VENDOR,
                    model,
                    f"reasoning={effort!r}",
                    "thinking cannot be switched off on this model (use 'minimal' or 'low')",
                )
            out["thinkingBudget"] = 0
        elif effort in THINKING_BUDGETS:
            low, high = family.budget_range
            out["thinkingBudget"] = min(max(THINKING_BUDGETS[effort], low), high)
        else:
            raise UnsupportedFeatureError(
                VENDOR,
                model,
                f"reasoning={effort!r}",
                f"accepted: none, {', '.join(THINKING_BUDGETS)} or budget_tokens",
            )
    if reasoning.summary:
        out["includeThoughts"] = True
    return out or None


def _budget(budget: int, family: Family, model: str) -> int:
    """A ``thinkingBudget`` the model takes (-1 dynamic, 0 off where allowed, else its range)."""
    if budget == -1:
        return budget
    # Source: Gemini API, "Gemini thinking", "Set budgets": a budget of 0 (off) only on the Flash
    #   models.
    if budget == 0:
        if family.thinking != "budget":
            raise UnsupportedFeatureError(
                VENDOR,
                model,
                "reasoning budget_tokens=0",
                "thinking cannot be switched off on this model",
            )
        return budget
    if family.thinking == "level":
        return budget  # Gemini 3 takes a budget for compatibility; the API checks its range
    low, high = family.budget_range
    # Source: Gemini API, "Gemini thinking", "Set budgets": the thinkingBudget range per model.
    if not low <= budget <= high:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            f"reasoning budget_tokens={budget}",
            f"this model takes {low}..{high}, 0 (off, 2.5 Flash) or -1 (dynamic)",
        )
    return budget


def _check_cache(request: Request) -> None:
    """``cache=``: Gemini caches implicitly; a key, a retention or a lifetime cannot be sent."""
    cache = request.cache
    assert cache is not None
    # Source: Gemini API, "Context caching": implicit caching has no settings; explicit caches are
    #   cachedContents (vendor=).
    for name, value in (("key", cache.key), ("retention", cache.retention), ("ttl", cache.ttl)):
        if value is not None:
            raise UnsupportedFeatureError(
                VENDOR,
                request.model,
                f"cache {name}",
                "Gemini caches prompts implicitly (no key, retention or lifetime); "
                "an explicit cache goes through vendor={'gemini': {'cachedContent': ...}}",
            )


#: Native tool kind -> (wire key, options taken).
_NATIVE = {
    "web_search": ("googleSearch", frozenset()),
    "url_context": ("urlContext", frozenset()),
    "code_execution": ("codeExecution", frozenset()),
    "file_search": ("fileSearch", frozenset({"store_names", "metadata_filter", "top_k"})),
}


def _check_native(request: Request, family: Family) -> None:
    model = request.model
    # Source: Gemini API, "Tool combination" (Gemini 3): built-in tools with function calling, and
    #   with a response schema, are documented for Gemini 3 models.
    if request.tools and not family.native_with_functions:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            "native tools together with function tools",
            "only Gemini 3 models combine built-in tools with function calling",
        )
    if request.response_format is not None and not family.tools_with_schema:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            "response_format together with native tools",
            "only Gemini 3 models combine built-in tools with a JSON response schema",
        )


def native_tool(tool: NativeTool, model: str) -> dict[str, Any]:
    """One ``NativeTool`` as its ``tools`` entry (field names as google-genai sends them)."""
    key, taken = _NATIVE[tool.kind]
    unknown = set(tool.options) - taken
    if unknown:
        raise OptionError(
            f"{VENDOR}: native tool {tool.kind!r} takes "
            f"{', '.join(sorted(taken)) or 'no options'}; got {', '.join(sorted(unknown))}"
        )
    if tool.kind != "file_search":
        return {key: {}}
    names = tool.options.get("store_names")
    if isinstance(names, str):
        names = [names]
    if not names or not all(isinstance(n, str) and n for n in names):
        raise OptionError(
            f"{VENDOR}: NativeTool('file_search', store_names=[...]) needs the "
            "fileSearchStores/... names to search"
        )
    entry: dict[str, Any] = {"file_search_store_names": list(names)}
    if tool.options.get("metadata_filter") is not None:
        entry["metadata_filter"] = tool.options["metadata_filter"]
    if tool.options.get("top_k") is not None:
        entry["top_k"] = tool.options["top_k"]
    return {key: entry}


# ---------------------------------------------------------------------------
# Tools and vendor fields
# ---------------------------------------------------------------------------


def body_fields(
    request: Request, vendor: Mapping[str, Any], thinking: dict[str, Any] | None = None
) -> dict[str, Any]:
    """What goes in ``http_options.extra_body``.

    Function declarations, then native tools (one ``tools`` entry each), the
    ``thinkingConfig`` (camelCase, as on the wire), then the vendor fields.
    """
    body: dict[str, Any] = {}
    tools: list[dict[str, Any]] = []
    if request.tools:
        tools.append({"functionDeclarations": function_declarations(request)})
    for native in request.native_tools:
        tools.append(native_tool(native, request.model))
    if tools:
        body["tools"] = tools
    if thinking:
        body["generationConfig"] = {"thinkingConfig": thinking}
    for key, value in vendor.items():
        if key == "tools" and "tools" in body and isinstance(value, list):
            body["tools"] = [*body["tools"], *value]  # e.g. googleSearch beside the functions
        else:
            body[key] = merge(body[key], value) if key in body else value
    return body


def function_declarations(request: Request) -> list[dict[str, Any]]:
    """Each tool as a ``functionDeclaration`` (its ``vendor["gemini"]`` fields merged in)."""
    out = []
    for spec in request.tools:
        declaration: dict[str, Any] = {
            "name": spec.name,
            "description": spec.description,
            "parameters_json_schema": GEMINI.transform(
                spec.parameters or {"type": "object", "properties": {}}
            ),
        }
        fields = spec.vendor.get(VENDOR)
        out.append(merge(declaration, fields) if fields else declaration)
    return out


def merge(base: Any, fields: Any) -> Any:
    """``fields`` over ``base``: objects merge recursively, anything else replaces."""
    if not (isinstance(base, dict) and isinstance(fields, Mapping)):
        return fields
    out = dict(base)
    for key, value in fields.items():
        out[key] = merge(out[key], value) if key in out else value
    return out


def function_calling(request: Request) -> Any:
    """``auto``/``required``/``none``/``{"name"}`` -> ``FunctionCallingConfig``.

    "required" is mode ``ANY``; a named tool is ``ANY`` limited to that name.
    """
    from google.genai import types

    modes = types.FunctionCallingConfigMode
    choice = request.tool_choice
    if isinstance(choice, dict):
        return types.FunctionCallingConfig(mode=modes.ANY, allowed_function_names=[choice["name"]])
    mode = {"auto": modes.AUTO, "required": modes.ANY, "none": modes.NONE}[choice]
    return types.FunctionCallingConfig(mode=mode)


def _system(request: Request) -> list[str]:
    """The ``systemInstruction`` parts: ``system=`` plus any system-role messages, in order.

    ``system=`` given as several blocks is sent as blocks: one part
    each, the system-role messages after them. Otherwise it is one part, the
    system-role messages joined to it by blank lines.
    """
    rest = [m.text for m in request.messages if m.role == "system" and m.text]
    blocks = [b.text for b in request.system_blocks if b.text]
    if len(blocks) > 1:
        return blocks + rest
    joined = "\n\n".join(([request.system] if request.system else []) + rest)
    return [joined] if joined else []


# ---------------------------------------------------------------------------
# Contents
# ---------------------------------------------------------------------------


def contents(
    messages: Iterable[Message], model: str, family: Family | None = None, *, wire: bool = False
) -> list[Any]:
    """Neutral messages -> Gemini ``contents`` (``user`` / ``model`` turns).

    ``types.Content`` objects, or with ``wire`` the JSON google-genai would
    write for them (:func:`wire_contents`).

    Tool results are ``functionResponse`` parts of a user turn, before any
    other content of that turn; consecutive turns of one role are merged.
    An assistant turn's blocks go back in order, exactly as received: thought
    parts (``thought: true``) with their signatures, the ``thoughtSignature``
    of a text part on that text part, code execution parts verbatim, then the
    function calls with theirs. Empty text parts are sent as they are.
    """
    if wire:
        return wire_contents(messages, model, family)
    from google.genai import types

    def call_part(call: ToolCall, synthetic: set[str]) -> Any:
        return types.Part(
            function_call=types.FunctionCall(
                name=call.name, args=call.arguments, id=None if call.id in synthetic else call.id
            ),
            thought_signature=_signature(call.extra.get(SIGNATURE_KEY)),
        )

    turns = _turns(
        messages,
        model_parts=lambda message: _model_parts(message, types),
        call_part=call_part,
        result_part=lambda result, synthetic: _function_response(
            result, synthetic, model, family, types
        ),
        block_part=lambda block: part(block, model),
        media_in_results=_media_in_results(family),
    )
    return [types.Content(role=role, parts=parts) for role, parts in turns]


def _turns(
    messages: Iterable[Message],
    *,
    model_parts: Callable[[Message], list[Any]],
    call_part: Callable[[ToolCall, set[str]], Any],
    result_part: Callable[[ToolResult, set[str]], Any],
    block_part: Callable[[TextBlock | MediaBlock | FileRef], Any],
    media_in_results: bool,
) -> list[tuple[str, list[Any]]]:
    """``(role, parts)`` per turn: the one walk :func:`contents` and :func:`wire_contents` render.

    ``synthetic`` collects the call ids llmport made up (never sent to the API).
    Without ``media_in_results`` (before Gemini 3), media a tool returned go
    in their own user turn after the results, as recorded
    (wire-samples ``gemini/tool-result-audio.json``).
    """
    out: list[tuple[str, list[Any]]] = []
    synthetic: set[str] = set()
    if not media_in_results:
        messages = move_tool_media(messages)
    for message in messages:
        if message.role == "system":
            continue  # sent as system_instruction
        parts: list[Any]
        if message.role == "assistant":
            role = "model"
            parts = model_parts(message)
            for call in message.tool_calls:
                if call.extra.get(SYNTHETIC_ID_KEY):
                    synthetic.add(call.id)
                parts.append(call_part(call, synthetic))
        else:
            role = "user"
            parts = [result_part(result, synthetic) for result in message.tool_results]
            for block in message.blocks:
                if isinstance(block, (TextBlock, MediaBlock, FileRef)):
                    parts.append(block_part(block))
        if not parts:
            continue
        if out and out[-1][0] == role and not message.extra.get(FOLLOW_UP_KEY):
            out[-1][1].extend(parts)
        else:
            out.append((role, parts))
    return out


def _model_parts(message: Message, types: Any) -> list[Any]:
    """An assistant message's blocks as ``model`` parts, in order, signatures where received."""
    parts: list[Any] = []
    for form, value, sig, thought in model_part_forms(message):
        if form == "text":
            signature = _signature(sig)
            if thought:
                parts.append(types.Part(text=value, thought=True, thought_signature=signature))
            else:
                parts.append(types.Part(text=value, thought_signature=signature))
        elif form == "raw":
            parts.append(raw_part(value, types))
        else:
            media = part(value, "")
            if sig:
                media.thought_signature = _signature(sig)
            parts.append(media)
    return parts


def model_part_forms(message: Message) -> Iterator[tuple[str, Any, Any, bool]]:
    """What an assistant message's parts are, in order: the one walk both forms render.

    ``("text", text, stored signature, thought)``, ``("raw", a part kept
    verbatim, None, False)`` or ``("media", block, its signature or None, False)``. A text
    part's signature may arrive on a thinking block before it (``gemini_signs:
    "text"``) or, from older sessions, on the message; a signature with no
    text after it goes on an empty text part.
    """
    pending: Any = None  # a text part's signature, waiting for its text
    legacy = message.extra.get(SIGNATURE_KEY) if message.extra else None
    for block in message.blocks:
        if isinstance(block, TextBlock):
            sig = pending if pending is not None else legacy
            legacy = pending = None
            yield "text", block.text, sig, False
            continue
        if isinstance(block, MediaBlock) and pending is not None:
            # An image the model answered with, signed on its own part: the signature goes
            # back on that part (Gemini API, "Thought signatures": image generation parts).
            yield "media", block, pending, False
            pending = None
            continue
        if pending is not None:  # a signed part with no text after it: an empty text part
            yield "text", "", pending, False
            pending = None
        if isinstance(block, ThinkingBlock):
            if block.extra.get(SIGNED_PART_KEY) == "text" and not block.text:
                pending = block.signature or None
            elif block.text or block.signature:
                yield "text", block.text, block.signature, True
        elif isinstance(block, (ServerToolCall, ServerToolResult)) and block.raw:
            yield "raw", block.raw, None, False
        elif isinstance(block, MediaBlock):
            yield "media", block, None, False
    if pending is not None:
        yield "text", "", pending, False


def raw_part(raw: Mapping[str, Any], types: Any) -> Any:
    """A part kept verbatim (wire JSON, camelCase) as a ``types.Part`` for the SDK."""
    fields = {k: v for k, v in raw.items() if k != "thoughtSignature"}
    built = types.Part.model_validate(fields)
    signature = raw.get("thoughtSignature")
    if signature:
        built.thought_signature = _signature(signature)
    return built


def _media_in_results(family: Family | None) -> bool:
    # Source: Gemini API, "Function calling", "Multimodal function responses":
    #   functionResponse.parts is documented for Gemini 3 models.
    return family is not None and family.media_in_tool_results


def function_output(result: ToolResult) -> dict[str, Any]:
    """``functionResponse.response``: ``{"output": text}`` or ``{"error": text}``.

    Source: Gemini API reference, ``FunctionResponse.response``: "output" holds
    the function's output, "error" its error. A result that is only media (its
    text empty, the media in ``parts``) sends ``{}``, as recorded
    (wire-samples ``gemini-vertex/tool-result-document.json``); the
    recordings' other keys (``files``, ``return_value``) are the recording
    client's own names, not the API's.
    """
    if not result.content and result.blocks and not result.is_error:
        return {}
    return {"error" if result.is_error else "output": result.content}


def _function_response(
    result: ToolResult, synthetic: set[str], model: str, family: Family | None, types: Any
) -> Any:
    """A tool result as a ``functionResponse`` part (media as its ``parts`` on Gemini 3)."""
    media: list[Any] | None = None
    if result.blocks:
        media = [_response_part(b, model, types) for b in result.blocks]
    return types.Part(
        function_response=types.FunctionResponse(
            name=result.name,
            response=function_output(result),
            id=None if result.call_id in synthetic else result.call_id,
            parts=media,
        )
    )


def _response_part(block: Any, model: str, types: Any) -> Any:
    form, uri, media_type = response_part_form(block, model)
    if form == "file":
        return types.FunctionResponsePart(
            file_data=types.FunctionResponseFileData(file_uri=uri, mime_type=media_type)
        )
    return types.FunctionResponsePart(
        inline_data=types.FunctionResponseBlob(data=block.data, mime_type=media_type)
    )


def response_part_form(block: Any, model: str) -> tuple[str, str | None, str]:
    """How a tool result's block goes in ``functionResponse.parts`` (Gemini 3).

    ``("file", uri, media type)`` for a URL or an uploaded file (a
    :class:`FileRef` of the Gemini Files API: its URI, as a user turn's
    ``fileData`` sends it); ``("inline", None, media type)`` for bytes.
    """
    if isinstance(block, FileRef):
        return "file", block.id, block.media_type
    if not isinstance(block, MediaBlock):
        raise UnsupportedContentError(
            VENDOR, model, f"{block.type} block in a tool result", "only media go beside the text"
        )
    if block.url is not None:
        return "file", block.url, block.media_type
    return "inline", None, block.media_type


def _signature(value: Any) -> bytes | None:
    """A stored thought signature (standard or URL-safe base64 text) as bytes for the SDK."""
    if not value:
        return None
    if isinstance(value, bytes):
        return value
    text = str(value)
    return base64.urlsafe_b64decode(
        text.replace("+", "-").replace("/", "_") + "=" * (-len(text) % 4)
    )


def part_form(block: TextBlock | MediaBlock, model: str) -> tuple[str, str]:
    """How one content block is sent, every check made: the one part converter.

    ``("text", text)``; ``("file", media type)`` (by its URL);
    ``("inline", media type)`` (its bytes). Text-like files go as inline data
    where Gemini takes their type (:data:`~.models.NATIVE_TEXT_FILES`, ``send``
    ``"auto"`` or ``"native"``), else as text by the documented inlining rule
    (``send="text"`` always). :func:`part` and :func:`wire_part` only render it.
    """
    if block.cache is not None and block.cache.ttl is not None:
        _ttl_error(model)
    if isinstance(block, TextBlock):
        return "text", block.text
    if block.citations:
        raise UnsupportedContentError(
            VENDOR,
            model,
            block.describe(),
            "Gemini returns no document citations (only grounding citations)",
        )
    mt = block.media_type
    native = mt in IMAGE_TYPES or mt in AUDIO_TYPES or mt in FILE_TYPES
    if not native and block.send != "text" and mt in NATIVE_TEXT_FILES:
        native = True
    if native:
        return ("file" if block.url is not None else "inline"), mt
    if block.type == "file" and is_text_like(mt):
        return "text", inline_text_file(block, VENDOR, model).text
    # Source: Gemini API, "Document understanding"; Gemini API, "Image understanding"; Gemini API,
    #   "Audio understanding":
    #   the supported MIME types (the capability table).
    raise UnsupportedContentError(VENDOR, model, block.describe(), f"Gemini does not take {mt}")


def part(block: TextBlock | MediaBlock | FileRef, model: str) -> Any:
    """One content block as a ``Part`` (see :func:`part_form`)."""
    from google.genai import types

    if isinstance(block, FileRef):
        return types.Part(file_data=types.FileData(file_uri=block.id, mime_type=block.media_type))
    form, value = part_form(block, model)
    if form == "text":
        return types.Part(text=value)
    assert isinstance(block, MediaBlock)
    if form == "file":
        return types.Part(file_data=types.FileData(file_uri=block.url, mime_type=value))
    return types.Part(inline_data=types.Blob(data=block.data, mime_type=value))


# ---------------------------------------------------------------------------
# Contents as JSON: what google-genai writes for the objects above
# ---------------------------------------------------------------------------
#
# Its converters (``models._Part_to_mldev``...) write a part's keys in this
# order: fileData, functionCall, functionResponse, inlineData, text, thought,
# thoughtSignature; nested objects they do not convert (``inlineData``,
# ``fileData``, ``functionResponse``) keep their snake_case field names in
# declaration order; bytes become URL-safe base64.


def _b64(data: bytes | None) -> str:
    return base64.urlsafe_b64encode(data or b"").decode("ascii")


def _sig_wire(value: Any) -> str | None:
    """A stored thought signature as google-genai sends it (URL-safe base64 of its bytes)."""
    raw = _signature(value)
    return None if raw is None else _b64(raw)


def wire_contents(
    messages: Iterable[Message], model: str, family: Family | None = None
) -> list[dict[str, Any]]:
    """:func:`contents` as the JSON google-genai sends (same checks, same order)."""
    turns = _turns(
        messages,
        model_parts=_wire_model_parts,
        call_part=_wire_call,
        result_part=lambda result, synthetic: _wire_function_response(
            result, synthetic, model, family
        ),
        block_part=lambda block: wire_part(block, model),
        media_in_results=_media_in_results(family),
    )
    return [{"parts": parts, "role": role} for role, parts in turns]


def _wire_call(call: ToolCall, synthetic: set[str]) -> dict[str, Any]:
    """A tool call as a ``functionCall`` part (``FunctionCall`` field order), signature after."""
    fc: dict[str, Any] = {}
    if call.id not in synthetic and call.id is not None:
        fc["id"] = call.id
    if call.arguments is not None:
        fc["args"] = call.arguments
    if call.name is not None:
        fc["name"] = call.name
    entry: dict[str, Any] = {"functionCall": fc}
    sig = _sig_wire(call.extra.get(SIGNATURE_KEY))
    if sig is not None:
        entry["thoughtSignature"] = sig
    return entry


def _text_part(text: str, sig: str | None, thought: bool = False) -> dict[str, Any]:
    entry: dict[str, Any] = {"text": text}
    if thought:
        entry["thought"] = True
    if sig is not None:
        entry["thoughtSignature"] = sig
    return entry


def _wire_model_parts(message: Message) -> list[dict[str, Any]]:
    """:func:`_model_parts` as JSON."""
    parts: list[dict[str, Any]] = []
    for form, value, sig, thought in model_part_forms(message):
        if form == "text":
            parts.append(_text_part(value, _sig_wire(sig), thought))
        elif form == "raw":
            parts.append(_sdk_part_wire(value))
        else:
            media = wire_part(value, "")
            if sig:
                media["thoughtSignature"] = _sig_wire(sig)
            parts.append(media)
    return parts


def _sdk_part_wire(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A part kept verbatim, written by google-genai's own converter (rare: code execution)."""
    from google.genai import types

    return sdk_internals.part_json(raw_part(raw, types))


def _wire_function_response(
    result: ToolResult, synthetic: set[str], model: str, family: Family | None
) -> dict[str, Any]:
    """:func:`_function_response` as JSON (``FunctionResponse`` field order, snake_case)."""
    response: dict[str, Any] = {}
    if result.blocks:
        response["parts"] = [_wire_response_part(b, model) for b in result.blocks]
    if result.call_id not in synthetic and result.call_id is not None:
        response["id"] = result.call_id
    if result.name is not None:
        response["name"] = result.name
    response["response"] = function_output(result)
    return {"functionResponse": response}


def _wire_response_part(block: Any, model: str) -> dict[str, Any]:
    form, uri, media_type = response_part_form(block, model)
    if form == "file":
        return {"file_data": {"file_uri": uri, "mime_type": media_type}}
    return {"inline_data": {"mime_type": media_type, "data": urlsafe_base64_of(block)}}


def wire_part(block: TextBlock | MediaBlock | FileRef, model: str) -> dict[str, Any]:
    """:func:`part` as JSON (see :func:`part_form`)."""
    if isinstance(block, FileRef):  # an uploaded file (llmport_gemini.files)
        return file_part(block)
    form, value = part_form(block, model)
    if form == "text":
        return {"text": value}
    assert isinstance(block, MediaBlock)
    if form == "file":
        return {"fileData": {"file_uri": block.url, "mime_type": value}}
    if not block.inline:  # (not block.data: that decodes a released block again)
        return {"inlineData": {"mime_type": value}}
    # Spliced in as bytes (llmport.provider.wire), encoded once per block for every turn.
    return {"inlineData": {"data": urlsafe_base64_of(block), "mime_type": value}}


# Source: Gemini API, "Context caching": implicit caching has no lifetime to set.
def _ttl_error(model: str) -> None:
    raise UnsupportedFeatureError(
        VENDOR,
        model,
        "cache ttl",
        "Gemini caches prompts implicitly, with no lifetime to set; "
        "an explicit cache goes through vendor={'gemini': {'cachedContent': ...}}",
    )
