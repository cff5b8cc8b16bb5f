"""Providers for OpenAI-compatible services: a :class:`~.profiles.Profile` applied.

The neutral conversion stays in :mod:`.convert_in` / :mod:`.convert_out`;
this module only adds what a profile documents:

* where the key and base URL come from (the service's variable; never
  ``OPENAI_API_KEY``);
* reasoning in the answer (``reasoning`` / ``reasoning_content`` fields,
  Mistral's ``thinking`` chunks, ``<think>`` tags) as a ``ThinkingBlock``,
  and back on the next request the way the service takes it;
* the body field of ``max_tokens``, the shape of ``reasoning=``, fields the
  service rejects (refused typed, before the wire), usage extras.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import urlsplit

from llmport.controls.options import STANDARD_OPTIONS
from llmport.errors import ConfigError, OverloadedError, ProviderError, UnsupportedFeatureError
from llmport.messages.types import (
    Message,
    ModelCapabilities,
    ProviderEvent,
    Request,
    Response,
    TextBlock,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
)
from llmport.output.structured import prompt_instruction
from llmport.provider.assembly import response_events
from llmport.provider.contract import Prepared, Provider, ProviderInfo
from llmport.provider.translate import event_json, vendor_boundary

from . import convert_in, convert_out
from .errors import translate
from .profiles import Profile, ReasoningStyle
from .provider import OpenAIChatProvider, OpenAIPrepared, OpenAIResponsesProvider

__all__ = ["CompatChatProvider", "CompatResponsesProvider", "make_provider"]

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
#: Usage fields OpenAI's own answers have; the rest are the service's extras.
_OPENAI_USAGE = frozenset(
    {
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "prompt_tokens_details",
        "completion_tokens_details",
    }
)


def make_provider(
    profile: Profile, settings: Mapping[str, Any] | None, info: ProviderInfo | None
) -> Provider:
    """The provider of ``profile`` (its wire's class) with ``settings``."""
    cls = CompatResponsesProvider if profile.wire == "responses" else CompatChatProvider
    return cls(profile, settings, info)


class _Compat:
    """What both wires share: the profile, its name, options, key and base URL.

    First in each provider's bases: its ``__init__`` runs before the OpenAI
    provider's, which reads the name and settings set here.
    """

    #: Only the standard options: OpenAI's own (service_tier, store...) go through vendor=.
    options = STANDARD_OPTIONS | frozenset({"extra_headers"})
    settings: dict[str, Any]
    name: str
    own_endpoint: bool
    environment_key: Callable[..., str | None]

    def __init__(
        self,
        profile: Profile,
        settings: Mapping[str, Any] | None = None,
        info: ProviderInfo | None = None,
    ) -> None:
        self.profile = profile
        self.name = _named(profile, info)
        self.vendor_keys = tuple(dict.fromkeys((profile.prefix, self.name)))
        super().__init__(_settings(profile, settings), info)  # type: ignore[call-arg]
        if not profile.stream_options:
            self.stream_options: dict[str, Any] | None = None
        # Embeddings on this service's wire (POST {base_url}/embeddings), or its refusal.
        self.embed_base64 = profile.embed_base64
        self.embed_dimensions_field = profile.embed_dimensions_field
        self.embeddings_hint = profile.embed_refusal or (
            "" if profile.embed_models or profile.embed_any_model else "no embedding models listed"
        )
        self.acknowledge_tool_media = profile.acknowledge_tool_media
        # Images on this service's wire (POST {base_url}/images/generations), or its refusal.
        self.image_fields = dict(profile.image_fields)
        self.images_hint = (
            "not one of its image models"
            if profile.image_models
            else f"llmport sends no image requests to {profile.description or self.name}"
        )

    def translate_error(self, exc: BaseException) -> ProviderError | None:
        """OpenAI's translation, with the service's own transient statuses (Groq's 498)."""
        error = translate(exc, self.name)
        if error is not None and error.status in self.profile.transient_statuses:
            overloaded = OverloadedError(
                str(error),
                provider=self.name,
                status=error.status,
                retryable=True,
                retry_after=error.retry_after,
                code=error.code,
            )
            overloaded.headers = error.headers
            return overloaded
        return error

    def endpoint(self) -> tuple[str | None, str]:
        """The base URL (setting, else the profile's variable, else its default) and key.

        An instance with a base_url of its own never reads the profile's key
        variable (:meth:`~llmport.provider.contract.Provider.environment_key`):
        without ``api_key`` it sends a placeholder, as to a local server.
        """
        p = self.profile
        env_url = os.environ.get(p.base_url_env) if p.base_url_env else None
        base_url = self.settings.get("base_url") or env_url or p.base_url
        key = self.settings.get("api_key") or self.environment_key(p.key_env)
        if key:
            return base_url, key
        if self.own_endpoint:
            return base_url, "unused"
        if p.key_required or urlsplit(base_url).hostname in p.key_hosts:
            raise ConfigError(f"no {self.name} API key: set {p.key_env} (or the api_key setting)")
        return base_url, "unused"  # the SDK insists on a key; a local server ignores it


def _settings(profile: Profile, settings: Mapping[str, Any] | None) -> dict[str, Any]:
    out = dict(settings or {})
    if profile.wire == "chat":
        out.setdefault("max_tokens_field", profile.max_tokens_field)
    return out


def _named(profile: Profile, info: ProviderInfo | None) -> str:
    return info.prefix if info is not None else profile.prefix


class CompatChatProvider(_Compat, OpenAIChatProvider):
    """``groq:MODEL`` and the other Chat Completions services."""

    def body(
        self, request: Request, caps: ModelCapabilities
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        body, call = super().body(request, caps)
        effort = body.pop("reasoning_effort", None)
        if effort is not None:
            if self.profile.effort == "openrouter":
                # https://openrouter.ai/docs/use-cases/reasoning-tokens
                body["reasoning"] = {"effort": effort, "enabled": True}
            else:
                body["reasoning_effort"] = effort
        if self.profile.json_mode_only and request.response_format is not None:
            json_mode(body, request)
        if not self.profile.parallel_tool_calls:
            body.pop("parallel_tool_calls", None)
        if not self.profile.strict_schemas:
            drop_strict(body)
        check_rejected(self.profile, body, self.name, request.model)
        return body, call

    # -- reasoning back on the next request ---------------------------------------

    def assistant(self, message: Message, vendor: str, model: str) -> dict[str, Any]:
        """An assistant turn, its own reasoning sent back as the service documents."""
        thinking = [b for b in message.blocks if isinstance(b, ThinkingBlock)]
        plain = replace(message, blocks=tuple(b for b in message.blocks if b not in thinking))
        out = convert_in.chat_assistant(plain, vendor, model)
        if thinking and self.profile.echo_reasoning:
            echo_reasoning(self.profile.echo_style(model), out, thinking)
        if self.profile.tool_turn_empty_list and out.get("content") is None:
            out["content"] = []
        out.update(self.profile.assistant_fields)
        return out

    # -- answers ------------------------------------------------------------------

    def response(self, answer: Any, prepared: OpenAIPrepared) -> Response:
        message, thinking = split_reasoning(self.profile, answer, self.name)
        response = convert_out.chat_response(message, prepared.restore, self.name)
        usage = answer.get("usage") if isinstance(answer, dict) else None
        add_usage_extras(response, usage, answer)
        if thinking:
            text = [TextBlock(response.text)] if response.text else []
            response.blocks = [*thinking, *(response.blocks or text)]
        return response

    def converter(self, prepared: OpenAIPrepared) -> CompatStream:
        return CompatStream(self.profile, prepared.restore, self.name)

    # -- a call the service could not parse (Groq's tool_use_failed) --------------------
    # The parent's methods without their boundary (this one's translates): the SDK's own
    # BadRequestError is read here before it becomes llmport's.

    @vendor_boundary
    def send(self, prepared: Prepared) -> Response:
        try:
            response: Response = _unbounded(OpenAIChatProvider.send)(self, prepared)
        except Exception as exc:
            return self.failed_call(exc, prepared)
        return response

    @vendor_boundary
    async def asend(self, prepared: Prepared) -> Response:
        try:
            response: Response = await _unbounded(OpenAIChatProvider.asend)(self, prepared)
        except Exception as exc:
            return self.failed_call(exc, prepared)
        return response

    @vendor_boundary
    def send_stream(self, prepared: Prepared) -> Iterator[ProviderEvent]:
        # The 400 comes with the response's status, before any event.
        try:
            yield from _unbounded(OpenAIChatProvider.send_stream)(self, prepared)
        except Exception as exc:
            yield from response_events(self.failed_call(exc, prepared))

    @vendor_boundary
    async def asend_stream(self, prepared: Prepared) -> AsyncIterator[ProviderEvent]:
        try:
            async for event in _unbounded(OpenAIChatProvider.asend_stream)(self, prepared):
                yield event
        except Exception as exc:
            for event in response_events(self.failed_call(exc, prepared)):
                yield event

    def failed_call(self, exc: Exception, prepared: Prepared) -> Response:
        """The model's unparsed call as an answer, where the profile reads it; else re-raise."""
        generation = failed_generation(exc) if self.profile.failed_tool_calls else None
        if generation is None:
            raise exc
        calls = parse_failed_generation(generation)
        return Response(
            tool_calls=calls,
            stop_reason="tool_use",
            model=prepared.request.model,
            raw_stop_reason="tool_use_failed",
        )

    def batch_backend(self) -> Any:
        """OpenAI's batch format where the service documents it (Groq), else None."""
        return super().batch_backend() if self.profile.batch else None


class CompatResponsesProvider(_Compat, OpenAIResponsesProvider):
    """``deepseek-responses:MODEL``: a Responses-compatible endpoint."""

    def body(
        self, request: Request, caps: ModelCapabilities
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        body, call = super().body(request, caps)
        if self.profile.json_mode_only and request.response_format is not None:
            responses_json_mode(body, request)
        drop_output_only(body)
        check_rejected(self.profile, body, self.name, request.model)
        return body, call

    def batch_backend(self) -> Any:
        return None  # no documented batch API


def _unbounded(method: Any) -> Any:
    """``method`` without its :func:`vendor_boundary` (the function it wraps)."""
    return getattr(method, "__wrapped__", method)


def failed_generation(exc: BaseException) -> str | None:
    """The ``failed_generation`` of an SDK 400 ``tool_use_failed``, else None."""
    openai = sys.modules.get("openai")
    if openai is None or not isinstance(exc, openai.BadRequestError):
        return None
    body = exc.body if isinstance(exc.body, dict) else {}
    if body.get("code") != "tool_use_failed":
        return None
    generation = body.get("failed_generation")
    return generation if isinstance(generation, str) else ""


#: ``<function=NAME>ARGS</function>`` (or ``<function=NAME ARGS</function>``), as Llama
#: models on Groq write a call.
_FUNCTION_TAG = re.compile(r"<function=([\w.\-]+)[>\s]?(.*?)</function>", re.DOTALL)


def parse_failed_generation(text: str) -> list[ToolCall]:
    """The calls in a failed generation, their arguments as written (the tool loop checks them).

    JSON (one call ``{"name", "arguments"|"parameters"}`` or a list of them), or
    ``<function=NAME>ARGS</function>`` tags; anything else is one call with no name,
    which the tool loop answers as an unknown tool, so the model is told and tries again.
    """
    calls = _json_calls(text) or [
        (m.group(1), m.group(2).strip()) for m in _FUNCTION_TAG.finditer(text)
    ]
    if not calls:
        calls = [("", text)]
    return [
        ToolCall(f"failed_generation_{n}", name, {}, raw_arguments=raw)
        for n, (name, raw) in enumerate(calls)
    ]


def _json_calls(text: str) -> list[tuple[str, str]]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return []
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return []
        args = item.get("arguments", item.get("parameters", {}))
        calls.append((item["name"], args if isinstance(args, str) else json.dumps(args)))
    return calls


# ---------------------------------------------------------------------------
# Request side
# ---------------------------------------------------------------------------


def check_rejected(profile: Profile, body: Mapping[str, Any], vendor: str, model: str) -> None:
    """Refuse, before the wire, a body field the service documents a 400 for."""
    for pattern, fields in profile.rejects.items():
        if not fnmatchcase(model, pattern):
            continue
        for name, why in fields.items():
            if name in body:
                raise UnsupportedFeatureError(vendor, model, f"option {name!r}", why)


def drop_output_only(body: dict[str, Any]) -> None:
    """Echoed output items without their output-only ``status`` (a Responses-compatible
    service's input schema does not take it: the recorded deepseek-responses client sends
    reasoning and function_call items back without it, wire-samples
    openai-responses-compat-deepseek/tool-roundtrip.json)."""
    for item in body.get("input") or ():
        if isinstance(item, dict) and item.get("type") in ("reasoning", "function_call"):
            item.pop("status", None)


def drop_strict(body: dict[str, Any]) -> None:
    """Leave ``strict`` out of the response format and the tools (the service rejects it)."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and isinstance(fmt.get("json_schema"), dict):
        fmt["json_schema"].pop("strict", None)
    for tool in body.get("tools") or ():
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict):
            function.pop("strict", None)


def json_mode(body: dict[str, Any], request: Request) -> None:
    """JSON mode with the schema in a system message, for services without ``json_schema``.

    DeepSeek documents it so (https://api-docs.deepseek.com/guides/json_mode):
    ``response_format: {"type": "json_object"}`` and the prompt saying "json"
    and showing the format. The core validates the reply (and repairs it once).
    """
    if request.response_format is None:
        return
    body["response_format"] = {"type": "json_object"}
    instruction = {"role": "system", "content": prompt_instruction(request.response_format)}
    messages = body["messages"]
    at = 1 if messages and messages[0].get("role") == "system" else 0
    messages.insert(at, instruction)


def responses_json_mode(body: dict[str, Any], request: Request) -> None:
    """:func:`json_mode` on the Responses wire: ``text.format`` is ``json_object`` and the
    schema goes in ``instructions`` (after the caller's system prompt)."""
    if request.response_format is None:
        return
    body["text"] = {**(body.get("text") or {}), "format": {"type": "json_object"}}
    instruction = prompt_instruction(request.response_format)
    system = body.get("instructions")
    body["instructions"] = f"{system}\n\n{instruction}" if system else instruction


def echo_reasoning(
    style: ReasoningStyle | None, out: dict[str, Any], thinking: list[ThinkingBlock]
) -> None:
    """Put ``thinking`` on the outgoing assistant message ``out`` the way the service takes it."""
    text = "".join(b.text for b in thinking)
    if style in ("reasoning", "reasoning_content"):
        out[style] = text
        details = [d for b in thinking for d in b.extra.get("reasoning_details", ())]
        if details:  # OpenRouter: sent back unchanged (signatures included)
            out["reasoning_details"] = details
    elif style == "think_tags":
        gap = thinking[-1].extra.get("gap", "\n")
        out["content"] = f"{THINK_OPEN}{text}{THINK_CLOSE}{gap}{out.get('content') or ''}"
    elif style == "mistral":
        chunks: list[dict[str, Any]] = [
            {"type": "thinking", "thinking": [{"type": "text", "text": b.text}], "closed": True}
            for b in thinking
        ]
        if out.get("content"):
            chunks.append({"type": "text", "text": out["content"]})
        out["content"] = chunks


# ---------------------------------------------------------------------------
# Answer side
# ---------------------------------------------------------------------------


def split_reasoning(profile: Profile, answer: Any, vendor: str) -> tuple[Any, list[ThinkingBlock]]:
    """``(the answer with plain-text content, its reasoning as blocks)``."""
    if not isinstance(answer, dict) or profile.reasoning is None:
        return answer, []
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return answer, []  # not a success: chat_response says so
    message = dict(choices[0].get("message") or {})
    thinking = message_reasoning(profile, message, vendor)
    if not thinking:
        return answer, []
    first = {**choices[0], "message": message}
    return {**answer, "choices": [first, *choices[1:]]}, thinking


def message_reasoning(
    profile: Profile, message: dict[str, Any], vendor: str
) -> list[ThinkingBlock]:
    """The reasoning of ``message`` (which loses it from its content, where it was inline)."""
    style = profile.reasoning
    content = message.get("content")
    if style == "mistral" and isinstance(content, list):
        thoughts = [c for c in content if isinstance(c, dict) and c.get("type") == "thinking"]
        message["content"] = "".join(
            c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"
        )
        return [ThinkingBlock(text=chunk_text(c), vendor=vendor) for c in thoughts]
    inline = style == "think_tags" or profile.inline_think
    if inline and isinstance(content, str) and content.startswith(THINK_OPEN):
        end = content.find(THINK_CLOSE)
        if end < 0:
            return []
        rest = content[end + len(THINK_CLOSE) :]
        message["content"] = rest.lstrip()
        gap = rest[: len(rest) - len(message["content"])]
        inner = content[len(THINK_OPEN) : end]
        return [ThinkingBlock(text=inner, vendor=vendor, extra={"gap": gap})]
    # Reasoning fields: a service may use either name whatever its documents say.
    for name in ("reasoning_content", "reasoning"):
        text = message.get(name)
        if isinstance(text, str) and text:
            details = message.get("reasoning_details")
            extra = {"reasoning_details": details} if isinstance(details, list) and details else {}
            return [ThinkingBlock(text=text, vendor=vendor, extra=extra)]
    return []


def chunk_text(chunk: Mapping[str, Any]) -> str:
    """The text of a Mistral ``thinking`` chunk (a list of text parts)."""
    parts = chunk.get("thinking") or ()
    return "".join(p.get("text", "") for p in parts if isinstance(p, dict))


def add_usage_extras(response: Response, usage: Any, answer: Any) -> None:
    """Cache hits the service reports its own way; its other usage fields kept in ``extra``."""
    if not isinstance(usage, dict):
        return
    cached = (
        usage.get("prompt_cache_hit_tokens")  # DeepSeek
        or usage.get("num_cached_tokens")  # Mistral
        or usage.get("cached_tokens")  # Hugging Face router
    )
    if isinstance(cached, int) and cached and not response.usage.cache_read_tokens:
        response.usage = replace(response.usage, cache_read_tokens=cached)
    extras = {k: v for k, v in usage.items() if k not in _OPENAI_USAGE}
    for key in ("time_info", "x_groq", "provider"):  # Cerebras, Groq, OpenRouter
        if isinstance(answer, dict) and answer.get(key) is not None:
            extras[key] = answer[key]
    if extras:
        response.extra["usage_details"] = extras


class CompatStream(convert_out.ChatStream):
    """A Chat Completions stream plus the service's reasoning deltas."""

    def __init__(self, profile: Profile, restore: Any, vendor: str) -> None:
        super().__init__(restore, vendor)
        self.profile = profile
        self.in_think: bool | None = None  # think_tags: not yet known
        self.pending = ""
        #: OpenRouter's streamed ``reasoning_details``, merged per index (sent back whole).
        self.details: dict[int, dict[str, Any]] = {}

    def feed(self, chunk: Any) -> Iterator[ProviderEvent]:
        chunk = event_json(chunk, self.vendor)
        style = self.profile.reasoning
        thinking: list[ThinkingDelta] = []
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if style in ("reasoning", "reasoning_content"):
                text = delta.get("reasoning_content") or delta.get("reasoning")
                if isinstance(text, str) and text:
                    thinking.append(ThinkingDelta(text, "reasoning", vendor=self.vendor))
                self.merge_details(delta.get("reasoning_details"))
                if self.profile.inline_think and isinstance(delta.get("content"), str):
                    thinking += self.think_tags(delta)
            elif style == "mistral" and isinstance(delta.get("content"), list):
                thinking += self.mistral_chunks(delta)
            elif style == "think_tags" and isinstance(delta.get("content"), str):
                thinking += self.think_tags(delta)
        yield from thinking
        yield from super().feed(chunk)

    def merge_details(self, details: Any) -> None:
        """Join streamed ``reasoning_details`` pieces: text appended, other fields kept."""
        for piece in details if isinstance(details, list) else ():
            if not isinstance(piece, dict):
                continue
            slot = self.details.setdefault(int(piece.get("index") or 0), {})
            for key, value in piece.items():
                if key == "text" and isinstance(value, str):
                    slot["text"] = slot.get("text", "") + value
                elif value is not None:
                    slot[key] = value

    def end(self) -> Iterator[ProviderEvent]:
        if self.details and self.finish is not None:
            merged = [self.details[i] for i in sorted(self.details)]
            # No text: only the details the next request sends back (signatures included).
            yield ThinkingDelta(
                "", "reasoning", vendor=self.vendor, extra={"reasoning_details": merged}
            )
        yield from super().end()

    def mistral_chunks(self, delta: dict[str, Any]) -> list[ThinkingDelta]:
        """Thinking chunks out, text chunks joined back into ``delta["content"]``."""
        out = []
        text = []
        for c in delta["content"]:
            if isinstance(c, dict) and c.get("type") == "thinking":
                out.append(ThinkingDelta(chunk_text(c), "thinking", vendor=self.vendor))
            elif isinstance(c, dict) and c.get("type") == "text":
                text.append(c.get("text", ""))
        delta["content"] = "".join(text)
        return out

    def think_tags(self, delta: dict[str, Any]) -> list[ThinkingDelta]:
        """Split ``<think>…</think>`` out of streamed content (tags may span chunks)."""
        data = self.pending + delta["content"]
        self.pending = ""
        if self.in_think is None:
            if len(data) < len(THINK_OPEN) and THINK_OPEN.startswith(data):
                self.pending, delta["content"] = data, ""
                return []
            self.in_think = data.startswith(THINK_OPEN)
            data = data[len(THINK_OPEN) :] if self.in_think else data
        if not self.in_think:
            delta["content"] = data
            return []
        end = data.find(THINK_CLOSE)
        if end >= 0:
            self.in_think = False
            delta["content"] = data[end + len(THINK_CLOSE) :].lstrip()
            data = data[:end]
        else:
            keep = _partial_close(data)
            data, self.pending = data[: len(data) - keep], data[len(data) - keep :]
            delta["content"] = ""
        return [ThinkingDelta(data, "think", vendor=self.vendor)] if data else []


def _partial_close(data: str) -> int:
    """How many trailing characters of ``data`` could start ``</think>``."""
    for size in range(min(len(THINK_CLOSE) - 1, len(data)), 0, -1):
        if THINK_CLOSE.startswith(data[-size:]):
            return size
    return 0
