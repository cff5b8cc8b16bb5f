"""Named provider instances and built-in profiles side by side in one Runtime.

Each service is its own loopback server; the checks are on what each one
received (path, key, body) and on what the run made of the answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from compat_scenarios import stream_events
from llmport import ConfigError, Runtime, UnsupportedFeatureError
from llmport.controls.limits import Limit
from llmport.controls.retry import Backoff
from llmport.messages.types import ThinkingBlock
from llmport.provider.config import Config, load_config
from llmport.provider.instances import with_instances
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_openai.compat import CompatStream
from llmport_openai.profiles import PROFILES
from support.api_modes import run_via

WAYS = [("sync", False), ("async", False), ("sync", True), ("async", True)]
IDS = ["run", "arun", "stream", "astream"]
OPENAI_KEY = "sk-fake-openai-only-for-openai-0123456789"
GROQ_KEY = "gsk_fake-groq-only-for-groq-0123456789"


def completion(text: str, model: str, **message: Any) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{model}",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text, **message},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
    }


def reply(text: str, model: str, stream: bool, **message: Any) -> Reply:
    if not stream:
        return Reply(json=completion(text, model, **message))
    reasoning = [{"reasoning": message["reasoning"]}] if message.get("reasoning") else []
    usage = {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
    return Reply(sse=stream_events(model, reasoning, [text], usage))


def auth(server: LoopbackServer, index: int = 0) -> str | None:
    headers = {k.lower(): v for k, v in server.requests[index].headers.items()}
    return headers.get("authorization")


@pytest.fixture
def servers() -> Iterator[dict[str, LoopbackServer]]:
    made = {name: LoopbackServer().start() for name in ("openai", "ollama", "groq")}
    yield made
    for server in made.values():
        server.stop()


def three(servers: dict[str, LoopbackServer], **kw: Any) -> Runtime:
    return Runtime(
        providers={
            "openai": {"base_url": servers["openai"].url + "/v1", "api_key": OPENAI_KEY},
            "ollama": {"base_url": servers["ollama"].url + "/v1"},
            "groq": {"base_url": servers["groq"].url + "/openai/v1"},
        },
        config=Config(),
        backoff=Backoff.none(),
        **kw,
    )


@pytest.mark.parametrize("way", WAYS, ids=IDS)
async def test_openai_ollama_and_groq_in_one_conversation(
    way: tuple[str, bool], servers: dict[str, LoopbackServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    mode, stream = way
    monkeypatch.setenv("GROQ_API_KEY", GROQ_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)  # must reach OpenAI alone
    servers["openai"].replies.append(reply("Paris.", "gpt-4o-mini", stream))
    servers["ollama"].replies.append(
        reply("About 2.1 million.", "qwen3:0.6b", stream, reasoning="Paris proper, 2.1M.")
    )
    servers["groq"].replies.append(reply("Yes, the Seine.", "llama-3.3-70b-versatile", stream))
    with three(servers) as rt:
        one = await run_via(
            mode, rt, "Capital of France?", model="openai:gpt-4o-mini", stream=stream
        )
        two = await run_via(
            mode, rt, "Its population?", model="ollama:qwen3:0.6b", history=one.messages,
            stream=stream,
        )  # fmt: skip
        three_ = await run_via(
            mode, rt, "A river?", model="groq:llama-3.3-70b-versatile", history=two.messages,
            stream=stream,
        )  # fmt: skip
    assert [one.text, two.text, three_.text] == ["Paris.", "About 2.1 million.", "Yes, the Seine."]
    assert [one.model, two.model, three_.model] == [
        "openai:gpt-4o-mini",
        "ollama:qwen3:0.6b",
        "groq:llama-3.3-70b-versatile",
    ]
    # Each service got its own path and key; OpenAI's key went to OpenAI only.
    assert servers["openai"].requests[0].path == "/v1/chat/completions"
    assert servers["groq"].requests[0].path == "/openai/v1/chat/completions"
    assert auth(servers["openai"]) == f"Bearer {OPENAI_KEY}"
    assert auth(servers["groq"]) == f"Bearer {GROQ_KEY}"
    assert auth(servers["ollama"]) == "Bearer unused"
    # Ollama's reasoning is a ThinkingBlock of "ollama": never sent to Groq, and said so.
    thinking = [b for b in two.messages[-1].blocks if isinstance(b, ThinkingBlock)]
    assert thinking and thinking[0].vendor == "ollama"
    groq_body = servers["groq"].requests[0].json()
    assert [m["role"] for m in groq_body["messages"]] == ["user", "assistant"] * 2 + ["user"]
    assert all("reasoning" not in m for m in groq_body["messages"])
    assert [d.vendor for d in three_.dropped] == ["ollama"]


@pytest.mark.parametrize("way", WAYS, ids=IDS)
async def test_fallback_from_groq_to_ollama(
    way: tuple[str, bool], servers: dict[str, LoopbackServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    mode, stream = way
    monkeypatch.setenv("GROQ_API_KEY", GROQ_KEY)
    busy = Reply(status=503, json={"error": {"message": "over capacity", "type": "internal"}})
    servers["groq"].replies += [busy, busy]
    servers["ollama"].replies.append(reply("from ollama", "qwen3:0.6b", stream))
    with three(
        servers, model=["groq:llama-3.3-70b-versatile", "ollama:qwen3:0.6b"], max_retries=2
    ) as rt:
        result = await run_via(mode, rt, "hi", stream=stream)
    assert result.text == "from ollama" and result.model == "ollama:qwen3:0.6b"
    assert [f.model for f in result.failures] == ["groq:llama-3.3-70b-versatile"] * 2
    assert len(servers["groq"].requests) == 2 and len(servers["ollama"].requests) == 1


# -- named instances ------------------------------------------------------------------------


def test_named_instance_of_a_profile_has_its_own_key_client_and_name(
    servers: dict[str, LoopbackServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", GROQ_KEY)
    monkeypatch.setenv("TEAM_GROQ_KEY", "gsk_fake-team-key-0123456789")
    servers["groq"].replies += [
        Reply(json=completion("a", "m", reasoning="r")),
        Reply(json=completion("b", "m")),
    ]
    url = servers["groq"].url + "/openai/v1"
    rt = Runtime(
        providers={
            "groq": {"base_url": url},
            "team": {"plugin": "groq", "base_url": url, "api_key_env": "TEAM_GROQ_KEY"},
        },
        config=Config(),
    )
    with rt:
        team = rt.run("x", model="team:openai/gpt-oss-120b")
        plain = rt.run("y", model="groq:openai/gpt-oss-120b")
        team_provider, plain_provider = rt.route("team:m")[0], rt.route("groq:m")[0]
    assert team.model == "team:openai/gpt-oss-120b" and plain.text == "b"
    assert auth(servers["groq"], 0) == "Bearer gsk_fake-team-key-0123456789"
    assert auth(servers["groq"], 1) == f"Bearer {GROQ_KEY}"
    assert team_provider.name == "team" and plain_provider.name == "groq"
    assert team_provider.clients is not plain_provider.clients
    (thinking,) = [b for b in team.messages[-1].blocks if isinstance(b, ThinkingBlock)]
    assert thinking.vendor == "team"
    # The capability profile is the one it was made from (gpt-oss reasons on Groq).
    assert team_provider.capabilities("openai/gpt-oss-120b").reasoning


def test_instance_of_openai_never_sends_the_openai_key(
    servers: dict[str, LoopbackServer], monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    (tmp_path / "llmport.toml").write_text(
        f'[providers.local]\nplugin = "openai"\nbase_url = "{servers["ollama"].url}/v1"\n'
        'aliases = { small = "qwen3:0.6b" }\n'
    )
    servers["ollama"].replies.append(Reply(json=completion("ok", "qwen3:0.6b")))
    with Runtime(config=load_config(tmp_path, env={})) as rt:
        result = rt.run("hi", model="small")
    assert result.model == "local:qwen3:0.6b"
    assert auth(servers["ollama"]) == "Bearer unused"
    assert servers["ollama"].requests[0].json()["model"] == "qwen3:0.6b"


def test_instance_key_variable_unset_is_a_config_error_naming_it(
    servers: dict[str, LoopbackServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    rt = Runtime(
        providers={"x": {"plugin": "openai", "api_key_env": "X_KEY", "base_url": "http://h/v1"}},
        config=Config(),
    )
    with pytest.raises(ConfigError, match="X_KEY") as caught:
        rt.run("hi", model="x:m")
    assert OPENAI_KEY not in repr(caught.value)


def test_a_profile_without_its_key_refuses_and_never_uses_openai_s(
    servers: dict[str, LoopbackServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    rt = Runtime(providers={"groq": {"base_url": servers["groq"].url + "/openai/v1"}})
    with pytest.raises(ConfigError, match="GROQ_API_KEY"):
        rt.run("hi", model="groq:llama-3.3-70b-versatile")
    assert servers["groq"].requests == []


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_an_instance_without_its_own_base_url_reads_the_profile_key_for_the_profile_host(
    profile: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No base_url of its own: the requests go to the service's host, so its key goes too."""
    variable = PROFILES[profile].key_env
    monkeypatch.setenv(variable, "fake-profile-key-0123456789")
    rt = Runtime(providers={"mine": {"plugin": profile}}, config=Config())
    provider = rt.route("mine:m")[0]
    base_url, key = provider.endpoint()
    assert (base_url, key) == (PROFILES[profile].base_url, "fake-profile-key-0123456789")
    moved = Runtime(providers={"mine": {"plugin": profile, "base_url": "http://h/v1"}})
    assert moved.route("mine:m")[0].endpoint() == ("http://h/v1", "unused")


def test_unknown_plugin_or_own_name_is_a_config_error() -> None:
    table = Runtime(config=Config()).plugins.providers()
    with pytest.raises(ConfigError, match="registered"):
        with_instances(table, {"x": {"plugin": "nope"}})
    with pytest.raises(ConfigError, match="name of its own"):
        with_instances(table, {"groq": {"plugin": "groq"}})


def test_instances_of_other_vendors_route_under_their_name() -> None:
    rt = Runtime(
        providers={"claude-eu": {"plugin": "anthropic", "api_key": "sk-ant-test-0123456789"}},
        limits={"claude-eu:*": Limit(rpm=10)},
        config=Config(),
    )
    provider, model, qualified, *_ = rt.route("claude-eu:claude-sonnet-4-5")
    assert (provider.name, model, qualified) == (
        "claude-eu",
        "claude-sonnet-4-5",
        "claude-eu:claude-sonnet-4-5",
    )
    assert provider.capabilities("claude-sonnet-4-5").reasoning  # Anthropic's table
    assert rt.gate("claude-eu:claude-sonnet-4-5") is not None  # limits see the instance
    assert "claude-eu" in with_instances(rt.plugins.providers(), rt.provider_settings)


# -- what a service rejects is refused before the wire --------------------------------------


@pytest.mark.parametrize(
    ("model", "kwargs", "what"),
    [
        ("groq:llama-3.3-70b-versatile", {"vendor": {"groq": {"logprobs": True}}}, "logprobs"),
        ("cerebras:llama-3.3-70b", {"vendor": {"cerebras": {"presence_penalty": 1}}}, "presence"),
        ("xai:grok-4", {"stop": ["\n"]}, "stop"),
        ("deepseek:deepseek-reasoner", {"vendor": {"deepseek": {"top_logprobs": 2}}}, "top_log"),
        ("groq:llama-3.3-70b-versatile", {"reasoning": "high"}, "reasoning"),
    ],
)
def test_rejected_fields_are_refused_typed_before_any_request(
    model: str, kwargs: dict[str, Any], what: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = model.split(":", 1)[0]
    monkeypatch.setenv(PROFILES[prefix].key_env, "test-key-0123456789")
    with LoopbackServer() as server:
        rt = Runtime(providers={prefix: {"base_url": server.url}}, config=Config())
        with pytest.raises(UnsupportedFeatureError, match=what):
            rt.run("hi", model=model, **kwargs)
        assert server.requests == []


def test_accepted_fields_are_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a service takes is never refused: xAI's non-reasoning models take stop."""
    monkeypatch.setenv("XAI_API_KEY", "xai-test-0123456789")
    with LoopbackServer([Reply(json=completion("ok", "grok-2"))]) as server:
        rt = Runtime(providers={"xai": {"base_url": server.url}}, config=Config())
        rt.run("hi", model="xai:grok-2", stop=["\n"], max_tokens=5)
        body = server.requests[0].json()
    assert body["stop"] == ["\n"] and body["max_completion_tokens"] == 5


def test_max_tokens_field_follows_the_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISTRAL_API_KEY", "mistral-test-0123456789")
    with LoopbackServer([Reply(json=completion("ok", "m"))]) as server:
        rt = Runtime(providers={"mistral": {"base_url": server.url}}, config=Config())
        rt.run("hi", model="mistral:mistral-large-latest", max_tokens=7)
    assert server.requests[0].json()["max_tokens"] == 7


def test_batch_only_where_the_service_has_one(monkeypatch: pytest.MonkeyPatch) -> None:
    rt = Runtime(config=Config())
    with pytest.raises(UnsupportedFeatureError, match="batch"):
        rt.batch([{"custom_id": "a", "content": "hi"}], model="ollama:qwen3:0.6b")
    monkeypatch.setenv("GROQ_API_KEY", GROQ_KEY)
    assert rt.route("groq:m")[0].batch_backend() is not None


# -- <think> tags split across stream chunks -------------------------------------------------


def test_think_tags_split_across_chunks() -> None:
    stream = CompatStream(PROFILES["huggingface"], None, "huggingface")
    pieces = ["<thi", "nk>\nHmm", " ok.</th", "ink>\n\nHel", "lo!"]
    thinking, text = [], []
    for piece in pieces:
        chunk = {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": piece}}]}
        for event in stream.feed(chunk):
            (thinking if event.kind == "thinking_delta" else text).append(event.text)
    assert "".join(thinking) == "\nHmm ok." and "".join(text) == "Hello!"


def test_the_docs_table_lists_every_profile() -> None:
    from compat_scenarios import SAMPLES

    page = (SAMPLES.parents[2] / "docs" / "providers" / "openai-compatible.md").read_text()
    rows = {line.split("|")[2].strip(): line for line in page.splitlines() if "| `" in line}
    for profile in PROFILES.values():
        row = rows.get(f"`{profile.prefix}:`")
        assert row is not None, f"no docs row for {profile.prefix}"
        assert f"`{profile.key_env}`" in row and profile.base_url in row


# -- error bodies and retry classes -----------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "retried"),
    [
        # https://console.groq.com/docs/errors: 498 Flex Tier Capacity Exceeded, retry later
        (498, {"error": {"message": "Flex tier capacity exceeded", "type": "capacity"}}, True),
        (429, {"error": {"message": "Rate limit reached", "type": "requests"}}, True),
        (401, {"error": {"message": "Invalid API Key", "code": "invalid_api_key"}}, False),
    ],
)
def test_groq_error_statuses_and_their_retry_class(
    status: int, body: dict[str, Any], retried: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", GROQ_KEY)
    replies = [Reply(status=status, json=body), Reply(json=completion("ok", "m"))]
    with LoopbackServer(replies) as server:
        rt = Runtime(
            providers={"groq": {"base_url": server.url + "/openai/v1"}},
            config=Config(),
            backoff=Backoff.none(),
            max_retries=2,
        )
        if retried:
            assert rt.run("hi", model="groq:m").text == "ok"
        else:
            with pytest.raises(Exception) as caught:
                rt.run("hi", model="groq:m")
            assert GROQ_KEY not in repr(caught.value)
        assert len(server.requests) == (2 if retried else 1)


def test_openrouter_402_is_permanent(monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenRouter's 402 (no credits left) is not retried: waiting adds no credit."""
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-test-0123456789")
    body = {"error": {"code": 402, "message": "Insufficient credits"}}
    with LoopbackServer([Reply(status=402, json=body)]) as server:
        rt = Runtime(
            providers={"openrouter": {"base_url": server.url}},
            config=Config(),
            backoff=Backoff.none(),
            max_retries=3,
        )
        with pytest.raises(Exception, match="Insufficient credits"):
            rt.run("hi", model="openrouter:openai/gpt-4o-mini")
        assert len(server.requests) == 1


# -- what goes back, and what is left out ---------------------------------------------------


def test_deepseek_sends_reasoning_content_back_in_a_tool_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-fake-deepseek-0123456789abcdef")
    call = {
        "id": "call_0",
        "type": "function",
        "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
    }
    first = completion("", "deepseek-reasoner", reasoning_content="Need the tool.")
    first["choices"][0]["message"]["tool_calls"] = [call]
    first["choices"][0]["finish_reason"] = "tool_calls"
    replies = [Reply(json=first), Reply(json=completion("Sunny.", "deepseek-reasoner"))]

    def weather(city: str) -> str:
        """Weather of a city."""
        return "sunny"

    with LoopbackServer(replies) as server:
        rt = Runtime(providers={"deepseek": {"base_url": server.url}}, config=Config())
        assert rt.run("Paris?", model="deepseek:deepseek-reasoner", tools=[weather]).text == (
            "Sunny."
        )
        assistant = server.requests[1].json()["messages"][1]
    assert assistant["reasoning_content"] == "Need the tool."
    assert assistant["tool_calls"][0]["id"] == "call_0"


def test_cerebras_gets_no_parallel_tool_calls_and_ollama_no_strict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CEREBRAS_API_KEY", "csk-test-0123456789")

    def weather(city: str) -> str:
        """Weather of a city."""
        return "sunny"

    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    with LoopbackServer([Reply(json=completion('{"city": "Paris"}', "m"))] * 2) as server:
        rt = Runtime(
            providers={"cerebras": {"base_url": server.url}, "ollama": {"base_url": server.url}},
            config=Config(),
        )
        rt.run("hi", model="cerebras:llama-3.3-70b", tools=[weather])
        rt.run("hi", model="ollama:qwen3:0.6b", response_format=schema)
        cerebras, ollama = (r.json() for r in server.requests)
    assert "parallel_tool_calls" not in cerebras and cerebras["tools"]
    assert "strict" not in ollama["response_format"]["json_schema"]


def test_llmport_models_lists_named_instances(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from llmport.cli.main import main

    (tmp_path / "llmport.toml").write_text('[providers.team-groq]\nplugin = "groq"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["models", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)

    def rows_of(provider: str) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in r.items() if k not in ("provider", "aliases")}
            for r in records
            if r["provider"] == provider
        ]

    assert rows_of("team-groq") and rows_of("team-groq") == rows_of("groq")
    assert [r["model"] for r in rows_of("groq")].count("*") == 1


def test_a_named_instance_is_priced_as_the_provider_it_came_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", GROQ_KEY)
    model = "llama-3.3-70b-versatile"
    with LoopbackServer([Reply(json=completion("ok", model))] * 2) as server:
        url = server.url + "/openai/v1"
        rt = Runtime(
            providers={"groq": {"base_url": url}, "team": {"plugin": "groq", "base_url": url}},
            config=Config(),
        )
        team = rt.run("hi", model=f"team:{model}").usage.cost
        groq = rt.run("hi", model=f"groq:{model}").usage.cost
    assert groq is not None and team == groq


def test_openrouter_streamed_reasoning_details_go_back_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The documented stream: ``reasoning`` text plus ``reasoning_details`` pieces, the
    signature last (https://openrouter.ai/docs/use-cases/reasoning-tokens)."""
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-test-0123456789")
    fmt = "anthropic-claude-v1"

    def detail(**fields: str) -> dict[str, Any]:
        return {
            "reasoning_details": [{"type": "reasoning.text", **fields, "format": fmt, "index": 0}]
        }

    pieces = [
        {"reasoning": "Say ", **detail(text="Say ")},
        {"reasoning": "ok.", **detail(text="ok.")},
        detail(signature="c2ln"),
    ]
    usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    replies = [
        Reply(sse=stream_events("anthropic/claude-sonnet-4.5", pieces, ["ok"], usage)),
        Reply(json=completion("fine", "anthropic/claude-sonnet-4.5")),
    ]
    with LoopbackServer(replies) as server:
        rt = Runtime(providers={"openrouter": {"base_url": server.url}}, config=Config())
        model = "openrouter:anthropic/claude-sonnet-4.5"
        final = list(rt.stream("Reply ok", model=model, reasoning="high"))[-1]
        rt.run("again", model=model, history=final.result.messages)
        assistant = server.requests[1].json()["messages"][1]
    assert assistant["reasoning"] == "Say ok."
    assert assistant["reasoning_details"] == [
        {
            "type": "reasoning.text",
            "text": "Say ok.",
            "format": fmt,
            "index": 0,
            "signature": "c2ln",
        }
    ]


def test_the_session_dag_records_the_instance_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from llmport import Session, agentic_function

    monkeypatch.setenv("GROQ_API_KEY", GROQ_KEY)
    with LoopbackServer([Reply(json=completion("ok", "m"))]) as server:
        url = server.url + "/openai/v1"
        rt = Runtime(providers={"team": {"plugin": "groq", "base_url": url}}, config=Config())

        @agentic_function
        def ask() -> str:
            """Ask once."""
            return str(rt.exec("hi", model="team:llama-3.3-70b-versatile"))

        with Session() as session:
            assert ask() == "ok"
    (llm,) = [n for n in session.nodes() if n.kind == "llm"]
    assert llm.name == "team:llama-3.3-70b-versatile"
