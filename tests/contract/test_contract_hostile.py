"""Hostile peers, made permanent: every path of the invariants table against hostile peers.

ONE table of peers, :data:`PEERS`, is run against every vendor path of
:data:`test_contract_invariants.PATHS` (the table every public path must be
in), so a path added there (embeddings, recordings...) is hostile-tested
here with no other change. Each peer is what a "vendor" (the loopback
server) does for the turn under test, after the path's own ``before`` turns:

* ``garbage``: a 200 whose body is not JSON at all;
* ``error-object-200``: a 200 carrying an error object instead of the answer;
* ``wrong-types``: a 200 whose fields have the wrong types (``"choices": "nope"``...);
* ``invalid-utf8``: a 200 whose bytes are not UTF-8;
* ``deep-nesting``: a 200 nested 3,000 levels deep;
* ``non-finite``: the target's own answer with every number NaN, ±Infinity or 1e400
  (on the paths whose success is a model's answer, :data:`ANSWERING`);
* ``wrong-shape-stream``: the target's own stream, each event's fields of the wrong
  JSON type (streaming paths; test_contract_stream_shapes sweeps every position);
* ``endless-body``: a body (or stream) that starts and never ends: the
  runtime's ``timeout=`` must end it;
* ``endless-pages``: a list that always says there is another page (paths that page):
  an error, never a listing cut short;
* ``replay-without-sequence``: a background stream dropped and replayed from
  its start without sequence numbers (paths that resume streams);
* ``settings-wrong-type``: a configuration file whose provider setting has
  the wrong type, read at the path's first use: a ConfigError, no request.

Every case asserts: the path raises a typed llmport error (the peer's
``expected`` class, directly or as an attempt of an ExecFailed, or the CLI's
one ``error: Name:`` line) within the peer's bound; nothing foreign in the
error's ``__cause__``/``__context__`` chain; no part of the key in the
error, its chain or the CLI's output.

Runtime: the network peers are expensive (a runtime, a server and a few
requests each, ``endless-body`` a timeout), so they run on one
representative target per wire format (:data:`ONE_PER_WIRE`); the cheap
``settings-wrong-type`` runs on every target; ``endless-body`` (each case
waits out a timeout) on one target per HTTP stack. One test case is one
(path, target) and plays every peer that applies to it, so a path costs one
item per target.

A peer that fails today on a (path, target) is listed in :data:`KNOWN`
with why: the issue 33 section that owns it, or a finding of this table
with no owner yet. The list is strict, as ``xfail(strict=True)`` is: a
listed peer that passes fails the case, so the entry goes when the fix
lands.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from durable_paths import durable_paths_dbos  # noqa: F401 (fixture: stops DBOS after the module)
from invariant_checks import PartialLeakCheck, batch_settings
from llmport.errors import ConfigError, LlmportError, MalformedResponseError, ProviderError
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from llmport_mcp import MCPServer
from test_contract_invariants import (
    PATHS,
    Ctx,
    Path,
    chain_problems,
    demo_mcp,  # noqa: F401 (fixture: the module's MCP demo server)
    outcome,
    typed,
)
from test_contract_stream_shapes import events_of, reply_of, wrong
from wire import TARGETS, Wire, make_runtime

#: One target per wire format (the compatible services share openai-chat's): where the
#: network peers run in the README's test run.
ONE_PER_WIRE = ("openai-chat", "openai-responses", "anthropic", "gemini", "bedrock", "callonly")
#: The SDK-range sessions (noxfile's sdk_lowest and sdk_newest, both run by CI) set
#: CONTRACT_FULL_MATRIX=1: there every peer runs on every target of the table.
FULL_MATRIX = os.environ.get("CONTRACT_FULL_MATRIX") == "1"
#: The slow peer (each case waits out a timeout) runs on one target per HTTP stack: the
#: OpenAI SDK's httpx (Anthropic's and google-genai's are alike) and botocore's.
SLOW_PEER_TARGETS = ("openai-chat", "bedrock")
#: Seconds the runtime waits on a silent connection in the endless-body case.
STALL_TIMEOUT = 0.5
#: Seconds the endless body stays silent before the server hangs up (past every bound:
#: a path that ignores the timeout ends then, late, instead of hanging the suite). It
#: costs nothing when the timeout works: the loopback's stall ends when the client hangs
#: up, so it is long, and so is the bound under it (a loaded machine ran a 2 s one out).
STALL = 10.0
#: Seconds any path may take to raise: a hang detector, generous for a loaded machine.
BOUND = 15.0


def is_stream(request: RecordedRequest) -> bool:
    """Whether ``request`` asks for a streamed answer (each vendor says so its own way)."""
    body = request.body.replace(b" ", b"")
    return b'"stream":true' in body or "stream" in request.path.lower()


def sse_or_body(request: RecordedRequest, data: bytes) -> Reply:
    """``data`` as the body, or as one event's data on a stream request."""
    if is_stream(request):
        return Reply(body=b"data: " + data + b"\n\n", headers={"content-type": "text/event-stream"})
    return Reply(body=data)


def fixed(data: bytes) -> Callable[[Wire, RecordedRequest], Reply]:
    return lambda wire, request: sse_or_body(request, data)


GARBAGE = b"\x00<html><body>502 Bad Gateway</body></html>\x1b[31m"
ERROR_OBJECT = json.dumps(
    {"error": {"message": "upstream failed", "type": "server_error", "code": 500}}
).encode()
#: The success shapes' main fields (Chat, Responses, Messages, Gemini, Converse, batches,
#: files, the tiny _call service), each of the wrong type.
WRONG_TYPES = json.dumps(
    {
        "id": 5,
        "object": 7,
        "choices": "nope",
        "content": 7,
        "candidates": "nope",
        "output": {"message": 3},
        "status": 9,
        "processing_status": 9,
        "data": "x",
        "files": 5,
        "name": 4,
        "state": 4,
        "text": ["x"],
        "usage": "lots",
    }
).encode()
INVALID_UTF8 = b'{"id": "\xff\xfe", "choices": [{"message": {"content": "\xc3\x28"}}]}'
DEEP = b'{"choices": ' + b"[" * 3000 + b"]" * 3000 + b"}"
NON_FINITE = ("NaN", "Infinity", "1e400", "-Infinity")


def non_finite(wire: Wire, request: RecordedRequest) -> Reply:
    """The target's own answer, every number in it NaN, ±Infinity or 1e400 in turn."""
    good = wire.stream_text_reply("ok") if is_stream(request) else wire.text_reply("ok")
    count = iter(range(1_000_000))

    def swap(text: str) -> str:
        return re.sub(
            r"(?<=[:\[,] )-?\d+(\.\d+)?(?=[,}\]])",
            lambda _: NON_FINITE[next(count) % len(NON_FINITE)],
            text,
        )

    if good.sse is not None:
        events = [
            e if isinstance(e, str) else {**e, "data": swap(json.dumps(e["data"]))}
            for e in good.sse
        ]
        return Reply(sse=events)
    if good.json is not None:
        return Reply(body=swap(json.dumps(good.json)).encode())
    return good  # a binary stream (Bedrock's event stream) has no JSON numbers to swap


def endless_body(wire: Wire, request: RecordedRequest) -> Reply:
    """The start of an answer, then silence on an open connection."""
    if is_stream(request):
        return Reply(body=b": open\n\n", headers={"content-type": "text/event-stream"}, stall=STALL)
    return Reply(body=b'{"id": "x", ', stall=STALL)


def endless_pages(wire: Wire, request: RecordedRequest) -> Reply:
    """A page of files that always says another follows (each vendor's list shape)."""
    if wire.id == "gemini":
        item = {
            "name": "files/f1",
            "uri": "https://generativelanguage.googleapis.com/v1beta/files/f1",
            "mimeType": "application/pdf",
            "sizeBytes": "5",
        }
        return Reply(json={"files": [item], "nextPageToken": "again"})
    item = {
        "id": "file-1",
        "object": "file",
        "bytes": 5,
        "created_at": 1,
        "filename": "a.pdf",
        "purpose": "user_data",
        "type": "file",
        "mime_type": "application/pdf",
        "size_bytes": 5,
        "created_at_iso": "2026-01-01T00:00:00Z",
    }
    return Reply(
        json={"object": "list", "data": [item], "has_more": True, "first_id": "a", "last_id": "b"}
    )


def wrong_shape_stream(wire: Wire, request: RecordedRequest) -> Reply:
    """The target's own streamed answer, every field of every event of another JSON type
    (``choices`` a number, ``delta`` a list...; the event ``type`` kept, so it is read)."""
    if not is_stream(request):
        return Reply(body=WRONG_TYPES)
    events = [
        {**e, "data": {k: v if k == "type" else wrong(v) for k, v in e["data"].items()}}
        for e in events_of(wire, "text")
    ]
    return reply_of(wire, events)


def replay_without_sequence(wire: Wire, request: RecordedRequest) -> Reply:
    """A background run's event stream: two deltas, no sequence numbers, cut; replayed alike."""
    delta = {
        "type": "response.output_text.delta",
        "delta": "Hello ",
        "item_id": "m1",
        "output_index": 0,
        "content_index": 0,
    }
    events = [{"event": "response.output_text.delta", "data": delta}] * 2
    return Reply(sse=events, truncate=True)


@dataclass(frozen=True)
class Peer:
    """A hostile vendor: its answer to the turn under test, and what llmport must make of it."""

    name: str
    answer: Callable[[Wire, RecordedRequest], Reply]
    expected: type[LlmportError] = MalformedResponseError
    #: Seconds the path may take to raise.
    bound: float = BOUND
    #: The paths it applies to (None: every path).
    paths: frozenset[str] | None = None
    #: Runtime settings for this peer (the timeout that must end an endless body).
    runtime: dict[str, Any] = field(default_factory=dict)
    #: A provider setting of the wrong type, put in an llmport.toml read at first use.
    bad_setting: tuple[str, Any] | None = None
    #: Cheap: runs on every target (else on one target per wire format).
    every_target: bool = False
    #: The targets it is limited to (None: as ``every_target`` says).
    targets: tuple[str, ...] | None = None
    #: (target, path) pairs it cannot be played on.
    skip: frozenset[tuple[str, str]] = frozenset()


STREAM_RESUMING = frozenset({"bg stream", "bg astream"})
#: The paths that stream a model's answer to the caller.
STREAMING = frozenset({"stream", "astream", "continue_stream", "acontinue_stream"})
#: The paths whose success is a model's answer (what ``non-finite`` alters); the others'
#: success shapes (batches, files, conversations) meet the other peers.
ANSWERING = frozenset(
    {
        "exec",
        "async_exec",
        "run",
        "arun",
        "stream",
        "astream",
        "continue_with",
        "acontinue_with",
        "continue_stream",
        "acontinue_stream",
        "handoff",
        "fix",
        "async_fix",
        "durable run",
        "async durable run",
        "MCP",
        "cli run",
    }
)
#: Streams whose bytes are binary (Bedrock's event stream): no JSON numbers to alter.
BINARY_STREAMS = frozenset(
    ("bedrock", name) for name in ("stream", "astream", "continue_stream", "acontinue_stream")
)
PAGING = frozenset({"files", "afiles"})

PEERS: list[Peer] = [
    Peer("garbage", fixed(GARBAGE)),
    # A stream may end in an error object (Gemini's error chunk): translated as the error it
    # names, or malformed (test_contract_boundary pins MalformedResponseError off streams).
    Peer("error-object-200", fixed(ERROR_OBJECT), ProviderError),
    Peer("wrong-types", fixed(WRONG_TYPES)),
    Peer("invalid-utf8", fixed(INVALID_UTF8)),
    Peer("deep-nesting", fixed(DEEP)),
    # A stream that already delivered text ends in StreamInterrupted (stream integrity).
    Peer("non-finite", non_finite, ProviderError, paths=ANSWERING, skip=BINARY_STREAMS),
    Peer("wrong-shape-stream", wrong_shape_stream, ProviderError, paths=STREAMING),
    Peer(
        "endless-body",
        endless_body,
        ProviderError,
        bound=STALL - 1,  # the timeout ends it long before the server hangs up
        runtime={"timeout": STALL_TIMEOUT},
        targets=SLOW_PEER_TARGETS,
    ),
    # Whole or an error: a listing cut short (a last page saying "more" with no cursor) too.
    Peer("endless-pages", endless_pages, MalformedResponseError, bound=5, paths=PAGING),
    Peer(
        "replay-without-sequence",
        replay_without_sequence,
        ProviderError,
        bound=5,
        paths=STREAM_RESUMING,
    ),
    Peer(
        "settings-wrong-type",
        fixed(b"{}"),
        ConfigError,
        bound=15,
        bad_setting=("default_headers", ["a"]),
        every_target=True,
    ),
]

#: (path, target) -> {peer: why it fails today}: the cases that fail now, each named by
#: the issue 33 section that owns it (or as a finding of this table with no owner yet).
#: Strict: a listed peer that passes fails the case too (remove it from here then).
KNOWN: dict[tuple[str, str], dict[str, str]] = {}


def applies(peer: Peer, path: Path, wire: Wire) -> bool:
    if path.drive is None or wire.id in path.not_for:
        return False
    if peer.paths is not None and path.name not in peer.paths:
        return False
    if (wire.id, path.name) in peer.skip:
        return False
    if peer.targets is not None:
        return wire.id in peer.targets
    return peer.every_target or FULL_MATRIX or wire.id in ONE_PER_WIRE


#: One case per (path, target): the peers that apply to it run in turn (one case costs
#: a server and a runtime per peer, not a test item each).
CASES = [
    pytest.param(path, wire, id=f"{path.name}-{wire.id}")
    for path in PATHS
    for wire in TARGETS
    if any(applies(peer, path, wire) for peer in PEERS)
]


@pytest.fixture(scope="module", autouse=True)
def warm_sdks() -> None:
    """Import the vendor SDKs once, before any bound is timed: a cold import on a loaded
    machine takes seconds, which are not the path's."""
    import anthropic  # noqa: F401
    import boto3  # noqa: F401
    import google.genai  # noqa: F401
    import openai  # noqa: F401


class Vendor:
    """The loopback's script: the path's ``before`` replies, then the peer's answer forever."""

    def __init__(self, wire: Wire, before: list[Reply], peer: Peer) -> None:
        self.wire, self.peer = wire, peer
        self.before = deque(before)
        self.requests = 0
        self.closed = False

    def answer(self, request: RecordedRequest) -> Reply:
        self.requests += 1
        if self.closed:  # the case is over: a runaway loop meets a closed door
            return Reply(reset=True)
        if self.before:
            reply = self.before.popleft()
            return reply.handler(request) if reply.handler is not None else reply
        return self.peer.answer(self.wire, request)


def bounded(
    path: Path, ctx: Ctx, bound: float
) -> tuple[BaseException | None, float, threading.Thread]:
    """(what ``path`` raised, the seconds it took, its thread: alive if past ``bound``).

    The path runs in a thread of its own, so a path that never returns fails
    the case instead of hanging the suite.
    """
    box: list[BaseException | None] = []
    started = time.monotonic()

    def drive() -> None:
        box.append(asyncio.run(outcome(path, ctx)))

    thread = threading.Thread(target=drive, daemon=True)
    thread.start()
    thread.join(bound)
    took = time.monotonic() - started
    return (box[0] if box else None), took, thread


def config_file(wire: Wire, url: str, setting: tuple[str, Any]) -> str:
    """An llmport.toml for ``wire`` at ``url`` whose ``setting`` has the wrong type."""
    name, value = setting
    return wire.config_toml(url) + f"{name} = {json.dumps(value)}\n"


def meet(peer: Peer, path: Path, wire: Wire, capsys: Any, mcp: MCPServer) -> list[str]:
    """What is wrong with how ``path`` on ``wire`` meets ``peer`` (empty: nothing)."""
    creds = wire.credentials("standard")
    leaks = PartialLeakCheck(wire.secrets(creds))
    vendor = Vendor(wire, path.before(wire), peer)
    with (
        LoopbackServer([Reply(handler=vendor.answer)], repeat=True) as server,
        pytest.MonkeyPatch.context() as env,
    ):
        if peer.bad_setting is not None:
            # Read at first use, by the runtime and by the CLI alike (it wins over llmport.toml).
            with open("hostile.toml", "w") as fh:
                fh.write(config_file(wire, server.url, peer.bad_setting))
            env.setenv("LLMPORT_CONFIG", "hostile.toml")
        settings = batch_settings(wire, server)
        rt = make_runtime(
            wire, server, creds=creds, max_retries=1, settings=settings, **peer.runtime
        )
        try:
            err, took, thread = bounded(
                path, Ctx(wire, rt, server, "standard", creds, capsys, mcp), peer.bound
            )
            vendor.closed = True
            late = thread.is_alive()
            if late:
                # Past its bound: let it end while its runtime is open (the server hangs up
                # at STALL, a retry meets the closed door), so what it prints later cannot
                # land in the next case's captured output. Closed first, the runtime left an
                # async client waiting on a socket no one closed, for the whole join.
                thread.join(STALL + 10)
        finally:
            vendor.closed = True
            rt.close()
    if late:
        return [f"no answer within {peer.bound:.1f} s (still running)"]
    problems: list[str] = []
    if took > peer.bound:
        problems.append(f"took {took:.2f} s, over the bound of {peer.bound:.1f} s")
    if wrong := typed(err, peer.expected):
        problems.append(leaks.mask(wrong)[:300])
    problems += chain_problems(peer.name, err, leaks)
    if peer.bad_setting is not None and vendor.requests:
        problems.append(f"{vendor.requests} request(s) sent with a setting of the wrong type")
    try:
        leaks.assert_clean()
    except AssertionError as leak:
        problems.append(str(leak)[:300])
    return problems


@pytest.mark.parametrize(("path", "wire"), CASES)
def test_hostile_peers_are_typed_errors_within_their_bounds(
    path: Path,
    wire: Wire,
    capsys: pytest.CaptureFixture[str],
    demo_mcp: MCPServer,  # noqa: F811
) -> None:
    known = KNOWN.get((path.name, wire.id), {})
    report: list[str] = []
    for peer in (p for p in PEERS if applies(p, path, wire)):
        problems = meet(peer, path, wire, capsys, demo_mcp)
        if problems and peer.name not in known:
            report.append(f"{peer.name}: " + "; ".join(problems))
        elif not problems and peer.name in known:
            report.append(f"{peer.name} passes now: remove it from KNOWN ({known[peer.name]})")
    assert not report, f"{path.name} / {wire.id}:\n" + "\n".join(report)


def test_every_peer_meets_some_path() -> None:
    met = {p.name for p in PEERS for path in PATHS for w in TARGETS if applies(p, path, w)}
    assert met == {p.name for p in PEERS}, "a peer meets no path"
    cased = {(c.values[0].name, c.values[1].id) for c in CASES}
    assert set(KNOWN) <= cased, f"KNOWN names cases that do not run: {set(KNOWN) - cased}"
    by_name = {p.name: p for p in PATHS}
    stale = [
        (path, target, peer)
        for (path, target), peers in KNOWN.items()
        for peer in peers
        if not applies(
            next(p for p in PEERS if p.name == peer),
            by_name[path],
            next(w for w in TARGETS if w.id == target),
        )
    ]
    assert not stale, f"KNOWN names peers that do not meet their case: {stale}"
