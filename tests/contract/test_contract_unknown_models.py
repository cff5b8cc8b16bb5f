"""A model the tables do not know is sent, with one warning per model per Runtime.

A model released tomorrow works today: llmport gives it its family's
capabilities (or permissive ones) and warns once with
``llmport.UnknownModelWarning``; the vendor decides what it accepts.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from call_only import PREFIX as CALL_ONLY
from llmport import Runtime, UnknownModelWarning
from llmport.testing.loopback import LoopbackServer
from support.api_modes import MODES, run_via
from wire import TARGETS, Wire, make_runtime

#: A model id per provider that no pattern of its table lists by name.
FUTURE = {
    "openai": "gpt-future-9",
    "openai-responses": "gpt-future-9",
    "anthropic": "claude-future-9",
    "gemini": "gemini-future-9",
    "bedrock": "us.anthropic.claude-future-9-v1:0",
    "anthropic-vertex": "claude-future-9@20990101",
    "gemini-vertex": "gemini-future-9",
    CALL_ONLY: "other-9",
    f"{CALL_ONLY}-stream": "other-9",
}


#: OpenAI-compatible services host any model: their tables only refine some, so
#: no model of theirs is unknown (tested below: no warning for any model).
ANY_MODEL = ("groq", "deepseek", "ollama", "mistral", "openrouter")


def _future(wire: Wire) -> str:
    return f"{wire.provider}:{FUTURE[wire.provider]}"


async def _calls(
    wire: Wire, mode: str, model: str, **kwargs: Any
) -> tuple[list[warnings.WarningMessage], LoopbackServer]:
    """run, streamed run, run again on one Runtime; the UnknownModelWarnings they gave."""
    replies = [wire.text_reply("fine"), wire.stream_text_reply(["fi", "ne"])]
    replies.append(wire.text_reply("fine"))
    with LoopbackServer(replies) as server, warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        rt: Runtime = make_runtime(wire, server)
        try:
            first = await run_via(mode, rt, "hi", model=model, **kwargs)
            streamed = await run_via(mode, rt, "hi", model=model, stream=True, **kwargs)
            again = await run_via(mode, rt, "hi", model=model, **kwargs)
        finally:
            await rt.aclose()
    assert [first.output, streamed.output, again.output] == ["fine"] * 3
    return [w for w in seen if issubclass(w.category, UnknownModelWarning)], server


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", [w for w in TARGETS if w.provider not in ANY_MODEL], ids=str)
async def test_an_unknown_model_is_sent_with_one_warning(wire: Wire, mode: str) -> None:
    model = _future(wire)
    unknown, server = await _calls(wire, mode, model)
    assert len(server.requests) == 3
    assert len(unknown) == 1, [str(w.message) for w in unknown]
    assert FUTURE[wire.provider] in str(unknown[0].message)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", TARGETS, ids=str)
async def test_a_known_model_gives_no_warning(wire: Wire, mode: str) -> None:
    unknown, server = await _calls(wire, mode, wire.model)
    assert len(server.requests) == 3
    assert unknown == []


CLAUDE_TARGETS = [w for w in TARGETS if w.provider in ("anthropic", "bedrock")]


def _thinking(wire: Wire, body: dict[str, Any]) -> Any:
    if wire.provider == "bedrock":
        return body["additionalModelRequestFields"]["thinking"]
    return body["thinking"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", CLAUDE_TARGETS, ids=str)
async def test_an_unknown_claude_thinks_when_asked(wire: Wire, mode: str) -> None:
    # On Bedrock an unknown Claude once fell to the Claude 2 rule and reasoning= was refused.
    unknown, server = await _calls(wire, mode, _future(wire), reasoning_effort="high")
    assert len(unknown) == 1
    for request in server.requests:
        assert _thinking(wire, request.json())["type"] in ("adaptive", "enabled")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", [w for w in TARGETS if w.provider in ANY_MODEL], ids=str)
async def test_a_compatible_service_warns_for_no_model(wire: Wire, mode: str) -> None:
    unknown, server = await _calls(wire, mode, f"{wire.provider}:some-model-released-today")
    assert len(server.requests) == 3
    assert unknown == []
