"""A run tries its next model when the current one is overloaded, limited, gone or unreachable."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from llmport import (
    AuthenticationError,
    ExecFailed,
    OptionError,
    OverloadedError,
    ProviderConnectionError,
    RateLimitError,
    Runtime,
    Session,
    StreamInterrupted,
    StreamRestarted,
    TextBlock,
    ThinkingBlock,
    agentic_function,
    hookimpl,
)
from llmport.controls.retry import Backoff
from llmport.messages.types import Request, Response, TextDelta, Usage, UsageEvent
from llmport.provider.config import Config
from llmport.testing import ALL_INPUTS, Script, fail, respond
from support.api_modes import events_via, run_via

WAYS = [("sync", False), ("async", False), ("sync", True), ("async", True)]
IDS = ["exec", "async_exec", "stream", "astream"]


def runtime(*scripts: Script, model: object, **settings: object) -> Runtime:
    return Runtime(
        model=model,  # type: ignore[arg-type]
        hooks=list(scripts),
        config=settings.pop("config", Config()),  # type: ignore[arg-type]
        backoff=Backoff.none(),
        **settings,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("way", WAYS, ids=IDS)
async def test_the_next_model_answers_when_the_first_is_overloaded(
    way: tuple[str, bool],
) -> None:
    a = Script([fail(OverloadedError("busy")), fail(OverloadedError("busy"))], prefix="a")
    b = Script(["from b"], prefix="b")
    rt = runtime(a, b, model=["a:m", "b:m"], max_retries=2)
    result = await run_via(way[0], rt, "q", stream=way[1])
    assert result.text == "from b" and result.model == "b:m"
    assert len(a.requests) == 2 and len(b.requests) == 1  # retries first, then the fallback
    assert [f.model for f in result.failures] == ["a:m", "a:m"]


@pytest.mark.parametrize("way", WAYS, ids=IDS)
async def test_exec_failed_lists_the_attempts_per_model(way: tuple[str, bool]) -> None:
    a = Script([fail(OverloadedError("busy"))] * 2, prefix="a")
    b = Script([fail(RateLimitError("slow down", retryable=False))], prefix="b")
    rt = runtime(a, b, model="a:m", max_retries=2)
    with pytest.raises(ExecFailed) as caught:
        await run_via(way[0], rt, "q", model=["a:m", "b:m"], stream=way[1])
    error = caught.value
    assert {m: len(v) for m, v in error.by_model().items()} == {"a:m": 2, "b:m": 1}
    text = str(error)
    assert text.startswith("exec() failed on 2 models after 3 attempts:")
    assert "  a:m:\n    Attempt 1: OverloadedError" in text
    assert "  b:m:\n    Attempt 1: RateLimitError" in text


async def test_a_permanent_error_outside_fallback_on_is_raised_at_once() -> None:
    a = Script([fail(AuthenticationError("bad key"))], prefix="a")
    b = Script(["never"], prefix="b")
    rt = runtime(a, b, model=["a:m", "b:m"])
    with pytest.raises(AuthenticationError):
        rt.exec("q")
    assert b.requests == []
    # ... unless the caller asks for it
    a.add(fail(AuthenticationError("bad key")))
    assert rt.exec("q", fallback_on=[AuthenticationError]) == "never"


def test_a_model_that_cannot_take_the_request_is_skipped_before_any_request() -> None:
    no_images = replace(ALL_INPUTS, input_modalities=frozenset({"text"}))
    a = Script([fail(OverloadedError("busy"))], prefix="a")
    b = Script(["never"], prefix="b", capabilities=no_images)
    c = Script(["from c"], prefix="c")
    rt = runtime(a, b, c, model=["a:m", "b:m", "c:m"], max_retries=1)
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63f8ffff3f0005fe02fea7569e180000000049454e44ae426082"
    )
    result = rt.run(["what is this?", {"type": "image", "data": png}])
    assert result.model == "c:m" and b.requests == []
    a.add(fail(OverloadedError("busy")))
    c.add(fail(OverloadedError("busy")))
    with pytest.raises(ExecFailed) as caught:
        rt.run(["again", {"type": "image", "data": png}])
    assert caught.value.skipped[0][0] == "b:m" and "takes no images" in caught.value.skipped[0][1]
    assert "b:m: skipped (" in str(caught.value)


def test_the_answering_model_stays_for_the_run_and_is_recorded_in_the_dag() -> None:
    from llmport import Tool

    tool = Tool("noop", "", {"type": "object", "properties": {}}, lambda: "ok")
    a = Script([fail(OverloadedError("busy"))], prefix="a")

    def call_tool(request: Request) -> Response:
        from llmport.messages.types import ToolCall

        return Response(
            tool_calls=[ToolCall("c1", "noop", {}, "{}")],
            usage=Usage(1, 1, requests=1),
            stop_reason="tool_use",
        )

    b = Script([respond(call_tool), "done on b"], prefix="b")
    rt = runtime(a, b, model=["a:m", "b:m"], max_retries=1)
    session = Session()

    @agentic_function(session=session)
    def task() -> str:
        return str(rt.exec("q", tools=[tool]))

    assert task() == "done on b"
    assert len(a.requests) == 1 and len(b.requests) == 2  # the second turn went to b directly
    llm = next(n for n in session.nodes() if n.kind == "llm")
    assert llm.name == "a:m" and llm.result["model"] == "b:m"


def test_thinking_from_the_failed_vendor_is_not_sent_to_the_fallback() -> None:
    def think(request: Request) -> Response:
        blocks = [ThinkingBlock("hmm", signature="s", vendor="a"), TextBlock("first")]
        return Response(text="first", blocks=blocks, usage=Usage(1, 1, requests=1))

    a = Script([respond(think), fail(OverloadedError("busy"))], prefix="a")
    b = Script(["from b"], prefix="b")
    rt = runtime(a, b, model=["a:m", "b:m"], max_retries=1)
    first = rt.run("q1")
    second = rt.run([*first.messages, "q2"])
    assert second.model == "b:m"
    assert not any(isinstance(x, ThinkingBlock) for m in b.requests[0].messages for x in m.blocks)
    assert [d.vendor for d in second.dropped] == ["a"]


def test_named_configurations_carry_fallbacks_and_bad_values_are_errors() -> None:
    a = Script([fail(OverloadedError("busy"))], prefix="a")
    b = Script(["from b"], prefix="b")
    config = Config(configurations={"main": {"model": "a:m", "fallbacks": ["b:m"]}})
    rt = runtime(a, b, model="main", config=config, max_retries=1)
    assert rt.run("q").model == "b:m"
    with pytest.raises(OptionError, match="fallback_on"):
        rt.exec("q", fallback_on=["overloaded"])
    with pytest.raises(OptionError, match="non-empty list"):
        rt.exec("q", model=[])


class HalfStream:
    """A provider whose stream sends some text, then drops the connection."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def llmport_providers(self, register: Any) -> None:
        from llmport import ProviderConnectionError, ProviderInfo
        from llmport.messages.types import TextDelta
        from llmport.provider.contract import Provider

        owner = self

        class Half(Provider):
            name = "half"

            def _stream(self, request: Request) -> Any:
                owner.calls += 1
                yield TextDelta("Hel")
                raise ProviderConnectionError("connection reset mid-stream")

            async def _astream(self, request: Request) -> Any:
                for event in self._stream(request):
                    yield event

        register(ProviderInfo(prefix="half", factory=Half))


def fallback_runtime(half: HalfStream, b: Script) -> Runtime:
    return Runtime(
        model=["half:m", "b:m"],
        hooks=[half, b],
        config=Config(),
        backoff=Backoff.none(),
        max_retries=1,
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_stream_that_already_sent_text_does_not_fall_back(mode: str) -> None:
    half = HalfStream()
    b = Script(["never"], prefix="b")
    with pytest.raises(StreamInterrupted) as caught:
        await run_via(mode, fallback_runtime(half, b), "q", stream=True)
    assert b.requests == [] and half.calls == 1
    assert caught.value.run.text == "Hel"
    assert isinstance(caught.value.__cause__, ProviderConnectionError)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_with_stream_retry_restart_the_fallback_model_restarts_the_stream(mode: str) -> None:
    half = HalfStream()
    b = Script(["a whole new answer"], prefix="b")
    events = await events_via(mode, fallback_runtime(half, b), "q", stream_retry="restart")
    assert half.calls == 1 and len(b.requests) == 1
    kinds = [type(e).__name__ for e in events if not isinstance(e, UsageEvent)]
    assert kinds[:2] == ["TextDelta", "StreamRestarted"], kinds
    restart = next(i for i, e in enumerate(events) if isinstance(e, StreamRestarted))
    after = "".join(e.text for e in events[restart:] if isinstance(e, TextDelta))
    assert after == "a whole new answer"
    assert events[-1].result.output == "a whole new answer"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_fallback_from_openai_to_anthropic_over_the_wire(mode: str) -> None:
    """Real plugins on loopback servers: OpenAI answers 503, Anthropic answers."""
    import llmport_anthropic.plugin
    import llmport_openai.plugin
    from llmport.testing.loopback import LoopbackServer, Reply

    busy = Reply(status=503, json={"error": {"message": "overloaded", "type": "server_error"}})
    message = {
        "id": "msg_fb",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": "from claude"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }
    with LoopbackServer([busy, busy]) as gpt, LoopbackServer([Reply(json=message)]) as claude:
        rt = Runtime(
            model=["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"],
            hooks=[llmport_openai.plugin, llmport_anthropic.plugin],
            config=Config(),
            backoff=Backoff.none(),
            max_retries=2,
            providers={
                "openai": {"api_key": "sk-fake-test", "base_url": gpt.url + "/v1"},
                "anthropic": {"api_key": "sk-ant-fake-test", "base_url": claude.url},
            },
        )
        result = await run_via(mode, rt, "hello")
        assert (len(gpt.requests), len(claude.requests)) == (2, 1)
    assert result.text == "from claude" and result.model == "anthropic:claude-haiku-4-5"
    assert [f.model for f in result.failures] == ["openai:gpt-4o-mini"] * 2
