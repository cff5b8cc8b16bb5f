"""Conversations kept inside the model's window (trim, summarize, error)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conversation_helpers import WAY_IDS, WAYS, run, runtime
from llmport import ContextPolicy, ContextWindowExceeded, OptionError
from llmport.messages.types import Message, TextBlock, ToolCall, ToolResult
from llmport.testing import ALL_INPUTS, Script

BIG = "w" * 400  # ~100 estimated tokens


def user(text: str) -> Message:
    return Message("user", (TextBlock(text),))


def assistant(text: str, *calls: ToolCall) -> Message:
    return Message("assistant", (TextBlock(text),) if text else (), calls)


def history() -> list[Message]:
    """Ten turns, one of them a tool call with its result."""
    call = ToolCall("c1", "lookup", {"q": "x"}, '{"q": "x"}')
    return [
        user("u1 " + BIG),
        assistant("a1 " + BIG),
        user("u2 " + BIG),
        assistant("", call),
        Message("tool", tool_results=(ToolResult("c1", "lookup", "r1 " + BIG),)),
        assistant("a2 " + BIG),
        user("u3 " + BIG),
        assistant("a3 " + BIG),
    ]


def texts(messages: list[Message]) -> list[str]:
    out = []
    for m in messages:
        if m.tool_results:
            out.append("result:" + m.tool_results[0].call_id)
        elif m.tool_calls:
            out.append("call:" + m.tool_calls[0].id)
        else:
            out.append(m.text[:2])
    return out


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_trim_drops_the_oldest_turns_and_keeps_calls_with_results(
    way: tuple[str, bool],
) -> None:
    script = Script(["ok"])
    rt = runtime(script, context_policy=ContextPolicy(max_tokens=450, keep_last=2))
    await run(way, rt, "now " + BIG, history=history(), system="S " + BIG)
    sent = script.requests[0]
    assert sent.system is not None and sent.system.startswith("S ")
    # u1, a1 and u2 go; the tool call goes with its result, never one without the other;
    # a conversation still starts with a user turn.
    assert texts(sent.messages) == ["u3", "a3", "no"]


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_trim_never_splits_a_tool_call_from_its_result(way: tuple[str, bool]) -> None:
    script = Script(["ok"])
    rt = runtime(script, context_policy=ContextPolicy(max_tokens=560, keep_last=0))
    await run(way, rt, "now", history=history())
    sent = texts(script.requests[0].messages)
    assert ("call:c1" in sent) == ("result:c1" in sent)
    assert sent[0] in ("u2", "u3") and sent[-1] == "no"


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_summarize_calls_the_model_once_and_reuses_the_summary(
    way: tuple[str, bool],
) -> None:
    script = Script(["SUMMARY-1", "first answer", "second answer"])
    rt = runtime(script, context_policy=ContextPolicy(max_tokens=450, strategy="summarize"))
    await run(way, rt, "now", history=history())
    await run(way, rt, "later", history=history())
    assert len(script.requests) == 3  # one summary call, two answers
    summary_call, first, second = script.requests
    assert "Summarize the conversation above" in summary_call.messages[-1].text
    assert texts(summary_call.messages)[:2] == ["u1", "a1"]
    for request in (first, second):
        # The summary opens the first kept user turn (u3): roles still alternate.
        assert request.messages[0].text.startswith("<summary of the earlier conversation>")
        assert "SUMMARY-1" in request.messages[0].text and "u3 " in request.messages[0].text
        assert texts(request.messages)[1] == "a3"


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_a_request_known_not_to_fit_is_never_sent(way: tuple[str, bool]) -> None:
    script = Script(["never"])
    caps = replace(ALL_INPUTS, context_window=300)
    tiny = Script(["never"], prefix="tiny", capabilities=caps)
    rt = runtime(script, tiny)
    with pytest.raises(ContextWindowExceeded, match="300-token limit"):
        await run(way, rt, "now " + BIG * 4, model="tiny:test")  # no policy: the window holds
    rt = runtime(script, context_policy=ContextPolicy(max_tokens=200, keep_last=2))
    with pytest.raises(ContextWindowExceeded):
        await run(way, rt, "now " + BIG, history=history()[:2])  # keep_last leaves nothing
    rt = runtime(script, context_policy=ContextPolicy(strategy="error", max_tokens=200))
    with pytest.raises(ContextWindowExceeded):
        await run(way, rt, "now", history=history())
    assert script.requests == [] and tiny.requests == []


async def test_the_default_limit_is_80_percent_of_the_window() -> None:
    caps = replace(ALL_INPUTS, context_window=700)
    script = Script(["ok"], capabilities=caps)
    rt = runtime(script, context_policy=ContextPolicy(keep_last=0))
    rt.exec("now", history=history())
    assert 0 < len(script.requests[0].messages) < len(history())
    assert ContextPolicy().limit(1000) == 800 and ContextPolicy().limit(None) is None


def test_bad_policies_are_option_errors() -> None:
    with pytest.raises(OptionError, match="strategy"):
        ContextPolicy(strategy="shrink")  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="max_tokens"):
        ContextPolicy(max_tokens=0)
    with pytest.raises(OptionError, match="context_policy"):
        runtime(Script([]), context_policy=5)
