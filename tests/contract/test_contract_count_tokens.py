"""rt.count_tokens on every target: the vendor's counting endpoint where it has one.

The loopback server answers in each vendor's recorded count format
(``../shared/wire-samples/*/count-tokens.json``); OpenAI Chat has no
endpoint, and a compatible server without it answers 404: both estimate.
With the same arguments, count and exec send the same request, field for
field, but for the fields a counting endpoint does not take (``NOT_COUNTED``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pydantic
import pytest
from llmport import Runtime
from llmport.errors import UnsupportedFeatureError
from llmport.testing.loopback import LoopbackServer, Reply
from wire import TARGETS, Wire

each_target = pytest.mark.parametrize("wire", TARGETS, ids=str)
Make = Callable[..., Runtime]

#: target id -> (the vendor's count reply, the end of the path it is asked on)
COUNTS: dict[str, tuple[dict[str, Any], str] | None] = {
    "openai-chat": None,
    "openai-responses": ({"object": "response.input_tokens", "input_tokens": 37}, "/input_tokens"),
    "anthropic": ({"input_tokens": 37}, "/v1/messages/count_tokens"),
    "gemini": ({"totalTokens": 37}, ":countTokens"),
    "bedrock": ({"inputTokens": 37}, "/count-tokens"),
    "anthropic-vertex": ({"input_tokens": 37}, "/count-tokens:rawPredict"),
    "gemini-vertex": ({"totalTokens": 37}, ":countTokens"),
    "callonly": None,  # tiny chat has no counting endpoint
    "callonly-stream": None,
    # OpenAI-compatible services document no counting endpoint: estimated.
    **dict.fromkeys(("groq", "deepseek", "ollama", "mistral", "openrouter")),
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@each_target
async def test_count_tokens_through_the_runtime(wire: Wire, mode: str, runtime: Make) -> None:
    expected = COUNTS[wire.id]
    replies = [Reply(json=expected[0])] if expected else []
    with LoopbackServer(replies) as server:
        rt = runtime(wire, server)
        question = "How many tokens is this question? " * 8
        if mode == "sync":
            count = rt.count_tokens(question, system="Be brief.")
        else:
            count = await rt.acount_tokens(question, system="Be brief.")
        requests = list(server.requests)
    if expected is None:
        assert (count.exact, count.source) == (False, "estimate") and requests == []
        assert count.input_tokens > 0
        return
    assert (count.input_tokens, count.exact, count.source) == (37, True, "vendor")
    assert len(requests) == 1 and requests[0].path.split("?")[0].endswith(expected[1])
    assert "How many tokens" in requests[0].body.decode()


async def test_a_compatible_server_without_the_endpoint_gives_an_estimate(runtime: Make) -> None:
    wire = next(w for w in TARGETS if w.id == "openai-responses")
    with LoopbackServer(
        [Reply(status=404, json={"error": {"message": "no such route"}})]
    ) as server:
        count = runtime(wire, server).count_tokens("x" * 400)
        assert len(server.requests) == 1
    assert (count.exact, count.source) == (False, "estimate") and count.input_tokens >= 100


# --- counting parity: count_tokens sends what exec sends ------------------


class Answer(pydantic.BaseModel):
    city: str


def weather(city: str) -> str:
    """Weather of a city."""
    return "sunny"


#: The vendor field every parity case sends with ``vendor={provider: ...}``.
PROBE = "x_probe"

#: Exec fields a counting endpoint does not take, per target, and why. Everything
#: else the exec body holds must reach the count body unchanged.
NOT_COUNTED: dict[str, dict[str, str]] = {
    "openai-responses": {
        "parallel_tool_calls": "no effect on input tokens; the count is sent without it",
        "include": "asks for output items (encrypted reasoning), not input",
        "stream": "generation only",
        PROBE: "input_tokens takes a fixed schema: free-form vendor fields are not sent",
    },
    "anthropic": {
        "max_tokens": "count_tokens takes no output limit",
        "stream": "generation only",
        PROBE: "count_tokens takes a fixed schema: free-form vendor fields are not sent",
    },
    "gemini": {
        "generationConfig": "the SDK's countTokens config rejects generation_config on the "
        "Gemini API (thinking settings do not change input tokens)",
        "toolConfig": "countTokens takes the tools, not the calling mode",
        PROBE: "countTokens takes a fixed schema: free-form vendor fields are not sent",
    },
    "bedrock": {
        "inferenceConfig": "CountTokens' converse input takes messages, system, toolConfig "
        "and additionalModelRequestFields only (vendor fields travel in the last)",
    },
}


def _counted_part(wire: Wire, body: dict[str, Any]) -> dict[str, Any]:
    """The part of a count body shaped like an exec body (Gemini and Bedrock wrap it)."""
    if wire.id == "anthropic-vertex":  # the model is in the exec URL, in the count body
        return {k: v for k, v in body.items() if k != "model"}
    if wire.id == "gemini-vertex":  # Vertex AI's countTokens takes the fields unwrapped
        return dict(body)
    if wire.api == "gemini":
        wrapped = dict(body["generateContentRequest"])
        wrapped.pop("model")  # the exec path names the model, the count body repeats it
        return wrapped
    if wire.id == "bedrock":
        return dict(body["input"]["converse"])
    return dict(body)


def _exec_part(wire: Wire, body: dict[str, Any]) -> dict[str, Any]:
    """The exec body without the fields the count endpoint does not take."""
    kept = {k: v for k, v in body.items() if k not in NOT_COUNTED[wire.api]}
    if wire.api == "gemini":  # the SDK's count config sends the system instruction without a role
        kept["systemInstruction"] = {"parts": kept["systemInstruction"]["parts"]}
    return kept


def _parity_case(wire: Wire, case: str) -> tuple[dict[str, Any], list[Reply]]:
    """(exec/count keywords, exec replies) of one parity case."""
    common: dict[str, Any] = {
        "system": ["Be brief.", "Answer in English."],
        "cache": "auto",
        "tools": [weather],
        "vendor": {wire.provider: wire.vendor_fields(PROBE, 7)},
    }
    if case == "reasoning":  # the contract's OpenAI model does not reason: a model that does
        model = {"model": "openai-responses:o4-mini"} if wire.id == "openai-responses" else {}
        return {**common, "reasoning": "low", **model}, [wire.text_reply("ok")]
    if case == "forced tool_choice":
        calls = [wire.tool_call_reply("weather", {"city": "Paris"}, "c1"), wire.text_reply("ok")]
        return {**common, "tool_choice": {"name": "weather"}}, calls
    answer = [wire.tool_call_reply("Answer", {"city": "Paris"}, "c1")]
    return {**common, "output_mode": "tool", "response_format": Answer}, answer


counting_targets = pytest.mark.parametrize(
    "wire", [w for w in TARGETS if COUNTS[w.id] is not None], ids=str
)


@pytest.mark.parametrize("case", ["reasoning", "forced tool_choice", "output_mode tool"])
@counting_targets
async def test_count_tokens_counts_the_request_exec_sends(
    wire: Wire, case: str, runtime: Make
) -> None:
    params, replies = _parity_case(wire, case)
    question = "What is the weather in Paris?"
    expected = COUNTS[wire.id]
    assert expected is not None
    with LoopbackServer([Reply(json=expected[0])] * 2) as server:
        rt = runtime(wire, server)
        count = rt.count_tokens(question, **params)
        acount = await rt.acount_tokens(question, **params)
        counted = [json.loads(r.body) for r in server.requests]
    with LoopbackServer(replies) as server:
        runtime(wire, server).exec(question, **params)
        sent = json.loads(server.requests[0].body)
    assert count == acount and (count.exact, count.source) == (True, "vendor")
    assert counted[0] == counted[1]
    assert _counted_part(wire, counted[0]) == _exec_part(wire, sent)


async def test_a_request_exec_rejects_is_not_counted_either(runtime: Make) -> None:
    """Anthropic forbids a forced tool choice with extended thinking: count raises as exec."""
    wire = next(w for w in TARGETS if w.id == "anthropic")
    params: dict[str, Any] = {"tools": [weather], "tool_choice": "required", "reasoning": "low"}
    with LoopbackServer([Reply(json={"input_tokens": 37})]) as server:
        rt = runtime(wire, server)
        with pytest.raises(UnsupportedFeatureError) as counting:
            rt.count_tokens("hi", **params)
        with pytest.raises(UnsupportedFeatureError) as running:
            rt.exec("hi", **params)
        assert server.requests == []
    assert str(counting.value) == str(running.value)
