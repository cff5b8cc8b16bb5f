"""Images a model answered with, continued on every target.

A Gemini image model answers with an image (the fourth batch's
``wire-samples/gemini/image-output.json``), or OpenAI's ``image_generation``
tool does (``openai-responses/image-generation-in-history.json``), replayed
through the real plugin; the conversation then goes on,
``history=result.messages``, on each target, sync and async, whole and
streamed. Gemini takes its own image back in the model turn, with the
thought signature it came with, and takes another vendor's there too (Vertex
AI, "Thought signatures": an image part without one is not refused); OpenAI
Responses takes its own back as the bare ``image_generation_call``
reference. An assistant turn of the other APIs takes no image it did not
make: the image
goes the way the recordings send media the API cannot hold where it is
(``wire-samples/openai-chat/tool-result-image.json``): the assistant turn
says ``"See file <id>."`` and the next user turn carries ``"This is file
<id>:"`` and the image (:func:`llmport.plugin_api.move_answer_media`). A
target whose model takes no image refuses it, typed, before any request.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from llmport import Runtime
from llmport.errors import UnsupportedContentError
from llmport.messages.types import Message
from llmport.testing.loopback import LoopbackServer, Reply
from support.api_modes import MODES, run_via
from support.media_samples import JPEG, OPAQUE, PNG, interactions
from wire import TARGETS, Wire

Make = Callable[..., Runtime]
#: The answering vendor -> (its recording, the image in it once replayable).
SOURCES: dict[str, tuple[str, bytes]] = {
    "gemini": ("gemini/image-output.json", JPEG),
    "openai-responses": ("openai-responses/image-generation-in-history.json", PNG),
}

#: Where each target's request carries the earlier answer's image: ``"assistant"`` (in
#: the assistant/model turn, where it was), ``"user turn"`` (the next user turn, the
#: assistant turn naming the file) or ``"refused"`` (the model takes no image).
WHERE: dict[str, str] = {
    # Gemini's own image goes back on its part, with its signature (Gemini API,
    # "Thought signatures": image generation parts).
    "gemini": "assistant",
    "gemini-vertex": "assistant",
    # OpenAI API reference, "Create chat completion": an assistant message holds text.
    "openai-chat": "user turn",
    "openrouter": "user turn",
    "callonly": "user turn",  # its assistant entries hold text only
    "callonly-stream": "user turn",
    # Responses: an assistant message holds output text; images come back only as the
    # API's own image_generation_call.
    "openai-responses": "user turn",
    # Anthropic Messages and Bedrock Converse: assistant turns take no image.
    "anthropic": "user turn",
    "anthropic-vertex": "user turn",
    "bedrock": "user turn",
    # Models that take no image at all.
    "groq": "refused",
    "deepseek": "refused",
    "ollama": "refused",
    "mistral": "refused",
}


def image_answer(source: str, runtime: Make) -> list[Message]:
    """The conversation after ``source``'s image answer, as its plugin reads it."""
    recording, image = SOURCES[source]
    recorded = interactions(recording)[0]
    wire = next(w for w in TARGETS if w.id == source)
    with LoopbackServer([Reply(json=recorded["response"]["body"])]) as server:
        result = runtime(wire, server).run("Tell a story and draw it.")
    assert [i.data for i in result.images] == [image]
    return list(result.messages)


def image_paths(node: Any, image: bytes, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The paths to every string of ``node`` that holds ``image`` (base64, plain or URL-safe)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from image_paths(value, image, (*path, str(key)))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from image_paths(value, image, (*path, str(i)))
    elif isinstance(node, str):
        encoded = base64.b64encode(image).decode(), base64.urlsafe_b64encode(image).decode()
        if any(form in node for form in encoded):
            yield path


def turn_of(body: Any, path: tuple[str, ...]) -> dict[str, Any]:
    """The turn (a message or content entry with a role) ``path`` runs through."""
    node, turn = body, None
    for key in path:
        node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, dict) and "role" in node:
            turn = node
    assert turn is not None, f"no turn around {path}"
    return turn


def where_sent(body: Any, image: bytes) -> str:
    paths = list(image_paths(body, image))
    if not paths:  # not sent again: OpenAI's own image, by its image_generation_call id
        assert "'type': 'image_generation_call'" in str(body) and "ig_" in str(body)
        return "reference"
    (path,) = paths  # sent once
    role = turn_of(body, path)["role"]
    if role in ("assistant", "model"):
        return "assistant"
    assert role == "user", role
    label = hashlib.sha1(image, usedforsecurity=False).hexdigest()[:6]
    assert f"This is file {label}:" in str(body) and f"See file {label}." in str(body)
    return "user turn"


def expected_where(source: str, target: str) -> str:
    if source == target == "openai-responses":
        return "reference"
    if source != "gemini" and target == "gemini":
        return "assistant"  # not signed: Gemini does not refuse it (Vertex AI, as above)
    return WHERE[target]


def test_every_target_has_a_row() -> None:
    assert {w.id for w in TARGETS} == set(WHERE)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", TARGETS, ids=str)
@pytest.mark.parametrize("source", list(SOURCES))
async def test_an_answer_image_goes_on_to_every_target(
    source: str, wire: Wire, mode: str, stream: bool, runtime: Make
) -> None:
    history = image_answer(source, runtime)
    image = SOURCES[source][1]
    expected = expected_where(source, wire.id)
    reply = wire.stream_text_reply(["Bluer."]) if stream else wire.text_reply("Bluer.")
    with LoopbackServer([reply]) as server:
        rt = runtime(wire, server)
        if expected == "refused":
            with pytest.raises(UnsupportedContentError) as info:
                await run_via(mode, rt, "Make it blue.", history=history, stream=stream)
            assert info.value.__cause__ is None and "image" in str(info.value)
            assert server.requests == [], "the image was refused after a request went out"
            return
        result = await run_via(mode, rt, "Make it blue.", history=history, stream=stream)
    assert result.output == "Bluer."
    body = server.requests[0].json()
    assert where_sent(body, image) == expected
    assert "Make it blue." in str(body)
    signed = OPAQUE in str(body)  # the recorded signatures, reasoning (replaced by a real value)
    assert signed == (wire.id == source), "signed thinking went to another vendor"
