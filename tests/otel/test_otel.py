"""llmport-otel: spans asserted attribute by attribute with the SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from llmport import ProviderConnectionError, RateLimitError, agentic_function, tool
from llmport.messages.types import Usage
from llmport.provider.config import Config
from llmport.testing import Script, call_tools, fail, reply
from llmport_otel import SEMCONV_VERSION, OpenTelemetry, instrument, uninstrument
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode


@tool
def lookup(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


def by_name(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def parent_of(span: ReadableSpan, spans: tuple[ReadableSpan, ...]) -> ReadableSpan | None:
    if span.parent is None:
        return None
    found = [s for s in spans if s.context.span_id == span.parent.span_id]
    return found[0] if found else None


@pytest.fixture
def instrumented(provider: TracerProvider) -> Iterator[OpenTelemetry]:
    plugin = instrument(provider)
    yield plugin
    uninstrument()


def test_a_run_with_a_tool_makes_run_chat_and_tool_spans(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    script = Script(
        [
            call_tools(("lookup", {"city": "Oslo"})),
            reply("Sunny.", usage=Usage(12, 3, requests=1)),
        ]
    )
    rt = script.runtime(config=Config(), hooks=[OpenTelemetry(provider)])
    assert rt.exec("Weather?", tools=[lookup], temperature=0.5) == "Sunny."
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == [
        "chat test",
        "execute_tool lookup",
        "chat test",
        "exec scripted:test",
    ]
    run = spans[-1]
    assert run.parent is None
    assert all(parent_of(s, spans) is run for s in spans[:-1])
    assert run.attributes["gen_ai.provider.name"] == "scripted"
    assert run.attributes["gen_ai.request.model"] == "test"
    chats = by_name(spans, "chat test")
    assert run.attributes["gen_ai.usage.input_tokens"] == sum(
        int(c.attributes["gen_ai.usage.input_tokens"])
        for c in chats  # type: ignore[arg-type]
    )
    assert run.attributes["llmport.iterations"] == 2

    first, tool_span, second = spans[:3]
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert first.attributes["gen_ai.request.temperature"] == 0.5
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert second.attributes["gen_ai.usage.input_tokens"] == 12
    assert second.attributes["gen_ai.usage.output_tokens"] == 3
    assert tool_span.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_span.attributes["gen_ai.tool.name"] == "lookup"
    assert (
        tool_span.attributes["gen_ai.tool.call.id"]
        == script.requests[1].messages[1].tool_calls[0].id
    )
    assert tool_span.attributes["gen_ai.tool.type"] == "function"
    # content is off by default
    for span in spans:
        assert "gen_ai.input.messages" not in span.attributes
        assert "gen_ai.output.messages" not in span.attributes
        assert "gen_ai.tool.call.arguments" not in span.attributes
        assert "gen_ai.tool.call.result" not in span.attributes


def test_content_only_with_capture_content(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    script = Script([call_tools(("lookup", {"city": "Oslo"})), reply("Sunny.")])
    rt = script.runtime(config=Config(), hooks=[OpenTelemetry(provider, capture_content=True)])
    rt.exec("Weather?", tools=[lookup], system="Be brief.")
    chat, tool_span, last, _ = exporter.get_finished_spans()
    messages = json.loads(str(chat.attributes["gen_ai.input.messages"]))
    assert messages == [{"role": "user", "parts": [{"type": "text", "content": "Weather?"}]}]
    assert json.loads(str(chat.attributes["gen_ai.system_instructions"])) == [
        {"type": "text", "content": "Be brief."}
    ]
    out = json.loads(str(last.attributes["gen_ai.output.messages"]))
    assert out == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "Sunny."}],
            "finish_reason": "stop",
        }
    ]
    assert json.loads(str(tool_span.attributes["gen_ai.tool.call.arguments"])) == {"city": "Oslo"}
    assert tool_span.attributes["gen_ai.tool.call.result"] == "sunny in Oslo"


def test_retries_are_span_events_and_a_failed_run_is_an_error(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    script = Script(
        [
            fail(ProviderConnectionError("reset", retryable=True)),
            fail(RateLimitError("429", status=429, retryable=True, retry_after=0.0)),
            reply("ok"),
            fail(ProviderConnectionError("down", retryable=True)),
            fail(ProviderConnectionError("down", retryable=True)),
            fail(ProviderConnectionError("down", retryable=True)),
        ]
    )
    rt = script.runtime(config=Config(), hooks=[OpenTelemetry(provider)], max_retries=3)
    assert rt.exec("hi") == "ok"
    chat, run = exporter.get_finished_spans()
    assert chat.attributes["llmport.attempts"] == 3
    events = [(e.name, dict(e.attributes or {})) for e in chat.events]
    assert [(n, a["llmport.attempt"], a["error.type"]) for n, a in events] == [
        ("llmport.attempt.failed", 1, "ProviderConnectionError"),
        ("llmport.attempt.failed", 2, "RateLimitError"),
    ]
    assert run.status.status_code is StatusCode.UNSET
    exporter.clear()
    with pytest.raises(Exception, match="failed after 3 attempts"):
        rt.exec("again")
    chat, run = exporter.get_finished_spans()
    assert [e.name for e in chat.events].count("llmport.attempt.failed") == 3
    assert chat.status.status_code is StatusCode.ERROR
    assert run.status.status_code is StatusCode.ERROR
    assert run.attributes["error.type"] == "ExecFailed"


def test_trace_reaches_the_run_span_and_the_observe_hook(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    seen: list[tuple[str, Any, Any]] = []

    class Observer:
        from llmport import hookimpl

        @hookimpl
        def llmport_observe(self, event: str, payload: dict[str, Any], info: Any) -> None:
            seen.append((event, payload.get("trace"), info.metadata.get("trace")))

    script = Script(["ok"])
    rt = script.runtime(config=Config(), hooks=[OpenTelemetry(provider), Observer()])
    trace = {"workflow": "triage", "group_id": "conv-7", "metadata": {"user": "u1", "n": 3}}
    rt.exec("hi", trace=trace)
    (_, run) = exporter.get_finished_spans()
    assert run.attributes["llmport.workflow"] == "triage"
    assert run.attributes["llmport.group_id"] == "conv-7"
    assert run.attributes["llmport.metadata.user"] == "u1"
    assert run.attributes["llmport.metadata.n"] == 3
    events = [e for e, _, _ in seen]
    assert events == ["run_start", "model_start", "model_end", "run_end"]
    assert all(t is not None and t.workflow == "triage" for _, _, t in seen)
    assert seen[0][1].group_id == "conv-7"
    assert "trace" not in script.requests[0].options  # never sent to the provider


def test_bad_trace_is_an_option_error() -> None:
    from llmport import OptionError

    rt = Script(["ok"]).runtime(config=Config())
    with pytest.raises(OptionError, match="unknown key"):
        rt.exec("hi", trace={"workflw": "x"})


def test_agentic_functions_nest_and_their_runs_are_children(
    instrumented: OpenTelemetry, exporter: InMemorySpanExporter
) -> None:
    script = Script(["inner", "outer"])
    rt = script.runtime(config=Config())

    @agentic_function
    def inner() -> str:
        return str(rt.exec("inner"))

    @agentic_function
    def outer() -> str:
        inner()
        return str(rt.exec("go"))

    outer()
    spans = exporter.get_finished_spans()
    names = [s.name for s in spans]
    assert names == [
        "chat test",
        "exec scripted:test",
        "invoke_agent inner",
        "chat test",
        "exec scripted:test",
        "invoke_agent outer",
    ]
    agent = spans[-1]
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["gen_ai.agent.name"] == "outer"
    assert isinstance(agent.attributes["llmport.node_id"], str)
    assert parent_of(spans[2], spans) is agent
    assert parent_of(spans[1], spans) is spans[2]
    assert parent_of(spans[4], spans) is agent
    assert spans[4].attributes["gen_ai.agent.name"] == "outer"
    assert spans[1].attributes["gen_ai.agent.name"] == "inner"


def test_a_failing_agentic_function_is_an_error_span(
    instrumented: OpenTelemetry, exporter: InMemorySpanExporter
) -> None:
    @agentic_function
    def broken() -> None:
        raise ValueError("nope")

    with pytest.raises(ValueError):
        broken()
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "ValueError"


def test_instrument_reaches_runtimes_created_after_it(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    before = Script(["a"]).runtime(config=Config())
    assert before.plugins is not None  # its hooks are set once made
    instrument(provider)
    try:
        after = Script(["b"]).runtime(config=Config())
        after.exec("hi")
        before.exec("hi")
    finally:
        uninstrument()
    assert [s.name for s in exporter.get_finished_spans()] == ["chat test", "exec scripted:test"]


async def test_gather_keeps_each_task_under_its_own_agent(
    instrumented: OpenTelemetry, exporter: InMemorySpanExporter
) -> None:
    script = Script(["a", "b"])
    rt = script.runtime(config=Config())

    @agentic_function
    async def worker(name: str) -> str:
        await asyncio.sleep(0.01)
        return str(await rt.async_exec(name))

    @agentic_function
    async def boss() -> list[str]:
        return list(await asyncio.gather(worker("a"), worker("b")))

    await boss()
    spans = exporter.get_finished_spans()
    boss_span = by_name(spans, "invoke_agent boss")[0]
    workers = by_name(spans, "invoke_agent worker")
    runs = by_name(spans, "exec scripted:test")
    assert len(workers) == 2 and len(runs) == 2
    assert all(parent_of(w, spans) is boss_span for w in workers)
    assert {parent_of(r, spans).context.span_id for r in runs} == {  # type: ignore[union-attr]
        w.context.span_id for w in workers
    }
    assert len({s.context.trace_id for s in spans}) == 1


def test_nested_exec_in_a_tool_thread_is_the_child_of_the_tool_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    script = Script([call_tools(("research", {"q": "x"})), reply("nested"), reply("done")])
    rt = script.runtime(config=Config(), hooks=[OpenTelemetry(provider)])

    @tool
    def research(q: str) -> str:
        """Research."""
        return str(rt.exec("sub-question"))

    rt.exec("go", tools=[research], tool_timeout=5)
    spans = exporter.get_finished_spans()
    tool_span = by_name(spans, "execute_tool research")[0]
    runs = by_name(spans, "exec scripted:test")
    nested = [r for r in runs if r.parent is not None]
    assert len(nested) == 1
    assert parent_of(nested[0], spans) is tool_span


def test_stream_spans_and_abandoned_stream_closes_them(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    script = Script(["one two three", "four five six"])
    rt = script.runtime(config=Config(), hooks=[OpenTelemetry(provider)])
    list(rt.stream("hi"))
    assert [s.name for s in exporter.get_finished_spans()] == ["chat test", "exec scripted:test"]
    exporter.clear()
    stream = rt.stream("hi")
    next(stream)
    stream.close()
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["chat test", "exec scripted:test"]
    assert spans[-1].attributes["error.type"] == "GeneratorExit"


def test_semconv_version_is_named() -> None:
    assert SEMCONV_VERSION.startswith("1.")


def test_captured_content_and_errors_are_redacted(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """An agentic function's arguments, result and exception quote a key: masked on the spans."""
    import secrets as random_secrets

    from llmport.observe.redaction import register_secret

    key = f"LEAKotel-{random_secrets.token_hex(12)}"
    register_secret(key)
    instrument(provider, capture_content=True)
    try:

        @agentic_function
        def echo(text: str) -> str:
            return f"said {text}"

        @agentic_function
        def broken(text: str) -> None:
            raise ValueError(f"cannot use {text}")

        echo(f"key={key}")
        with pytest.raises(ValueError):
            broken(key[4:20])  # a partial echo
    finally:
        uninstrument()
    shown = [
        repr(dict(s.attributes or {}))
        + repr(s.status.description)
        + repr([dict(e.attributes or {}) for e in s.events])
        for s in exporter.get_finished_spans()
    ]
    assert len(shown) == 2 and all("***" in text for text in shown), shown
    assert not any(key in text or key[4:20] in text for text in shown), shown
