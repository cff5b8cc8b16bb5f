"""The OpenAI-compatible services' cassette scenarios, built from real recordings.

``samples/`` holds the third batch of wire samples (openai-compat-*, mistral,
openai-responses-compat-deepseek), each with its ``source`` block: real
traffic recorded by pydantic-ai's test suite (MIT). A scenario replays one
sample's responses, verbatim, to the calls that produced them; the request
llmport sends is compared with the recorded one by the tests (the fields
that differ on purpose are listed in :data:`NOT_SENT` and cassettes/README.md).

Streams: no stream of these services was recorded, so the ``*-stream``
scenarios serve events written from each service's documented chunk format
(``stream_events``) and say so.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmport import Runtime, Tool
from llmport.testing.loopback import Reply

SAMPLES = Path(__file__).resolve().parent / "samples"

#: Fields pydantic-ai's clients send that llmport does not (their defaults), per request.
NOT_SENT = ("n", "stream")


def sample(path: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SAMPLES / path).read_text())
    return data


def sample_replies(path: str) -> list[Reply]:
    """The sample's recorded responses, as the loopback server's replies."""
    out = []
    for it in sample(path)["interactions"]:
        resp = it["response"]
        headers = {"content-type": resp["headers"].get("content-type", "application/json")}
        out.append(Reply(status=resp["status"], json=resp["body"], headers=headers))
    return out


def sample_requests(path: str) -> list[dict[str, Any]]:
    return [it["request"]["body"] for it in sample(path)["interactions"]]


def sample_host(path: str) -> tuple[str, str]:
    """(scheme://host of the recording, the base path its client used)."""
    uri: str = sample(path)["interactions"][0]["request"]["uri"]
    scheme, _, rest = uri.partition("://")
    host, _, tail = rest.partition("/")
    base = ("/" + tail).rsplit("/chat/completions", 1)[0].rsplit("/responses", 1)[0]
    return f"{scheme}://{host}", base


# -- tools of the recorded scenarios ------------------------------------------------


def weather_tool() -> Tool:
    return Tool.from_schema(
        "get_weather",
        "Get the current weather for a city.",
        {
            "additionalProperties": False,
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "type": "object",
        },
        lambda city: f"Sunny, 22C in {city}",
    )


def temperature_tool() -> Tool:
    return Tool.from_schema(
        "get_temperature",
        "Get the current temperature in a city.",
        {
            "additionalProperties": False,
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "type": "object",
        },
        lambda city: "21.0",
        strict=True,
    )


def from_request(path: str, index: int = 0) -> list[Tool]:
    """The recorded request's tools, as llmport tools (run manually by the scenario)."""
    tools = []
    for entry in sample_requests(path)[index].get("tools") or ():
        fn = entry["function"]
        tools.append(
            Tool.from_schema(
                fn["name"],
                fn["description"],
                fn["parameters"],
                lambda **kw: "unused",
                strict=bool(fn.get("strict")),
            )
        )
    return tools


def last_user(path: str, index: int) -> str:
    text: str = sample_requests(path)[index]["messages"][-1]["content"]
    return text


# -- scenarios -------------------------------------------------------------------------


@dataclass
class Scenario:
    name: str  # cassettes/compat/<name>.yaml
    sample: str  # samples/<folder>/<file>.json; "" for a documented-format stream
    model: str
    #: Runs the scenario on a Runtime; returns what the tests check.
    run: Callable[[Runtime], Any]
    env: dict[str, str] = field(default_factory=dict)
    #: Provider settings beside the profile's defaults (the recording's base URL, if other).
    settings: dict[str, Any] = field(default_factory=dict)
    replies: list[Reply] = field(default_factory=list)
    host: tuple[str, str] = ("", "")
    how: str = ""

    @property
    def prefix(self) -> str:
        return self.model.split(":", 1)[0]

    @property
    def cassette(self) -> str:
        return f"compat/{self.name}.yaml"


def _text(content: str, **kw: Any) -> Callable[[Runtime], Any]:
    return lambda rt: rt.run(content, **kw)


def _manual(path: str, content: str, **kw: Any) -> Callable[[Runtime], Any]:
    """Tool calls answered by the scenario (``tool_execution="manual"``), as recorded."""

    def run(rt: Runtime) -> Any:
        first = rt.run(content, tools=from_request(path), tool_execution="manual", **kw)
        later = sample_requests(path)[1:]
        results = [first]
        for body in later:
            tool_msgs = [m for m in body["messages"] if m.get("role") == "tool"]
            if tool_msgs and results[-1].pending_tool_calls:
                values = {m["tool_call_id"]: m["content"] for m in tool_msgs}
                results.append(results[-1].continue_with(values))
            else:  # a retry prompt after a plain-text answer (ollama/tool-call.json)
                results.append(
                    rt.run(
                        body["messages"][-1]["content"],
                        history=results[-1].messages,
                        tools=from_request(path),
                        tool_execution="manual",
                        **kw,
                    )
                )
        return results

    return run


def _two_turns(first: str, second: str) -> Callable[[Runtime], Any]:
    def run(rt: Runtime) -> Any:
        one = rt.run(first)
        return [one, rt.run(second, history=one.messages)]

    return run


CITY = {
    "type": "json_schema",
    "json_schema": {
        "name": "CityLocation",
        "description": "A city and its country.",
        "schema": {
            "additionalProperties": False,
            "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
            "required": ["city", "country"],
            "type": "object",
        },
        "strict": True,
    },
}


def recorded() -> list[Scenario]:
    """One scenario per recorded sample file."""
    cross = "How do I cross the street?"
    rows = [
        Scenario(
            "groq-text",
            "openai-compat-groq/text.json",
            "groq:llama-3.3-70b-versatile",
            _text("What is the capital of France?", system="You are a helpful assistant."),
        ),
        Scenario(
            "groq-tools",
            "openai-compat-groq/tool-roundtrip.json",
            "groq:meta-llama/llama-4-scout-17b-16e-instruct",
            lambda rt: rt.run("What's the weather in Paris?", tools=[weather_tool()]),
        ),
        Scenario(
            "groq-structured",
            "openai-compat-groq/structured-output.json",
            "groq:openai/gpt-oss-120b",
            _text("What is the largest city in Mexico?", response_format=CITY),
        ),
        Scenario(
            "deepseek-reasoning",
            "openai-compat-deepseek/reasoning.json",
            "deepseek:deepseek-reasoner",
            _text(cross),
        ),
        Scenario(
            "deepseek-responses-text",
            "openai-responses-compat-deepseek/text.json",
            "deepseek-responses:deepseek-v4-flash",
            _text("What is the capital of France?"),
        ),
        Scenario(
            "deepseek-responses-tools",
            "openai-responses-compat-deepseek/tool-roundtrip.json",
            "deepseek-responses:deepseek-v4-flash",
            lambda rt: rt.run("What is the temperature in Tokyo?", tools=[temperature_tool()]),
        ),
        Scenario(
            "openrouter-text",
            "openai-compat-openrouter/text.json",
            "openrouter:google/gemini-2.0-flash-exp:free",
            _text("Tell me a joke.", system="Be helpful."),
        ),
        Scenario(
            "openrouter-tools",
            "openai-compat-openrouter/tool-roundtrip.json",
            "openrouter:google/gemini-2.5-flash",
            _manual(
                "openai-compat-openrouter/tool-roundtrip.json",
                last_user("openai-compat-openrouter/tool-roundtrip.json", 0),
                tool_choice="required",
            ),
        ),
        Scenario(
            "openrouter-reasoning",
            "openai-compat-openrouter/reasoning.json",
            "openrouter:anthropic/claude-sonnet-4.5",
            _text("Reply with the single word: ok", reasoning="high"),
        ),
        Scenario(
            "ollama-structured",
            "openai-compat-ollama/structured-output.json",
            "ollama:qwen3:0.6b",
            _text(
                "What is the capital of France?",
                response_format={
                    "type": "json_schema",
                    "json_schema": {
                        "name": "CityLocation",
                        "schema": sample_requests("openai-compat-ollama/structured-output.json")[0][
                            "response_format"
                        ]["json_schema"]["schema"],
                        "strict": False,
                    },
                },
            ),
        ),
        Scenario(
            "ollama-tools",
            "openai-compat-ollama/tool-call.json",
            "ollama:gpt-oss:20b",
            _manual("openai-compat-ollama/tool-call.json", "What is the capital of France?"),
            env={"OLLAMA_BASE_URL": "https://ollama.com/v1", "OLLAMA_API_KEY": "ollama-test"},
        ),
        Scenario(
            "cerebras-text",
            "openai-compat-cerebras/text.json",
            "cerebras:llama-3.3-70b",
            _text("What is 2 + 2?"),
        ),
        Scenario(
            "cerebras-reasoning",
            "openai-compat-cerebras/reasoning-multi-turn.json",
            "cerebras:gpt-oss-120b",
            _two_turns("What is 2 + 2? Think briefly first.", "Now add 3 to that."),
        ),
        Scenario(
            "mistral-text",
            "mistral/text.json",
            "mistral:mistral-large-latest",
            _text(
                "hello",
                top_p=1.0,
                vendor={"mistral": {"frequency_penalty": 0.25, "presence_penalty": 0.5}},
            ),
        ),
        Scenario(
            "mistral-tools",
            "mistral/tool-roundtrip.json",
            "mistral:mistral-large-latest",
            lambda rt: rt.run("What's the weather in Paris?", tools=[weather_tool()], top_p=1.0),
        ),
        Scenario(
            "mistral-reasoning",
            "mistral/reasoning.json",
            "mistral:mistral-small-latest",
            _text("What is 2+2? Reply with just the number.", reasoning="high", top_p=1.0),
        ),
        Scenario(
            "huggingface-text",
            "openai-compat-huggingface/text.json",
            "huggingface:deepseek-ai/DeepSeek-R1",
            _text("hello"),
            settings={"base_url": "https://router.huggingface.co/together/v1"},
        ),
        Scenario(
            "huggingface-tools",
            "openai-compat-huggingface/tool-call.json",
            "huggingface:deepseek-ai/DeepSeek-R1",
            _manual(
                "openai-compat-huggingface/tool-call.json",
                last_user("openai-compat-huggingface/tool-call.json", 0),
                tool_choice="required",
            ),
            settings={"base_url": "https://router.huggingface.co/together/v1"},
        ),
    ]
    for sc in rows:
        sc.replies = sample_replies(sc.sample)
        sc.host = sample_host(sc.sample)
        sc.how = f"replies: `wire-samples/{sc.sample}` verbatim"
    return rows


# -- streams: documented formats (no recording exists) ---------------------------------


def chunk(cid: str, model: str, delta: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, **extra}]
    return {"id": cid, "object": "chat.completion.chunk", "model": model, "choices": choices}


def stream_events(
    model: str, reasoning: list[dict[str, Any]], text: list[str], usage: dict[str, Any]
) -> list[Any]:
    """A Chat Completions stream: role, reasoning deltas, text deltas, finish, usage, [DONE]."""
    cid = "chatcmpl-compat-stream"
    data = [chunk(cid, model, {"role": "assistant", "content": ""})]
    data += [chunk(cid, model, delta) for delta in reasoning]
    data += [chunk(cid, model, {"content": piece}) for piece in text]
    data.append(chunk(cid, model, {}, finish_reason="stop"))
    data.append({**chunk(cid, model, None), "usage": usage})
    return [*({"data": d} for d in data), "[DONE]"]


def streamed() -> list[Scenario]:
    """Streams in each service's documented format (see the module docs)."""
    usage = {"prompt_tokens": 12, "completion_tokens": 9, "total_tokens": 21}
    text = ["The capital ", "of France ", "is Paris."]
    groq, deepseek = ("https://api.groq.com", "/openai/v1"), ("https://api.deepseek.com", "")
    ollama, openrouter = ("http://localhost:11434", "/v1"), ("https://openrouter.ai", "/api/v1")
    rows = [
        # https://console.groq.com/docs/reasoning (reasoning_format="parsed": delta.reasoning)
        ("groq-stream", "groq:openai/gpt-oss-120b", "reasoning", groq),
        # https://api-docs.deepseek.com/guides/reasoning_model (delta.reasoning_content)
        ("deepseek-stream", "deepseek:deepseek-reasoner", "reasoning_content", deepseek),
        # https://docs.ollama.com/api/openai-compatibility (delta.reasoning)
        ("ollama-stream", "ollama:qwen3:0.6b", "reasoning", ollama),
        # https://openrouter.ai/docs/use-cases/reasoning-tokens (delta.reasoning)
        ("openrouter-stream", "openrouter:anthropic/claude-sonnet-4.5", "reasoning", openrouter),
        # https://inference-docs.cerebras.ai/capabilities/reasoning (delta.reasoning)
        (
            "cerebras-stream",
            "cerebras:gpt-oss-120b",
            "reasoning",
            ("https://api.cerebras.ai", "/v1"),
        ),
    ]
    out = []
    for name, model, field_name, host in rows:
        reasoning = [{field_name: "Paris is "}, {field_name: "the capital."}]
        events = stream_events(model.split(":", 1)[1], reasoning, text, usage)
        out.append(
            Scenario(
                name,
                "",
                model,
                lambda rt: list(rt.stream("What is the capital of France?")),
                replies=[Reply(sse=events)],
                host=host,
                how=f"reply: written from the documented `delta.{field_name}` chunk format",
            )
        )
    # Hugging Face router, DeepSeek-R1: the reasoning inline, as the recorded text.json shows;
    # the tags split across chunks as a token stream splits them.
    tags = [
        "<thi",
        "nk>Paris is ",
        "the capital.</th",
        "ink>\n\nThe capital ",
        "of France is Paris.",
    ]
    out.append(
        Scenario(
            "huggingface-stream",
            "",
            "huggingface:deepseek-ai/DeepSeek-R1",
            lambda rt: list(rt.stream("What is the capital of France?")),
            replies=[Reply(sse=stream_events("deepseek-ai/DeepSeek-R1", [], tags, usage))],
            host=("https://router.huggingface.co", "/v1"),
            how="reply: the recorded `<think>` answer's format, streamed in OpenAI's chunk format",
        )
    )
    # https://docs.mistral.ai/capabilities/reasoning/: content chunks, thinking first.
    mistral = stream_events(
        "mistral-small-latest",
        [{"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "2+2=4."}]}]}],
        ["4"],
        usage,
    )
    out.append(
        Scenario(
            "mistral-stream",
            "",
            "mistral:mistral-small-latest",
            lambda rt: list(rt.stream("What is 2+2?", reasoning="high")),
            replies=[Reply(sse=mistral)],
            host=("https://api.mistral.ai", "/v1"),
            how="reply: written from Mistral's documented thinking-chunk format",
        )
    )
    return out


#: Services without any recording: (prefix, model, host, base path, reasoning field, document).
UNRECORDED = [
    ("vllm", "Qwen/Qwen3-8B", "http://localhost:8000", "/v1", "reasoning_content",
     "https://docs.vllm.ai/en/latest/features/reasoning_outputs.html"),
    ("lmstudio", "qwen/qwen3-8b", "http://localhost:1234", "/v1", "reasoning_content",
     "https://lmstudio.ai/docs/app/api/endpoints/openai"),
    ("xai", "grok-3-mini", "https://api.x.ai", "/v1", "reasoning_content",
     "https://docs.x.ai/docs/guides/reasoning"),
    ("together", "deepseek-ai/DeepSeek-R1", "https://api.together.xyz", "/v1", "reasoning",
     "https://docs.together.ai/docs/openai-api-compatibility"),
    ("fireworks", "accounts/fireworks/models/qwen3-235b-a22b", "https://api.fireworks.ai",
     "/inference/v1", "reasoning_content",
     "https://docs.fireworks.ai/tools-sdks/openai-compatibility"),
]  # fmt: skip


def documented_completion(model: str, field_name: str, **message: Any) -> dict[str, Any]:
    """A Chat Completions answer in OpenAI's documented shape, reasoning in ``field_name``."""
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-compat-doc",
        "object": "chat.completion",
        "created": 1760000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "message": {"role": "assistant", field_name: "Paris is the capital.", **message},
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 9, "total_tokens": 21},
    }


def documented() -> list[Scenario]:
    """Text, tools and a stream for each service without a recording (documented formats)."""
    out = []
    usage = {"prompt_tokens": 12, "completion_tokens": 9, "total_tokens": 21}
    call = {
        "id": "call_doc_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    for prefix, model, host, base, field_name, doc in UNRECORDED:
        how = f"reply: written from the documented format ({doc}), `{field_name}` reasoning"
        text = documented_completion(model, field_name, content="The capital of France is Paris.")
        tools = [
            Reply(json=documented_completion(model, field_name, content=None, tool_calls=[call])),
            Reply(json=documented_completion(model, field_name, content="Sunny, 22C in Paris.")),
        ]
        deltas = [{field_name: "Paris is "}, {field_name: "the capital."}]
        sse = stream_events(model, deltas, ["The capital ", "of France ", "is Paris."], usage)
        full = f"{prefix}:{model}"
        out += [
            Scenario(f"{prefix}-text", "", full, _text("What is the capital of France?"),
                     replies=[Reply(json=text)], host=(host, base), how=how),
            Scenario(f"{prefix}-tools", "", full,
                     lambda rt: rt.run("What's the weather in Paris?", tools=[weather_tool()]),
                     replies=tools, host=(host, base), how=how),
            Scenario(f"{prefix}-stream", "", full,
                     lambda rt: list(rt.stream("What is the capital of France?")),
                     replies=[Reply(sse=sse)], host=(host, base), how=how),
        ]  # fmt: skip
    return out


KEYS = {
    "groq": "GROQ_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "deepseek-responses": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "huggingface": "HF_TOKEN",
    "xai": "XAI_API_KEY",
    "together": "TOGETHER_API_KEY",
    "fireworks": "FIREWORKS_API_KEY",
}
FAKE_KEY = "compat-test-not-a-key"


def scenarios() -> dict[str, Scenario]:
    table = {sc.name: sc for sc in (*recorded(), *streamed(), *documented())}
    for sc in table.values():
        if sc.prefix in KEYS:
            sc.env.setdefault(KEYS[sc.prefix], FAKE_KEY)
    return table
