"""A conversation is a value you can hold, store, continue and move between vendors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conversation_helpers import WAY_IDS, WAYS, run, runtime
from llmport import (
    Citation,
    ContentError,
    MessageError,
    OptionError,
    ServerToolCall,
    ServerToolResult,
    TextBlock,
    ThinkingBlock,
    agentic_function,
)
from llmport.messages.types import (
    MediaBlock,
    Message,
    Request,
    Response,
    ToolCall,
    ToolResult,
    Usage,
)
from llmport.testing import Script, call_tools, respond

PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7V\x9e\x18"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)


def thinking_reply(vendor: str, text: str) -> Any:
    """A step answering with signed thinking, then text."""

    def answer(request: Request) -> Response:
        blocks = [
            ThinkingBlock("let me think", signature=f"sig-{vendor}", vendor=vendor),
            TextBlock(text),
        ]
        return Response(text=text, blocks=blocks, usage=Usage(3, 2, requests=1), model="test")

    return respond(answer)


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_a_conversation_continues_across_three_execs(way: tuple[str, bool]) -> None:
    script = Script(["one", "two", "three"])
    rt = runtime(script)
    first = await run(way, rt, "q1")
    second = await run(way, rt, [*first.messages, "q2"])
    third = await run(way, rt, "q3", history=second.messages)

    sent = [r.messages for r in script.requests]
    assert [m.text for m in sent[0]] == ["q1"]
    assert [m.text for m in sent[1]] == ["q1", "one", "q2"]
    assert [m.text for m in sent[2]] == ["q1", "one", "q2", "two", "q3"]
    assert [m.role for m in third.messages] == ["user", "assistant"] * 3
    assert third.messages[-1].text == "three"


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_tool_calls_and_results_are_part_of_the_held_conversation(
    way: tuple[str, bool],
) -> None:
    def lookup(city: str) -> str:
        return f"sunny in {city}"

    from llmport import Tool

    tool = Tool(
        "lookup",
        "weather",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        lookup,
    )
    script = Script([call_tools(("lookup", {"city": "Paris"})), "It is sunny.", "You asked twice."])
    rt = runtime(script)
    first = await run(way, rt, "weather?", tools=[tool])
    assert [m.role for m in first.messages] == ["user", "assistant", "tool", "assistant"]
    assert first.messages[2].tool_results[0].content == "sunny in Paris"
    await run(way, rt, "again?", history=first.messages)
    assert script.requests[-1].messages[:4] == first.messages


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_signed_thinking_goes_back_only_to_its_vendor(way: tuple[str, bool]) -> None:
    a = Script([thinking_reply("a", "from a"), "a again"], prefix="a")
    b = Script(["from b"], prefix="b")
    rt = runtime(a, b)
    first = await run(way, rt, "q1", model="a:test")
    assert first.thinking == "let me think"
    assert isinstance(first.messages[1].blocks[0], ThinkingBlock)

    on_b = await run(way, rt, [*first.messages, "q2"], model="b:test")
    sent_to_b = b.requests[0].messages
    assert not any(isinstance(x, ThinkingBlock) for m in sent_to_b for x in m.blocks)
    assert [m.text for m in sent_to_b] == ["q1", "from a", "q2"]
    assert [(d.message, d.block, d.vendor) for d in on_b.dropped] == [(1, "thinking", "a")]
    assert "cannot be sent to b" in on_b.dropped[0].reason

    back_on_a = await run(way, rt, [*first.messages, "q3"], model="a:test")
    thinking = a.requests[1].messages[1].blocks[0]
    assert thinking == ThinkingBlock("let me think", signature="sig-a", vendor="a")
    assert back_on_a.dropped == []


def full_conversation() -> list[Message]:
    image = MediaBlock("image", "image/png", data=PNG, filename="dot.png", index=1)
    return [
        Message("user", (TextBlock("look", cache=None), image)),
        Message(
            "assistant",
            (
                ThinkingBlock("hmm", signature="c2ln", redacted=None, vendor="anthropic"),
                ThinkingBlock(redacted="ZW5j", vendor="openai-responses", extra={"id": "rs_1"}),
                ServerToolCall("srv_1", "web_search", {"query": "dots"}, "anthropic", {"x": 1}),
                ServerToolResult("srv_1", "web_search", [{"url": "https://e.x"}], "anthropic"),
                TextBlock(
                    "A dot.",
                    citations=(
                        Citation("url", url="https://e.x", title="E", start=0, end=5, vendor="x"),
                    ),
                ),
            ),
            (ToolCall("call_1", "zoom", {"level": 2}, '{"level": 2}', {"sig": "abc"}),),
        ),
        Message(
            "tool",
            tool_results=(
                ToolResult("call_1", "zoom", "zoomed", blocks=(TextBlock("detail"),)),
                ToolResult("call_2", "oops", "failed", is_error=True),
            ),
        ),
        Message("assistant", (TextBlock("done"),), extra={"vendor_note": [1, 2]}),
    ]


def test_a_stored_conversation_round_trips_exactly() -> None:
    messages = full_conversation()
    stored = json.dumps([m.to_dict() for m in messages])
    loaded = [Message.from_dict(d) for d in json.loads(stored)]
    assert json.dumps([m.to_dict() for m in loaded]) == stored
    image = loaded[0].blocks[1]
    assert isinstance(image, MediaBlock) and image.data == PNG
    assert loaded[1].blocks[:4] == messages[1].blocks[:4]
    assert loaded[1].tool_calls[0].extra == {"sig": "abc"}
    assert loaded[2].tool_results == messages[2].tool_results


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_a_resumed_conversation_sends_what_the_original_sent(
    way: tuple[str, bool],
) -> None:
    script = Script(["first", "second", "second"])
    rt = runtime(script)
    first = await run(way, rt, ["look", {"type": "image", "data": PNG}])
    await run(way, rt, "more", history=first.messages)
    stored = json.dumps([m.to_dict() for m in first.messages])
    resumed = [Message.from_dict(d) for d in json.loads(stored)]
    await run(way, rt, "more", history=resumed)
    original, again = script.requests[1].messages, script.requests[2].messages
    assert json.dumps([m.to_dict() for m in again]) == json.dumps([m.to_dict() for m in original])


def test_history_takes_to_dict_forms_and_refuses_other_values() -> None:
    script = Script(["ok"])
    rt = runtime(script)
    rt.exec("q", history=[Message("assistant", (TextBlock("earlier"),)).to_dict()])
    assert [m.text for m in script.requests[0].messages] == ["earlier", "q"]
    with pytest.raises(OptionError, match="history must be a list of Message"):
        rt.exec("q", history="earlier")
    with pytest.raises(MessageError, match="role"):
        rt.exec("q", history=[{"role": "wizard"}])
    with pytest.raises(MessageError, match="not valid base64"):
        bad = {"type": "image", "media_type": "image/png", "data": "%%"}
        Message.from_dict({"role": "user", "blocks": [bad]})
    with pytest.raises(ContentError, match="a Message goes first in content"):
        rt.exec(["q", Message("user", (TextBlock("late"),))])
    assert len(script.requests) == 1  # nothing bad was sent


def test_history_goes_after_the_dag_context_and_before_the_new_content() -> None:
    script = Script(["inner", "outer"])
    rt = runtime(script)
    earlier = [Message("user", (TextBlock("H1"),)), Message("assistant", (TextBlock("H2"),))]

    @agentic_function
    def step(topic: str) -> str:
        rt.exec("first look")
        return str(rt.exec(f"NEW {topic}", history=earlier))

    step("t")
    sent = script.requests[1].messages
    texts = [m.text for m in sent]
    assert texts[-3:] == ["H1", "H2", "NEW t"]
    # The DAG context (the call of step, the first exec and its reply) comes first.
    assert "step" in texts[0] and "first look" in texts[0]
    assert texts[1] == "inner"
