"""Your own recordings on every target: record once against the "vendor", replay offline.

Each target's traffic is recorded with :func:`llmport.testing.cassette` while a
loopback server plays the vendor, then replayed with the server stopped: the
same RunResult (text, tool calls, usage, stop reason) and the same stream
events in the same order. Keys never reach the file; a changed prompt fails
with the JSON path that differs; ``record="new"`` records only what is new.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llmport import CassetteMismatch, CassetteSecretError, Runtime, tool
from llmport.messages.types import FinalEvent, StreamEvent
from llmport.observe.redaction import isolated_secrets, register_secret
from llmport.testing import cassette
from llmport.testing.loopback import LoopbackServer
from wire import Wire, profile_modes, targets

Make = Callable[..., Runtime]
CASES = profile_modes(targets("recordings"), ["sync", "async"])


@tool
def lookup(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def replies(wire: Wire) -> list[Any]:
    return [
        wire.tool_call_reply("lookup", {"city": "Paris"}, "call_1"),
        wire.text_reply("Sunny in Paris."),
        wire.stream_text_reply(["Bon", "jour"]),
    ]


def conversation(rt: Runtime, mode: str) -> tuple[Any, list[StreamEvent]]:
    """A tool loop, then a streamed answer: what the app under test does."""
    if mode == "sync":
        return rt.run("Weather in Paris?", tools=[lookup]), list(rt.stream("Say hello"))

    async def go() -> tuple[Any, list[StreamEvent]]:
        result = await rt.arun("Weather in Paris?", tools=[lookup])
        return result, [event async for event in rt.astream("Say hello")]

    return asyncio.run(go())


def summary(result: Any) -> tuple[Any, ...]:
    calls = [(r.call.name, r.call.arguments, r.result.content) for r in result.tool_calls]
    usage = (result.usage.input_tokens, result.usage.output_tokens)
    return result.text, calls, usage, result.stop_reason


def events_of(events: list[StreamEvent]) -> list[Any]:
    """The events with what varies between two runs left out (timings, ids of nodes)."""
    shown = []
    for event in events:
        if isinstance(event, FinalEvent):
            shown.append(("final", summary(event.result)))
        else:
            shown.append(repr(event))
    return shown


def stopped(url: str) -> Any:
    """Where the vendor was: nothing listens there any more."""
    return type("Stopped", (), {"url": url})()


@pytest.mark.parametrize(("wire", "mode"), CASES, ids=lambda c: str(c))
def test_record_then_replay_offline_gives_the_same_result_and_events(
    wire: Wire, mode: str, runtime: Make, tmp_path: Path
) -> None:
    path = tmp_path / "app.yaml"
    with LoopbackServer(replies(wire)) as server, cassette(path):
        recorded = conversation(runtime(wire, server, max_retries=1), mode)
    assert len(server.requests) == 3

    with cassette(path, record="none") as replay:
        replayed = conversation(runtime(wire, stopped(server.url), max_retries=1), mode)
    assert replay.play_count == 3
    assert summary(replayed[0]) == summary(recorded[0])
    assert recorded[0].tool_calls and recorded[0].text == "Sunny in Paris."
    assert events_of(replayed[1]) == events_of(recorded[1])
    assert str(replayed[1][-1].result.output) == "Bonjour"


@pytest.mark.parametrize("wire", targets("recordings"), ids=str)
def test_a_key_echoed_by_the_vendor_never_reaches_the_cassette(
    wire: Wire, runtime: Make, tmp_path: Path
) -> None:
    creds = wire.credentials("custom")
    key = wire.secrets(creds)[0]
    answer = wire.text_reply(f"Your key {key} ends in {key[-12:]}; sk-proj-{key[-10:]}xyz")
    answer.headers["x-echoed-key"] = key
    path = tmp_path / "app.yaml"
    with LoopbackServer([answer]) as server, cassette(path):
        runtime(wire, server, creds=creds, max_retries=1).exec("hi")
    text = path.read_text()
    assert "x-echoed-key" in text and "Your key" in text
    for secret in wire.secrets(creds):
        assert secret not in text
        assert secret[-12:] not in text and secret[:12] not in text


@pytest.mark.parametrize(("wire", "mode"), CASES, ids=lambda c: str(c))
def test_the_key_of_a_runtime_used_before_the_cassette_never_reaches_it(
    wire: Wire, mode: str, runtime: Make, tmp_path: Path
) -> None:
    # The provider exists before the cassette opens: the cassette learns its key when the
    # call crosses the vendor boundary inside it.
    creds = wire.credentials("custom")
    key = wire.secrets(creds)[0]
    answer = wire.text_reply(f"Your key {key} ends in {key[-12:]}")
    path = tmp_path / "app.yaml"
    with LoopbackServer([wire.text_reply("warm"), answer]) as server:
        rt = runtime(wire, server, creds=creds, max_retries=1)
        assert rt.exec("warm up") == "warm"
        with cassette(path):
            rt.exec("hi") if mode == "sync" else asyncio.run(rt.async_exec("hi"))
    text = path.read_text()
    assert "Your key" in text
    for secret in wire.secrets(creds):
        assert secret not in text and secret[-12:] not in text


@pytest.mark.parametrize("wire", targets("recordings")[:5], ids=str)
def test_a_cassette_edited_to_hold_a_key_is_refused_on_the_next_write(
    wire: Wire, runtime: Make, tmp_path: Path
) -> None:
    creds = wire.credentials("custom")
    key = wire.secrets(creds)[0]
    path = tmp_path / "app.yaml"
    with LoopbackServer([wire.text_reply("one"), wire.text_reply("two")]) as server:
        rt = runtime(wire, server, creds=creds, max_retries=1)
        with cassette(path):
            rt.exec("first")
        path.write_text(path.read_text().replace("one", f"one {key}"))
        before = path.read_text()
        with pytest.raises(CassetteSecretError) as refused, cassette(path, record="new"):
            rt.exec("second")
    assert refused.value.where.startswith("interactions[0].response.body")
    assert path.read_text() == before  # never written


@pytest.mark.parametrize("wire", targets("recordings")[:5], ids=str)
def test_a_key_this_cassette_never_used_neither_masks_nor_refuses_it(
    wire: Wire, runtime: Make, tmp_path: Path
) -> None:
    # A key an unrelated runtime registered in this process, whose 8+ character runs match
    # this cassette's text: the cassette is checked and scrubbed with its own keys only.
    path = tmp_path / "app.yaml"
    with LoopbackServer([wire.text_reply("Order 7Q4ZK9XW2R8M shipped.")]) as server, cassette(path):
        runtime(wire, server, max_retries=1).exec("first")
    with isolated_secrets():  # the unrelated key goes with the test
        register_secret("sk-fake-other-7Q4ZK9XW2R8Mxyz")
        delivered = wire.text_reply("Order 7Q4ZK9XW2R8M delivered.")
        with LoopbackServer([delivered]) as server, cassette(path, record="new"):
            runtime(wire, server, max_retries=1).exec("second")
    text = path.read_text()
    assert "7Q4ZK9XW2R8M shipped." in text and "7Q4ZK9XW2R8M delivered." in text
    with cassette(path, record="none") as replay:
        rt = runtime(wire, stopped(server.url), max_retries=1)
        assert [rt.exec("first"), rt.exec("second")] == [
            "Order 7Q4ZK9XW2R8M shipped.",
            "Order 7Q4ZK9XW2R8M delivered.",
        ]
    assert replay.play_count == 2


@pytest.mark.parametrize("wire", targets("recordings")[:5], ids=str)
def test_a_changed_prompt_fails_replay_with_the_json_path_that_differs(
    wire: Wire, runtime: Make, tmp_path: Path
) -> None:
    path = tmp_path / "app.yaml"
    with LoopbackServer([wire.text_reply("one")]) as server, cassette(path):
        runtime(wire, server, max_retries=3).exec("What is the capital of France?")
    rt = runtime(wire, stopped(server.url), max_retries=3)
    with pytest.raises(CassetteMismatch) as miss, cassette(path):
        rt.exec("What is the capital of Spain?")
    assert "France" in str(miss.value.recorded) and "Spain" in str(miss.value.sent)
    assert miss.value.path.startswith("$.") and miss.value.path in str(miss.value)
    assert miss.value.__cause__ is None and miss.value.__suppress_context__


@pytest.mark.parametrize("wire", targets("recordings")[:5], ids=str)
def test_record_new_records_only_the_new_interaction(
    wire: Wire, runtime: Make, tmp_path: Path
) -> None:
    path = tmp_path / "app.yaml"
    with LoopbackServer([wire.text_reply("one")]) as server, cassette(path):
        runtime(wire, server, max_retries=1).exec("first")
    with LoopbackServer([wire.text_reply("two")]) as server:
        rt = runtime(wire, server, max_retries=1)
        with cassette(path, record="new") as both:
            assert rt.exec("first") == "one"  # replayed
            assert rt.exec("second") == "two"  # recorded
        assert len(server.requests) == 1 and both.play_count == 1
    with cassette(path, record="none") as replay:
        rt = runtime(wire, stopped(server.url), max_retries=1)
        assert [rt.exec("first"), rt.exec("second")] == ["one", "two"]
    assert replay.interactions == 2


@pytest.mark.parametrize("wire", targets("recordings")[:5], ids=str)
def test_a_large_image_goes_to_a_side_file_and_replays(
    wire: Wire, runtime: Make, tmp_path: Path
) -> None:
    image = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 24  # over the side-file threshold
    content = [
        {"type": "text", "text": "Describe it."},
        {"type": "image", "data": image, "media_type": "image/png"},
    ]
    path = tmp_path / "app.yaml"
    with LoopbackServer([wire.text_reply("A gradient.")]) as server, cassette(path):
        runtime(wire, server, max_retries=1).exec(content)
    side = list((tmp_path / "app.media").iterdir())
    assert len(side) == 1 and len(side[0].read_text()) > 4096
    assert f"llmport-media:{side[0].name}" in path.read_text()
    assert len(path.read_text()) < 4096  # the cassette itself stays readable
    with cassette(path, record="none"):
        assert runtime(wire, stopped(server.url), max_retries=1).exec(content) == "A gradient."


@pytest.mark.parametrize("wire", targets("recordings")[:3], ids=str)
def test_the_async_httpx_transport_records_and_replays_too(
    wire: Wire, runtime: Make, tmp_path: Path
) -> None:
    # The async default is aiohttp where installed (the cases above); httpx is the other seam.
    path, settings = tmp_path / "app.yaml", {"async_transport": "httpx"}
    with LoopbackServer(replies(wire)) as server, cassette(path):
        recorded = conversation(runtime(wire, server, max_retries=1, settings=settings), "async")
    with cassette(path, record="none"):
        rt = runtime(wire, stopped(server.url), max_retries=1, settings=settings)
        replayed = conversation(rt, "async")
    assert summary(replayed[0]) == summary(recorded[0])
    assert events_of(replayed[1]) == events_of(recorded[1])


@pytest.mark.parametrize("wire", targets("recordings")[:1], ids=str)
def test_record_all_records_every_request_again(wire: Wire, runtime: Make, tmp_path: Path) -> None:
    path = tmp_path / "app.yaml"
    with LoopbackServer([wire.text_reply("old")]) as server, cassette(path):
        runtime(wire, server, max_retries=1).exec("hi")
    with LoopbackServer([wire.text_reply("new")]) as server, cassette(path, record="all"):
        assert runtime(wire, server, max_retries=1).exec("hi") == "new"
    assert len(server.requests) == 1
    with cassette(path, record="none") as replay:
        assert runtime(wire, stopped(server.url), max_retries=1).exec("hi") == "new"
    assert replay.interactions == 1
