"""Every streamed chunk of the wrong shape is a typed error, on every vendor's stream reader.

A vendor (the loopback) sends the target's own streamed answer (a text
answer and a tool-call turn) with ONE value changed to another JSON type:
each position of each event in turn (``choices`` a number, a ``delta`` a
list, ``tool_calls`` a string, an index a string...). Each variant is one
streamed call; it must end as a success or as a typed llmport error with
nothing foreign chained, never as a raw ``AttributeError`` / ``TypeError``
out of the plugin's reader (``llmport.provider.chunks.ChunkReader``, every
reader's base, decides that where each reader reads its chunks).

The hostile-peer table plays one such stream (``wrong-shape-stream``) on
every streaming path; this sweeps every position, on the readers
themselves.
"""

from __future__ import annotations

import copy
import json
from collections import deque
from collections.abc import Iterator
from typing import Any

import pytest
from invariant_checks import foreign_exceptions
from llmport.errors import LlmportError
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from support import bedrock_scenarios as bed
from wire import TARGETS, Wire, make_runtime

#: One target per reader: the four vendors, the compatible services' own Chat reader (Groq
#: for all), and a plugin that reads its stream itself through the _stream contract.
READERS = (
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "bedrock",
    "groq",
    "callonly-stream",
)
#: Bedrock's stream is binary: its events are rebuilt from these and encoded again.
BEDROCK_STREAMS = {"text": bed.text_events(["Hel", "lo"], 5, 2), "tool": bed.tool_events()}


def wrong(value: Any) -> Any:
    """A value of another JSON type than ``value`` (one a reader does not expect)."""
    if isinstance(value, dict):
        return ["x"]
    if isinstance(value, list):
        return 7
    if isinstance(value, str):
        return ["x"]
    if isinstance(value, bool) or value is None:
        return {"x": 1}
    return "x"  # a number


def positions(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path to every value inside ``value`` (its members, theirs, ...)."""
    members: Any = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, member in members:
        yield (*at, key)
        yield from positions(member, (*at, key))


def changed(data: Any, where: tuple[Any, ...]) -> Any:
    out = copy.deepcopy(data)
    node = out
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = wrong(node[where[-1]])
    return out


def events_of(wire: Wire, kind: str) -> list[dict[str, Any]]:
    """The target's streamed answer as a list of JSON events (``{"event"?, "data"}``)."""
    if wire.id == "bedrock":
        return copy.deepcopy(BEDROCK_STREAMS[kind])
    reply = (
        wire.stream_text_reply(["Hel", "lo"])
        if kind == "text"
        else wire.stream_tool_call_reply("lookup", ['{"q": ', '"x"}'], "call_1")
    )
    assert reply.sse is not None, f"{wire.id}: an SSE stream expected"
    return [
        {"data": json.loads(e)} if isinstance(e, str) else dict(e)
        for e in reply.sse
        if e != "[DONE]"
    ]


def reply_of(wire: Wire, events: list[dict[str, Any]]) -> Reply:
    if wire.id == "bedrock":
        return bed.stream_reply(events, "c-shape")
    return Reply(sse=events)


def variants(wire: Wire) -> Iterator[tuple[str, Reply]]:
    """(what was changed, the stream with it) for every position of every event."""
    for kind in ("text", "tool"):
        events = events_of(wire, kind)
        for index, event in enumerate(events):
            for where in positions(event["data"]):
                if wire.id == "bedrock" and where == ("p",):
                    continue  # padding, read by nobody
                bad = [*events[:index], {**event, "data": changed(event["data"], where)}]
                label = f"{kind} event {index} at {'/'.join(map(str, where))}"
                yield label, reply_of(wire, [*bad, *events[index + 1 :]])


@pytest.mark.parametrize("wire", [w for w in TARGETS if w.id in READERS], ids=lambda w: w.id)
def test_a_chunk_of_the_wrong_shape_is_a_typed_error(wire: Wire) -> None:
    cases = list(variants(wire))
    assert len(cases) > 20, "the sweep found too few positions to change"
    turn: deque[Reply] = deque()

    def vendor(request: RecordedRequest) -> Reply:
        # The case's stream first; a tool call it made is answered by a plain text turn.
        return turn.popleft() if turn else wire.stream_text_reply(["ok"])

    problems: list[str] = []
    with (
        LoopbackServer([Reply(handler=vendor)], repeat=True) as server,
        make_runtime(wire, server, max_retries=1) as rt,
    ):
        for label, reply in cases:
            turn.append(reply)
            try:
                for _event in rt.stream("hi", tools=[lookup]):
                    pass
            except LlmportError as err:
                problems += [f"{label}: foreign {f}" for f in foreign_exceptions(err)]
            except Exception as err:  # what this test is about: report every one
                problems.append(f"{label}: raw {type(err).__name__}: {err}")
    assert not problems, f"{wire.id}: {len(problems)} of {len(cases)}:\n" + "\n".join(problems)


def lookup(q: str) -> str:
    """Look something up (the tool the tool-call streams name)."""
    return "found"
