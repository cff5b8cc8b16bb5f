"""Faults and retries: the same behaviour on every target, sync and async.

llmport is the one retry layer: transient failures are retried with the
vendor's Retry-After honoured (delays recorded, never slept), permanent ones
raise their typed error after exactly one request, and exhausted retries
raise ExecFailed listing every attempt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from llmport import (
    AuthenticationError,
    BadRequestError,
    ExecFailed,
    NotFoundError,
    OverloadedError,
    RateLimitError,
    Runtime,
    StreamInterrupted,
    StreamRestarted,
)
from llmport.errors import (
    MalformedResponseError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
)
from llmport.messages.types import FinalEvent, StreamEvent, TextDelta
from llmport.testing.loopback import LoopbackServer, Reply
from support.api_modes import MODES, events_via, run_via
from wire import TARGETS, Wire, profile_modes, raised, targets


def each_case(wires: list[Wire]) -> pytest.MarkDecorator:
    """Parametrize over (wire, mode): ``wires`` in every mode, each built-in profile in one."""
    cases = profile_modes(wires, MODES)
    return pytest.mark.parametrize(("wire", "mode"), cases, ids=[f"{w}-{m}" for w, m in cases])


each_target = each_case(TARGETS)
Make = Callable[..., Runtime]


@each_target
async def test_429_retry_after_is_honoured(wire: Wire, mode: str, runtime: Make) -> None:
    delays: list[float] = []
    with LoopbackServer([wire.rate_limit_reply("2"), wire.text_reply("fine")]) as server:
        result = await run_via(mode, runtime(wire, server, delays=delays), "hi")
        assert len(server.requests) == 2
    assert result.output == "fine"
    assert delays == [2.0], "the vendor's Retry-After (2 s) was not the delay used"
    assert [type(f.error) for f in result.failures] == [RateLimitError]


TRANSIENT = [
    (w, m, status) for w, m in profile_modes(TARGETS, MODES) for status in w.transient_statuses
]


@pytest.mark.parametrize(
    ("wire", "mode", "status"), TRANSIENT, ids=[f"{w}-{m}-{s}" for w, m, s in TRANSIENT]
)
async def test_transient_status_is_retried(
    wire: Wire, status: int, mode: str, runtime: Make
) -> None:
    delays: list[float] = []
    with LoopbackServer(
        [wire.error_reply(status, "try again later"), wire.text_reply("fine")]
    ) as server:
        result = await run_via(mode, runtime(wire, server, delays=delays), "hi")
        assert len(server.requests) == 2
    assert result.output == "fine"
    (failure,) = result.failures
    assert isinstance(failure.error, OverloadedError), repr(failure.error)
    assert failure.error.status == status and failure.error.retryable
    assert delays == [0.25]  # llmport's backoff (jitter off, initial 0.25), no Retry-After


@each_target
async def test_connection_reset_is_retried(wire: Wire, mode: str, runtime: Make) -> None:
    with LoopbackServer([Reply(reset=True), wire.text_reply("fine")]) as server:
        result = await run_via(mode, runtime(wire, server), "hi")
        assert len(server.requests) == 2
    assert result.output == "fine"
    assert isinstance(result.failures[0].error, ProviderConnectionError)


@each_target
async def test_client_timeout_is_retried(wire: Wire, mode: str, runtime: Make) -> None:
    slow = wire.text_reply("too late")
    slow.delay = 1.5
    with LoopbackServer([slow, wire.text_reply("fine")]) as server:
        result = await run_via(mode, runtime(wire, server), "hi", timeout=0.4)
        assert len(server.requests) == 2
    assert result.output == "fine"
    failure = result.failures[0].error
    assert isinstance(failure, ProviderTimeoutError) and failure.retryable, repr(failure)


@each_target
async def test_malformed_json_is_retried(wire: Wire, mode: str, runtime: Make) -> None:
    with LoopbackServer([wire.malformed_reply(), wire.text_reply("fine")]) as server:
        result = await run_via(mode, runtime(wire, server), "hi")
        assert len(server.requests) == 2
    assert result.output == "fine"
    failure = result.failures[0].error
    assert isinstance(failure, MalformedResponseError) and failure.retryable, repr(failure)


def wrong_type(value: Any) -> list[Any]:
    """Values of another JSON type than ``value`` (a list for an object and so on)."""
    return [v for v in ("nope", 5, [], {}) if type(v) is not type(value)]


def hostile_replies(wire: Wire) -> list[tuple[str, Reply]]:
    """A peer answering 200 with what is not the documented success.

    Bytes that are not UTF-8, a JSON array, and each field that holds the answer
    (``Wire.answer_fields``: ``choices``, ``output``, ``content``, ``candidates``)
    of another type: ``{"candidates": "nope"}`` was an empty success on Gemini.
    """
    good = wire.text_reply("fine")
    rows = [
        ("invalid-utf8", Reply(body=b'{"id": "\xff\xfe"}', headers=good.headers)),
        ("json-array", Reply(json=[1, 2], headers=good.headers)),
    ]
    for name in wire.answer_fields:
        for value in wrong_type(good.json[name]):
            body = {**good.json, name: value}
            rows.append(
                (f"{name}-as-{type(value).__name__}", Reply(json=body, headers=good.headers))
            )
    return rows


HOSTILE = [
    (w, m, name, reply)
    for w, m in profile_modes(TARGETS, MODES)
    if w.answer_fields
    for name, reply in hostile_replies(w)
]


@pytest.mark.parametrize(
    ("wire", "mode", "name", "reply"), HOSTILE, ids=[f"{w}-{m}-{n}" for w, m, n, _ in HOSTILE]
)
async def test_a_200_that_is_not_the_success_shape_is_malformed_and_retried(
    wire: Wire, mode: str, name: str, reply: Reply, runtime: Make
) -> None:
    with LoopbackServer([reply, wire.text_reply("fine")]) as server:
        result = await run_via(mode, runtime(wire, server), "hi")
        assert len(server.requests) == 2, name
    assert result.output == "fine"
    failure = result.failures[0].error
    assert isinstance(failure, MalformedResponseError) and failure.retryable, repr(failure)
    assert failure.__cause__ is None and failure.__context__ is None


FIRST = ["Hel", "lo ", "wor", "ld, ", "how ", "are ", "you ", "all ", "today?"]
SECOND = ["Bonjour ", "le monde ", "entier."]


#: Targets that stream incrementally (a whole-answer plugin cannot be cut after text).
STREAMING_CUT = targets("test_stream_cut_after_text_raises_stream_interrupted_never_splices")
STREAMING_RESTART = targets(
    "test_stream_retry_restart_announces_the_restart_then_the_whole_new_answer"
)


def shown(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


@each_case(STREAMING_CUT)
async def test_stream_cut_after_text_raises_stream_interrupted_never_splices(
    wire: Wire, mode: str, runtime: Make
) -> None:
    """Stream integrity: once the caller has text, no other answer continues it."""
    with LoopbackServer(
        [wire.truncated_stream_reply(FIRST), wire.stream_text_reply(SECOND)]
    ) as server:
        rt = runtime(wire, server)
        events: list[StreamEvent] = []
        try:
            if mode == "sync":
                for event in rt.stream("hi"):
                    events.append(event)
            else:
                async for event in rt.astream("hi"):
                    events.append(event)
        except StreamInterrupted as exc:
            err = exc
        else:
            raise AssertionError(f"no StreamInterrupted; the caller saw {shown(events)!r}")
        assert len(server.requests) == 1, "the cut stream was retried behind the caller's back"
    text = shown(events)
    assert text and "".join(FIRST).startswith(text), text
    assert err.run.text == text, "the partial result is not what the caller was shown"
    cause = err.__cause__
    assert isinstance(err, ProviderError) and isinstance(cause, ProviderError) and cause.retryable
    assert not any(isinstance(e, FinalEvent) for e in events)


@each_case(STREAMING_RESTART)
async def test_stream_retry_restart_announces_the_restart_then_the_whole_new_answer(
    wire: Wire, mode: str, runtime: Make
) -> None:
    with LoopbackServer(
        [wire.truncated_stream_reply(FIRST), wire.stream_text_reply(SECOND)]
    ) as server:
        events = await events_via(mode, runtime(wire, server), "hi", stream_retry="restart")
        assert len(server.requests) == 2
    restarts = [i for i, e in enumerate(events) if isinstance(e, StreamRestarted)]
    assert len(restarts) == 1, events
    before, after = events[: restarts[0]], events[restarts[0] + 1 :]
    assert "".join(FIRST).startswith(shown(before)) and shown(before)
    assert shown(after) == "".join(SECOND), "the restarted answer is not whole"
    assert events[restarts[0]] == StreamRestarted(2)
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.result.output == "".join(SECOND)
    assert final.result.failures and all(f.error.retryable for f in final.result.failures)


@each_target
async def test_stream_failing_before_any_event_is_retried_unseen(
    wire: Wire, mode: str, runtime: Make
) -> None:
    with LoopbackServer(
        [wire.error_reply(500, "internal error"), wire.stream_text_reply(SECOND)]
    ) as server:
        events = await events_via(mode, runtime(wire, server), "hi")
        assert len(server.requests) == 2
    assert not any(isinstance(e, StreamRestarted) for e in events)
    assert shown(events) == "".join(SECOND)
    final = events[-1]
    assert isinstance(final, FinalEvent) and [type(f.error) for f in final.result.failures] == [
        OverloadedError
    ]


@each_target
async def test_exhausted_retries_raise_exec_failed_listing_every_attempt(
    wire: Wire, mode: str, runtime: Make
) -> None:
    replies = [
        wire.error_reply(500, "internal error"),
        wire.rate_limit_reply("0"),
        Reply(reset=True),
        wire.text_reply("never sent"),
    ]
    with LoopbackServer(replies) as server:
        err = await raised(run_via(mode, runtime(wire, server, max_retries=3), "hi"))
        sent = len(server.requests)
    assert isinstance(err, ExecFailed), f"expected ExecFailed, got {err!r}"
    assert sent == 3
    assert isinstance(err, RuntimeError)
    assert [a.number for a in err.attempts] == [1, 2, 3]
    assert [type(a.error) for a in err.attempts] == [
        OverloadedError,
        RateLimitError,
        ProviderConnectionError,
    ]
    lines = str(err).splitlines()
    assert lines[0].startswith("exec() failed after 3 attempts"), lines[0]
    assert lines[1].strip().startswith("Attempt 1: OverloadedError"), lines
    assert lines[2].strip().startswith("Attempt 2: RateLimitError"), lines
    assert lines[3].strip().startswith("Attempt 3: ProviderConnectionError"), lines
    assert isinstance(err.last_error, ProviderConnectionError)


PERMANENT = [(400, BadRequestError), (401, AuthenticationError), (404, NotFoundError)]


@pytest.mark.parametrize(("status", "cls"), PERMANENT, ids=[str(s) for s, _ in PERMANENT])
@each_target
async def test_permanent_error_raises_at_once(
    wire: Wire, status: int, cls: type[ProviderError], mode: str, runtime: Make
) -> None:
    delays: list[float] = []
    with LoopbackServer([wire.error_reply(status, "no"), wire.text_reply("never")]) as server:
        rt = runtime(wire, server, delays=delays, max_retries=3)
        err = await raised(run_via(mode, rt, "hi"))
        sent = len(server.requests)
    assert isinstance(err, cls), f"expected {cls.__name__}, got {err!r} after {sent} request(s)"
    assert sent == 1, f"a permanent {status} was sent {sent} times"
    assert err.retryable is False
    assert delays == []
