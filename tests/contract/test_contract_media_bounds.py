"""Media at the boundaries (I2, I6 on the media paths): the rows every target must meet.

* a 30 MB image: where the target's model has a size limit (its capability
  row: ``max_image_bytes`` / ``max_request_bytes``) it is refused typed before
  any request, without a copy of the image being made on the way (memory
  bounded: traced allocations stay under a quarter of the image);
* a tool returning bytes that contradict their declared media type: the
  model is told (an error result) and the bytes never reach the vendor;
* a signed or keyed image URL (``user:password@``, ``?X-Goog-Signature=``):
  never in an error, nor in any DEBUG log record (llmport's, the SDKs', their
  HTTP clients'), whether the target sends the URL on or refuses it.

An answer image whose base64 does not decode is a ``MalformedResponseError``
on the two vendors that answer with images (``tests/openai/test_openai_image_generation.py``,
``tests/gemini/test_gemini_media_out.py``).
"""

from __future__ import annotations

import logging
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from invariant_checks import debug_logging
from llmport import Runtime
from llmport.errors import LlmportError, UnsupportedContentError
from llmport.messages.types import MediaBlock
from llmport.plugins.host import PluginHost
from llmport.testing.loopback import LoopbackServer
from support.api_modes import MODES, run_via
from test_contract_tool_media import CALL_ID, PNG, answers, asks_for_the_screenshot
from wire import TARGETS, Wire

Make = Callable[..., Runtime]
HUGE = 30 * 1024 * 1024


def capabilities(wire: Wire) -> Any:
    prefix, _, model = wire.model.partition(":")
    return PluginHost(wire.plugins).providers()[prefix].capabilities_for(model)


def limit(wire: Wire) -> int | None:
    """The smallest size limit the target's model row puts on a 30 MB image, if any."""
    caps = capabilities(wire)
    limits = [n for n in (caps.max_image_bytes, caps.max_request_bytes) if n is not None]
    return min(limits) if limits else None


BOUNDED = [w for w in TARGETS if "image" in capabilities(w).input_modalities and limit(w)]
SEES_IMAGES = [w for w in TARGETS if "image" in capabilities(w).input_modalities]


def test_the_bounded_targets_come_from_the_tables() -> None:
    assert {w.id for w in BOUNDED} == {
        "openai-chat",
        "openai-responses",
        "anthropic",
        "anthropic-vertex",
        "gemini",
        "gemini-vertex",
        "bedrock",
    }


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", BOUNDED, ids=str)
async def test_a_30_mb_image_over_the_limit_is_refused_with_no_copy(
    wire: Wire, mode: str, runtime: Make
) -> None:
    huge = b"\x89PNG\r\n\x1a\n" + bytes(HUGE - 8)
    content = ["What is this?", {"type": "image", "data": huge, "media_type": "image/png"}]
    with LoopbackServer([]) as server:
        rt = runtime(wire, server)
        tracemalloc.start()
        try:
            with pytest.raises(UnsupportedContentError) as info:
                await run_via(mode, rt, content)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert server.requests == []
    assert "bytes" in str(info.value) and info.value.__cause__ is None
    assert peak < HUGE // 4, f"refusing the image allocated {peak} bytes"  # a copy: 30 MB


def screenshot() -> list[Any]:
    """Take a screenshot of the screen (a PNG said to be a JPEG)."""
    return ["Screenshot taken.", MediaBlock("image", "image/jpeg", data=PNG)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", SEES_IMAGES, ids=str)
async def test_tool_media_contradicting_its_type_never_reaches_the_vendor(
    wire: Wire, mode: str, runtime: Make
) -> None:
    replies = [asks_for_the_screenshot(wire, False), answers(wire, False)]
    with LoopbackServer(replies) as server:
        result = await run_via(
            mode, runtime(wire, server), "What is on screen?", tools=[screenshot]
        )
        assert len(server.requests) == 2
    sent = server.requests[1].body.decode()
    assert "iVBORw0KGgo" not in sent  # the PNG, in any base64 flavour (its start is the same)
    assert "the bytes are image/png" in sent  # the model is told why
    (outcome,) = result.tool_calls
    assert outcome.result.is_error and outcome.result.blocks == ()
    assert outcome.call.id == CALL_ID or wire.tool_call_ids is False


SECRET = "sk-fake-Medi4UrlSecret9876"
SIGNED = (
    f"https://bob:{SECRET}@images.example.com/kiwi.png?X-Goog-Signature={SECRET}&api_key={SECRET}"
)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", SEES_IMAGES, ids=str)
async def test_a_keyed_image_url_is_in_no_error_and_no_log(
    wire: Wire, mode: str, runtime: Make, caplog: pytest.LogCaptureFixture
) -> None:
    debug_logging(caplog)
    content = ["What is this?", {"type": "image", "url": SIGNED, "media_type": "image/png"}]
    seen: list[str] = []
    with LoopbackServer([answers(wire, False)]) as server:
        rt = runtime(wire, server)
        try:
            await run_via(mode, rt, content)
        except LlmportError as exc:  # refused (the vendor takes no such URL): said safely
            seen += [str(exc), repr(exc)]
            assert server.requests == []
    seen += [r.getMessage() for r in caplog.records if r.levelno >= logging.DEBUG]
    leaks = [text[:200] for text in seen if SECRET in text or SECRET[8:20] in text]
    assert leaks == []


def test_a_url_block_describes_itself_masked() -> None:
    described = MediaBlock("image", "image/png", url=SIGNED).describe()
    assert SECRET not in described and "images.example.com/kiwi.png" in described
