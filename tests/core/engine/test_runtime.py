"""The Runtime's parameters, in sync and async."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from llmport import (
    FinalEvent,
    Provider,
    ProviderConnectionError,
    ProviderInfo,
    Reasoning,
    Response,
    RunResult,
    Runtime,
    TextBlock,
    TextDelta,
    TokenLimitExceeded,
    ToolCallStarted,
    ToolResultEvent,
    UnsupportedFeatureError,
    Usage,
    UsageEvent,
    hookimpl,
)
from llmport.controls.retry import Backoff
from llmport.messages.types import StopEvent, ToolCallDelta
from llmport.provider.config import Config
from llmport.testing import Script, call_tools, fail, reply
from support.core_helpers import Driver, make_tool, scripted


def echo(content: list[dict[str, Any]], model: str, response_format: dict[str, Any] | None) -> str:
    return f"{model}|" + "+".join(b.get("text", b["type"]) for b in content)


# --- call= functions ----------------------------------------------------------------


def test_sync_call_function_gets_content_dicts_and_model(drive: Driver) -> None:
    seen: list[tuple[Any, ...]] = []

    def fn(content: list[dict[str, Any]], model: str, response_format: Any) -> str:
        seen.append((content, model, response_format))
        return "reply"

    assert drive.exec(Runtime(call=fn, model="m1"), "hello world") == "reply"
    assert seen == [([{"type": "text", "text": "hello world"}], "m1", None)]


def test_async_call_function_works_with_async_exec() -> None:
    async def fn(content: list[dict[str, Any]], model: str, response_format: Any) -> str:
        await asyncio.sleep(0)
        return "from async " + content[0]["text"]

    assert asyncio.run(Runtime(call=fn).async_exec("x")) == "from async x"


def test_async_call_function_in_exec_raises_type_error_naming_async_exec() -> None:
    calls = []

    async def fn(content: list[dict[str, Any]], model: str, response_format: Any) -> str:
        calls.append(1)
        return "never"

    rt = Runtime(call=fn, max_retries=3, backoff=Backoff.none())
    with pytest.raises(TypeError, match="async_exec"):
        rt.exec("x")
    assert calls == []  # not called, and not retried


def test_non_callable_call_is_rejected() -> None:
    with pytest.raises(TypeError):
        Runtime(call="not a function")  # type: ignore[arg-type]


async def test_sync_call_function_runs_off_the_event_loop() -> None:
    loop_thread = threading.get_ident()
    ran_in: list[int] = []

    def slow(content: list[dict[str, Any]], model: str, response_format: Any) -> str:
        ran_in.append(threading.get_ident())
        time.sleep(0.5)  # blocking: would freeze the loop if run on it
        return "done"

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    started = time.perf_counter()
    results = await asyncio.gather(*(Runtime(call=slow).async_exec("x") for _ in range(3)))
    elapsed = time.perf_counter() - started
    task.cancel()
    assert results == ["done"] * 3
    assert loop_thread not in ran_in
    assert ticks >= 10, "the event loop was blocked while the call function ran"
    # one after another they take at least 1.5 s; the rest is room for a loaded machine
    assert elapsed < 1.3, "three 0.5 s calls should overlap, not run one after another"


# --- subclassing (the seed API) -----------------------------------------------------------


class SyncOnly(Runtime):
    def _call(
        self,
        content: list[dict[str, Any]],
        model: str = "default",
        response_format: dict[str, Any] | None = None,
    ) -> str:
        return f"sync:{model}:{content[0]['text']}"


class AsyncOnly(Runtime):
    async def _async_call(
        self,
        content: list[dict[str, Any]],
        model: str = "default",
        response_format: dict[str, Any] | None = None,
    ) -> str:
        await asyncio.sleep(0)
        return f"async:{content[0]['text']}"


class Both(Runtime):
    def _call(
        self,
        content: list[dict[str, Any]],
        model: str = "default",
        response_format: dict[str, Any] | None = None,
    ) -> str:
        return "sync path"

    async def _async_call(
        self,
        content: list[dict[str, Any]],
        model: str = "default",
        response_format: dict[str, Any] | None = None,
    ) -> str:
        return "async path"


def test_subclass_overriding_call_works_in_both_worlds(drive: Driver) -> None:
    assert drive.exec(SyncOnly(model="m"), "hi") == "sync:m:hi"


def test_subclass_overriding_async_call_only() -> None:
    assert asyncio.run(AsyncOnly().async_exec("hi")) == "async:hi"
    with pytest.raises(TypeError, match="async_exec"):
        AsyncOnly().exec("hi")


def test_subclass_overriding_both_uses_the_matching_one(drive: Driver) -> None:
    assert drive.exec(Both(), "hi") == ("async path" if drive.is_async else "sync path")


def test_nothing_to_call_raises_not_implemented(drive: Driver) -> None:
    with pytest.raises(NotImplementedError):
        drive.exec(Runtime(config=Config()), "hi")


def test_not_implemented_from_an_override_is_not_retried(drive: Driver) -> None:
    calls = []

    class Unfinished(Runtime):
        def _call(self, content: Any, model: str = "default", response_format: Any = None) -> str:
            calls.append(1)
            raise NotImplementedError("later")

    with pytest.raises(NotImplementedError):
        drive.exec(Unfinished(max_retries=5, backoff=Backoff.none()), "hi")
    assert calls == [1]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
def test_max_retries_must_be_a_positive_int(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_retries"):
        Runtime(call=echo, max_retries=bad)


# --- model routing per call ----------------------------------------------------------------


def test_per_call_model_switches_provider_prefix(drive: Driver) -> None:
    fast = Script(["from a", "a again"], prefix="a")
    strong = Script(["from b"], prefix="b")
    rt = Runtime(model="a:small", hooks=[fast, strong], config=Config(), backoff=Backoff.none())

    assert drive.exec(rt, "q") == "from a"
    result = drive.run(rt, "q", model="b:large")
    assert result.output == "from b"
    assert result.model == "b:large"
    assert drive.exec(rt, "q") == "a again"  # the override did not stick

    assert [r.model for r in fast.requests] == ["small", "small"]
    assert [r.model for r in strong.requests] == ["large"]


def test_call_function_receives_per_call_model(drive: Driver) -> None:
    rt = Runtime(call=echo, model="cheap")
    assert drive.exec(rt, "x", model="strong") == "strong|x"
    assert drive.exec(rt, "x") == "cheap|x"


# --- content and context -------------------------------------------------------------------


def test_string_content_is_one_text_block(drive: Driver) -> None:
    script = Script(["ok"])
    drive.exec(scripted(script), "a long sentence, not characters")
    assert script.requests[0].messages[0].blocks == (TextBlock("a long sentence, not characters"),)


def test_context_string_is_sent_before_the_content(drive: Driver) -> None:
    script = Script(["ok"])
    drive.exec(scripted(script), "question", context="earlier: the sky is green")
    (message,) = script.requests[0].messages
    assert [b.text for b in message.blocks] == ["earlier: the sky is green", "question"]


def test_context_must_be_a_string(drive: Driver) -> None:
    script = Script(["ok"])
    with pytest.raises(TypeError, match="context"):
        drive.exec(scripted(script), "q", context=["not", "a", "string"])
    assert script.requests == []


def test_empty_content_is_rejected_before_any_request(drive: Driver) -> None:
    from llmport import ContentError

    script = Script(["ok"])
    with pytest.raises(ContentError):
        drive.exec(scripted(script), [])
    assert script.requests == []


# --- options -------------------------------------------------------------------------------


def test_options_reach_the_provider(drive: Driver) -> None:
    script = Script(["ok"])
    rt = scripted(script, temperature=0.9, seed=1)
    drive.exec(rt, "q", temperature=0.1, max_tokens=50, stop=["\n"], reasoning_effort="low")
    assert script.requests[0].options == {
        "temperature": 0.1,
        "seed": 1,
        "max_tokens": 50,
        "stop": ["\n"],
    }
    # reasoning_effort is an alias of reasoning=, normalised onto the request
    assert script.requests[0].reasoning == Reasoning(effort="low")
    assert rt.options == {"temperature": 0.9, "seed": 1}  # a call does not change the runtime


def test_call_function_receives_options_it_declares(drive: Driver) -> None:
    def fn(
        content: Any,
        model: str,
        response_format: Any,
        temperature: float = 1.0,
        max_tokens: int | None = None,
    ) -> str:
        return f"t={temperature} m={max_tokens}"

    assert drive.exec(Runtime(call=fn, temperature=0.5), "q", max_tokens=7) == "t=0.5 m=7"


def test_call_function_with_kwargs_accepts_any_option(drive: Driver) -> None:
    def fn(content: Any, model: str, response_format: Any, **options: Any) -> str:
        return ",".join(sorted(options))

    assert drive.exec(Runtime(call=fn), "q", seed=3, timeout=2) == "seed,timeout"


def test_option_a_call_function_cannot_take_is_rejected_not_dropped(drive: Driver) -> None:
    calls = []

    def fn(content: Any, model: str, response_format: Any, temperature: float = 1.0) -> str:
        calls.append(1)
        return "ok"

    with pytest.raises(UnsupportedFeatureError, match="seed"):
        drive.exec(Runtime(call=fn, max_retries=3), "q", seed=42)
    assert calls == []


def test_response_format_is_handed_to_the_call_function(drive: Driver) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    got: list[Any] = []

    def fn(content: Any, model: str, response_format: Any) -> str:
        got.append(response_format)
        return '{"a": 1}'

    assert drive.exec(Runtime(call=fn), "q", response_format=schema) == '{"a": 1}'
    assert got and got[0]["properties"] == schema["properties"]


# --- run results and usage -------------------------------------------------------------------


def test_run_returns_the_details_of_the_run(drive: Driver) -> None:
    script = Script(
        [fail(ProviderConnectionError("flaky")), reply("final words", usage=Usage(10, 3))]
    )
    rt = scripted(script, max_retries=2)
    result = drive.run(rt, "q")
    assert isinstance(result, RunResult)
    assert result.output == result.text == "final words"
    assert result.model == "scripted:test"
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.requests) == (
        10,
        3,
        1,
    )
    assert result.stop_reason == "end_turn"
    assert result.iterations == 1
    assert result.attempts == 2
    assert [type(f.error) for f in result.failures] == [ProviderConnectionError]
    assert result.latency > 0


def test_exec_returns_the_text_only(drive: Driver) -> None:
    assert drive.exec(scripted(Script(["plain"])), "q") == "plain"


def test_runtime_usage_accumulates_over_calls(drive: Driver) -> None:
    script = Script([reply("a", usage=Usage(10, 1)), reply("b", usage=Usage(5, 2))])
    rt = scripted(script)
    assert rt.usage.total_tokens == 0
    drive.exec(rt, "q")
    drive.exec(rt, "q")
    usage = rt.usage
    assert (usage.input_tokens, usage.output_tokens, usage.requests) == (15, 3, 2)
    usage.input_tokens = 0  # a copy: the runtime's own count is untouched
    assert rt.usage.input_tokens == 15


def test_tool_loop_usage_counts_every_request(drive: Driver) -> None:
    def double(x: int) -> int:
        """Double a number."""
        return 2 * x

    script = Script([call_tools(("double", {"x": 2})), reply("4")])
    for step in script.steps:
        step.usage = Usage(7, 1)
    result = drive.run(scripted(script), "q", tools=[make_tool(double, x={"type": "integer"})])
    assert result.usage.requests == 2
    assert result.usage.input_tokens == 14
    assert result.iterations == 2


# --- several runtimes ----------------------------------------------------------------------


def test_runtimes_share_no_state(drive: Driver) -> None:
    fast_script = Script(["fast 1", "fast 2"], prefix="fast")
    strong_script = Script(["strong 1"], prefix="strong")
    fast = scripted(fast_script, temperature=0.0)
    strong = scripted(strong_script, max_tokens=1000)

    assert drive.exec(fast, "q") == "fast 1"
    assert drive.exec(strong, "q") == "strong 1"
    assert drive.exec(fast, "q") == "fast 2"

    # Each runtime sees only its own hooks, options and usage.
    assert "strong" not in fast.plugins.providers()
    assert "fast" not in strong.plugins.providers()
    assert fast_script.requests[0].options == {"temperature": 0.0}
    assert strong_script.requests[0].options == {"max_tokens": 1000}
    assert fast.usage.requests == 2 and strong.usage.requests == 1
    assert Runtime(call=echo).usage.requests == 0


def test_runtimes_used_from_many_threads_keep_their_own_counts() -> None:
    def make(tag: str) -> Runtime:
        return Runtime(call=lambda content, model, rf: tag)

    a, b = make("a"), make("b")
    outputs: list[str] = []
    lock = threading.Lock()

    def work(rt: Runtime) -> None:
        for _ in range(20):
            out = rt.exec("q")
            with lock:
                outputs.append(out)

    threads = [threading.Thread(target=work, args=(rt,)) for rt in (a, b, a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outputs.count("a") == outputs.count("b") == 40
    assert a.usage.requests == b.usage.requests == 40


# --- input-token budget ----------------------------------------------------------------------


def test_token_budget_raises_before_sending_and_is_not_retried(drive: Driver) -> None:
    script = Script(["never"])
    rt = scripted(script, input_token_budget=10, max_retries=3)
    with pytest.raises(TokenLimitExceeded) as info:
        drive.exec(rt, "word " * 100)
    assert info.value.budget == 10 and info.value.estimated > 10
    assert script.requests == []
    assert drive.exec(rt, "short") == "never"  # under budget: sent


def test_token_budget_applies_to_every_turn_of_a_tool_loop(drive: Driver) -> None:
    def big() -> str:
        """Return a lot of text."""
        return "x" * 400

    script = Script([call_tools(("big", {})), reply("unreachable")])
    with pytest.raises(TokenLimitExceeded):
        drive.exec(scripted(script, input_token_budget=50), "go", tools=[make_tool(big)])
    assert len(script.requests) == 1  # the second turn, with the tool output, was stopped


# --- streaming -----------------------------------------------------------------------------


def test_stream_event_order(drive: Driver) -> None:
    script = Script([reply("one two three", usage=Usage(4, 3))])
    events = drive.stream(scripted(script), "q")
    kinds = [type(e) for e in events]
    assert kinds == [TextDelta, TextDelta, TextDelta, UsageEvent, FinalEvent]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "one two three"
    final = events[-1].result
    assert isinstance(final, RunResult)
    assert final.output == "one two three"
    assert final.usage.output_tokens == 3
    assert script.requests[0].stream is True


def test_stream_with_tools_reports_calls_and_results(drive: Driver) -> None:
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    script = Script([call_tools(("add", {"a": 2, "b": 40})), reply("42")])
    events = drive.stream(
        scripted(script), "q", tools=[make_tool(add, a={"type": "integer"}, b={"type": "integer"})]
    )
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "UsageEvent",
        "ToolCallStarted",
        "ToolResultEvent",
        "TextDelta",
        "UsageEvent",
        "FinalEvent",
    ]
    started = next(e for e in events if isinstance(e, ToolCallStarted))
    assert started.call.arguments == {"a": 2, "b": 40}  # fragments joined
    result = next(e for e in events if isinstance(e, ToolResultEvent))
    assert result.result.content == "42" and result.duration >= 0


class Interleaved(Provider):
    """Streams two tool calls whose argument fragments arrive interleaved."""

    name = "interleaved"

    def __init__(self, settings: Any = None, info: Any = None) -> None:
        super().__init__(settings, info)
        self.turn = 0

    def events(self) -> list[Any]:
        self.turn += 1
        if self.turn > 1:
            return [TextDelta("done"), UsageEvent(Usage(1, 1)), StopEvent("end_turn")]
        return [
            ToolCallDelta(key=0, id="c0", name="echo_args", arguments='{"v'),
            ToolCallDelta(key=1, id="c1", name="echo_args", arguments='{"v": '),
            ToolCallDelta(key=0, arguments='": "first"}'),
            ToolCallDelta(key=1, arguments='"second"}'),
            UsageEvent(Usage(3, 2)),
            StopEvent("tool_use"),
        ]

    def _stream(self, request: Any) -> Any:
        yield from self.events()

    async def _astream(self, request: Any) -> Any:
        for event in self.events():
            yield event


class InterleavedPlugin:
    @hookimpl
    def llmport_providers(self, register: Any) -> None:
        register(ProviderInfo(prefix="inter", factory=Interleaved))


def test_stream_assembles_interleaved_tool_call_fragments_per_key(drive: Driver) -> None:
    def echo_args(v: str) -> str:
        """Echo."""
        return v

    rt = Runtime(model="inter:x", hooks=[InterleavedPlugin()], config=Config())
    events = drive.stream(rt, "q", tools=[make_tool(echo_args, v={"type": "string"})])
    started = [e.call for e in events if isinstance(e, ToolCallStarted)]
    assert [(c.id, c.arguments) for c in started] == [
        ("c0", {"v": "first"}),
        ("c1", {"v": "second"}),
    ]
    results = [e.result.content for e in events if isinstance(e, ToolResultEvent)]
    assert results == ["first", "second"]
    assert isinstance(events[-1], FinalEvent) and events[-1].result.output == "done"


def test_stream_failure_propagates_and_counts_usage(drive: Driver) -> None:
    from llmport import AuthenticationError

    script = Script([fail(AuthenticationError("bad key", status=401))])
    rt = scripted(script)
    with pytest.raises(AuthenticationError):
        drive.stream(rt, "q")
    assert len(script.requests) == 1


def test_provider_response_converted_to_events_by_default(drive: Driver) -> None:
    class Plain(Provider):
        name = "plain"

        def _call(self, request: Any) -> Response:
            return Response(text="whole", usage=Usage(2, 2), model=request.model)

    class Plugin:
        @hookimpl
        def llmport_providers(self, register: Any) -> None:
            register(ProviderInfo(prefix="plain", factory=Plain))

    rt = Runtime(model="plain:m", hooks=[Plugin()], config=Config())
    events = drive.stream(rt, "q")
    assert [type(e) for e in events] == [TextDelta, UsageEvent, FinalEvent]
    assert drive.exec(rt, "q") == "whole"


async def test_sync_call_function_in_async_exec_sees_the_callers_contextvars() -> None:
    import contextvars

    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")

    def fn(content: Any, model: str, response_format: Any) -> str:
        return request_id.get()

    request_id.set("req-42")
    assert await Runtime(call=fn).async_exec("q") == "req-42"


def test_runtime_level_deps_and_system_are_not_sent_as_options() -> None:
    from llmport.testing import Script

    script = Script(["ok"])
    rt = script.runtime(deps={"db": "x"}, system="be brief", temperature=0.1)
    assert rt.exec("hi") == "ok"
    request = script.requests[0]
    assert request.system == "be brief"
    assert request.options == {"temperature": 0.1}
