"""Images out of Gemini: streamed image answers, ``output_modalities=``, sync and async.

Replies are the fourth batch's recordings (``wire-samples/gemini/image-output*.json``)
with their truncated base64 replaced by real small images
(:mod:`support.media_samples`), served by the loopback server.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from gemini_helpers import isolated, run, runtime, stream  # noqa: F401  (isolated: autouse)
from llmport import FinalEvent, MediaBlock, Runtime, TextDelta, UnsupportedFeatureError
from llmport.errors import LlmportError, MalformedResponseError
from llmport.messages.types import MediaDelta, TextBlock
from llmport.testing.loopback import LoopbackServer, Reply
from support.media_samples import PNG, interactions
from support.vertex_support import FakeCredentials

MODES = ["sync", "async"]
STREAM_SAMPLE = "gemini/image-output-stream.json"


def _streamed_reply(index: int = 0) -> tuple[dict[str, Any], Reply]:
    recorded = interactions(STREAM_SAMPLE)[index]
    return recorded["request"]["body"], Reply(sse=recorded["response"]["body"])


@pytest.mark.parametrize("mode", MODES)
async def test_a_streamed_image_is_a_media_event_and_in_the_result(mode: str) -> None:
    _, reply = _streamed_reply()
    with LoopbackServer([reply]) as server:
        events = await stream(
            mode,
            runtime("gemini:gemini-2.5-flash-image", base_url=server.url),
            content="Generate an image of an axolotl",
        )
    kinds = [type(e).__name__ for e in events if not type(e).__name__.startswith("Usage")]
    # Text deltas, then the image (whole, as the recording sends it), then the end.
    assert kinds[:4] == ["TextDelta"] * 4
    (image,) = [e for e in events if isinstance(e, MediaBlock)]
    assert kinds.index("MediaBlock") > kinds.index("TextDelta")
    assert (image.kind, image.type, image.media_type, image.data) == (
        "media",
        "image",
        "image/png",
        PNG,
    )
    assert not [e for e in events if isinstance(e, MediaDelta)]  # Gemini sends no previews
    final = events[-1]
    assert isinstance(final, FinalEvent)
    result = final.result
    assert [i.data for i in result.images] == [PNG]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert result.output == text == "Here is an image of an axolotl for you! \n"
    # The answer keeps its order: the text, then the image (then the last, empty, text part).
    blocks = result.messages[-1].blocks
    assert isinstance(blocks[0], TextBlock) and blocks[0].text == text
    assert blocks[1] is image


@pytest.mark.parametrize("mode", MODES)
async def test_a_streamed_image_goes_back_in_history(mode: str) -> None:
    _, reply = _streamed_reply()
    with LoopbackServer([reply]) as server:
        events = await stream(
            mode,
            runtime("gemini:gemini-2.5-flash-image", base_url=server.url),
            content="Generate an image of an axolotl",
        )
    history = events[-1].result.messages
    ok = Reply(sse=interactions(STREAM_SAMPLE)[1]["response"]["body"])
    with LoopbackServer([ok]) as server:
        await stream(
            mode,
            runtime("gemini:gemini-2.5-flash-image", base_url=server.url),
            history=history,
            content="Make it blue.",
        )
    model_turn = server.requests[0].json()["contents"][1]
    assert model_turn["role"] == "model"
    inline = [p["inlineData"] for p in model_turn["parts"] if "inlineData" in p]
    assert [base64.urlsafe_b64decode(i["data"]) for i in inline] == [PNG]
    assert inline[0]["mime_type"] == "image/png"


# --- output_modalities= -> generationConfig.responseModalities ------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("sample", "modalities"),
    [("gemini/image-output.json", ["text", "image"]), ("gemini/image-output-only.json", ["image"])],
)
async def test_output_modalities_are_sent_as_recorded(
    mode: str, sample: str, modalities: list[str]
) -> None:
    (recorded,) = interactions(sample)
    model = recorded["request"]["uri"].rsplit("/", 1)[1].split(":")[0]
    with LoopbackServer([Reply(json=recorded["response"]["body"])]) as server:
        result = await run(
            mode,
            runtime(f"gemini:{model}", base_url=server.url),
            content=recorded["request"]["body"]["contents"][0]["parts"][0]["text"],
            output_modalities=modalities,
        )
    sent = server.requests[0].json()["generationConfig"]
    wanted = recorded["request"]["body"]["generationConfig"]["responseModalities"]
    assert sent["responseModalities"] == wanted
    (image,) = result.images
    assert (image.media_type, image.data[:3]) == ("image/jpeg", b"\xff\xd8\xff")


@pytest.mark.parametrize("mode", MODES)
async def test_a_model_without_image_output_refuses_it_before_any_request(mode: str) -> None:
    refused = pytest.raises(UnsupportedFeatureError, match="output_modalities")
    with LoopbackServer([]) as server, refused:
        await run(
            mode,
            runtime("gemini:gemini-2.5-flash", base_url=server.url),
            content="Draw.",
            output_modalities=["text", "image"],
        )
    assert server.requests == []


# --- an answer image that lies -----------------------------------------------------------


def _chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [error]
    while todo:
        e = todo.pop()
        if e is None or e in seen:
            continue
        seen.append(e)
        todo += [e.__cause__, e.__context__]
    return seen


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("data", "mime"),
    [
        ("@@not base64 at all@@", "image/png"),  # does not decode
        (base64.b64encode(PNG).decode(), "image/jpeg"),  # a PNG said to be a JPEG
    ],
    ids=["invalid-base64", "contradicting-type"],
)
async def test_an_answer_image_that_lies_is_a_malformed_response(
    mode: str, data: str, mime: str
) -> None:
    (recorded,) = interactions("gemini/image-output-only.json")
    body = recorded["response"]["body"]
    body["candidates"][0]["content"]["parts"][0]["inlineData"] = {"data": data, "mimeType": mime}
    with LoopbackServer([Reply(json=body)]) as server, pytest.raises(LlmportError) as info:
        await run(
            mode,
            runtime("gemini:gemini-3-pro-image", base_url=server.url, max_retries=1),
            content="A cute baby sea otter",
        )
    chain = _chain(info.value)
    assert any(isinstance(e, MalformedResponseError) for e in chain)
    assert all(isinstance(e, LlmportError) for e in chain)  # nothing foreign (I1)


@pytest.mark.parametrize("mode", MODES)
async def test_vertex_image_output_with_its_format_options_as_recorded(mode: str) -> None:
    # wire-samples gemini-vertex/image-output-format.json: output_modalities plus the
    # imageConfig llmport does not model (sent with vendor=), and the JPEG in the answer.
    (recorded,) = interactions("gemini-vertex/image-output-format.json")
    config = recorded["request"]["body"]["generationConfig"]
    with LoopbackServer([Reply(json=recorded["response"]["body"])]) as server:
        rt = Runtime(
            model="gemini-vertex:gemini-2.5-flash-image",
            providers={
                "gemini-vertex": {
                    "project": "pydantic-ai",
                    "location": "global",
                    "credentials": FakeCredentials(),
                    "base_url": server.url,
                }
            },
        )
        result = await run(
            mode,
            rt,
            content="Generate an image of an axolotl.",
            output_modalities=["text", "image"],
            vendor={"gemini-vertex": {"generationConfig": {"imageConfig": config["imageConfig"]}}},
        )
    sent = server.requests[0]
    assert sent.path.endswith("/publishers/google/models/gemini-2.5-flash-image:generateContent")
    assert sent.json()["generationConfig"] == config
    (image,) = result.images
    assert (image.media_type, image.data[:3]) == ("image/jpeg", b"\xff\xd8\xff")
