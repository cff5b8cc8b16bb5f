"""Deferred tools and tool search on every target.

* Where the vendor has tool search (OpenAI Responses, Anthropic), a
  ``Tool(defer_loading=True)`` is sent with ``defer_loading: true`` and the
  vendor's tool search tool is added when the caller did not offer one.
* Elsewhere deferral is only a hint: the tool is sent like any other (no
  ``defer_loading``, no search tool), and the run works.
* ``NativeTool("tool_search")`` where the vendor has no tool search is refused
  typed, before any request.

Exec and async exec, non-streamed and streamed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from llmport import NativeTool, Runtime, Tool, UnsupportedFeatureError
from llmport.testing.loopback import LoopbackServer
from support.api_modes import MODES, run_via
from wire import TARGETS, Wire, raised

Make = Callable[..., Runtime]
#: Claude on Vertex AI takes every Messages API option (Anthropic, "Vertex AI").
SEARCHING = {"openai-responses", "anthropic", "anthropic-vertex"}
#: The search tool each searching vendor gets when the caller names none.
SEARCH_TOOL = {
    "openai-responses": {"type": "tool_search"},
    "anthropic": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "anthropic-vertex": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
}


def lookup(word: str) -> str:
    return f"{word}: a word"


def deferred() -> Tool:
    schema = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}
    return Tool.from_schema("lookup", "Look a word up.", schema, lookup, defer_loading=True)


def _reply(wire: Wire, stream: bool) -> Any:
    return wire.stream_text_reply(["fine"]) if stream else wire.text_reply("fine")


@pytest.mark.parametrize("stream", [False, True], ids=["exec", "stream"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", TARGETS, ids=str)
async def test_a_deferred_tool_is_deferred_where_the_vendor_searches_and_plain_elsewhere(
    wire: Wire, mode: str, stream: bool, runtime: Make
) -> None:
    with LoopbackServer([_reply(wire, stream)]) as server:
        result = await run_via(mode, runtime(wire, server), "hi", tools=[deferred()], stream=stream)
        assert len(server.requests) == 1
    assert result.output == "fine"
    sent = server.requests[0]
    if wire.id in SEARCHING:
        tools = sent.json()["tools"]
        entry = next(t for t in tools if t.get("name") == "lookup")
        assert entry["defer_loading"] is True
        assert SEARCH_TOOL[wire.id] in tools
    else:
        assert b"lookup" in sent.body or wire.id.startswith("callonly")
        assert b"defer_loading" not in sent.body
        assert b"tool_search" not in sent.body


@pytest.mark.parametrize("wire", [w for w in TARGETS if w.id in SEARCHING], ids=str)
async def test_a_named_tool_search_is_not_added_twice(wire: Wire, runtime: Make) -> None:
    with LoopbackServer([wire.text_reply("fine")]) as server:
        await run_via(
            "sync", runtime(wire, server), "hi", tools=[deferred(), NativeTool("tool_search")]
        )
    tools = server.requests[0].json()["tools"]
    assert [t for t in tools if "tool_search" in str(t.get("type"))] == [SEARCH_TOOL[wire.id]]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "wire",
    [w for w in TARGETS if w.id not in SEARCHING and not w.id.startswith("callonly")],
    ids=str,
)
async def test_tool_search_is_refused_before_any_request_where_the_vendor_has_none(
    wire: Wire, mode: str, runtime: Make
) -> None:
    with LoopbackServer([wire.text_reply("never")]) as server:
        err = await raised(
            run_via(
                mode, runtime(wire, server), "hi", tools=[deferred(), NativeTool("tool_search")]
            )
        )
        sent = len(server.requests)
    assert isinstance(err, UnsupportedFeatureError), f"got {err!r}"
    assert "tool_search" in str(err)
    assert sent == 0
