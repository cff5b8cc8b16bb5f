"""Neutral :class:`~llmport.types.Request` -> ``generate_content`` arguments.

:func:`check` holds every rule that can reject a request (run by
``prepare()`` before any network call, and again by :func:`build`);
:func:`build` produces the ``model`` / ``contents`` / ``config`` arguments as
``google.genai.types`` objects, so the SDK serialises them with its own
field names. No I/O here; the SDK's ``types`` module is imported on first
use of :func:`build` (never at plugin import).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from llmport.content import inline_text_file, is_text_like
from llmport.errors import UnsupportedContentError, UnsupportedFeatureError
from llmport.provider import check_block
from llmport.types import MediaBlock, Message, ModelCapabilities, Request, TextBlock

from .plugin import AUDIO_TYPES, FILE_TYPES, IMAGE_TYPES, Family

VENDOR = "gemini"

#: Where a thought signature is kept: ``ToolCall.extra`` (on a function call) and
#: ``Response.extra`` / ``Message.extra`` (on the text of a turn). Standard base64.
SIGNATURE_KEY = "gemini_thought_signature"
#: ``ToolCall.extra`` flag: the API sent no call id, llmport made one up (never sent back).
SYNTHETIC_ID_KEY = "gemini_synthetic_id"

#: Thinking budgets (tokens) per ``reasoning_effort`` on models that take a budget.
THINKING_BUDGETS = {"minimal": 512, "low": 1024, "medium": 8192, "high": 24576}
#: ``thinking_level`` values of Gemini 3 models.
THINKING_LEVELS = ("minimal", "low", "medium", "high")
#: Gemini takes at most five stop sequences.
MAX_STOP_SEQUENCES = 5

#: Options this plugin honours; anything else is rejected, never dropped.
KNOWN_OPTIONS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "max_tokens",
        "timeout",
        "stop",
        "seed",
        "reasoning_effort",
        "presence_penalty",
        "frequency_penalty",
        "safety_settings",
        "cached_content",
        "labels",
    }
)
#: Options passed to ``GenerateContentConfig`` under another name.
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

#: URL prefixes the Gemini Developer API reads as ``file_data`` (Files API uploads, YouTube).
_FILES_API_PREFIXES = ("https://generativelanguage.googleapis.com/",)
_YOUTUBE_PREFIXES = ("https://www.youtube.com/", "https://youtube.com/", "https://youtu.be/")


@dataclass(slots=True, frozen=True)
class Prepared:
    """``generate_content`` arguments plus what reading the answer needs.

    ``parallel_tool_calls=False`` has no Gemini switch: every function call of
    a turn is kept and llmport runs them one at a time (as for Bedrock).
    """

    model: str
    contents: list[Any]
    config: Any


# ---------------------------------------------------------------------------
# Checks (before any request)
# ---------------------------------------------------------------------------


def check(request: Request, caps: ModelCapabilities, family: Family, *, vertex: bool) -> None:
    """Raise a typed input error for anything this model cannot take."""
    model = request.model
    size = 0
    for message in request.messages:
        for block in message.blocks:
            if isinstance(block, MediaBlock):
                check_block(VENDOR, model, caps, block)
                if block.url is not None:
                    _check_url(block, model, vertex=vertex)
                size += ((block.size + 2) // 3) * 4
    if caps.max_request_bytes is not None and size > caps.max_request_bytes:
        raise UnsupportedContentError(
            VENDOR,
            model,
            "this request",
            f"its inline media is ~{size} bytes base64-encoded, over the "
            f"{caps.max_request_bytes}-byte request limit (upload large files with the Files API "
            "and pass their URL)",
        )
    options = request.options
    unknown = sorted(set(options) - KNOWN_OPTIONS)
    if unknown:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            f"option(s) {', '.join(unknown)}",
            f"known options: {', '.join(sorted(KNOWN_OPTIONS))}",
        )
    if options.get("labels") is not None and not vertex:
        raise UnsupportedFeatureError(VENDOR, model, "labels", "labels are a Vertex AI feature")
    max_tokens = options.get("max_tokens")
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
    ):
        raise UnsupportedFeatureError(
            VENDOR, model, f"max_tokens={max_tokens!r}", "must be a positive integer"
        )
    _stop_sequences(request)
    _timeout_ms(request)
    thinking_config(request, family)
    if (
        request.response_format is not None
        and request.tools
        and request.tool_choice != "none"
        and not family.tools_with_schema
    ):
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            "response_format together with tools",
            "this model cannot combine function calling with a JSON response schema "
            "(Gemini 3 models can)",
        )


def _check_url(block: MediaBlock, model: str, *, vertex: bool) -> None:
    url = block.url or ""
    mt = block.media_type
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
    where = "gs:// and https URLs" if vertex else "Files API URLs (and YouTube videos)"
    raise UnsupportedContentError(
        VENDOR,
        model,
        block.describe(),
        f"this backend reads only {where} as file_data; upload the file with the Files API "
        "or pass its bytes",
    )


def _stop_sequences(request: Request) -> list[str] | None:
    stop = request.options.get("stop")
    if stop is None:
        return None
    stops = [stop] if isinstance(stop, str) else list(stop)
    if not all(isinstance(s, str) and s for s in stops):
        raise UnsupportedFeatureError(
            VENDOR, request.model, f"stop={stop!r}", "stop sequences must be non-empty strings"
        )
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
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise UnsupportedFeatureError(
            VENDOR, request.model, f"timeout={timeout!r}", "must be a positive number of seconds"
        )
    return max(1, math.ceil(timeout * 1000))


def thinking_config(request: Request, family: Family) -> dict[str, Any] | None:
    """The ``thinking_config`` asked for by ``reasoning_effort`` (None: the model's default).

    An effort name becomes ``thinking_level`` on Gemini 3 and a token budget
    (:data:`THINKING_BUDGETS`) on Gemini 2.5; an int is a token budget
    (``-1``: dynamic, ``0``: off where the model allows it); ``"none"`` turns
    thinking off where the model allows it.
    """
    effort = request.options.get("reasoning_effort")
    if effort is None:
        return None
    model = request.model
    if isinstance(effort, bool) or not isinstance(effort, (int, str)):
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            f"reasoning_effort={effort!r}",
            "give an effort name or a thinking budget in tokens",
        )
    if family.thinking == "none":
        if effort in ("none", 0):
            return None  # the model never thinks: honoured as asked
        raise UnsupportedFeatureError(
            VENDOR, model, "reasoning_effort", "this model has no thinking"
        )
    off = effort in ("none", 0)
    if off and family.thinking != "budget":
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            f"reasoning_effort={effort!r}",
            "thinking cannot be switched off on this model (use 'minimal' or 'low')",
        )
    if isinstance(effort, int):
        if effort < -1:
            raise UnsupportedFeatureError(
                VENDOR,
                model,
                f"reasoning_effort={effort}",
                "a thinking budget is >= 0 tokens, or -1 for dynamic",
            )
        return {"thinking_budget": effort}
    if off:
        return {"thinking_budget": 0}
    if family.thinking == "level":
        if effort not in THINKING_LEVELS:
            raise UnsupportedFeatureError(
                VENDOR,
                model,
                f"reasoning_effort={effort!r}",
                f"accepted: {', '.join(THINKING_LEVELS)} or a token budget",
            )
        return {"thinking_level": effort.upper()}
    if effort not in THINKING_BUDGETS:
        raise UnsupportedFeatureError(
            VENDOR,
            model,
            f"reasoning_effort={effort!r}",
            f"accepted: none, {', '.join(THINKING_BUDGETS)} or a token budget",
        )
    return {"thinking_budget": THINKING_BUDGETS[effort]}


# ---------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------


def build(request: Request, caps: ModelCapabilities, family: Family, *, vertex: bool) -> Prepared:
    """The ``generate_content`` arguments for ``request`` (checked first)."""
    from google.genai import types

    check(request, caps, family, vertex=vertex)
    options = request.options
    config: dict[str, Any] = {
        name: options[key] for key, name in _CONFIG_NAMES.items() if options.get(key) is not None
    }
    stops = _stop_sequences(request)
    if stops is not None:
        config["stop_sequences"] = stops
    system = _system(request)
    if system:
        config["system_instruction"] = system
    thinking = thinking_config(request, family)
    if thinking is not None:
        config["thinking_config"] = types.ThinkingConfig(**thinking)
    timeout = _timeout_ms(request)
    if timeout is not None:
        config["http_options"] = types.HttpOptions(timeout=timeout)
    if request.tools:
        config["tools"] = [
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(
                        name=spec.name,
                        description=spec.description,
                        parameters_json_schema=spec.parameters
                        or {"type": "object", "properties": {}},
                    )
                    for spec in request.tools
                ]
            )
        ]
        config["tool_config"] = types.ToolConfig(function_calling_config=function_calling(request))
    rf = request.response_format
    if rf is not None:
        config["response_mime_type"] = "application/json"
        config["response_json_schema"] = rf.schema
    # The SDK would otherwise run Python callables itself; llmport runs the tool loop.
    config["automatic_function_calling"] = types.AutomaticFunctionCallingConfig(disable=True)
    return Prepared(
        model=request.model,
        contents=contents(request.messages, request.model),
        config=types.GenerateContentConfig(**config),
    )


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


def _system(request: Request) -> str:
    """``Request.system`` plus any system-role messages, in order."""
    parts = [request.system] if request.system else []
    parts += [m.text for m in request.messages if m.role == "system" and m.text]
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------
# Contents
# ---------------------------------------------------------------------------


def contents(messages: Iterable[Message], model: str) -> list[Any]:
    """Neutral messages -> Gemini ``contents`` (``user`` / ``model`` turns).

    Tool results are ``functionResponse`` parts of a user turn, before any
    other content of that turn; consecutive turns of one role are merged.
    Thought signatures are sent back on the parts they came with.
    """
    from google.genai import types

    out: list[Any] = []
    synthetic: set[str] = set()  # call ids llmport made up: never sent to the API
    for message in messages:
        if message.role == "system":
            continue  # sent as system_instruction
        parts: list[Any] = []
        if message.role == "assistant":
            role = "model"
            text = message.text
            if text:
                parts.append(
                    types.Part(
                        text=text, thought_signature=_signature(message.extra.get(SIGNATURE_KEY))
                    )
                )
            for call in message.tool_calls:
                if call.extra.get(SYNTHETIC_ID_KEY):
                    synthetic.add(call.id)
                parts.append(
                    types.Part(
                        function_call=types.FunctionCall(
                            name=call.name,
                            args=call.arguments,
                            id=None if call.id in synthetic else call.id,
                        ),
                        thought_signature=_signature(call.extra.get(SIGNATURE_KEY)),
                    )
                )
        else:
            role = "user"
            for result in message.tool_results:
                key = "error" if result.is_error else "output"
                parts.append(
                    types.Part(
                        function_response=types.FunctionResponse(
                            name=result.name,
                            response={key: result.content},
                            id=None if result.call_id in synthetic else result.call_id,
                        )
                    )
                )
            parts.extend(part(block, model) for block in message.blocks if not _empty(block))
        if not parts:
            continue
        if out and out[-1].role == role:
            out[-1].parts.extend(parts)
        else:
            out.append(types.Content(role=role, parts=parts))
    return out


def _empty(block: Any) -> bool:
    return isinstance(block, TextBlock) and not block.text


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


def part(block: TextBlock | MediaBlock, model: str) -> Any:
    """One content block as a ``Part``: text, inline data, file data, or an inlined text file."""
    from google.genai import types

    if isinstance(block, TextBlock):
        return types.Part(text=block.text)
    mt = block.media_type
    if mt in IMAGE_TYPES or mt in AUDIO_TYPES or mt in FILE_TYPES:
        if block.url is not None:
            return types.Part(file_data=types.FileData(file_uri=block.url, mime_type=mt))
        return types.Part(inline_data=types.Blob(data=block.data, mime_type=mt))
    if block.type == "file" and is_text_like(mt):
        return types.Part(text=inline_text_file(block, VENDOR, model).text)
    raise UnsupportedContentError(VENDOR, model, block.describe(), f"Gemini does not take {mt}")
