"""The provider contract: pre-network checks, stream assembly, the scripted provider."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llmport import (
    MediaBlock,
    Message,
    ModelCapabilities,
    Provider,
    ProviderInfo,
    Request,
    Response,
    TextBlock,
    ToolCall,
    ToolSpec,
    UnsupportedContentError,
    UnsupportedFeatureError,
    Usage,
)
from llmport.errors import MalformedResponseError
from llmport.messages.types import StopEvent, TextDelta, ToolCallDelta, UsageEvent
from llmport.provider.assembly import StreamAssembler, assemble, parse_arguments, response_events
from llmport.testing import Script, ScriptExhausted, call_tools, reply
from support.core_helpers import Driver, make_tool, scripted

PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)


def image(**kw: Any) -> MediaBlock:
    defaults: dict[str, Any] = {"data": PNG}
    return MediaBlock("image", kw.pop("media_type", "image/png"), **{**defaults, **kw})


def provider(caps: ModelCapabilities) -> Provider:
    p = Provider(info=ProviderInfo(prefix="v", factory=Provider, default=caps))
    p.name = "vendor"
    return p


def request_with(*blocks: Any, **kw: Any) -> Request:
    return Request(model="m", messages=[Message("user", (TextBlock("hi"), *blocks))], **kw)


@pytest.mark.parametrize(
    ("caps", "block", "problem"),
    [
        (ModelCapabilities(), image(), "model takes no images"),
        (
            ModelCapabilities(
                input_modalities=frozenset({"text", "image"}), image_types=frozenset({"image/png"})
            ),
            image(media_type="image/gif", data=b"GIF89a" + bytes(8)),
            "image type image/gif not accepted",
        ),
        (
            ModelCapabilities(input_modalities=frozenset({"text", "image"}), image_urls=False),
            image(data=None, url="https://x/a.png"),
            "image URLs not accepted",
        ),
        (
            ModelCapabilities(input_modalities=frozenset({"text", "image"}), max_image_bytes=8),
            image(),
            "over the vendor limit of 8",
        ),
        (
            ModelCapabilities(input_modalities=frozenset({"text", "image"})),
            MediaBlock("audio", "audio/wav", data=b"RIFF"),
            "model takes no audio input",
        ),
        (
            ModelCapabilities(
                input_modalities=frozenset({"text", "audio"}), audio_types=frozenset({"audio/wav"})
            ),
            MediaBlock("audio", "audio/mpeg", data=b"ID3"),
            "audio type audio/mpeg not accepted",
        ),
        (
            ModelCapabilities(input_modalities=frozenset({"text", "file"})),
            MediaBlock("file", "application/pdf", data=b"%PDF-"),
            "files of type application/pdf",
        ),
        (ModelCapabilities(), MediaBlock("file", "image/png", data=PNG), "model takes no images"),
    ],
)
def test_prepare_rejects_what_the_model_cannot_take(
    caps: ModelCapabilities, block: MediaBlock, problem: str
) -> None:
    with pytest.raises(UnsupportedContentError, match=problem) as err:
        provider(caps).prepare(request_with(block))
    assert err.value.vendor == "vendor" and err.value.model == "m"


def test_prepare_accepts_what_the_model_takes() -> None:
    caps = ModelCapabilities(
        input_modalities=frozenset({"text", "image", "file"}),
        file_types=frozenset({"application/pdf"}),
    )
    provider(caps).prepare(
        request_with(
            image(),
            MediaBlock("file", "application/pdf", data=b"%PDF-"),
            MediaBlock("file", "text/csv", data=b"a,b"),
        )
    )


@pytest.mark.parametrize(
    ("caps", "kw", "feature"),
    [
        (ModelCapabilities(native_tools=False), {"tools": [ToolSpec("t", "", {})]}, "tools"),
        (ModelCapabilities(streaming=False), {"stream": True}, "streaming"),
        (
            ModelCapabilities(tool_choice_none=False),
            {"tools": [ToolSpec("t", "", {})], "tool_choice": "none"},
            'tool_choice="none"',
        ),
    ],
)
def test_prepare_rejects_features(
    caps: ModelCapabilities, kw: dict[str, Any], feature: str
) -> None:
    with pytest.raises(UnsupportedFeatureError) as err:
        provider(caps).prepare(request_with(**kw))
    assert err.value.feature == feature


def test_unsupported_feature_fails_before_any_request(drive: Driver) -> None:
    def noop() -> str:
        """Nothing."""
        return ""

    script = Script(["never"], capabilities=ModelCapabilities(native_tools=False))
    with pytest.raises(UnsupportedFeatureError, match="tools"):
        drive.exec(scripted(script), "q", tools=[make_tool(noop)])
    assert script.requests == []


def test_base_provider_call_is_not_implemented() -> None:
    with pytest.raises(NotImplementedError):
        Provider()._call(request_with())


def test_default_async_call_runs_the_sync_call_in_a_thread() -> None:
    import threading

    class Sync(Provider):
        def _call(self, request: Request) -> Response:
            return Response(text=threading.current_thread().name)

    async def main() -> tuple[str, str]:
        response = await Sync()._async_call(request_with())
        return response.text, threading.current_thread().name

    worker, loop_thread = asyncio.run(main())
    assert worker != loop_thread


def test_a_sync_stream_alone_streams_async_too_in_a_worker_thread() -> None:
    import threading

    class SyncStream(Provider):
        """The optional _stream without _astream: async streams must still stream."""

        def __init__(self) -> None:
            super().__init__()
            self.threads: list[str] = []
            self.closed = False

        def _call(self, request: Request) -> Response:
            raise AssertionError("the whole answer replayed instead of the stream")

        def _stream(self, request: Request) -> Any:
            try:
                for word in ("one ", "two ", "three"):
                    self.threads.append(threading.current_thread().name)
                    yield TextDelta(word)
                yield StopEvent("end_turn")
            finally:
                self.closed = True

    async def main(provider: SyncStream, take: int) -> tuple[list[Any], str]:
        events = []
        async for event in provider._astream(request_with()):
            events.append(event)
            if len(events) == take:
                break
        return events, threading.current_thread().name

    whole = SyncStream()
    events, loop_thread = asyncio.run(main(whole, 0))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["one ", "two ", "three"]
    assert isinstance(events[-1], StopEvent)
    assert loop_thread not in whole.threads and whole.closed

    left = SyncStream()
    events, _ = asyncio.run(main(left, 1))
    assert len(events) == 1 and len(left.threads) == 1
    assert left.closed, "a stream left early was not closed"


# --- stream assembly --------------------------------------------------------------------------


def test_assembler_joins_fragments_per_key_in_first_seen_order() -> None:
    response = assemble(
        [
            TextDelta("Let me "),
            ToolCallDelta(key="b", id="call_b", name="second", arguments='{"x":'),
            ToolCallDelta(key="a", id="call_a", name="first", arguments="{}", extra={"sig": "s1"}),
            TextDelta("check."),
            ToolCallDelta(key="b", arguments=" 1}"),
            UsageEvent(Usage(input_tokens=10)),
            UsageEvent(Usage(output_tokens=4)),
            StopEvent("tool_use", raw_stop_reason="tool_calls", model="m-1", id="resp_1"),
        ]
    )
    assert response.text == "Let me check."
    assert [(c.id, c.name, c.arguments, c.raw_arguments) for c in response.tool_calls] == [
        ("call_b", "second", {"x": 1}, '{"x": 1}'),
        ("call_a", "first", {}, "{}"),
    ]
    assert response.tool_calls[1].extra == {"sig": "s1"}
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.requests) == (
        10,
        4,
        1,
    )
    assert (response.stop_reason, response.raw_stop_reason, response.model, response.id) == (
        "tool_use",
        "tool_calls",
        "m-1",
        "resp_1",
    )


def test_stream_without_a_stop_event_is_malformed_and_transient() -> None:
    asm = StreamAssembler()
    asm.feed(TextDelta("cut off"))
    with pytest.raises(MalformedResponseError) as err:
        asm.response()
    assert err.value.retryable


def test_invalid_tool_arguments_keep_the_raw_text() -> None:
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments("") == {}
    assert parse_arguments("[1, 2]") == {}
    response = assemble(
        [ToolCallDelta(key=0, id="c", name="t", arguments='{"a": '), StopEvent("tool_use")]
    )
    assert (
        response.tool_calls[0].arguments == {} and response.tool_calls[0].raw_arguments == '{"a": '
    )


def test_response_events_round_trip() -> None:
    original = Response(
        text="hi",
        tool_calls=[ToolCall("c1", "t", {"k": "v"}, '{"k": "v"}')],
        usage=Usage(3, 4, requests=1),
        stop_reason="tool_use",
        model="m",
        id="r",
    )
    again = assemble(response_events(original))
    assert (again.text, again.tool_calls, again.stop_reason, again.model, again.id) == (
        "hi",
        original.tool_calls,
        "tool_use",
        "m",
        "r",
    )
    assert again.usage.to_dict() == original.usage.to_dict()


# --- the scripted provider ----------------------------------------------------------------------


def test_script_records_requests_and_reports_exhaustion(drive: Driver) -> None:
    script = Script(["only one"])
    rt = scripted(script)
    assert drive.exec(rt, "first") == "only one"
    assert script.remaining == 0
    with pytest.raises(ScriptExhausted, match="request #2"):
        drive.exec(rt, "second")
    assert [r.messages[-1].text for r in script.requests] == ["first", "second"]


def test_script_steps_can_compute_and_delay(drive: Driver) -> None:
    from llmport.testing import respond

    script = Script(
        [
            respond(lambda req: Response(text=req.messages[0].text.upper())),
            reply("slow", delay=0.05),
        ]
    )
    rt = scripted(script)
    assert drive.exec(rt, "shout") == "SHOUT"
    assert drive.run(rt, "q").latency >= 0.05


def test_script_tool_calls_get_unique_ids() -> None:
    step = call_tools(("a", {}), ("b", {"x": 1}))
    first, second = step.tool_calls
    assert first.id != second.id and second.arguments == {"x": 1}
