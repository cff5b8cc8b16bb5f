"""Background runs on OpenAI Responses: cassettes and a dropping loopback server.

The cassettes replay the recorded ``background-poll`` and ``background-stream``
calls (see cassettes/README.md); the resume tests serve the recorded stream
from a loopback server that drops the connection mid-stream and answers
``GET /v1/responses/{id}?stream=true&starting_after=N`` with the events after ``N``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from llmport import BackgroundError, BackgroundTimeout, Runtime
from llmport.messages.types import FinalEvent, StreamEvent, TextDelta
from llmport.testing import cassette as cassette_of
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from llmport.tools.tool import Tool
from openai_helpers import request_json
from state_scenarios import BACKGROUND_MODEL, BACKGROUND_QUESTION
from support.cassette_support import CASSETTES

POLL_ID = "resp_06a562f31ab7703300698b9df109c481979ebf760b2ff5fc75"
STREAM_ID = "resp_0da443d9ee8333600069950a0635d88196b2d9243b08e8cc01"
#: The recorded request's body, but for ``stream: false`` (llmport sends no default).
SUBMITTED = {
    "model": "gpt-4o",
    "input": [{"role": "user", "content": BACKGROUND_QUESTION}],
    "background": True,
}


def recorded_events() -> list[dict[str, Any]]:
    """The recorded background stream (from its cassette: the sample's events, unchanged)."""
    data = yaml.safe_load((CASSETTES / "openai/responses_background_stream.yaml").read_text())
    text = data["interactions"][0]["response"]["body"]["string"]
    return [
        {
            "event": block.split("\n")[0][len("event: ") :],
            "data": json.loads(block.split("data: ", 1)[1]),
        }
        for block in text.strip().split("\n\n")
    ]


def collect(job: Any, is_async: bool) -> list[StreamEvent]:
    if not is_async:
        return list(job.stream())

    async def gather() -> list[StreamEvent]:
        return [event async for event in job.astream()]

    return asyncio.run(gather())


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_submit_poll_and_result_replay_the_recorded_calls(
    cassette: Any, runtime: Any, is_async: bool
) -> None:
    rt = runtime(BACKGROUND_MODEL)
    with cassette("openai/responses_background_poll.yaml") as cass:
        if is_async:

            async def go() -> Any:
                job = await rt.asubmit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL)
                assert (await job.astatus()).state == "running"
                await job.wait_async(poll=0.0)
                return job, await job.aresult()

            job, result = asyncio.run(go())
        else:
            job = rt.submit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL)
            assert job.status().state == "running"  # in_progress
            job.wait(poll=0.0)
            result = job.result()
    assert request_json(cass, 0) == SUBMITTED
    assert [r.method for r in cass.requests] == ["POST", "GET", "GET"]
    assert all(r.uri.endswith(f"/v1/responses/{POLL_ID}?stream=false") for r in cass.requests[1:])
    assert job.id == f"openai-responses:{POLL_ID}" and job.response_id == POLL_ID
    assert job.last_status is not None and job.last_status.state == "completed"
    assert result.text == "2 + 2 equals 4." and result.response_id == POLL_ID
    assert result.usage.input_tokens > 0 and result.stop_reason == "end_turn"
    assert [m.role for m in result.messages] == ["user", "assistant"]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_submit_streaming_replays_the_recorded_stream(
    cassette: Any, runtime: Any, is_async: bool
) -> None:
    rt = runtime(BACKGROUND_MODEL)
    with cassette("openai/responses_background_stream.yaml") as cass:
        if is_async:

            async def go() -> list[StreamEvent]:
                job = await rt.asubmit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL, stream=True)
                assert job.response_id == STREAM_ID
                return [event async for event in job.astream()]

            events = asyncio.run(go())
        else:
            job = rt.submit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL, stream=True)
            assert job.response_id == STREAM_ID  # announced by response.created
            events = list(job.stream())
    assert request_json(cass, 0) == {**SUBMITTED, "stream": True}
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(texts) == "2 + 2 equals 4."
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.result.text == "2 + 2 equals 4."
    assert final.result.response_id == STREAM_ID


def test_cancel_replays_the_documented_cancel_call(cassette: Any, runtime: Any) -> None:
    rt = runtime(BACKGROUND_MODEL)
    with cassette("openai/responses_background_cancel.yaml") as cass:
        job = rt.submit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL)
        status = job.cancel()
    assert cass.requests[1].method == "POST"
    assert cass.requests[1].uri.endswith(f"/v1/responses/{POLL_ID}/cancel")
    assert status.state == "cancelled" and status.done and status.raw == "cancelled"
    with pytest.raises(BackgroundError, match="cancelled"):
        job.result()


# --- a loopback vendor that drops the stream -----------------------------------------------


class DroppingVendor:
    """Serves the recorded run: the submit's stream is cut after ``cut`` events; a resume
    (``starting_after=N``) gets the events after ``N``, cut again if ``cuts`` says so."""

    def __init__(self, cuts: list[int]) -> None:
        self.events = recorded_events()
        self.cuts = list(cuts)

    def answer(self, request: RecordedRequest) -> Reply:
        query = parse_qs(urlsplit(request.path).query)
        after = int(query["starting_after"][0]) if "starting_after" in query else -1
        rest = [e for e in self.events if e["data"]["sequence_number"] > after]
        if self.cuts:
            cut = self.cuts.pop(0)
            # Whole events up to the cut, then half of the next one and a hang-up.
            sent = rest[:cut]
            partial = json.dumps(rest[cut]["data"])[:20] if cut < len(rest) else ""
            body = (
                b"".join(
                    f"event: {e['event']}\ndata: {json.dumps(e['data'])}\n\n".encode() for e in sent
                )
                + f"event: {rest[cut]['event']}\ndata: {partial}".encode()
            )
            return Reply(
                body=body, headers={"content-type": "text/event-stream", "connection": "close"}
            )
        return Reply(sse=rest)


def make_rt(server: LoopbackServer) -> Runtime:
    return Runtime(
        providers={
            "openai-responses": {"api_key": "sk-test-not-a-key", "base_url": server.url + "/v1"}
        },
        max_retries=1,
    )


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("cuts", [[7], [3, 4]], ids=["one-drop", "two-drops"])
def test_a_dropped_stream_resumes_from_the_last_sequence_number(
    is_async: bool, cuts: list[int]
) -> None:
    vendor = DroppingVendor(cuts)
    with LoopbackServer([Reply(handler=vendor.answer)], repeat=True) as server:
        rt = make_rt(server)
        try:
            if is_async:

                async def go() -> list[StreamEvent]:
                    job = await rt.asubmit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL, stream=True)
                    return [event async for event in job.astream()]

                events = asyncio.run(go())
            else:
                job = rt.submit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL, stream=True)
                events = collect(job, False)
        finally:
            rt.close()
        paths = [r.path for r in server.requests]
    recorded = [
        e["data"]["delta"] for e in vendor.events if e["event"] == "response.output_text.delta"
    ]
    # Every delta once, in order: none duplicated, none lost.
    assert [e.text for e in events if isinstance(e, TextDelta)] == recorded
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.result.text == "2 + 2 equals 4."
    # One reconnection per drop, each from the last sequence number delivered.
    assert len(paths) == 1 + len(cuts)
    expected, seen = [], -1
    for cut in cuts:
        seen += cut
        expected.append(f"/v1/responses/{STREAM_ID}?stream=true&starting_after={seen}")
    assert paths[1:] == expected


def test_a_job_resumed_by_id_after_a_restart_polls_and_streams() -> None:
    events = recorded_events()
    completed = events[-1]["data"]["response"]
    with LoopbackServer([Reply(json=completed), Reply(sse=events)]) as server:
        rt = make_rt(server)
        try:
            job = rt.background_job(f"openai-responses:{STREAM_ID}")
            result = job.result()
            streamed = list(rt.background_job(f"openai-responses:{STREAM_ID}").stream())
        finally:
            rt.close()
        paths = [r.path for r in server.requests]
    assert result.text == "2 + 2 equals 4." and result.messages[-1].role == "assistant"
    assert isinstance(streamed[-1], FinalEvent) and streamed[-1].result.text == result.text
    assert paths == [
        f"/v1/responses/{STREAM_ID}?stream=false",
        f"/v1/responses/{STREAM_ID}?stream=true",
    ]


def test_wait_past_its_timeout_raises_and_the_run_goes_on() -> None:
    queued = {**recorded_events()[0]["data"]["response"], "status": "queued"}
    with LoopbackServer([Reply(json=queued)], repeat=True) as server:
        rt = make_rt(server)
        try:
            job = rt.submit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL)
            with pytest.raises(BackgroundTimeout) as raised:
                job.wait(poll=0.01, timeout=0.05)
            with pytest.raises(BackgroundError, match="wait"):
                job.result()
        finally:
            rt.close()
    assert raised.value.status.state == "queued"


def test_a_tool_call_ends_the_background_run_and_continues_in_the_foreground() -> None:
    base = recorded_events()[-1]["data"]["response"]
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "add",
        "arguments": '{"a": 2, "b": 2}',
        "status": "completed",
    }
    asked = {**base, "output": [call]}
    answered = {**base, "id": "resp_2", "background": False}
    add = Tool.from_schema(
        "add",
        "Add two numbers.",
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
        lambda a, b: a + b,
    )
    with LoopbackServer([Reply(json=asked), Reply(json=asked), Reply(json=answered)]) as server:
        rt = make_rt(server)
        try:
            job = rt.submit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL, tools=[add])
            first = job.result()
            assert first.stop_reason == "tool_use"
            assert [c.name for c in first.pending_tool_calls] == ["add"]
            final = first.continue_with({"call_1": 4})
        finally:
            rt.close()
        bodies = [r.json() for r in server.requests]
    assert bodies[0]["background"] is True and bodies[0]["tools"][0]["name"] == "add"
    assert "background" not in bodies[2]  # the rest runs in the foreground
    assert bodies[2]["input"][-1] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": "4",
    }
    assert final.text == "2 + 2 equals 4."


def test_a_stream_opened_by_asubmit_is_read_by_astream_only(cassette: Any, runtime: Any) -> None:
    from llmport import OptionError

    rt = runtime(BACKGROUND_MODEL)

    async def go() -> list[StreamEvent]:
        job = await rt.asubmit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL, stream=True)
        with pytest.raises(OptionError, match="astream"):
            list(job.stream())
        return [event async for event in job.astream()]

    with cassette("openai/responses_background_stream.yaml"):
        events = asyncio.run(go())
    assert isinstance(events[-1], FinalEvent) and events[-1].result.text == "2 + 2 equals 4."


def test_a_failed_run_raises_the_vendors_typed_error() -> None:
    from llmport import ProviderError

    base = recorded_events()[-1]["data"]["response"]
    failed = {
        **base,
        "status": "failed",
        "output": [],
        "error": {"code": "server_error", "message": "boom"},
    }
    with LoopbackServer([Reply(json={**base, "status": "queued"}), Reply(json=failed)]) as server:
        rt = make_rt(server)
        try:
            job = rt.submit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL)
            assert job.wait(poll=0.0).state == "failed"
            with pytest.raises(ProviderError, match="boom") as raised:
                job.result()
        finally:
            rt.close()
    assert raised.value.code == "server_error"


# --- a hostile vendor: replays without sequence numbers, endless drops, stalls ------


def sse_body(events: list[dict[str, Any]], tail: bytes = b"") -> bytes:
    """``events`` as SSE bytes, then ``tail`` (half an event: the connection is cut there)."""
    whole = b"".join(
        f"event: {e['event']}\ndata: {json.dumps(e['data'])}\n\n".encode() for e in events
    )
    return whole + tail


def cut_reply(events: list[dict[str, Any]]) -> Reply:
    """``events``, then half an event and a hang-up."""
    body = sse_body(events, b'event: response.output_text.delta\ndata: {"ty')
    return Reply(body=body, headers={"content-type": "text/event-stream", "connection": "close"})


def unnumbered() -> list[dict[str, Any]]:
    """The recorded stream without its sequence numbers (a peer that gives none)."""
    events = recorded_events()
    for event in events:
        event["data"].pop("sequence_number", None)
    return events


def delta_positions(events: list[dict[str, Any]]) -> list[int]:
    return [i for i, e in enumerate(events) if e["event"] == "response.output_text.delta"]


def stream_of(server: LoopbackServer, is_async: bool, **options: Any) -> tuple[list[Any], Any]:
    """Submit streaming and read the job's stream: (events, the error raised or None)."""
    rt = Runtime(
        providers={
            "openai-responses": {"api_key": "sk-test-not-a-key", "base_url": server.url + "/v1"}
        },
        max_retries=1,
        **options,
    )
    events: list[Any] = []

    async def agather() -> None:
        job = await rt.asubmit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL, stream=True)
        async for event in job.astream():
            events.append(event)

    try:
        if is_async:
            asyncio.run(agather())
        else:
            job = rt.submit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL, stream=True)
            for event in job.stream():
                events.append(event)
    except Exception as exc:
        return events, exc
    finally:
        rt.close()
    return events, None


def texts(events: list[Any]) -> list[str]:
    return [e.text for e in events if isinstance(e, TextDelta)]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_stream_without_sequence_numbers_is_interrupted_never_replayed(is_async: bool) -> None:
    """Dropped after two deltas and replayed from the start: never "Hello Hello"."""
    from llmport import StreamInterrupted

    events = unnumbered()
    cut = delta_positions(events)[1] + 1
    with LoopbackServer([cut_reply(events[:cut])], repeat=True) as server:
        got, error = stream_of(server, is_async)
        asked = len(server.requests)
    two = [e["data"]["delta"] for e in events[:cut] if e["event"] == "response.output_text.delta"]
    assert texts(got) == two  # shown once, nothing after
    assert isinstance(error, StreamInterrupted), repr(error)
    assert error.run is not None and error.run.text == "".join(two)
    assert asked == 1  # no blind reconnection


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_stream_without_sequence_numbers_dropped_before_any_text_restarts_unseen(
    is_async: bool,
) -> None:
    events = unnumbered()
    before_text = delta_positions(events)[0]
    with LoopbackServer([cut_reply(events[:before_text]), Reply(sse=events)]) as server:
        got, error = stream_of(server, is_async)
        paths = [r.path for r in server.requests]
    assert error is None, repr(error)
    assert "".join(texts(got)) == "2 + 2 equals 4."
    assert paths[1] == f"/v1/responses/{STREAM_ID}?stream=true"  # from the start again


class EndlessVendor:
    """Each connection gives one new numbered delta, then hangs up: progress, forever."""

    def __init__(self) -> None:
        self.first = recorded_events()[0]

    def answer(self, request: RecordedRequest) -> Reply:
        query = parse_qs(urlsplit(request.path).query)
        after = int(query["starting_after"][0]) if "starting_after" in query else 0
        delta = {
            "type": "response.output_text.delta",
            "sequence_number": after + 1,
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "x",
        }
        events = [self.first] if request.method == "POST" else []
        return cut_reply([*events, {"event": "response.output_text.delta", "data": delta}])


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_reconnections_are_bounded_even_when_each_one_makes_progress(is_async: bool) -> None:
    from llmport.engine.jobs.background import MAX_TOTAL_RECONNECTS
    from llmport.errors import LlmportError

    vendor = EndlessVendor()
    with LoopbackServer([Reply(handler=vendor.answer)], repeat=True) as server:
        got, error = stream_of(server, is_async)
        asked = len(server.requests)
    assert isinstance(error, LlmportError), repr(error)
    assert asked == 1 + MAX_TOTAL_RECONNECTS
    assert len(texts(got)) == asked  # each delta once


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_stalled_stream_is_cut_by_the_runtimes_timeout(is_async: bool) -> None:
    """Each read waits the Runtime's ``timeout=``, not the SDK's 600 s."""
    import time

    from llmport.errors import ProviderTimeoutError

    events = recorded_events()
    stalled = Reply(sse=events, delay=3.0)
    with LoopbackServer([cut_reply(events[:5]), stalled], repeat=True) as server:
        started = time.monotonic()
        got, error = stream_of(server, is_async, timeout=0.2)
        took = time.monotonic() - started
    assert isinstance(error, ProviderTimeoutError), repr(error)
    assert took < 2.5  # six reads of 0.2 s, not one of 3 s
    assert not any(isinstance(e, FinalEvent) for e in got)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(
    "bad",
    [b"event: x\ndata: [1, 2]\n\n", b'event: x\ndata: "\xff\xfe"\n\n', b"data: \xff\n\n"],
    ids=["json-array", "invalid-utf8-in-json", "invalid-utf8"],
)
def test_an_unreadable_event_is_a_malformed_response(bad: bytes, is_async: bool) -> None:
    from llmport.engine.jobs.background import MAX_RECONNECTS
    from llmport.errors import MalformedResponseError

    body = sse_body(recorded_events()[:3], bad)
    reply = Reply(body=body, headers={"content-type": "text/event-stream"})
    with LoopbackServer([reply], repeat=True) as server:
        _, error = stream_of(server, is_async)
        asked = len(server.requests)
    assert isinstance(error, MalformedResponseError), repr(error)
    assert error.__cause__ is None and error.__context__ is None
    # An event the converter cannot read ends the stream at once; bytes the SSE decoder
    # cannot read may be a transport fault: reconnected, within the bound.
    assert asked == 1 if b"[1, 2]" in bad else 1 < asked <= 1 + MAX_RECONNECTS


# --- a user's own recordings (llmport.testing.cassette) --------------------------------------


def background_session(url: str, is_async: bool) -> tuple[Any, ...]:
    """Submit and poll to the end, then submit streaming (the stream drops once, resumes)."""
    rt = make_rt(type("At", (), {"url": url})())  # type: ignore[arg-type]
    try:
        if is_async:

            async def go() -> tuple[Any, list[StreamEvent]]:
                job = await rt.asubmit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL)
                await job.wait_async(poll=0.0)
                result = await job.aresult()
                run = await rt.asubmit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL, stream=True)
                return result, [event async for event in run.astream()]

            result, events = asyncio.run(go())
        else:
            job = rt.submit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL)
            job.wait(poll=0.0)
            result = job.result()
            run = rt.submit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL, stream=True)
            events = list(run.stream())
    finally:
        rt.close()
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    usage = (result.usage.input_tokens, result.usage.output_tokens)
    return result.text, result.response_id, usage, texts, final.result.text


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_background_run_records_once_and_replays_offline(is_async: bool, tmp_path: Any) -> None:
    events = recorded_events()
    created, completed = events[0]["data"]["response"], events[-1]["data"]["response"]
    dropping = DroppingVendor([5])
    replies = [
        Reply(json={**created, "status": "queued"}),
        Reply(json={**created, "status": "in_progress"}),
        Reply(json=completed),
        Reply(handler=dropping.answer),  # the streamed submit, cut after 5 events
        Reply(handler=dropping.answer),  # its resume from the last sequence number
    ]
    path = tmp_path / "background.yaml"
    with LoopbackServer(replies) as server, cassette_of(path):
        recorded = background_session(server.url, is_async)
    assert len(server.requests) == 5
    with cassette_of(path, record="none") as replay:
        replayed = background_session(server.url, is_async)  # nothing listens there any more
    assert replay.play_count == 5
    assert replayed == recorded and recorded[0] == recorded[4] == "2 + 2 equals 4."
