"""``ContextPolicy(strategy="vendor")`` on every target.

On Anthropic the request asks for context management (``context_management``
with ``clear_tool_uses_20250919``, and ``clear_thinking_20251015`` first when
thinking is on, under the ``context-management-2025-06-27`` beta) and is sent
whole: nothing is trimmed locally. Every other target trims the oldest turns
as ``strategy="trim"`` does. Exec, async exec and stream, at the wire.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from llmport import ContextPolicy, Runtime
from llmport.messages.types import Message, TextBlock
from llmport.testing.loopback import LoopbackServer, Reply
from support.api_modes import MODES, run_via
from wire import TARGETS, Wire

Make = Callable[..., Runtime]
#: Claude on Vertex AI takes every Messages API option (Anthropic, "Vertex AI").
EDITING = {"anthropic", "anthropic-vertex"}
OLDEST = "OLDEST-TURN-MARKER"
POLICY = ContextPolicy(strategy="vendor", max_tokens=300, keep_last=2)


def history() -> list[Message]:
    """An early turn far over the policy's 300 tokens, then a short exchange."""
    return [
        Message("user", (TextBlock(OLDEST + " filler" * 400),)),
        Message("assistant", (TextBlock("ok"),)),
        Message("user", (TextBlock("second question"),)),
        Message("assistant", (TextBlock("second answer"),)),
    ]


async def _sent(wire: Wire, mode: str, stream: bool, runtime: Make, **kwargs: Any) -> Any:
    reply = wire.stream_text_reply(["fine"]) if stream else wire.text_reply("fine")
    with LoopbackServer([reply]) as server:
        result = await run_via(
            mode,
            runtime(wire, server),
            "now",
            history=history(),
            context_policy=POLICY,
            stream=stream,
            **kwargs,
        )
        assert len(server.requests) == 1
    assert result.output == "fine"
    return server.requests[0]


CLEAR_TOOL_USES = {
    "type": "clear_tool_uses_20250919",
    "trigger": {"type": "input_tokens", "value": 300},
    "keep": {"type": "tool_uses", "value": 2},
}


@pytest.mark.parametrize("stream", [False, True], ids=["exec", "stream"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", TARGETS, ids=str)
async def test_vendor_editing_on_anthropic_and_trimming_elsewhere(
    wire: Wire, mode: str, stream: bool, runtime: Make
) -> None:
    sent = await _sent(wire, mode, stream, runtime)
    if wire.id in EDITING:
        body = sent.json()
        assert body["context_management"] == {"edits": [CLEAR_TOOL_USES]}
        assert "context-management-2025-06-27" in sent.headers.get("anthropic-beta", "")
        assert OLDEST.encode() in sent.body, "the vendor edits: nothing is trimmed locally"
        assert len(body["messages"]) == 5
    else:
        assert b"context_management" not in sent.body
        assert OLDEST.encode() not in sent.body, "no vendor editing here: trimmed locally"
        assert b"second question" in sent.body or wire.id.startswith("callonly")


@pytest.mark.parametrize("stream", [False, True], ids=["exec", "stream"])
@pytest.mark.parametrize("mode", MODES)
async def test_thinking_is_cleared_first_when_thinking_is_on(
    mode: str, stream: bool, runtime: Make
) -> None:
    wire = next(w for w in TARGETS if w.id == "anthropic")
    sent = await _sent(wire, mode, stream, runtime, reasoning={"budget_tokens": 1024})
    clear_thinking = {
        "type": "clear_thinking_20251015",
        "keep": {"type": "thinking_turns", "value": 2},
    }
    assert sent.json()["context_management"] == {"edits": [clear_thinking, CLEAR_TOOL_USES]}


def test_vendor_is_a_strategy() -> None:
    from llmport.errors import OptionError

    assert ContextPolicy(strategy="vendor").strategy == "vendor"
    with pytest.raises(OptionError, match="'vendor'"):
        ContextPolicy(strategy="server")  # type: ignore[arg-type]


async def test_the_count_asks_for_the_same_context_editing(runtime: Make) -> None:
    wire = next(w for w in TARGETS if w.id == "anthropic")
    with LoopbackServer([wire.text_reply("fine")]) as server:
        runtime(wire, server).exec("now", history=history(), context_policy=POLICY)
        sent = server.requests[0]
    with LoopbackServer([Reply(json={"input_tokens": 42})]) as server:
        count = runtime(wire, server).count_tokens("now", history=history(), context_policy=POLICY)
        counted = server.requests[0]
    assert count.input_tokens == 42 and count.source == "vendor"
    assert counted.json()["context_management"] == sent.json()["context_management"]
    assert "context-management-2025-06-27" in counted.headers.get("anthropic-beta", "")
