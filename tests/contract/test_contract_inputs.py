"""Bad input fails before any request, with its typed error: the one home of that rule.

Every error here is an :class:`~llmport.errors.InputError` (``OptionError``,
``MessageError``, ``ContentError``, ``SchemaError``...), never a raw
``TypeError``, ``ValueError`` or ``RecursionError``, and nothing is sent:
the loopback server, which counts requests, sees none caused by it.

* Bad options, content and configuration on every target, in every mode.
* One table of malformed items fed through every door, on every target:
  ``exec``, ``async_exec``, ``stream``/``astream``, ``history=``, a list of
  Messages as content, ``Message.from_dict``, ``Tool(...)`` and
  ``Tool.from_schema``, ``continue_with``, a handoff's input and batch
  requests.
* The same rules on a scripted runtime (sync, async and streaming), and the
  pieces the table cannot show (nesting limits, context-window and token
  checks, agentic functions, handoffs).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import llmport
import pytest
from invariant_checks import deep
from llmport import (
    Backoff,
    NoModelError,
    Runtime,
    agentic_function,
    handoff,
    tool,
)
from llmport.controls.budget import Budget
from llmport.errors import (
    ConfigError,
    ContentError,
    ContextWindowExceeded,
    InputError,
    MessageError,
    OptionError,
    SchemaError,
    TokenLimitExceeded,
    UnsupportedFeatureError,
)
from llmport.messages.check import MAX_DEPTH, UNKNOWN_WINDOW_TOKENS, nesting_problem
from llmport.messages.estimate import text_tokens
from llmport.messages.types import (
    MediaBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
)
from llmport.provider.config import Config
from llmport.testing import Script, call_tools, reply
from llmport.testing.loopback import LoopbackServer
from llmport.tools.tool import Tool
from support.api_modes import MODES, run_via
from wire import PROFILE_TARGETS, TARGETS, CompatWire, Wire, make_runtime, raised

# ======================================================================================
# Bad options, content and configuration on every target and every mode
# ======================================================================================


each_target = pytest.mark.parametrize("wire", TARGETS, ids=str)
each_mode = pytest.mark.parametrize("mode", MODES)
Make = Callable[..., Runtime]

#: (id, exec keyword arguments, error class, fragments its message must contain)
BAD_OPTIONS: list[tuple[str, dict[str, Any], type[InputError], list[str]]] = [
    (
        "tool_choice-required-without-tools",
        {"tool_choice": "required"},
        OptionError,
        ["tool_choice"],
    ),
    (
        "tool_choice-name-without-tools",
        {"tool_choice": {"name": "x"}},
        OptionError,
        ["tool_choice"],
    ),
    ("timeout-negative", {"timeout": -1}, OptionError, ["timeout"]),
    ("temperature-text", {"temperature": "hot"}, OptionError, ["temperature"]),
    ("temperature-negative", {"temperature": -1}, OptionError, ["temperature"]),
    ("max_tokens-zero", {"max_tokens": 0}, OptionError, ["max_tokens"]),
    ("stop-empty-string", {"stop": [""]}, OptionError, ["stop"]),
    ("unknown-option-typo", {"temprature": 0.2}, OptionError, ["'temprature'", "'temperature'"]),
    ("model-empty", {"model": ""}, OptionError, ["model"]),
]


@each_mode
@pytest.mark.parametrize(
    ("kwargs", "cls", "fragments"),
    [case[1:] for case in BAD_OPTIONS],
    ids=[case[0] for case in BAD_OPTIONS],
)
@each_target
async def test_bad_option_fails_before_any_request(
    wire: Wire,
    kwargs: dict[str, Any],
    cls: type[InputError],
    fragments: list[str],
    mode: str,
    runtime: Make,
) -> None:
    with LoopbackServer([wire.text_reply("never")]) as server:
        err = await raised(run_via(mode, runtime(wire, server), "hi", **kwargs))
        sent = len(server.requests)
    assert isinstance(err, cls), f"expected {cls.__name__}, got {err!r} ({sent} request(s) sent)"
    assert sent == 0, f"{sent} request(s) sent for bad input"
    assert isinstance(err, InputError)
    for fragment in fragments:
        assert fragment in str(err), f"{fragment!r} not in {str(err)!r}"


JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
NOT_PNG = {"jpeg-bytes": JPEG, "text-bytes": b"this is plain text, not an image\n"}


@each_mode
@pytest.mark.parametrize("data", list(NOT_PNG.values()), ids=list(NOT_PNG))
@each_target
async def test_png_path_holding_other_bytes_is_a_content_error(
    wire: Wire, data: bytes, mode: str, runtime: Make, tmp_path: Path
) -> None:
    image = tmp_path / "screenshot.png"
    image.write_bytes(data)
    content = [{"type": "text", "text": "What is this?"}, {"type": "image", "path": str(image)}]
    with LoopbackServer([wire.text_reply("never")]) as server:
        err = await raised(run_via(mode, runtime(wire, server), content))
        sent = len(server.requests)
    assert isinstance(err, ContentError), f"expected ContentError, got {err!r} ({sent} sent)"
    assert sent == 0, f"{sent} request(s) sent for a bad image"
    assert isinstance(err, InputError)
    assert err.index == 1


@each_target
def test_misspelt_runtime_argument_fails_at_construction(wire: Wire) -> None:
    with pytest.raises(Exception) as info:
        Runtime(modle=wire.model)
    err = info.value
    assert isinstance(err, OptionError), f"expected OptionError, got {err!r}"
    assert isinstance(err, InputError)
    assert "modle" in str(err)


@each_mode
@each_target
async def test_missing_key_is_a_config_error_naming_the_variable(wire: Wire, mode: str) -> None:
    with LoopbackServer([wire.text_reply("never")]) as server:
        rt = Runtime(
            model=wire.model,
            max_retries=1,
            backoff=Backoff.none(),
            providers={wire.provider: wire.keyless_settings(server.url)},
        )
        try:
            err = await raised(run_via(mode, rt, "hi"))
        finally:
            rt.close()
        sent = len(server.requests)
    assert isinstance(err, ConfigError), f"expected ConfigError, got {err!r} ({sent} sent)"
    assert sent == 0, f"{sent} request(s) sent without a key"
    assert isinstance(err, InputError)
    assert any(name in str(err) for name in wire.key_env), (
        f"the message names none of {wire.key_env}: {str(err)!r}"
    )


# ======================================================================================
# One table of malformed items, fed through every door, on every target
# ======================================================================================


CALL = {"id": "call_1", "name": "lookup", "arguments": {"q": "x"}}
ASK = {"role": "user", "blocks": [{"type": "text", "text": "hi"}]}
ANSWER = {
    "role": "tool",
    "tool_results": [{"call_id": "call_1", "name": "lookup", "content": "ok"}],
}


#: A well-formed tool, given the wrong way by the options rows.
LOOKUP = Tool.from_schema(
    "lookup", "Look up.", {"type": "object", "properties": {}}, lambda **kw: "ok"
)


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
    ),
    Bad("orphan-tool-result", "turns", [ASK, ANSWER], MessageError, frozenset({"from_dict"})),
    Bad(
        "result-in-an-assistant-turn",
        "turns",
        [ASK, {"role": "assistant", "tool_results": ANSWER["tool_results"]}],
        MessageError,
    ),
    Bad(
        "tool-results-in-a-user-turn",
        "turns",
        [ASK, assistant(), {"role": "user", "tool_results": ANSWER["tool_results"]}],
        MessageError,
    ),
    Bad(
        "call-without-result-then-a-user-turn",
        "turns",
        [ASK, assistant()],  # the door's own user turn ("next") follows
        MessageError,
        frozenset({"from_dict"}),  # each turn alone is well formed
    ),
    # -- Message.from_dict is strict: every key is one its form has --------------------------
    Bad(
        "a-vendor-message-dict",
        "turns",
        [{"role": "user", "content": "hi"}],
        MessageError,
        frozenset({"messages", "handoff"}),  # a Message object cannot carry an unknown key
    ),
    Bad(
        "thinking-signature-an-integer",
        "turns",
        [ASK, {"role": "assistant", "blocks": [{"type": "thinking", "text": "t", "signature": 5}]}],
        MessageError,
    ),
    Bad(
        "media-index-negative",
        "turns",
        [
            {
                "role": "user",
                "blocks": [
                    {
                        "type": "image",
                        "media_type": "image/jpeg",
                        "data": base64.b64encode(JPEG).decode(),
                        "index": -1,
                    }
                ],
            }
        ],
        MessageError,
    ),
    Bad(
        "block-unknown-key",
        "turns",
        [{"role": "user", "blocks": [{"type": "text", "text": "hi", "cache_control": {}}]}],
        MessageError,
        frozenset({"messages", "handoff"}),
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
    Bad("vendor-names-no-provider", "options", {"vendor": {"nope": {"x": 1}}}, OptionError),
    Bad("tools-not-a-list", "options", {"tools": LOOKUP}, OptionError),
    Bad("tools-a-string", "options", {"tools": "lookup"}, OptionError),
    Bad("two-tools-one-name", "options", {"tools": [LOOKUP, LOOKUP]}, OptionError),
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
        elif b["type"] == "thinking":
            blocks.append(ThinkingBlock(b["text"], signature=b.get("signature")))
        else:
            data = base64.b64decode(b["data"])
            blocks.append(
                MediaBlock(b["type"], b["media_type"], data=data, index=b.get("index", 0))
            )
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


# ======================================================================================
# On a scripted runtime: sync, async and streaming
# ======================================================================================


STREAM = [False, True]


@tool
def lookup(city: str) -> str:
    """Weather for a city."""
    return "sunny"


def scripted() -> tuple[Script, Runtime]:
    script = Script(["never sent"])
    return script, script.runtime()


BAD_CALLS: list[tuple[dict[str, Any], str]] = [
    ({"tool_choice": "required"}, "needs tools"),
    ({"tool_choice": {"name": "lookup"}}, "needs tools"),
    ({"timeout": -1}, "timeout must be > 0"),
    ({"timeout": "soon"}, "timeout must be a finite number"),
    ({"temperature": "hot"}, "temperature must be a finite number"),
    ({"temperature": -1}, "between 0 and 2"),
    ({"temperature": float("nan")}, "finite number"),
    ({"top_p": 1.5}, "between 0 and 1"),
    ({"max_tokens": 0}, "max_tokens must be >= 1"),
    ({"max_tokens": 2.5}, "must be an integer"),
    ({"seed": "x"}, "must be an integer"),
    ({"stop": [""]}, "stop must be"),
    ({"stop": 3}, "stop must be"),
    ({"reasoning_effort": "extreme"}, "reasoning_effort must be one of"),
    ({"temprature": 0.2}, "did you mean 'temperature'"),
    ({"model": ""}, "model must be a non-empty"),
    ({"model": "   "}, "model must be a non-empty"),
    ({"max_iterations": 0}, "max_iterations"),
    ({"vendor": {"scripted": {"tags": {1, 2}}}}, "not JSON-serialisable"),
    ({"vendor": ["scripted"]}, "vendor must be a dict"),
    ({"system": 3}, "system must be a string"),
]


@pytest.mark.parametrize("stream", STREAM)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("kwargs", "message"), BAD_CALLS)
async def test_bad_call_is_a_typed_error_before_any_request(
    mode: str, stream: bool, kwargs: dict[str, Any], message: str
) -> None:
    script, rt = scripted()
    with pytest.raises(OptionError, match=message):
        await run_via(mode, rt, "hi", stream=stream, **kwargs)
    assert script.requests == []


@pytest.mark.parametrize("mode", MODES)
async def test_tool_choice_naming_a_tool_not_offered(mode: str) -> None:
    script, rt = scripted()
    with pytest.raises(OptionError, match="not among the tools"):
        await run_via(mode, rt, "hi", tools=[lookup], tool_choice={"name": "other"})
    assert script.requests == []


@pytest.mark.parametrize("mode", MODES)
async def test_required_with_every_tool_filtered_out(mode: str) -> None:
    script, rt = scripted()
    with pytest.raises(OptionError, match="needs tools"):
        await run_via(mode, rt, "hi", tools=[lookup], tools_deny=["*"], tool_choice="required")
    assert script.requests == []


@pytest.mark.parametrize("mode", MODES)
async def test_image_path_whose_bytes_are_not_the_named_type(mode: str, tmp_path: Path) -> None:
    fake = tmp_path / "screenshot.png"
    fake.write_text("this is not a PNG")
    script, rt = scripted()
    with pytest.raises(ContentError, match="not image/png"):
        await run_via(mode, rt, ["look", {"type": "image", "path": str(fake)}])
    assert script.requests == []


def test_misspelt_runtime_argument_is_named() -> None:
    with pytest.raises(OptionError, match=r"'modle' \(did you mean 'model'\?\)"):
        Runtime(modle="openai:gpt-4o")
    with pytest.raises(OptionError, match="per-call parameter"):
        Runtime(tools=[lookup])
    with pytest.raises(OptionError, match="model must be a non-empty"):
        Runtime(model="")


def test_runtime_default_options_are_checked_too() -> None:
    script = Script(["never sent"])
    rt = Runtime(model="scripted:m", hooks=[script], config=Config(), temperature="hot")
    with pytest.raises(OptionError, match="temperature"):
        rt.exec("hi")
    assert script.requests == []


@pytest.mark.parametrize("mode", MODES)
async def test_no_model_at_all_is_a_typed_error(mode: str) -> None:
    rt = Runtime(config=Config())
    with pytest.raises(NoModelError, match="no model to call") as info:
        await run_via(mode, rt, "hi")
    # Both what the seed API promised and llmport's own input error.
    assert isinstance(info.value, NotImplementedError) and isinstance(info.value, InputError)


def test_new_errors_are_exported_from_the_user_namespace() -> None:
    assert llmport.OptionError is OptionError and llmport.NoModelError is NoModelError


def test_tool_vendor_fields_reach_the_tool_spec_and_are_checked() -> None:
    @tool(vendor={"anthropic": {"defer_loading": True}})
    def search(query: str) -> str:
        """Search the docs."""
        return query

    assert search.spec().vendor == {"anthropic": {"defer_loading": True}}
    script = Script(["ok"])
    script.runtime().exec("hi", tools=[search])
    assert script.requests[0].tools[0].vendor == {"anthropic": {"defer_loading": True}}
    with pytest.raises(OptionError, match="not JSON-serialisable"):
        tool(name="echo", vendor={"anthropic": {"when": object()}})(lambda q: q)


# ======================================================================================
# The pieces the table cannot show
# ======================================================================================


def nested(depth: int) -> dict[str, Any]:
    top: dict[str, Any] = {}
    node = top
    for _ in range(depth - 1):
        node["x"] = {}
        node = node["x"]
    return top


class Counting:
    """A ``call=`` function that counts the requests it gets."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, content: list[dict[str, Any]], model: str, response_format: Any) -> str:
        self.calls += 1
        return "ok"


def test_nesting_is_bounded_at_max_depth_and_checked_without_recursion() -> None:
    assert nesting_problem(nested(MAX_DEPTH)) is None
    assert nesting_problem(nested(MAX_DEPTH + 1)) == f"nested more than {MAX_DEPTH} levels deep"
    assert nesting_problem(nested(200_000)) is not None  # no RecursionError
    assert nesting_problem([[1, 2], {"a": (3,)}, "text"]) is None


def test_text_beyond_the_cap_for_an_unknown_window_is_refused_before_the_call() -> None:
    fn = Counting()
    rt = Runtime(call=fn)  # a call= function: its window is unknown
    with pytest.raises(ContextWindowExceeded) as info:
        rt.exec("x" * (UNKNOWN_WINDOW_TOKENS * 4 + 4))
    assert info.value.limit == UNKNOWN_WINDOW_TOKENS and fn.calls == 0
    big_history = [{"role": "user", "blocks": [{"type": "text", "text": "y" * 30_000_000}]}]
    with pytest.raises(ContextWindowExceeded):
        rt.exec("z" * 15_000_000, history=big_history)  # together over the cap
    assert rt.exec("x" * 1_000_000) == "ok" and fn.calls == 1


def test_a_zero_input_budget_refuses_any_text() -> None:
    fn = Counting()
    rt = Runtime(call=fn)
    assert text_tokens("hi") == 1 and text_tokens("") == 0
    with pytest.raises(TokenLimitExceeded):
        rt.exec("hi", budget=Budget(input_tokens=0))
    assert fn.calls == 0
    assert rt.exec("hi", budget=Budget(input_tokens=1)) == "ok"


def test_content_and_settings_of_the_wrong_kind_are_input_errors() -> None:
    rt = Runtime(call=Counting())
    with pytest.raises(ContentError, match="empty"):
        rt.exec("")
    with pytest.raises(ContentError, match="must be a string or a list"):
        rt.exec(b"bytes")
    with pytest.raises(OptionError, match="max_block_bytes"):
        Runtime(call=Counting(), max_block_bytes=0).exec("hi")
    assert rt.exec(block for block in ["a generator", " of blocks"]) == "ok"


def test_a_tool_returning_a_value_nested_too_deep_is_an_error_result_for_the_model() -> None:
    @tool
    def deep() -> dict[str, Any]:
        """A value nested past the limit."""
        return nested(20_000)

    script = Script([call_tools(("deep", {})), reply("noted")])
    assert script.runtime().exec("go", tools=[deep]) == "noted"
    result = script.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "nested more than" in result.content


def test_tool_arguments_of_the_wrong_kind_are_option_errors_still_value_errors() -> None:
    def fn(**kwargs: Any) -> str:
        return "ok"

    schema = {"type": "object", "properties": {}}
    for kwargs in ({"name": "two words"}, {"timeout": 0}, {"cache": "yes"}, {"fn": "not callable"}):
        args: dict[str, Any] = {"name": "t", "description": "d", "parameters": schema, "fn": fn}
        with pytest.raises(OptionError) as info:
            Tool(**{**args, **kwargs})
        assert isinstance(info.value, ValueError)  # what these raised before


def test_local_refs_that_resolve_are_accepted() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/properties/a"}},
        "$defs": {"A": {"type": "string"}},
    }
    assert Tool("t", "d", schema, lambda **kw: "ok").parameters is schema
    with pytest.raises(SchemaError, match="points to nothing"):
        Tool("t", "d", {**schema, "properties": {"c": {"$ref": "https://x/schema"}}}, print)


def test_a_handoff_filter_that_leaves_an_orphan_result_fails_before_the_target_runs() -> None:
    ran: list[int] = []

    @agentic_function
    def specialist(conversation: list[Message]) -> str:
        ran.append(len(conversation))
        return "handled"

    def keep_the_results_only(conversation: list[Message]) -> list[Message]:
        return [m for m in conversation if m.role != "assistant"]

    to_specialist = handoff(specialist, input_filter=keep_the_results_only)
    script = Script([call_tools(("transfer_to_specialist", {}))])
    with pytest.raises(MessageError, match="handoff input"):
        script.runtime().exec("help", tools=[to_specialist])
    assert ran == [] and len(script.requests) == 1


#: (target, a model of it whose capability table says it has no prompt caching).
NO_CACHING = [
    *((w, w.model) for w in TARGETS + PROFILE_TARGETS if isinstance(w, CompatWire)),
    *(
        (w, "bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0")
        for w in TARGETS
        if w.id == "bedrock"
    ),
    *((w, w.model) for w in TARGETS if w.id.startswith("callonly")),
]


@each_mode
@pytest.mark.parametrize(
    "cache", [True, "auto", {"ttl": "5m"}, {"key": "team-a"}], ids=["true", "auto", "ttl", "key"]
)
@pytest.mark.parametrize(("wire", "model"), NO_CACHING, ids=[str(w) for w, _ in NO_CACHING])
async def test_cache_on_a_model_without_caching_is_refused_before_any_request(
    wire: Wire, model: str, cache: Any, mode: str, runtime: Make
) -> None:
    with LoopbackServer([wire.text_reply("never")]) as server:
        rt = runtime(wire, server)
        assert not rt.model_info(model).capabilities.caching, f"{model} caches: not this test's"
        err = await raised(run_via(mode, rt, "hi", model=model, cache=cache))
        sent = len(server.requests)
    assert isinstance(err, UnsupportedFeatureError), f"expected a refusal, got {err!r}"
    assert "prompt caching" in str(err)
    assert sent == 0, f"{sent} request(s) sent with cache={cache!r} to {model}"


@each_mode
@each_target
async def test_tool_choice_none_offers_no_tool(wire: Wire, mode: str, runtime: Make) -> None:
    """``tool_choice="none"`` reaches every vendor as "no tool may be called".

    Bedrock Converse has no "none" (AWS Bedrock API reference, ToolChoice: ``auto``,
    ``any`` or ``tool``): the request goes without ``toolConfig``, which is
    exactly that (docs/providers/bedrock.md). The others send their own "none".
    """
    lookup = Tool.from_schema("lookup", "Look up.", {"type": "object", "properties": {}}, str)
    with LoopbackServer([wire.text_reply("ok")]) as server:
        await run_via(mode, runtime(wire, server), "hi", tools=[lookup], tool_choice="none")
        body = server.requests[0].json()
    if wire.id == "bedrock":
        assert "toolConfig" not in body, body
    elif wire.api == "gemini":
        assert body["toolConfig"]["functionCallingConfig"]["mode"] == "NONE", body
    elif wire.api == "anthropic":
        assert body["tool_choice"] == {"type": "none"}, body
    elif not wire.id.startswith("callonly"):
        assert body["tool_choice"] == "none", body
