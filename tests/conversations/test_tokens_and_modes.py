"""Token counting and model info; output modes and the options the core normalises."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from conversation_helpers import WAY_IDS, WAYS, run, runtime
from llmport import (
    NativeTool,
    NotFoundError,
    OptionError,
    ProviderInfo,
    Reasoning,
    Tool,
    Toolset,
    UnsupportedFeatureError,
    hookimpl,
)
from llmport.messages.types import CacheControl, Request, Response, TextBlock, ToolCall, Usage
from llmport.provider.contract import Provider
from llmport.testing import ALL_INPUTS, Script, call_tools, respond

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


class Counting(Provider):
    """A vendor with a counting endpoint (or, with ``missing``, a compatible server without it)."""

    name = "counting"

    def __init__(self, settings: Any = None, info: Any = None) -> None:
        super().__init__(settings, info)
        self.counted: list[Request] = []

    def count_tokens(self, request: Request) -> int:
        if self.settings.get("missing"):
            raise NotFoundError("no such endpoint", provider=self.name, status=404)
        self.counted.append(request)
        return 42

    def _call(self, request: Request) -> Response:
        return Response(text="ok", usage=Usage(1, 1, requests=1))


class CountingPlugin:
    def __init__(self) -> None:
        self.instances: list[Counting] = []

    def make(self, settings: Any, info: Any) -> Counting:
        provider = Counting(settings, info)
        self.instances.append(provider)
        return provider

    @hookimpl
    def llmport_providers(self, register: Any) -> None:
        caps = replace(ALL_INPUTS, count_tokens=True, context_window=1000, max_output_tokens=99)
        register(ProviderInfo(prefix="counting", factory=self.make, default=caps))


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_count_tokens_asks_the_vendor_when_it_can(mode: str) -> None:
    plugin = CountingPlugin()
    rt = runtime(Script([]), plugin, model="counting:m")  # type: ignore[arg-type]
    tool = Tool("weather", "", CITY, lambda city: city)
    kwargs: dict[str, Any] = {"system": "be brief", "tools": [tool], "history": []}
    if mode == "sync":
        count = rt.count_tokens("hello", **kwargs)
    else:
        count = await rt.acount_tokens("hello", **kwargs)
    assert (count.input_tokens, count.exact, count.source) == (42, True, "vendor")
    sent = plugin.instances[0].counted[0]
    assert sent.system == "be brief" and [t.name for t in sent.tools] == ["weather"]
    assert sent.messages[-1].text == "hello"


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_count_tokens_estimates_without_an_endpoint(mode: str) -> None:
    plugin = CountingPlugin()
    rt = runtime(
        Script([]),
        plugin,  # type: ignore[arg-type]
        model="counting:m",
        providers={"counting": {"missing": True}},
    )
    count = rt.count_tokens("x" * 400) if mode == "sync" else await rt.acount_tokens("x" * 400)
    assert (count.exact, count.source) == (False, "estimate") and count.input_tokens == 100
    script = Script([])
    plain = runtime(script)  # capabilities without a counting endpoint
    assert plain.count_tokens("x" * 40).source == "estimate"
    assert script.requests == []


class Connected(Toolset):
    """A toolset holding a connection (as an MCP server does): the runtime must close it."""

    __slots__ = ("closed",)

    def __init__(self) -> None:
        super().__init__("connected", [Tool("lookup", "Look a city up.", CITY, lambda city: city)])
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_count_tokens_closes_a_connected_toolset_with_the_runtime() -> None:
    connected = Connected()
    rt = runtime(Script([]))
    count = rt.count_tokens("hello", tools=[connected])
    assert connected.closed == 0 and count.input_tokens > 0
    rt.close()
    assert connected.closed == 1


def test_model_info_comes_from_the_capability_tables_and_prices() -> None:
    plugin = CountingPlugin()
    rt = runtime(Script([]), plugin, model="counting:m")  # type: ignore[arg-type]
    info = rt.model_info()
    assert (info.provider, info.model, info.context_window, info.max_output_tokens) == (
        "counting",
        "m",
        1000,
        99,
    )
    assert {"count_tokens", "reasoning", "tools"} <= info.features and info.price is None
    priced = runtime(Script([], prefix="openai"), model="openai:gpt-4o").model_info()
    assert priced.price is not None and priced.price.input is not None
    assert priced.context_window == 128_000  # from genai-prices when the table has none


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_output_mode_tool_ends_the_run_at_the_output_tool(way: tuple[str, bool]) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    tool = Tool("weather", "", CITY, lambda city: f"sun in {city}")
    script = Script(
        [call_tools(("weather", {"city": "Oslo"})), call_tools(("answer", {"city": "Oslo"}))]
    )
    rt = runtime(script)
    result = await run(
        way,
        rt,
        "q",
        tools=[tool],
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": schema},
        },
        output_mode="tool",
    )
    assert result.value == {"city": "Oslo"} and json.loads(result.output) == {"city": "Oslo"}
    first = script.requests[0]
    assert [t.name for t in first.tools] == ["weather", "answer"]
    assert first.response_format is None and first.tool_choice == "required"
    assert result.messages[-1].tool_results[0].name == "answer"  # continuable


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_output_mode_prompted_puts_the_schema_in_the_system_prompt(
    way: tuple[str, bool],
) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    script = Script(['{"n": 3}'])
    rt = runtime(script)
    result = await run(
        way, rt, "q", system="be exact", response_format=schema, output_mode="prompted"
    )
    assert result.value == {"n": 3}
    sent = script.requests[0]
    assert sent.response_format is None
    assert sent.system is not None and sent.system.startswith("be exact")
    assert '"n"' in sent.system and "JSON schema" in sent.system


def test_output_mode_checks() -> None:
    script = Script([])
    rt = runtime(script)
    with pytest.raises(OptionError, match="output_mode applies to response_format"):
        rt.exec("q", output_mode="tool")
    with pytest.raises(OptionError, match="output_mode must be one of"):
        rt.exec("q", response_format={"type": "object"}, output_mode="json")
    caps = replace(ALL_INPUTS, native_structured_output=False)
    plain = Script([], prefix="plain", capabilities=caps)
    with pytest.raises(UnsupportedFeatureError, match='output_mode="native"'):
        runtime(plain).exec("q", response_format={"type": "object"}, output_mode="native")
    assert script.requests == [] and plain.requests == []


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_the_core_normalises_reasoning_cache_system_blocks_and_native_tools(
    way: tuple[str, bool],
) -> None:
    tool = Tool("weather", "", CITY, lambda city: city, cache=True)
    script = Script(["ok", "ok", "ok"])
    rt = runtime(script)
    await run(
        way,
        rt,
        [{"type": "text", "text": "doc", "cache": {"ttl": "1h"}}, "question"],
        system=[{"type": "text", "text": "rules", "cache": True}, "more rules"],
        tools=[tool, NativeTool("web_search", max_uses=2)],
        reasoning={"effort": "high", "summary": True},
    )
    sent = script.requests[0]
    assert sent.reasoning == Reasoning(effort="high", summary="auto")
    assert "reasoning" not in sent.options and "reasoning_effort" not in sent.options
    assert sent.system == "rules\n\nmore rules"  # the blocks joined: words never run together
    assert sent.system_blocks[0].cache == CacheControl() and sent.system_blocks[1].cache is None
    assert sent.messages[0].blocks[0].cache == CacheControl("1h")  # type: ignore[union-attr]
    assert sent.tools[0].cache == CacheControl()
    assert sent.native_tools == [NativeTool("web_search", max_uses=2)]

    await run(way, rt, "q", tools=[tool], system="s", cache={"auto": True, "ttl": "5m"})
    auto = script.requests[1]
    mark = CacheControl("5m")
    assert auto.tools[-1].cache == CacheControl()  # an explicit mark is kept
    assert auto.system_blocks[-1].cache == mark
    assert auto.messages[-1].blocks[-1].cache == mark  # type: ignore[union-attr]

    await run(way, rt, "q", reasoning_effort="low")
    assert script.requests[2].reasoning == Reasoning(effort="low")


def test_features_a_model_lacks_are_rejected_before_any_request() -> None:
    bare = replace(ALL_INPUTS, reasoning=False, caching=False, native_tool_kinds=frozenset())
    script = Script([], prefix="bare", capabilities=bare)
    rt = runtime(script)
    with pytest.raises(UnsupportedFeatureError, match="reasoning"):
        rt.exec("q", reasoning="high")
    with pytest.raises(UnsupportedFeatureError, match="prompt caching"):
        rt.exec([{"type": "text", "text": "q", "cache": True}])
    with pytest.raises(UnsupportedFeatureError, match="native tool 'code_execution'"):
        rt.exec("q", tools=[NativeTool("code_execution")])
    with pytest.raises(OptionError, match="unknown native tool"):
        rt.exec("q", tools=[NativeTool("teleport")])
    with pytest.raises(OptionError, match="reasoning must be one of"):
        rt.exec("q", reasoning="enormous")
    with pytest.raises(OptionError, match="not both"):
        rt.exec("q", reasoning="high", reasoning_effort="low")
    with pytest.raises(OptionError, match="cache"):
        rt.exec("q", cache="sometimes")
    assert script.requests == []


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_thinking_citations_and_server_tools_reach_the_result(way: tuple[str, bool]) -> None:
    from llmport import Citation, ServerToolCall, ServerToolResult, ThinkingBlock

    def answer(request: Request) -> Response:
        blocks = [
            ThinkingBlock("plan", signature="s", vendor="scripted"),
            ServerToolCall("srv", "web_search", {"q": "x"}, "scripted"),
            ServerToolResult("srv", "web_search", [{"url": "https://a.b"}], "scripted"),
            TextBlock("Paris.", citations=(Citation("url", url="https://a.b", start=0, end=5),)),
        ]
        return Response(text="Paris.", blocks=blocks, usage=Usage(1, 1, requests=1))

    script = Script([respond(answer)])
    rt = runtime(script)
    result = await run(way, rt, "q")
    assert result.thinking == "plan" and result.text == "Paris."
    blocks = result.messages[-1].blocks
    assert [b.type for b in blocks] == [
        "thinking",
        "server_tool_call",
        "server_tool_result",
        "text",
    ]
    assert blocks[-1].citations[0].url == "https://a.b"  # type: ignore[union-attr]
    _ = ToolCall  # (tool calls are covered by the tool-loop tests)
