"""OpenAI-compatible services replayed from cassettes made of their real recordings.

Every ``Runtime`` here gets nothing but the service's key variable (and,
for Hugging Face, the router path the recording used): the profile supplies
base URL, wire and quirks. Each request body llmport sends is compared with
the one the recording holds (:func:`same_shape`), the answers are the
services' own bytes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from compat_scenarios import SAMPLES, Scenario, sample_requests, scenarios
from llmport import Runtime
from llmport.messages.types import (
    FinalEvent,
    Message,
    TextBlock,
    ThinkingBlock,
    ThinkingDelta,
)

SC = scenarios()

#: What llmport sends differently from the recording's client, on purpose (cassettes/README.md).
DIFFERENCES = {
    "openrouter-tools": "strict tools: llmport closes every nested object "
    "(additionalProperties: false), as OpenAI's strict mode requires",
    "mistral-tools": "llmport sends each tool's type: function (the mistralai SDK leaves the "
    "default out)",
    "deepseek-responses-tools": "the function_call goes back with the id DeepSeek gave it",
}


def replay(sc: Scenario, cassette: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    for key, value in sc.env.items():
        monkeypatch.setenv(key, value)
    providers = {sc.prefix: sc.settings} if sc.settings else None
    with Runtime(model=sc.model, providers=providers) as rt, cassette(sc.cassette) as cass:
        result = sc.run(rt)
    return result, cass


def last(run: Any) -> Message:
    """The run's last assistant turn (its blocks and the service's extras)."""
    message: Message = run.messages[-1]
    assert message.role == "assistant"
    return message


def bodies(cass: Any) -> list[Any]:
    return [json.loads(r.body) for r in cass.requests]


def normal(value: Any) -> Any:
    """A body without what only differs by client habit: nulls, defaults, list indexes."""
    if isinstance(value, list):
        return [normal(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {
        k: normal(v)
        for k, v in value.items()
        if v is not None
        and k not in ("n", "stream", "parallel_tool_calls", "prefix")
        and not (k == "tools" and v == [])
    }
    if out.get("role") == "assistant" and out.get("tool_calls") and out.get("content") in ([], ""):
        del out["content"]  # an empty assistant text beside tool calls, however spelt
    if "function" in out:
        out.pop("index", None)
    return out


@pytest.mark.parametrize("name", [n for n, sc in SC.items() if sc.sample])
def test_requests_have_the_recorded_shape(
    name: str, cassette: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sc = SC[name]
    _, cass = replay(sc, cassette, monkeypatch)
    ours, recorded = bodies(cass), sample_requests(sc.sample)
    assert len(ours) == len(recorded)
    for mine, theirs in zip(ours, recorded, strict=True):
        if name in DIFFERENCES:
            assert normal(mine)["model"] == theirs["model"]
            assert len(normal(mine)["messages" if "messages" in mine else "input"]) == len(
                theirs.get("messages") or theirs["input"]
            )
        else:
            assert normal(mine) == normal(theirs)


def test_deepseek_responses_echo_takes_no_output_only_status(
    cassette: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, cass = replay(SC["deepseek-responses-tools"], cassette, monkeypatch)
    kinds = ("reasoning", "function_call")
    echoed = [i for i in bodies(cass)[1]["input"] if i.get("type") in kinds]
    sample = sample_requests(SC["deepseek-responses-tools"].sample)[1]["input"]
    recorded = [i for i in sample if i.get("type") in kinds]
    assert [i["type"] for i in echoed] == ["reasoning", "function_call"]
    assert all("status" not in i for i in echoed)
    # The reasoning item goes back as the recorded client sent it.
    assert normal(echoed[0]) == normal(recorded[0])


def test_mistral_tool_turn_content_as_its_sdk_sends_it(
    cassette: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, cass = replay(SC["mistral-tools"], cassette, monkeypatch)
    (ours,) = [m for m in bodies(cass)[1]["messages"] if m.get("tool_calls")]
    sample = sample_requests(SC["mistral-tools"].sample)[1]["messages"]
    (recorded,) = [m for m in sample if m.get("tool_calls")]
    assert ours["content"] == recorded["content"] == []
    assert ours["prefix"] is recorded["prefix"] is False  # on every assistant turn it sends


def test_samples_keep_their_source() -> None:
    for path in SAMPLES.rglob("*.json"):
        source = json.loads(path.read_text())["source"]
        assert source["repo"] == "pydantic/pydantic-ai" and source["license"] == "MIT"


# -- text, tools, structured output --------------------------------------------------


def test_groq_text_keeps_its_usage_timings(cassette: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run, cass = replay(SC["groq-text"], cassette, monkeypatch)
    assert run.output == "The capital of France is Paris."
    assert cass.requests[0].uri == "https://api.groq.com/openai/v1/chat/completions"
    assert run.usage.input_tokens == 48 and run.usage.output_tokens == 8
    details = last(run).extra["usage_details"]
    assert details["queue_time"] == pytest.approx(0.100731848)
    assert details["x_groq"]["id"] == "req_01jr8hj0hzeq9b86xqb5dn7wqs"


def test_groq_tool_roundtrip(cassette: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run, cass = replay(SC["groq-tools"], cassette, monkeypatch)
    assert run.output == "The weather in Paris is sunny with a temperature of 22C."
    tool = bodies(cass)[1]["messages"][-1]
    assert tool == {"role": "tool", "tool_call_id": "48f5r72yf", "content": "Sunny, 22C in Paris"}


def test_groq_structured_output_with_reasoning(
    cassette: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, _ = replay(SC["groq-structured"], cassette, monkeypatch)
    assert json.loads(run.output) == {"city": "Mexico City", "country": "Mexico"}
    thinking = [b for b in last(run).blocks if isinstance(b, ThinkingBlock)]
    assert thinking and thinking[0].vendor == "groq"
    assert thinking[0].text.startswith("The user asks")


def test_openrouter_text_and_manual_tools(cassette: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run, _ = replay(SC["openrouter-text"], cassette, monkeypatch)
    assert run.output.startswith("Why don't scientists trust atoms?")
    assert last(run).extra["usage_details"]["provider"] == "Google"
    runs, cass = replay(SC["openrouter-tools"], cassette, monkeypatch)
    assert [c.name for r in runs for c in r.pending_tool_calls] == [
        "insert_level_with_spaces",
        "final_result",
    ]
    assert runs[1].pending_tool_calls[0].arguments == {
        "level_type": "ground",
        "level_name": "ground_floor",
        "space_count": 3,
    }
    assert all(b["tool_choice"] == "required" for b in bodies(cass))


def test_mistral_text_forwards_vendor_penalties(
    cassette: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, cass = replay(SC["mistral-text"], cassette, monkeypatch)
    body = bodies(cass)[0]
    assert (body["frequency_penalty"], body["presence_penalty"], body["top_p"]) == (0.25, 0.5, 1.0)
    assert run.output.startswith("Hello!")


def test_mistral_tools_count_cached_tokens(cassette: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run, _ = replay(SC["mistral-tools"], cassette, monkeypatch)
    assert "22" in run.output
    assert run.usage.cache_read_tokens == 76 + 99  # usage.num_cached_tokens, both calls


def test_cerebras_text_and_time_info(cassette: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run, _ = replay(SC["cerebras-text"], cassette, monkeypatch)
    assert run.output == "2 + 2 = 4."
    assert last(run).extra["usage_details"]["time_info"]["queue_time"] > 0


def test_ollama_local_needs_no_key(cassette: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run, cass = replay(SC["ollama-structured"], cassette, monkeypatch)
    assert cass.requests[0].uri == "http://localhost:11434/v1/chat/completions"
    assert "authorization" not in {k.lower() for k in cass.requests[0].headers} or (
        cass.requests[0].headers.get("authorization") == "Bearer unused"
    )
    assert json.loads(run.output) == {"city": "Paris", "country": "France"}


def test_huggingface_tool_call(cassette: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    runs, _ = replay(SC["huggingface-tools"], cassette, monkeypatch)
    assert runs[0].pending_tool_calls[0].arguments == {"response": [2, 3, 5]}


def test_deepseek_responses_text(cassette: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run, cass = replay(SC["deepseek-responses-text"], cassette, monkeypatch)
    assert cass.requests[0].uri == "https://api.deepseek.com/responses"
    assert run.output == "The capital of France is Paris."
    thinking = [b for b in last(run).blocks if isinstance(b, ThinkingBlock)]
    assert thinking[0].text == "We need answer capital of France."


# -- reasoning: out as ThinkingBlock, and back as each service takes it --------------


def _thinking(run: Any) -> list[ThinkingBlock]:
    return [b for b in last(run).blocks if isinstance(b, ThinkingBlock)]


def test_deepseek_reasoning_content(cassette: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run, _ = replay(SC["deepseek-reasoning"], cassette, monkeypatch)
    (thinking,) = _thinking(run)
    assert thinking.vendor == "deepseek" and thinking.text
    assert run.output.startswith("Crossing the street safely")
    assert run.usage.reasoning_tokens > 0
    assert run.usage.cache_read_tokens == 0 or run.usage.cache_read_tokens > 0


def test_openrouter_reasoning_effort_and_details(
    cassette: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, cass = replay(SC["openrouter-reasoning"], cassette, monkeypatch)
    assert bodies(cass)[0]["reasoning"] == {"effort": "high", "enabled": True}
    (thinking,) = _thinking(run)
    assert thinking.extra["reasoning_details"][0]["type"] == "reasoning.text"
    assert run.output == "ok"
    assert last(run).extra["usage_details"]["cost"] == pytest.approx(0.000924)


def test_mistral_thinking_chunks(cassette: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run, cass = replay(SC["mistral-reasoning"], cassette, monkeypatch)
    assert bodies(cass)[0]["reasoning_effort"] == "high"
    assert run.output == "4"
    (thinking,) = _thinking(run)
    assert thinking.text.startswith("The user is asking for the result of 2+2.")
    assert isinstance(last(run).blocks[-1], TextBlock)


def test_huggingface_think_tags(cassette: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run, _ = replay(SC["huggingface-text"], cassette, monkeypatch)
    (thinking,) = _thinking(run)
    assert thinking.text.startswith("\nHmm, the user just said")
    assert run.output.startswith("Hello!") and "<think>" not in run.output


def test_cerebras_sends_reasoning_back(cassette: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    runs, cass = replay(SC["cerebras-reasoning"], cassette, monkeypatch)
    assert runs[1].output == "\\(4 + 3 = 7\\)."
    assistant = bodies(cass)[1]["messages"][1]
    assert assistant == sample_requests(SC["cerebras-reasoning"].sample)[1]["messages"][1]


def test_ollama_cloud_sends_reasoning_back(cassette: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    runs, cass = replay(SC["ollama-tools"], cassette, monkeypatch)
    assert cass.requests[0].uri == "https://ollama.com/v1/chat/completions"
    assistant = bodies(cass)[1]["messages"][1]
    assert assistant["reasoning"].startswith("We need to answer question")
    assert runs[1].pending_tool_calls[0].arguments == {"city": "Paris", "country": "France"}


# -- streams (documented formats) -------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in SC if n.endswith("-stream")])
def test_streamed_reasoning_becomes_thinking(
    name: str, cassette: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    events, cass = replay(SC[name], cassette, monkeypatch)
    deltas = [e for e in events if isinstance(e, ThinkingDelta)]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    thinking = [b for b in last(final.result).blocks if isinstance(b, ThinkingBlock)]
    assert deltas and thinking and thinking[0].text == "".join(d.text for d in deltas)
    assert thinking[0].vendor == SC[name].prefix
    assert "<think>" not in final.result.output and final.result.output in (
        "4",
        "The capital of France is Paris.",
    )
    body = bodies(cass)[0]
    assert body["stream"] is True
    assert ("stream_options" in body) == (name != "mistral-stream")


# -- services without a recording: text and tools in their documented format -----------------

UNRECORDED = [
    n.removesuffix("-text") for n, sc in SC.items() if n.endswith("-text") and not sc.sample
]


@pytest.mark.parametrize("prefix", UNRECORDED)
def test_unrecorded_services_text_and_tools(
    prefix: str, cassette: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, cass = replay(SC[f"{prefix}-text"], cassette, monkeypatch)
    assert run.output == "The capital of France is Paris."
    (thinking,) = [b for b in last(run).blocks if isinstance(b, ThinkingBlock)]
    assert (thinking.text, thinking.vendor) == ("Paris is the capital.", prefix)
    assert cass.requests[0].uri.startswith(SC[f"{prefix}-text"].host[0])
    run, cass = replay(SC[f"{prefix}-tools"], cassette, monkeypatch)
    assert run.output == "Sunny, 22C in Paris."
    tool = bodies(cass)[1]["messages"][-1]
    assert tool == {"role": "tool", "tool_call_id": "call_doc_1", "content": "Sunny, 22C in Paris"}
