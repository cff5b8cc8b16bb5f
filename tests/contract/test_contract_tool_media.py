"""Media returned by a tool: a screenshot tool runs on every target.

Each vendor gets the image the way its API takes it: inside the tool result
where the API holds media there, else named in the result (``"See file
<id>."``) and carried by the user turn that follows it, as the fourth-batch
wire samples record; a target whose model takes no image at all refuses it,
typed, before the second request.

The recordings of the vendors that hold media inside a tool result
(wire-samples ``*/tool-result-image.json``) also replay through the real
plugins: the tool result sent has the recorded shape.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from llmport import Runtime
from llmport.errors import UnsupportedContentError
from llmport.messages.types import MediaBlock
from llmport.testing.loopback import LoopbackServer, Reply
from support.api_modes import MODES, run_via
from support.media_samples import JPEG, interactions
from wire import TARGETS, Wire

Make = Callable[..., Runtime]
CALL_ID = "call_Screenshot001"
#: A real 4x4 PNG: the media check reads the header, so it must be one.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR42mOoWKABRwzEcQANUhQBTb1e7wAAAABJRU5ErkJggg=="
)
LABEL = hashlib.sha1(PNG, usedforsecurity=False).hexdigest()[:6]

#: Where each target's request carries the tool's image: ``"result"`` (inside the tool
#: result), ``"user turn"`` (a following user turn, the result naming the file) or
#: ``"refused"`` (the model takes no image: an UnsupportedContentError).
WHERE: dict[str, str] = {
    "openai-chat": "user turn",  # wire-samples openai-chat/tool-result-image.json
    "openai-responses": "result",  # openai-responses/tool-result-image.json
    "anthropic": "result",  # anthropic/tool-result-image.json
    "gemini": "user turn",  # gemini-2.5-flash: gemini/tool-result-audio.json
    "bedrock": "result",  # Claude Sonnet 4.5: bedrock/tool-result-image.json
    "anthropic-vertex": "result",  # the Messages API, as anthropic
    "gemini-vertex": "user turn",  # gemini-2.5-flash, as gemini
    "callonly": "user turn",  # its tool results hold text (move_tool_media)
    "callonly-stream": "user turn",
    "groq": "refused",  # llama-3.3-70b-versatile takes no image
    "deepseek": "refused",
    "ollama": "refused",
    "mistral": "refused",  # mistral-large-latest takes no image
    "openrouter": "user turn",
}
#: Keys under which a vendor's request holds a tool result.
RESULT_KEYS = {"tool_result", "toolResult", "functionResponse", "function_call_output"}


def screenshot() -> list[Any]:
    """Take a screenshot of the screen."""
    return ["Screenshot taken.", MediaBlock("image", "image/png", data=PNG)]


def asks_for_the_screenshot(wire: Wire, stream: bool) -> Reply:
    if stream:
        return wire.stream_tool_call_reply("screenshot", ["{}"], CALL_ID)
    return wire.tool_call_reply("screenshot", {}, CALL_ID)


def answers(wire: Wire, stream: bool) -> Reply:
    if stream:
        return wire.stream_text_reply(["A kiwi."])
    return wire.text_reply("A kiwi.")


def image_paths(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The paths to every string of ``node`` that holds the PNG (base64, plain or URL-safe)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from image_paths(value, (*path, str(key)))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from image_paths(value, (*path, str(i)))
    elif isinstance(node, str):
        encoded = base64.b64encode(PNG).decode()
        if encoded in node or base64.urlsafe_b64encode(PNG).decode() in node:
            yield path


def where_sent(body: Any) -> str:
    (path,) = list(image_paths(body))  # sent once, not twice
    inside = any(key in RESULT_KEYS for key in path) or _inside_result_item(body, path)
    if inside:
        return "result"
    assert LABEL in str(body), "the tool result does not name the file the user turn carries"
    return "user turn"


def _inside_result_item(body: Any, path: tuple[str, ...]) -> bool:
    """Whether ``path`` runs through an item whose ``type`` names a tool result."""
    node = body
    for key in path:
        if isinstance(node, dict) and node.get("type") in RESULT_KEYS:
            return True
        node = node[int(key)] if isinstance(node, list) else node[key]
    return False


def test_every_target_has_a_row() -> None:
    assert {w.id for w in TARGETS} == set(WHERE)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", TARGETS, ids=str)
async def test_a_screenshot_tool_reaches_the_model(
    wire: Wire, mode: str, stream: bool, runtime: Make
) -> None:
    expected = WHERE[wire.id]
    replies = [asks_for_the_screenshot(wire, stream), answers(wire, stream)]
    with LoopbackServer(replies) as server:
        rt = runtime(wire, server)
        if expected == "refused":
            with pytest.raises(UnsupportedContentError) as info:
                await run_via(mode, rt, "What is on screen?", tools=[screenshot], stream=stream)
            assert info.value.__cause__ is None and "image" in str(info.value)
            assert len(server.requests) == 1, "the image was refused after a request went out"
            return
        result = await run_via(mode, rt, "What is on screen?", tools=[screenshot], stream=stream)
        assert len(server.requests) == 2
    assert result.output == "A kiwi."
    body = server.requests[1].json()
    assert where_sent(body) == expected
    assert "Screenshot taken." in str(body)
    (outcome,) = result.tool_calls
    (kept,) = outcome.result.blocks  # the run's history keeps the media as the tool gave it
    assert isinstance(kept, MediaBlock) and (kept.media_type, kept.data) == ("image/png", PNG)


# --- the recordings replayed: the tool result has the recorded shape -------------------------

#: target -> (recording, where its tool result is in the second request's body)
RECORDED: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "anthropic": (
        "anthropic/tool-result-image.json",
        lambda body: body["messages"][2]["content"][0],
    ),
    "openai-responses": (
        "openai-responses/tool-result-image.json",
        lambda body: next(i for i in body["input"] if i.get("type") == "function_call_output"),
    ),
    "bedrock": (
        "bedrock/tool-result-image.json",
        lambda body: body["messages"][2]["content"][0],
    ),
}


def get_file() -> MediaBlock:
    """Get the file."""
    return MediaBlock("image", "image/jpeg", data=JPEG)


def _masked(node: Any) -> Any:
    """``node`` with every image's base64 (plain, in a data URL) replaced by a marker."""
    if isinstance(node, dict):
        return {k: _masked(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_masked(v) for v in node]
    if isinstance(node, str) and node.removeprefix("data:image/jpeg;base64,").startswith("/9j/"):
        return "data:<jpeg>" if node.startswith("data:") else "<jpeg>"
    return node


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("target", sorted(RECORDED))
async def test_the_recorded_tool_result_shape_is_sent(
    mode: str, target: str, runtime: Make
) -> None:
    name, result_of = RECORDED[target]
    recorded = interactions(name)
    wire = next(w for w in TARGETS if w.id == target)
    # The recorded model (Bedrock's is in the URL: the target's own Claude Sonnet 4.5 profile).
    model = recorded[0]["request"]["body"].get("model") or wire.model.partition(":")[2]
    replies = [Reply(json=exchange["response"]["body"]) for exchange in recorded]
    prompt = "Use the get_file tool now to retrieve a image file, then describe what you received."
    with LoopbackServer(replies) as server:
        result = await run_via(
            mode,
            runtime(wire, server),
            prompt,
            tools=[get_file],
            model=f"{wire.provider}:{model}",
        )
    assert "kiwi" in result.output.lower()
    sent = result_of(server.requests[1].json())
    assert _masked(sent) == _masked(result_of(recorded[1]["request"]["body"]))
