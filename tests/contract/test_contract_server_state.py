"""Server-side state: refused typed, before any request, where the vendor has none.

``previous_response_id=`` and ``conversation=`` exist only on OpenAI Responses;
on every other target each call path (exec, async_exec, stream, astream,
count_tokens) raises :class:`UnsupportedFeatureError` and the loopback
"vendor" sees no request. On OpenAI Responses the ids are sent, and a bad
value (or both options) is an :class:`OptionError` before any request.
"""

from __future__ import annotations

from typing import Any

import pytest
from llmport.errors import OptionError, UnsupportedFeatureError
from llmport.testing.loopback import LoopbackServer, Reply
from wire import TARGETS, Wire, make_runtime

WITHOUT_STATE = [pytest.param(w, id=w.id) for w in TARGETS if w.id != "openai-responses"]
RESPONSES = next(w for w in TARGETS if w.id == "openai-responses")
OPTIONS = [{"previous_response_id": "resp_1"}, {"conversation": "conv_1"}]


async def every_path(rt: Any, **options: Any) -> list[BaseException | None]:
    """What each call path raised with ``options`` (None: it returned)."""
    outcomes: list[BaseException | None] = []

    async def astream() -> None:
        async for _ in rt.astream("hi", **options):
            pass

    calls: list[Any] = [
        lambda: rt.exec("hi", **options),
        lambda: list(rt.stream("hi", **options)),
        lambda: rt.count_tokens("hi", **options),
    ]
    for call in calls:
        try:
            call()
            outcomes.append(None)
        except Exception as exc:
            outcomes.append(exc)
    for acall in (lambda: rt.async_exec("hi", **options), astream):
        try:
            await acall()
            outcomes.append(None)
        except Exception as exc:
            outcomes.append(exc)
    return outcomes


@pytest.mark.parametrize("wire", WITHOUT_STATE)
@pytest.mark.parametrize("options", OPTIONS, ids=["previous_response_id", "conversation"])
async def test_server_state_is_refused_typed_before_any_request(
    wire: Wire, options: dict[str, Any]
) -> None:
    with LoopbackServer([wire.text_reply("never")], repeat=True) as server:
        rt = make_runtime(wire, server)
        try:
            outcomes = await every_path(rt, **options)
        finally:
            rt.close()
        assert server.requests == [], f"{wire.id}: {len(server.requests)} request(s) sent"
    for outcome in outcomes:
        assert isinstance(outcome, UnsupportedFeatureError), repr(outcomes)
        assert next(iter(options)) in str(outcome)


@pytest.mark.parametrize("wire", WITHOUT_STATE)
def test_server_state_given_as_none_is_no_option(wire: Wire) -> None:
    with LoopbackServer([wire.text_reply("fine")]) as server:
        rt = make_runtime(wire, server)
        try:
            result = rt.run("hi", previous_response_id=None, conversation=None)
        finally:
            rt.close()
    assert result.text == "fine"
    assert result.response_id is None  # only a server that keeps answers has their ids


@pytest.mark.parametrize(
    "options",
    [
        {"previous_response_id": ""},
        {"conversation": 7},
        {"previous_response_id": "resp_1", "conversation": "conv_1"},
    ],
    ids=["empty", "not-a-string", "both"],
)
def test_bad_state_values_are_option_errors_before_any_request(options: dict[str, Any]) -> None:
    with LoopbackServer([RESPONSES.text_reply("never")], repeat=True) as server:
        rt = make_runtime(RESPONSES, server)
        try:
            with pytest.raises(OptionError):
                rt.exec("hi", **options)
        finally:
            rt.close()
        assert server.requests == []


def test_responses_records_the_answer_ids_and_continues_the_chain() -> None:
    """A manual run's continuation names the newest answer, and sends only the tool turn."""
    from llmport.tools.tool import Tool

    lookup = Tool.from_schema("lookup", "Look up.", {"type": "object", "properties": {}}, dict)
    replies = [RESPONSES.tool_call_reply("lookup", {}, "call_1"), RESPONSES.text_reply("done")]
    with LoopbackServer(replies) as server:
        rt = make_runtime(RESPONSES, server)
        try:
            first = rt.run(
                "go", tools=[lookup], tool_execution="manual", previous_response_id="resp_0"
            )
            final = first.continue_with({"call_1": "ok"})
        finally:
            rt.close()
        bodies = [r.json() for r in server.requests]
    assert bodies[0]["previous_response_id"] == "resp_0"
    assert bodies[1]["previous_response_id"] == first.response_id
    assert [i["type"] for i in bodies[1]["input"]] == ["function_call_output"]
    assert final.text == "done" and final.response_id is not None


@pytest.mark.parametrize("wire", WITHOUT_STATE)
async def test_background_runs_are_refused_typed_before_any_request(wire: Wire) -> None:
    """No background mode: submit, asubmit and background_job raise, nothing is sent."""
    with LoopbackServer([wire.text_reply("never")], repeat=True) as server:
        rt = make_runtime(wire, server)
        try:
            with pytest.raises(UnsupportedFeatureError, match="background"):
                rt.submit("hi")
            with pytest.raises(UnsupportedFeatureError, match="background"):
                await rt.asubmit("hi", stream=True)
            with pytest.raises(UnsupportedFeatureError, match="background"):
                rt.background_job(f"{wire.provider}:resp_1")
        finally:
            rt.close()
        assert server.requests == [], f"{wire.id}: {len(server.requests)} request(s) sent"


@pytest.mark.parametrize(
    "kwargs",
    [{"deadline": 5.0}, {"model": ["openai-responses:a", "openai-responses:b"]}, {"choices": []}],
    ids=["deadline", "fallback-list", "choices"],
)
def test_what_a_background_run_cannot_take_is_an_option_error(kwargs: dict[str, Any]) -> None:
    with LoopbackServer([RESPONSES.text_reply("never")], repeat=True) as server:
        rt = make_runtime(RESPONSES, server)
        try:
            with pytest.raises(OptionError):
                rt.submit("hi", **kwargs)
        finally:
            rt.close()
        assert server.requests == []


def test_count_tokens_counts_what_exec_would_send_with_server_state() -> None:
    """Counting parity: the count names the stored answer and counts only the new input."""
    history = [
        {"role": "user", "blocks": [{"type": "text", "text": "earlier"}]},
        {"role": "assistant", "blocks": [{"type": "text", "text": "answer"}]},
    ]
    reply = {"object": "response.input_tokens", "input_tokens": 7}
    with LoopbackServer([Reply(json=reply)]) as server:
        rt = make_runtime(RESPONSES, server)
        try:
            counted = rt.count_tokens("new question", history=history, previous_response_id="r_1")
        finally:
            rt.close()
        (request,) = server.requests
    body = request.json()
    assert request.path.endswith("/responses/input_tokens") and counted.input_tokens == 7
    assert body["previous_response_id"] == "r_1" and "store" not in body
    assert body["input"] == [{"role": "user", "content": "new question"}]


@pytest.mark.parametrize("wire", WITHOUT_STATE)
async def test_conversation_objects_are_refused_typed_before_any_request(wire: Wire) -> None:
    with LoopbackServer([wire.text_reply("never")], repeat=True) as server:
        rt = make_runtime(wire, server)
        try:
            with pytest.raises(UnsupportedFeatureError, match="conversation objects"):
                rt.create_conversation(provider=wire.provider)
            with pytest.raises(UnsupportedFeatureError, match="conversation objects"):
                await rt.adelete_conversation("conv_1", provider=wire.provider)
        finally:
            rt.close()
        assert server.requests == [], f"{wire.id}: {len(server.requests)} request(s) sent"
