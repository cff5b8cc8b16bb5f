"""Vendor truth on Anthropic: refusals only where the vendor documents a rejection,
``vendor={...}`` fields as a raw passthrough, and ``system=`` blocks sent as blocks.

Each request body is read where the loopback server received it, for
``exec``, ``aexec`` and ``stream``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llmport import Runtime, UnknownModelWarning
from llmport.errors import UnsupportedFeatureError
from llmport.testing.loopback import LoopbackServer, Reply
from support.anthropic_scenarios import message, text_stream, usage

MODES = ["exec", "async_exec", "stream", "astream"]


def get_weather(city: str) -> str:
    """The weather in ``city``."""
    return f"sunny in {city}"


def _reply(model: str, mode: str) -> Reply:
    if mode.endswith("stream"):
        return Reply(sse=text_stream("msg_ok", model, ["fi", "ne"], 5, 1))
    content = [{"type": "text", "text": "fine"}]
    return Reply(json=message("msg_ok", model, content, "end_turn", usage(5, 1)))


async def _acall(rt: Runtime, mode: str, kwargs: dict[str, Any]) -> None:
    if mode == "async_exec":
        assert await rt.async_exec("hi", **kwargs) == "fine"
    else:
        [event async for event in rt.astream("hi", **kwargs)]
    await rt.aclose()


def _run(model: str, mode: str, **kwargs: Any) -> dict[str, Any]:
    """One call in ``mode``; the JSON body the server received."""
    with LoopbackServer([_reply(model, mode)]) as server:
        rt = Runtime(
            model=f"anthropic:{model}",
            providers={"anthropic": {"api_key": "test-key", "base_url": server.url}},
        )
        if mode == "exec":
            assert rt.exec("hi", **kwargs) == "fine"
            rt.close()
        elif mode == "stream":
            list(rt.stream("hi", **kwargs))
            rt.close()
        else:
            asyncio.run(_acall(rt, mode, kwargs))
    (request,) = server.requests
    body: dict[str, Any] = request.json()
    return body


# --- system= as blocks -------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_system_blocks_go_out_as_blocks(mode: str) -> None:
    system = [{"type": "text", "text": "Rules."}, {"type": "text", "text": "More rules."}]
    body = _run("claude-haiku-4-5", mode, system=system)
    assert body["system"] == [
        {"type": "text", "text": "Rules."},
        {"type": "text", "text": "More rules."},
    ]


@pytest.mark.parametrize("mode", MODES)
def test_system_blocks_keep_their_cache_marks(mode: str) -> None:
    system = [{"type": "text", "text": "Rules.", "cache": True}, "More rules."]
    body = _run("claude-haiku-4-5", mode, system=system)
    assert body["system"] == [
        {"type": "text", "text": "Rules.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "More rules."},
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_plain_string_system_stays_a_string(mode: str) -> None:
    body = _run("claude-haiku-4-5", mode, system="Be brief.")
    assert body["system"] == "Be brief."


# --- refusals the vendor documents -----------------------------------------------------


#: Extended thinking with a budget (``thinking: {type: enabled}``): Claude Sonnet 4.5 has
#: budget thinking only; Claude Opus 4.6 takes a budget too.
BUDGETED = [
    ("claude-sonnet-4-5", {"reasoning_effort": "high"}),
    ("claude-opus-4-6", {"reasoning": {"budget_tokens": 2048}}),
]


@pytest.mark.parametrize("choice", ["required", {"name": "get_weather"}], ids=["any", "named"])
@pytest.mark.parametrize(("model", "reasoning"), BUDGETED, ids=["sonnet-4-5", "opus-4-6"])
def test_forced_tool_choice_with_budget_thinking_is_refused_before_the_wire(
    model: str, reasoning: dict[str, Any], choice: Any
) -> None:
    # Anthropic documents the rejection for extended thinking with a budget.
    with LoopbackServer([]) as server:
        rt = Runtime(
            model=f"anthropic:{model}",
            providers={"anthropic": {"api_key": "test-key", "base_url": server.url}},
        )
        with pytest.raises(UnsupportedFeatureError, match="only tool_choice 'auto' or 'none'"):
            rt.exec("hi", tools=[get_weather], tool_choice=choice, **reasoning)
        rt.close()
    assert server.requests == []


@pytest.mark.parametrize("mode", MODES)
def test_adaptive_thinking_with_auto_tool_choice_is_sent(mode: str) -> None:
    body = _run("claude-opus-4-6", mode, tools=[get_weather], reasoning_effort="high")
    assert body["thinking"] == {"type": "adaptive"}
    assert body["tool_choice"] == {"type": "auto"}


# --- vendor fields are a raw passthrough --------------------------------------------------

#: Fields llmport's own tables would refuse as options on this model (no sampling
#: parameters on Opus 4.8, no seed on the Messages API, no forced tool with thinking).
RAW = {
    "thinking": {"type": "adaptive"},
    "tool_choice": {"type": "any"},
    "temperature": 0.5,
    "seed": 7,
    "custom_field": {"a": [1, 2]},
}


@pytest.mark.parametrize("mode", MODES)
def test_vendor_fields_pass_through_verbatim(mode: str) -> None:
    body = _run("claude-opus-4-8", mode, tools=[get_weather], vendor={"anthropic": RAW})
    for key, value in RAW.items():
        assert body[key] == value


# --- a model the tables do not know ------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_an_unknown_model_takes_what_a_newer_model_may_take(mode: str) -> None:
    # The newest known family refuses sampling options and thinking budgets (Anthropic's
    # Opus 4.7 migration guide); a model the tables do not know is refused neither.
    with pytest.warns(UnknownModelWarning, match="claude-future-9"):
        sampled = _run("claude-future-9", mode, temperature=0.5)
    with pytest.warns(UnknownModelWarning, match="claude-future-9"):
        budgeted = _run("claude-future-9", mode, reasoning={"budget_tokens": 2048})
    assert sampled["temperature"] == 0.5
    assert budgeted["thinking"] == {"type": "enabled", "budget_tokens": 2048}


# --- adaptive thinking with a forced tool ------------------------------------------------
# A real exchange (claude-opus-4-6, thinking adaptive, tool_choice any) was answered 200 by
# both /v1/messages/count_tokens and /v1/messages; Anthropic documents the rejection for
# extended thinking with a budget only.


@pytest.mark.parametrize("model", ["claude-opus-4-6", "claude-opus-4-8"])
@pytest.mark.parametrize("mode", MODES)
def test_adaptive_thinking_with_a_forced_tool_goes_out(mode: str, model: str) -> None:
    body = _run(
        model,
        mode,
        tools=[get_weather],
        tool_choice="required",
        reasoning={"effort": "high"},
    )
    assert body["thinking"] == {"type": "adaptive"}
    assert body["tool_choice"] == {"type": "any"}
    assert [tool["name"] for tool in body["tools"]] == ["get_weather"]


@pytest.mark.parametrize("thinking", ["reasoning", "vendor"])
@pytest.mark.parametrize("is_async", [False, True])
def test_a_count_carries_the_thinking_exec_sends(thinking: str, is_async: bool) -> None:
    # The recorded count request carried ``thinking`` as the messages request did; given as
    # a vendor field, it was dropped from the count.
    kwargs: dict[str, Any] = {"tools": [get_weather], "tool_choice": "required"}
    if thinking == "reasoning":
        kwargs["reasoning"] = {"effort": "high"}
    else:
        kwargs["vendor"] = {"anthropic": {"thinking": {"type": "adaptive"}}}
    with LoopbackServer([Reply(json={"input_tokens": 42})]) as server:
        rt = Runtime(
            model="anthropic:claude-opus-4-6",
            providers={"anthropic": {"api_key": "test-key", "base_url": server.url}},
        )
        if is_async:
            count = asyncio.run(rt.acount_tokens("hi", **kwargs))
        else:
            count = rt.count_tokens("hi", **kwargs)
        rt.close()
    assert count.input_tokens == 42
    (request,) = server.requests
    assert request.path.endswith("/v1/messages/count_tokens")
    body = request.json()
    assert body["thinking"] == {"type": "adaptive"}
    assert body["tool_choice"] == {"type": "any"}
