"""OpenAI Responses' ``image_generation`` tool as ``NativeTool("image_generation", ...)``.

The request shape, the answer and the next turn's echo come from the fourth
batch's recordings (``wire-samples/openai-responses/image-generation*.json``,
truncated base64 replaced by real small images: :mod:`support.media_samples`).
No streamed recording exists (the README says so): the stream test follows
OpenAI's documented event order for ``partial_images``.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from llmport import FinalEvent, MediaBlock, MediaDelta, NativeTool, UnsupportedFeatureError
from llmport.errors import ExecFailed, MalformedResponseError
from llmport.messages.types import ServerToolCall
from llmport.testing.loopback import LoopbackServer, Reply
from support.media_samples import JPEG, PNG, interactions

GENERATION = "openai-responses/image-generation.json"
IN_HISTORY = "openai-responses/image-generation-in-history.json"
MODEL = "openai-responses:gpt-5"


def _recorded(name: str, index: int = 0) -> tuple[dict[str, Any], Reply]:
    exchange = interactions(name)[index]
    return exchange["request"]["body"], Reply(json=exchange["response"]["body"])


def test_the_tool_is_sent_as_recorded_and_the_image_is_a_media_block(
    drive: Any, runtime: Any
) -> None:
    recorded, reply = _recorded(GENERATION)
    options = {k: v for k, v in recorded["tools"][0].items() if k != "type"}
    with LoopbackServer([reply]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        result = drive.run(
            rt,
            content="Generate an image of axolotl.",
            tools=[NativeTool("image_generation", **options)],
            tool_choice="required",
        )
    sent = server.requests[0].json()
    assert sent["tools"] == recorded["tools"]  # every option as recorded, input_fidelity: null too
    assert sent["tool_choice"] == "required"
    (image,) = result.images
    assert (image.type, image.media_type, image.data) == ("image", "image/jpeg", JPEG)
    (call,) = [b for b in result.messages[-1].blocks if isinstance(b, ServerToolCall)]
    assert call.name == "image_generation" and call.id.startswith("ig_")
    assert call.input["size"] == "1536x1024" and call.input["revised_prompt"].startswith("Photo")
    assert result.output == ""  # the recorded message's text is empty


def test_the_image_goes_back_as_a_bare_reference_as_recorded(drive: Any, runtime: Any) -> None:
    first, reply = _recorded(IN_HISTORY)
    second, _ = _recorded(IN_HISTORY, 1)
    _, follow = _recorded(GENERATION)  # (the recorded second answer calls a function tool)
    with LoopbackServer([reply, follow]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        result = drive.run(
            rt,
            content="Generate an image of an axolotl.",
            tools=[NativeTool("image_generation")],
        )
        assert [i.data for i in result.images] == [PNG]
        drive.run(
            rt,
            history=result.messages,
            content="Make it blue.",
            tools=[NativeTool("image_generation")],
        )
    sent = server.requests[1].json()["input"]
    # The recorded second request: the reasoning item, then the image by reference only.
    reference = {"id": second["input"][2]["id"], "type": "image_generation_call"}
    assert second["input"][2] == reference
    assert sent[1] == second["input"][1] and sent[2] == reference
    assert "result" not in str(sent)  # the image's base64 is not sent again
    assert server.requests[0].json()["tools"] == [{"type": "image_generation"}]
    assert first["tools"][0] == {"type": "image_generation"}


@pytest.mark.parametrize(
    "store", [{"store": False}, {"vendor": {"openai": {"store": False}}}], ids=["option", "vendor"]
)
def test_with_store_false_the_image_itself_goes_back_in_its_item(
    drive: Any, runtime: Any, store: dict[str, Any]
) -> None:
    # store=False: OpenAI kept no response to resolve the bare reference from, so the
    # item carries its image (OpenAI's API reference, input item "Image generation call").
    _, reply = _recorded(IN_HISTORY)
    second, _ = _recorded(IN_HISTORY, 1)
    _, follow = _recorded(GENERATION)
    with LoopbackServer([reply, follow]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        result = drive.run(
            rt, content="Generate an image of an axolotl.", tools=[NativeTool("image_generation")]
        )
        drive.run(
            rt,
            history=result.messages,
            content="Make it blue.",
            tools=[NativeTool("image_generation")],
            **store,
        )
    sent = server.requests[1].json()
    assert sent["store"] is False
    recorded = second["input"][2]  # the recorded bare reference: same place, same id
    assert sent["input"][1] == second["input"][1]
    assert sent["input"][2] == {
        "id": recorded["id"],
        "type": "image_generation_call",
        "status": "completed",
        "result": base64.b64encode(PNG).decode(),
    }
    assert sent["input"][-1] == {"role": "user", "content": "Make it blue."}


def _stream_events(image: bytes, preview: bytes) -> list[dict[str, Any]]:
    """A streamed image generation in OpenAI's documented event order (no recording exists)."""
    _, reply = _recorded(GENERATION)
    done = dict(reply.json)
    item = dict(done["output"][1], result=base64.b64encode(image).decode())
    done["output"] = [item, done["output"][2]]
    started = {k: v for k, v in item.items() if k != "result"} | {"status": "in_progress"}
    events = [
        {"type": "response.created", "response": {**done, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": started},
        {
            "type": "response.image_generation_call.in_progress",
            "output_index": 0,
            "item_id": item["id"],
        },
        {
            "type": "response.image_generation_call.generating",
            "output_index": 0,
            "item_id": item["id"],
        },
        {
            "type": "response.image_generation_call.partial_image",
            "output_index": 0,
            "item_id": item["id"],
            "partial_image_index": 0,
            "partial_image_b64": base64.b64encode(preview).decode(),
        },
        {
            "type": "response.image_generation_call.completed",
            "output_index": 0,
            "item_id": item["id"],
        },
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 1, "item": done["output"][1]},
        {"type": "response.completed", "response": done},
    ]
    return [{"event": e["type"], "data": {**e, "sequence_number": n}} for n, e in enumerate(events)]


def test_partial_images_stream_as_previews_then_the_image(drive: Any, runtime: Any) -> None:
    reply = Reply(sse=_stream_events(JPEG, PNG))  # type: ignore[arg-type]
    with LoopbackServer([reply]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        events = drive.stream(
            rt,
            content="Generate an image of axolotl.",
            tools=[NativeTool("image_generation", partial_images=1)],
        )
    assert server.requests[0].json()["tools"] == [{"type": "image_generation", "partial_images": 1}]
    media = [e for e in events if isinstance(e, (MediaDelta, MediaBlock))]
    preview, image = media
    assert isinstance(preview, MediaDelta) and preview.index == 0
    assert (preview.block.media_type, preview.block.data) == ("image/png", PNG)
    assert isinstance(image, MediaBlock) and (image.media_type, image.data) == ("image/jpeg", JPEG)
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.images == [image]  # the preview is not part of the answer


@pytest.mark.parametrize(
    ("result", "why"),
    [
        ("not base64 at all!", "does not decode"),
        (base64.b64encode(PNG).decode(), "the bytes are image/png"),  # declared jpeg
    ],
)
def test_an_answer_image_that_lies_is_a_malformed_response(
    drive: Any, runtime: Any, result: str, why: str
) -> None:
    _, reply = _recorded(GENERATION)
    body = reply.json
    body["output"][1]["result"] = result
    with LoopbackServer([Reply(json=body)], repeat=True) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1", max_retries=1)
        with pytest.raises((MalformedResponseError, ExecFailed)) as info:
            drive.run(rt, content="Draw.", tools=[NativeTool("image_generation")])
    error = info.value
    cause = error if isinstance(error, MalformedResponseError) else error.__cause__
    assert isinstance(cause, MalformedResponseError) and why in str(cause)


@pytest.mark.parametrize("model", ["openai:gpt-5", "openai-responses:o3-mini"])
def test_models_without_the_tool_refuse_it_before_any_request(
    drive: Any, runtime: Any, model: str
) -> None:
    with LoopbackServer([]) as server:
        rt = runtime(model, base_url=server.url + "/v1")
        with pytest.raises(UnsupportedFeatureError, match="image_generation"):
            drive.run(rt, content="Draw.", tools=[NativeTool("image_generation")])
    assert server.requests == []


def test_unknown_options_are_refused_by_name(drive: Any, runtime: Any) -> None:
    with LoopbackServer([]) as server:
        rt = runtime(MODEL, base_url=server.url + "/v1")
        with pytest.raises(UnsupportedFeatureError, match="'colour'"):
            drive.run(rt, content="Draw.", tools=[NativeTool("image_generation", colour="blue")])
    assert server.requests == []
