"""SPEC §20 I2: one table of malformed items, fed through every door, on every target.

Doors: ``exec``, ``async_exec``, ``stream``/``astream``, ``history=``, a
list of Messages as content, ``Message.from_dict``, ``Tool(...)`` and
``Tool.from_schema``, ``continue_with``, a handoff's input and batch
requests. Each malformed item must fail with an
:class:`~llmport.errors.InputError` (``OptionError``, ``MessageError``,
``ContentError``, ``SchemaError``...), never a raw ``TypeError``,
``ValueError`` or ``RecursionError``, and the loopback server, which counts
requests, must see none caused by it.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from invariant_checks import deep
from llmport import Runtime, agentic_function, handoff
from llmport.controls.budget import Budget
from llmport.errors import (
    ContentError,
    ContextWindowExceeded,
    InputError,
    MessageError,
    OptionError,
    SchemaError,
    TokenLimitExceeded,
)
from llmport.messages.types import MediaBlock, Message, TextBlock, ToolCall, ToolResult
from llmport.testing.loopback import LoopbackServer
from llmport.tools.tool import Tool
from wire import PROFILE_TARGETS, TARGETS, Wire, make_runtime

JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
CALL = {"id": "call_1", "name": "lookup", "arguments": {"q": "x"}}
ASK = {"role": "user", "blocks": [{"type": "text", "text": "hi"}]}
ANSWER = {
    "role": "tool",
    "tool_results": [{"call_id": "call_1", "name": "lookup", "content": "ok"}],
}


def assistant(**call: Any) -> dict[str, Any]:
    return {"role": "assistant", "tool_calls": [{**CALL, **call}]}


@dataclass(frozen=True)
class Bad:
    """One malformed item, in the form every door of its ``kind`` takes."""

    id: str
    kind: str  # "turns" (message dicts), "content", "options", "schema" or "value"
    item: Any
    error: type[InputError]
    #: Doors that cannot carry this item (a MediaBlock object holds checked bytes).
    not_through: frozenset[str] = field(default_factory=frozenset)


#: The one table. ``turns`` are message dicts (the ``to_dict()`` form).
BAD: list[Bad] = [
    # -- conversations: the turns' fields --------------------------------------------------
    Bad(
        "text-not-a-string",
        "turns",
        [{"role": "user", "blocks": [{"type": "text", "text": 123}]}],
        MessageError,
    ),
    Bad(
        "png-holding-jpeg-bytes",
        "turns",
        [
            {
                "role": "user",
                "blocks": [
                    {
                        "type": "image",
                        "media_type": "image/png",
                        "data": base64.b64encode(JPEG).decode(),
                    }
                ],
            }
        ],
        MessageError,
        frozenset({"messages", "handoff"}),
    ),
    Bad("integer-call-id", "turns", [ASK, assistant(id=7), ANSWER], MessageError),
    Bad(
        "tool_calls-not-a-list",
        "turns",
        [ASK, {"role": "assistant", "tool_calls": "lookup"}],
        MessageError,
    ),
    Bad("arguments-a-string", "turns", [ASK, assistant(arguments='{"q": "x"}')], MessageError),
    Bad("arguments-nested-20000-deep", "turns", [ASK, assistant(arguments=deep())], MessageError),
    Bad(
        "result-content-not-a-string",
        "turns",
        [
            ASK,
            assistant(),
            {
                "role": "tool",
                "tool_results": [{"call_id": "call_1", "name": "lookup", "content": 5}],
            },
        ],
        MessageError,
    ),
    # -- conversations: the shape ------------------------------------------------------------
    Bad(
        "user-turn-with-tool-calls",
        "turns",
        [{**ASK, "tool_calls": [CALL]}, ANSWER],
        MessageError,
        frozenset({"from_dict"}),
    ),
    Bad("orphan-tool-result", "turns", [ASK, ANSWER], MessageError, frozenset({"from_dict"})),
    Bad(
        "result-in-an-assistant-turn",
        "turns",
        [ASK, {"role": "assistant", "tool_results": ANSWER["tool_results"]}],
        MessageError,
        frozenset({"from_dict"}),
    ),
    # -- new content ---------------------------------------------------------------------------
    Bad("content-empty-string", "content", "", ContentError),
    Bad("content-a-number", "content", 123, ContentError),
    Bad("text-block-number", "content", [{"type": "text", "text": 123}], ContentError),
    Bad(
        "image-declared-png-holding-jpeg",
        "content",
        [{"type": "image", "data": JPEG, "media_type": "image/png"}],
        ContentError,
    ),
    Bad("60MB-of-text-unknown-window", "content", "x" * 60_000_000, ContextWindowExceeded),
    # -- options ---------------------------------------------------------------------------------
    Bad("stop-empty-list", "options", {"stop": []}, OptionError),
    Bad(
        "budget-input-tokens-0",
        "options",
        {"budget": Budget(input_tokens=0)},
        TokenLimitExceeded,
        frozenset({"batch"}),  # budget= is refused by batch itself (an OptionError)
    ),
    Bad("max_block_bytes-negative", "options", {"runtime": {"max_block_bytes": -1}}, OptionError),
    # -- tool schemas ------------------------------------------------------------------------------
    Bad("parameters-a-json-string", "schema", "{}", SchemaError),
    Bad("parameters-top-level-array", "schema", {"type": "array", "items": {}}, SchemaError),
    Bad(
        "parameters-dangling-ref",
        "schema",
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}},
        SchemaError,
    ),
    Bad(
        "parameters-nested-20000-deep",
        "schema",
        {"type": "object", "properties": deep()},
        SchemaError,
    ),
    Bad("parameters-not-json-schema", "schema", {"type": "object", "required": 5}, SchemaError),
    # -- values given for pending tool calls (continue_with) -------------------------------------
    Bad("value-nested-20000-deep", "value", deep(), MessageError),
    Bad("tool-result-content-a-number", "value", ToolResult("?", "lookup", 5), MessageError),
]


def lenient(turn: dict[str, Any]) -> Message:
    """The Message a caller might build by hand from ``turn``: no checks on the way."""
    blocks: list[Any] = []
    for b in turn.get("blocks", ()):
        if b["type"] == "text":
            blocks.append(TextBlock(b["text"]))
        else:
            blocks.append(MediaBlock(b["type"], b["media_type"], data=base64.b64decode(b["data"])))
    calls = turn.get("tool_calls", ())
    results = turn.get("tool_results", ())
    return Message(
        turn["role"],
        tuple(blocks),
        calls if isinstance(calls, str) else tuple(ToolCall(**c) for c in calls),
        tuple(ToolResult(**r) for r in results),
    )


# --- the doors --------------------------------------------------------------------------------
#
# A door takes (runtime, item, wire) and feeds the item through it. The runtime is
# pointed at a loopback server whose every reply is a plain answer (or, for the
# doors that need one first, a tool call).


async def exec_sync(rt: Runtime, bad: Bad, wire: Wire) -> Any:
    content, kwargs = _call(bad)
    return rt.exec(content, **kwargs)


async def exec_async(rt: Runtime, bad: Bad, wire: Wire) -> Any:
    content, kwargs = _call(bad)
    return await rt.async_exec(content, **kwargs)


async def stream_sync(rt: Runtime, bad: Bad, wire: Wire) -> Any:
    content, kwargs = _call(bad)
    return list(rt.stream(content, **kwargs))


async def stream_async(rt: Runtime, bad: Bad, wire: Wire) -> Any:
    content, kwargs = _call(bad)
    return [event async for event in rt.astream(content, **kwargs)]


async def batch_requests(rt: Runtime, bad: Bad, wire: Wire) -> Any:
    content, kwargs = _call(bad)
    return rt.batch([{"custom_id": "r1", "content": content, **kwargs}])


async def message_list(rt: Runtime, bad: Bad, wire: Wire) -> Any:
    return rt.exec([*(lenient(t) for t in bad.item), "next"])


async def from_dict(rt: Runtime, bad: Bad, wire: Wire) -> Any:
    return [Message.from_dict(t) for t in bad.item]


async def tool_constructor(rt: Runtime, bad: Bad, wire: Wire) -> Any:
    return Tool("lookup", "Look up.", bad.item, lambda **kw: "ok")


async def tool_from_schema(rt: Runtime, bad: Bad, wire: Wire) -> Any:
    return Tool.from_schema("lookup", "Look up.", bad.item, lambda **kw: "ok")


def _call(bad: Bad) -> tuple[Any, dict[str, Any]]:
    """(content, keyword arguments) of an exec call carrying ``bad``."""
    if bad.kind == "turns":
        return "next", {"history": bad.item}
    if bad.kind == "content":
        return bad.item, {}
    options = {k: v for k, v in bad.item.items() if k != "runtime"}
    return "hi", options


async def handoff_input(rt: Runtime, bad: Bad, wire: Wire) -> Any:
    """The model hands off; the filtered conversation is the malformed turns."""

    @agentic_function
    def specialist(conversation: list[Message]) -> str:
        return rt.exec(conversation)

    to_specialist = handoff(specialist, input_filter=lambda _: [lenient(t) for t in bad.item])
    return rt.exec("help", tools=[to_specialist])


async def continue_with(rt: Runtime, bad: Bad, wire: Wire) -> Any:
    """A manual tool turn answered with a malformed value."""
    lookup = Tool.from_schema(
        "lookup", "Look up.", {"type": "object", "properties": {}}, lambda **kw: "ok"
    )
    first = rt.run("look it up", tools=[lookup], tool_execution="manual")
    call = first.pending_tool_calls[0]
    value = bad.item
    if isinstance(value, ToolResult):
        value = ToolResult(call.id, value.name, value.content)
    return first.continue_with({call.id: value})


@dataclass(frozen=True)
class Door:
    name: str
    fn: Callable[[Runtime, Bad, Wire], Any]
    kinds: frozenset[str]
    #: Requests a door makes before the malformed item is given (a first model turn).
    before: int = 0


DOORS = [
    Door("exec", exec_sync, frozenset({"turns", "content", "options"})),
    Door("async_exec", exec_async, frozenset({"turns", "content", "options"})),
    Door("stream", stream_sync, frozenset({"turns", "content", "options"})),
    Door("astream", stream_async, frozenset({"turns", "content", "options"})),
    Door("batch", batch_requests, frozenset({"turns", "content", "options"})),
    Door("messages", message_list, frozenset({"turns"})),
    Door("from_dict", from_dict, frozenset({"turns"})),
    Door("handoff", handoff_input, frozenset({"turns"}), before=1),
    Door("Tool", tool_constructor, frozenset({"schema"})),
    Door("Tool.from_schema", tool_from_schema, frozenset({"schema"})),
    Door("continue_with", continue_with, frozenset({"value"}), before=1),
]

CASES = [
    pytest.param(door, bad, id=f"{door.name}-{bad.id}")
    for door in DOORS
    for bad in BAD
    if bad.kind in door.kinds and door.name not in bad.not_through
]
#: The doors the built-in profiles (``wire.PROFILE_TARGETS``) are tried through, in turn
#: (vllm exec, lmstudio astream, ...): every item reaches each profile's capability
#: table once, sync and async both run; the other doors check the item before any
#: plugin is asked.
PROFILE_DOORS = ("exec", "astream")
#: (wire, door, bad): every target through every door, each profile through one door.
WIRE_CASES = [
    pytest.param(wire, *case.values, id=f"{wire}-{case.id}") for wire in TARGETS for case in CASES
] + [
    pytest.param(wire, *case.values, id=f"{wire}-{case.id}")
    for i, wire in enumerate(PROFILE_TARGETS)
    for case in CASES
    if case.values[0].name == PROFILE_DOORS[i % len(PROFILE_DOORS)]
]


def _replies(wire: Wire, door: Door) -> list[Any]:
    if door.name == "handoff":
        return [wire.tool_call_reply("transfer_to_specialist", {}, "call_h")]
    if door.name == "continue_with":
        return [wire.tool_call_reply("lookup", {}, "call_1")]
    return [wire.text_reply("never")]


@pytest.mark.parametrize(("wire", "door", "bad"), WIRE_CASES)
async def test_a_malformed_item_is_an_input_error_before_any_request(
    wire: Wire, door: Door, bad: Bad
) -> None:
    settings = bad.item.get("runtime", {}) if bad.kind == "options" else {}
    err: BaseException | None = None
    with LoopbackServer(_replies(wire, door)) as server:
        rt = make_runtime(wire, server, **settings)
        try:
            await door.fn(rt, bad, wire)
        except Exception as exc:  # the assertions below say what was raised
            err = exc
        finally:
            rt.close()
        sent = len(server.requests) - door.before
    assert err is not None, f"{bad.id} through {door.name} was accepted ({sent} request(s) sent)"
    assert isinstance(err, InputError), f"expected an InputError, got {type(err).__name__}: {err}"
    assert isinstance(err, bad.error), f"expected {bad.error.__name__}, got {err!r:.200}"
    assert sent == 0, f"{sent} request(s) reached the server for {bad.id} through {door.name}"


def test_every_door_and_every_item_is_in_the_table() -> None:
    doors = {case.values[0].name for case in CASES}
    items = {case.values[1].id for case in CASES}
    assert doors == {d.name for d in DOORS}
    assert items == {b.id for b in BAD}
