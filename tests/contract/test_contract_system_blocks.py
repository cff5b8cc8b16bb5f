"""``system=`` given as blocks is sent as blocks, on every vendor.

Each vendor's own system field keeps one entry per block: Anthropic ``system``
blocks, Gemini ``systemInstruction.parts``, Bedrock ``system`` blocks, and an
OpenAI system message of ``text`` / ``input_text`` parts (``instructions`` is one
string: it cannot keep a boundary). A system prompt given as one string is sent
as that string. Exec, async exec and stream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from llmport import Runtime
from llmport.testing.loopback import LoopbackServer
from support.api_modes import MODES, run_via
from wire import TARGETS, Wire

Make = Callable[..., Runtime]
BLOCKS = ["You are terse.", "Answer in French."]

#: Vendors whose wire has a system field of blocks (the ``callonly`` plugins see the Request).
VENDORS = [w for w in TARGETS if not w.id.startswith("callonly")]


def system_texts(wire: Wire, body: dict[str, Any]) -> list[str] | str:
    """The system prompt as the vendor received it: its blocks' texts, or one string."""
    if wire.api == "anthropic" or wire.id == "bedrock":
        system = body["system"]  # Bedrock's is always a list: one string is one block
        if isinstance(system, str):
            return system
        texts = [b["text"] for b in system if "text" in b]
        return texts if len(texts) > 1 else texts[0]
    if wire.api == "gemini":
        parts = body["systemInstruction"]["parts"]
        return [p["text"] for p in parts] if len(parts) > 1 else parts[0]["text"]
    if wire.id == "openai-responses" and "instructions" in body:
        return str(body["instructions"])
    first = (body["input"] if wire.id == "openai-responses" else body["messages"])[0]
    assert first["role"] == "system", first
    content = first["content"]
    return content if isinstance(content, str) else [p["text"] for p in content]


async def _sent(wire: Wire, mode: str, runtime: Make, stream: bool, system: Any) -> Any:
    reply = wire.stream_text_reply(["fine"]) if stream else wire.text_reply("fine")
    with LoopbackServer([reply]) as server:
        result = await run_via(mode, runtime(wire, server), "hi", system=system, stream=stream)
    assert result.output == "fine"
    return system_texts(wire, server.requests[0].json())


@pytest.mark.parametrize("stream", [False, True], ids=["exec", "stream"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", VENDORS, ids=str)
async def test_system_blocks_are_sent_as_blocks(
    wire: Wire, mode: str, stream: bool, runtime: Make
) -> None:
    blocks = [{"type": "text", "text": text} for text in BLOCKS]
    assert await _sent(wire, mode, runtime, stream, blocks) == BLOCKS


@pytest.mark.parametrize("wire", VENDORS, ids=str)
async def test_a_system_string_is_sent_as_one_string(wire: Wire, runtime: Make) -> None:
    assert await _sent(wire, "sync", runtime, False, "You are terse.") == "You are terse."


async def test_the_joined_system_text_keeps_the_words_apart() -> None:
    """What a vendor taking one string would read: the blocks joined by a blank line."""
    from llmport.engine.inputs import system_setting

    text, blocks = system_setting([{"type": "text", "text": t} for t in BLOCKS], 1 << 20)
    assert text == "You are terse.\n\nAnswer in French."
    assert [b.text for b in blocks] == BLOCKS
