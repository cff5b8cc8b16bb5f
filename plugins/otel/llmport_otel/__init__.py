"""OpenTelemetry spans for llmport, with the GenAI semantic conventions.

    from llmport_otel import instrument
    instrument()                      # before creating runtimes

The span tree::

    invoke_agent {function}          every @agentic_function call (gen_ai.agent.name)
      exec {provider:model}          every run: exec / run / stream and async twins
        chat {model}                 every model request (attempts, retries as events)
        execute_tool {tool}          every tool execution (gen_ai.tool.name, .call.id)
          exec ...                   a nested exec inside that tool
      embeddings {model}             every rt.embed / rt.aembed call (all its requests)
      generate_content {model}       every rt.generate_image / rt.agenerate_image call

Attributes follow the OpenTelemetry semantic conventions for generative AI
as of semconv **1.37** (``gen_ai.provider.name``, which replaced
``gen_ai.system``; ``gen_ai.input.messages`` / ``gen_ai.output.messages``
for content). Content (messages, system instructions, tool arguments and
results) is recorded only with ``capture_content=True``.

``exec(..., trace={"workflow": ..., "group_id": ..., "metadata": {...}})``
lands on the run span as ``llmport.workflow``, ``llmport.group_id`` and
``llmport.metadata.<key>``.
"""

from __future__ import annotations

import contextlib
import json
import threading
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmport.observe.redaction import redact, redact_data
from llmport.observe.tracing import Trace, add_function_observer, remove_function_observer
from llmport.plugins.hookspecs import hookimpl
from llmport.plugins.host import add_global_plugin, remove_global_plugin
from llmport.tools.policy import CallInfo
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

__all__ = ["SEMCONV_VERSION", "OpenTelemetry", "instrument", "uninstrument"]

__version__ = "0.1.0"
#: The version of the OpenTelemetry semantic conventions (GenAI) these spans follow.
SEMCONV_VERSION = "1.37.0"

#: llmport provider prefixes to the well-known ``gen_ai.provider.name`` values.
PROVIDER_NAMES = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "bedrock": "aws.bedrock",
}
_FINISH = {"end_turn": "stop", "max_tokens": "length", "tool_use": "tool_calls"}


@dataclass(slots=True)
class _Run:
    span: Span
    model: Span | None = None
    tools: dict[str, Span] = field(default_factory=dict)
    tool_token: Any = None
    attempts: int = 0


def _split(qualified: str) -> tuple[str, str]:
    provider, sep, model = qualified.partition(":")
    return (provider, model) if sep else ("", qualified)


def _error_type(exc: BaseException) -> str:
    return type(exc).__qualname__


def _jsonable(value: Any) -> str:
    """Captured content as JSON, every string redacted (a prompt or a result may quote a key)."""
    return json.dumps(redact_data(value), default=_text, ensure_ascii=False)


def _text(value: Any) -> str:
    """``str(value)``, redacted: what a span records about content or an error."""
    return redact(str(value))


def _messages(request: Any) -> list[dict[str, Any]]:
    """Request messages in the GenAI ``gen_ai.input.messages`` shape (role + parts)."""
    out = []
    for m in request.messages:
        parts: list[dict[str, Any]] = []
        for b in m.blocks:
            if getattr(b, "type", None) == "text":
                parts.append({"type": "text", "content": b.text})
            else:
                parts.append({"type": "blob", "modality": getattr(b, "type", "file")})
        for c in m.tool_calls:
            parts.append(
                {"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}
            )
        for r in m.tool_results:
            parts.append({"type": "tool_call_response", "id": r.call_id, "response": r.content})
        out.append({"role": m.role, "parts": parts})
    return out


class OpenTelemetry:
    """The tracing plugin: a ``llmport_observe`` hookimpl and an agentic-function observer.

    ``OpenTelemetry(tracer_provider=None, capture_content=False)``: ``None``
    uses the global tracer provider. Register it on one runtime
    (``Runtime(hooks=[otel])``) or process-wide with :func:`instrument`.
    """

    def __init__(
        self, tracer_provider: TracerProvider | None = None, *, capture_content: bool = False
    ) -> None:
        self.tracer = trace.get_tracer(
            "llmport",
            __version__,
            tracer_provider=tracer_provider,
            schema_url=f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}",
        )
        self.capture_content = capture_content
        self._lock = threading.Lock()
        self._runs: dict[int, _Run] = {}
        self._embeds: dict[int, Span] = {}
        self._images: dict[int, Span] = {}

    # -- agentic functions (llmport.observe.tracing.FunctionObserver) ----------------------------

    def start(self, name: str, node_id: str | None, arguments: Mapping[str, Any]) -> Any:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
        }
        if node_id is not None:
            attributes["llmport.node_id"] = node_id
        if self.capture_content:
            attributes["llmport.function.arguments"] = _jsonable(dict(arguments))
        span = self.tracer.start_span(
            f"invoke_agent {name}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        return span, otel_context.attach(trace.set_span_in_context(span))

    def end(self, token: Any, result: Any, error: BaseException | None) -> None:
        span, attached = token
        try:
            otel_context.detach(attached)
        finally:
            if error is not None:
                _fail(span, error)
            elif self.capture_content:
                span.set_attribute("llmport.function.result", _jsonable(result))
            span.end()

    # -- runs, model requests, tools (llmport_observe) ---------------------------------------

    @hookimpl
    def llmport_observe(self, event: str, payload: dict[str, Any], info: CallInfo) -> None:
        handler = getattr(self, "_on_" + event, None)
        if handler is not None:
            handler(payload, info)

    def _run(self, info: CallInfo) -> _Run | None:
        # One metadata dict per run, shared by every CallInfo of that run.
        return self._runs.get(id(info.metadata))

    def _on_run_start(self, payload: dict[str, Any], info: CallInfo) -> None:
        provider, model = _split(info.model)
        attributes: dict[str, Any] = {
            "llmport.span": "run",
            "gen_ai.provider.name": PROVIDER_NAMES.get(provider, info.provider or provider),
            "gen_ai.request.model": model,
        }
        if info.function is not None:
            attributes["gen_ai.agent.name"] = info.function
        trace_info = payload.get("trace")
        if isinstance(trace_info, Trace):
            if trace_info.workflow is not None:
                attributes["llmport.workflow"] = trace_info.workflow
            if trace_info.group_id is not None:
                attributes["llmport.group_id"] = trace_info.group_id
            for key, value in trace_info.metadata.items():
                ok = isinstance(value, (str, bool, int, float))
                attributes[f"llmport.metadata.{key}"] = value if ok else _jsonable(value)
        span = self.tracer.start_span(
            f"exec {info.model}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        with self._lock:
            self._runs[id(info.metadata)] = _Run(span)

    def _on_run_end(self, payload: dict[str, Any], info: CallInfo) -> None:
        with self._lock:
            state = self._runs.pop(id(info.metadata), None)
        if state is None:
            return
        error = payload.get("error")
        run = payload.get("run")
        for span in (*state.tools.values(), state.model):
            if span is not None:  # left open by an error or an abandoned stream
                if error is not None:
                    _fail(span, error)
                span.end()
        if state.tool_token is not None:
            _detach(state.tool_token)
        span = state.span
        if run is not None:
            usage = run.usage
            span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
            span.set_attribute("llmport.attempts", run.attempts)
            span.set_attribute("llmport.iterations", run.iterations)
        if error is not None:
            _fail(span, error)
        span.end()

    def _on_model_start(self, payload: dict[str, Any], info: CallInfo) -> None:
        state = self._run(info)
        if state is None:
            return
        request = payload["request"]
        provider, model = _split(info.model)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": PROVIDER_NAMES.get(provider, info.provider or provider),
            "gen_ai.request.model": request.model or model,
            "llmport.iteration": info.iteration,
        }
        options = request.options
        for option, name in (
            ("temperature", "gen_ai.request.temperature"),
            ("max_tokens", "gen_ai.request.max_tokens"),
            ("top_p", "gen_ai.request.top_p"),
            ("seed", "gen_ai.request.seed"),
        ):
            if options.get(option) is not None:
                attributes[name] = options[option]
        if self.capture_content:
            attributes["gen_ai.input.messages"] = _jsonable(_messages(request))
            if request.system:
                attributes["gen_ai.system_instructions"] = _jsonable(
                    [{"type": "text", "content": request.system}]
                )
        state.model = self.tracer.start_span(
            f"chat {request.model or model}",
            context=trace.set_span_in_context(state.span),
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )

    def _on_model_error(self, payload: dict[str, Any], info: CallInfo) -> None:
        state = self._run(info)
        if state is None or state.model is None:
            return
        error = payload["error"]
        state.model.add_event(
            "llmport.attempt.failed",
            {
                "llmport.attempt": payload.get("attempt", 0),
                "llmport.controls.retry.delay": float(payload.get("delay") or 0.0),
                "error.type": _error_type(error),
                "exception.message": _text(error),
            },
        )

    def _on_fallback(self, payload: dict[str, Any], info: CallInfo) -> None:
        state = self._run(info)
        if state is None or state.model is None:
            return
        error = payload.get("error")
        state.model.add_event(
            "llmport.fallback",
            {
                "llmport.fallback.from": str(payload.get("previous", "")),
                "llmport.fallback.to": str(payload.get("model", "")),
                "error.type": _error_type(error) if error is not None else "",
            },
        )

    def _on_model_end(self, payload: dict[str, Any], info: CallInfo) -> None:
        state = self._run(info)
        if state is None or state.model is None:
            return
        span, state.model = state.model, None
        response = payload["response"]
        span.set_attribute("llmport.attempts", payload.get("attempts", 1))
        if response.model:
            span.set_attribute("gen_ai.response.model", response.model)
        if response.id:
            span.set_attribute("gen_ai.response.id", response.id)
        finish = _FINISH.get(response.stop_reason, response.stop_reason)
        span.set_attribute("gen_ai.response.finish_reasons", [finish])
        span.set_attribute("gen_ai.usage.input_tokens", response.usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", response.usage.output_tokens)
        if self.capture_content:
            parts: list[dict[str, Any]] = []
            if response.text:
                parts.append({"type": "text", "content": response.text})
            for c in response.tool_calls:
                parts.append(
                    {"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}
                )
            message = {"role": "assistant", "parts": parts, "finish_reason": finish}
            span.set_attribute("gen_ai.output.messages", _jsonable([message]))
        span.end()

    def _on_embed_start(self, payload: dict[str, Any], info: CallInfo) -> None:
        """One ``embeddings`` span per embed call (its parts are requests within it)."""
        provider, model = _split(info.model)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "embeddings",
            "gen_ai.provider.name": PROVIDER_NAMES.get(provider, info.provider or provider),
            "gen_ai.request.model": payload.get("model") or model,
            "llmport.embed.inputs": int(payload.get("inputs", 0)),
            "llmport.embed.cached": int(payload.get("cached", 0)),
            "llmport.embed.requests": int(payload.get("requests", 0)),
        }
        span = self.tracer.start_span(
            f"embeddings {attributes['gen_ai.request.model']}",
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )
        with self._lock:
            self._embeds[id(info)] = span

    def _on_embed_end(self, payload: dict[str, Any], info: CallInfo) -> None:
        with self._lock:
            span = self._embeds.pop(id(info), None)
        if span is None:
            return
        usage = payload.get("usage")
        if usage is not None:
            span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
        if payload.get("dimensions"):
            span.set_attribute("gen_ai.embeddings.dimension.count", int(payload["dimensions"]))
        error = payload.get("error")
        if error is not None:
            _fail(span, error)
        span.end()

    def _on_image_start(self, payload: dict[str, Any], info: CallInfo) -> None:
        """One ``generate_content`` span per image call.

        The GenAI conventions name no image operation: ``generate_content`` ("multimodal
        content generation") is the nearest, with ``gen_ai.output.type`` ``"image"``.
        """
        provider, model = _split(info.model)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "generate_content",
            "gen_ai.output.type": "image",
            "gen_ai.provider.name": PROVIDER_NAMES.get(provider, info.provider or provider),
            "gen_ai.request.model": payload.get("model") or model,
            "gen_ai.request.choice.count": int(payload.get("n", 1)),
        }
        if payload.get("size"):
            attributes["llmport.image.size"] = str(payload["size"])
        span = self.tracer.start_span(
            f"generate_content {attributes['gen_ai.request.model']}",
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )
        with self._lock:
            self._images[id(info)] = span

    def _on_image_end(self, payload: dict[str, Any], info: CallInfo) -> None:
        with self._lock:
            span = self._images.pop(id(info), None)
        if span is None:
            return
        usage = payload.get("usage")
        if usage is not None:
            span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
        span.set_attribute("llmport.image.count", int(payload.get("images", 0)))
        error = payload.get("error")
        if error is not None:
            _fail(span, error)
        span.end()

    def _on_tool_start(self, payload: dict[str, Any], info: CallInfo) -> None:
        state = self._run(info)
        if state is None:
            return
        call = payload["call"]
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
            "llmport.iteration": info.iteration,
        }
        if self.capture_content:
            attributes["gen_ai.tool.call.arguments"] = _jsonable(call.arguments)
        span = self.tracer.start_span(
            f"execute_tool {call.name}",
            context=trace.set_span_in_context(state.span),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        state.tools[call.id] = span
        # The tools run next, in this context (copied into their threads): a nested
        # exec is the child of its tool's span (of the run's when calls run together).
        if state.tool_token is not None:
            _detach(state.tool_token)
        parent = span if len(state.tools) == 1 else state.span
        state.tool_token = otel_context.attach(trace.set_span_in_context(parent))

    def _on_tool_end(self, payload: dict[str, Any], info: CallInfo) -> None:
        state = self._run(info)
        if state is None:
            return
        call = payload["call"]
        span = state.tools.pop(call.id, None)
        if not state.tools and state.tool_token is not None:
            _detach(state.tool_token)
            state.tool_token = None
        if span is None:
            return
        result = payload.get("result")
        if payload.get("error") or getattr(result, "is_error", False):
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR, _text(payload.get("error") or "")))
        if self.capture_content and result is not None:
            span.set_attribute("gen_ai.tool.call.result", _text(result.content))
        span.end()


def _fail(span: Span, error: BaseException) -> None:
    span.set_attribute("error.type", _error_type(error))
    span.set_status(Status(StatusCode.ERROR, _text(error)))
    if not isinstance(error, GeneratorExit):
        # The SDK records str(error) and the traceback as they are: give both redacted.
        stacktrace = redact("".join(traceback.format_exception(error)))
        span.record_exception(
            error,
            attributes={"exception.message": _text(error), "exception.stacktrace": stacktrace},
        )


def _detach(token: Any) -> None:
    # attached in another context (a stream finished elsewhere): nothing to undo here
    with contextlib.suppress(Exception):
        otel_context.detach(token)


_installed: list[OpenTelemetry] = []


def instrument(
    tracer_provider: TracerProvider | None = None, *, capture_content: bool = False
) -> OpenTelemetry:
    """Trace every agentic function and every Runtime created from now on; returns the plugin.

    Calling it again replaces the previous instrumentation.
    """
    uninstrument()
    plugin = OpenTelemetry(tracer_provider, capture_content=capture_content)
    add_function_observer(plugin)
    add_global_plugin(plugin)
    _installed.append(plugin)
    return plugin


def uninstrument() -> None:
    """Undo :func:`instrument` (runtimes created meanwhile keep their hook)."""
    while _installed:
        plugin = _installed.pop()
        remove_function_observer(plugin)
        remove_global_plugin(plugin)
