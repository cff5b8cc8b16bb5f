"""Streamed text blocks keep their boundaries (``TextDelta.key``).

An answer of two text blocks, whole or streamed, gives the same assistant
message block for block, on every vendor whose answers can hold two text
blocks: the stream's text deltas carry the key of their block and the
assembler starts a block per key instead of joining them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from llmport import Runtime, TextBlock
from llmport.testing.loopback import LoopbackServer, Reply
from support import anthropic_scenarios as anth
from support import bedrock_scenarios as bed
from support import gemini_scenarios as gem
from support import openai_scenarios as oai
from support.api_modes import MODES, run_via
from wire import TARGETS, Wire

Make = Callable[..., Runtime]

FIRST = "Paris is the largest city of France. "
SECOND = "Its population is about 2.1 million."


def pieces(text: str, size: int = 8) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def anthropic_replies() -> tuple[Reply, Reply]:
    content = [{"type": "text", "text": FIRST}, {"type": "text", "text": SECOND}]
    body = anth.message("msg_01TwoTexts", anth.SONNET, content, "end_turn", anth.usage(5, 9))
    return Reply(json=body), Reply(sse=anth.as_sse(body, chunk=8))


def responses_replies() -> tuple[Reply, Reply]:
    items = [oai.message_item("msg_a", FIRST), oai.message_item("msg_b", SECOND)]
    final = oai.response_obj("resp_two", items, usage=(5, 9, 0, 0), model="gpt-4o-mini")
    started = {**final, "status": "in_progress", "output": [], "usage": None}
    events: list[tuple[str, dict[str, Any]]] = [("response.created", {"response": started})]
    for index, item in enumerate(items):
        where = {"output_index": index, "content_index": 0, "item_id": item["id"]}
        text = item["content"][0]["text"]
        part = {"type": "output_text", "annotations": [], "logprobs": []}
        events += [
            (
                "response.output_item.added",
                {"output_index": index, "item": {**item, "content": []}},
            ),
            ("response.content_part.added", {**where, "part": {**part, "text": ""}}),
            *(
                ("response.output_text.delta", {**where, "delta": p, "logprobs": []})
                for p in pieces(text)
            ),
            ("response.output_text.done", {**where, "text": text, "logprobs": []}),
            ("response.output_item.done", {"output_index": index, "item": item}),
        ]
    events.append(("response.completed", {"response": final}))
    sse = [
        {"event": name, "data": {"type": name, **data, "sequence_number": i}}
        for i, (name, data) in enumerate(events)
    ]
    return Reply(json=final), Reply(sse=sse)


def gemini_replies() -> tuple[Reply, Reply]:
    # Gemini's text parts join into one text; a thought signature between two
    # text parts (the carrier Gemini 3 sends) is what separates two blocks.
    second = {"text": SECOND, "thoughtSignature": "c2lnbmF0dXJl"}
    whole = gem.answer("two-texts", [{"text": FIRST}, second], gem.usage(5, 9))
    chunks = [
        {"data": gem.answer("two-texts", [{"text": p}], gem.usage(5, 0), finish=None)}
        for p in pieces(FIRST)
    ]
    chunks.append({"data": gem.answer("two-texts", [second], gem.usage(5, 9))})
    return Reply(json=whole), Reply(sse=chunks)


def bedrock_replies() -> tuple[Reply, Reply]:
    whole = bed.answer([{"text": FIRST}, {"text": SECOND}], "end_turn", bed.usage(5, 9))
    events = [bed.ev("messageStart", role="assistant")]
    for index, text in enumerate((FIRST, SECOND)):
        events += [
            bed.ev("contentBlockDelta", contentBlockIndex=index, delta={"text": p})
            for p in pieces(text)
        ]
        events.append(bed.ev("contentBlockStop", contentBlockIndex=index))
    events += [
        bed.ev("messageStop", stopReason="end_turn"),
        bed.ev("metadata", metrics={"latencyMs": 100}, usage=bed.usage(5, 9)),
    ]
    return bed.json_reply(whole, "two-texts"), bed.stream_reply(events, "two-texts-stream")


#: wire format (``Wire.api``) -> (whole answer, streamed answer) of two text blocks.
REPLIES: dict[str, Callable[[], tuple[Reply, Reply]]] = {
    "openai-responses": responses_replies,
    "anthropic": anthropic_replies,
    "gemini": gemini_replies,
    "bedrock": bedrock_replies,
}
#: Targets left out, and why.
NO_TWO_TEXT_BLOCKS = {
    "openai-chat": "a Chat Completions message has one text content",
    "callonly": "a call-only plugin's stream is its whole answer replayed (core, tested above)",
    "callonly-stream": "the suite's own plugin streams plain text only",
    **{
        name: "an OpenAI-compatible Chat Completions message has one text content"
        for name in ("groq", "deepseek", "ollama", "mistral", "openrouter")
    },
}
assert {w.api for w in TARGETS} == set(REPLIES) | set(NO_TWO_TEXT_BLOCKS)
each_target = pytest.mark.parametrize("wire", [w for w in TARGETS if w.api in REPLIES], ids=str)
each_api = pytest.mark.parametrize("api", MODES)


@each_api
@each_target
async def test_streamed_text_blocks_equal_the_whole_answers_block_for_block(
    wire: Wire, api: str, runtime: Make
) -> None:
    whole, streamed = REPLIES[wire.api]()
    with LoopbackServer([whole, streamed]) as server:
        rt = runtime(wire, server)
        exec_result = await run_via(api, rt, "Largest city?")
        stream_result = await run_via(api, rt, "Largest city?", stream=True)
    exec_blocks = exec_result.messages[-1].blocks
    texts = [b.text for b in exec_blocks if isinstance(b, TextBlock)]
    assert texts == [FIRST, SECOND]
    assert stream_result.messages[-1].blocks == exec_blocks
    assert stream_result.text == exec_result.text == FIRST + SECOND
    assert json.dumps(stream_result.messages[-1].to_dict()) == json.dumps(
        exec_result.messages[-1].to_dict()
    )
