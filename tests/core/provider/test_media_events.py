"""Images out of a call: stream events (MediaDelta, MediaBlock) and ``output_modalities=``."""

from __future__ import annotations

import asyncio
import base64

import pytest
from llmport import FinalEvent, MediaBlock, OptionError, TextDelta, UnsupportedFeatureError
from llmport.errors import MalformedResponseError
from llmport.messages.types import (
    MediaDelta,
    Response,
    StopEvent,
    TextBlock,
    UsageEvent,
)
from llmport.provider.assembly import StreamAssembler, assemble, response_events
from llmport.provider.media import answered_media
from llmport.testing import Script, respond

PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)
IMAGE = MediaBlock("image", "image/png", data=PNG)
PREVIEW = MediaBlock("image", "image/png", data=PNG[:12])


def test_an_image_is_a_block_in_stream_order_and_previews_are_not_content() -> None:
    response = assemble(
        [
            TextDelta("Here it is:"),
            MediaDelta(PREVIEW, key="ig_1", index=0),
            IMAGE,
            TextDelta(" enjoy."),
            StopEvent("end_turn"),
        ]
    )
    assert response.blocks == [TextBlock("Here it is:"), IMAGE, TextBlock(" enjoy.")]
    assert response.text == "Here it is: enjoy."


def test_an_image_alone_is_the_whole_answer() -> None:
    asm = StreamAssembler()
    for event in (IMAGE, StopEvent("end_turn")):
        asm.feed(event)
    assert asm.response().blocks == [IMAGE]


def test_a_whole_answer_with_an_image_streams_it_as_a_media_event() -> None:
    answer = Response(text="Here:", blocks=[TextBlock("Here:"), IMAGE])
    events = list(response_events(answer))
    assert IMAGE in events and isinstance(events[-1], StopEvent)
    assert assemble(events).blocks == [TextBlock("Here:"), IMAGE]


def _image_answer() -> Script:
    def answer(_request: object) -> Response:
        return Response(text="Here:", blocks=[TextBlock("Here:"), IMAGE], model="m")

    return Script([respond(answer)])  # type: ignore[arg-type]


def test_the_caller_sees_the_image_event_and_the_result_holds_it() -> None:
    rt = _image_answer().runtime()
    events = list(rt.stream("Draw."))
    shown = [e for e in events if not isinstance(e, UsageEvent)]
    assert [type(e) for e in shown] == [TextDelta, MediaBlock, FinalEvent]
    assert shown[1] is IMAGE and shown[1].kind == "media"
    result = shown[-1].result  # type: ignore[union-attr]
    assert result.images == [IMAGE]


@pytest.mark.parametrize("preview_first", [True, False])
def test_the_caller_sees_previews_before_the_image(preview_first: bool) -> None:
    from llmport.engine.effects import StreamReader

    reader = StreamReader()
    order = [MediaDelta(PREVIEW, "ig_1", 0), IMAGE] if preview_first else [IMAGE]
    shown = [reader.feed(e) for e in order]
    assert shown == order and reader.delivered == len(order)


def test_async_callers_see_the_image_event_too() -> None:
    async def main() -> list[object]:
        rt = _image_answer().runtime()
        return [e async for e in rt.astream("Draw.")]

    events = asyncio.run(main())
    assert [e for e in events if isinstance(e, MediaBlock)] == [IMAGE]


# --- output_modalities= ---------------------------------------------------------------


def test_a_modality_the_model_cannot_answer_with_is_refused_before_any_request() -> None:
    script = Script(["never sent"])
    with pytest.raises(UnsupportedFeatureError, match=r"output_modalities \['image'\]"):
        script.runtime().run("Draw.", output_modalities=["text", "image"])
    assert script.requests == []
    assert script.runtime().run("Hi.", output_modalities=["text"]).output == "never sent"


@pytest.mark.parametrize("value", ["video", [], ["text", 3], {"text": True}])
def test_output_modalities_must_name_known_modalities(value: object) -> None:
    script = Script(["never sent"])
    with pytest.raises(OptionError, match="output_modalities"):
        script.runtime().run("Draw.", output_modalities=value)  # type: ignore[arg-type]
    assert script.requests == []


# --- answered_media: the one reader of media a vendor answered with ---------------------


def test_an_answered_image_keeps_its_base64_and_the_vendors_type_parameters() -> None:
    encoded = base64.b64encode(PNG).decode()
    block = answered_media("v", encoded, "image/png")
    assert (block.type, block.data, block.base64()) == ("image", PNG, encoded)
    assert answered_media("v", encoded.translate(str.maketrans("+/", "-_")), None).data == PNG
    speech = answered_media("v", b"\x00\x01" * 8, "audio/L16;codec=pcm;rate=24000")
    assert (speech.type, speech.media_type) == ("audio", "audio/L16;codec=pcm;rate=24000")


@pytest.mark.parametrize(
    ("data", "media_type", "why"),
    [
        ("not base64!", "image/png", "does not decode"),
        (base64.b64encode(PNG).decode(), "image/jpeg", "the bytes are image/png"),
        (base64.b64encode(b"plain text").decode(), None, "no known type"),
        ("", "image/png", "no bytes"),
    ],
)
def test_an_answered_image_that_lies_is_malformed(
    data: str, media_type: str | None, why: str
) -> None:
    with pytest.raises(MalformedResponseError, match=why) as info:
        answered_media("v", data, media_type)
    assert info.value.__cause__ is None and info.value.__context__ is None
