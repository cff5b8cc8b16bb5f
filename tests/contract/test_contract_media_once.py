"""Every vendor: an image read from a file is encoded once over a whole tool loop.

Three requests (tool call, tool call, answer) each carry the image; the
block's one cached base64 goes into every body, sync and async, and what
each server receives decodes back to the file. The answers are the ones
``benchmarks/bench_media.py`` measures memory with; the ``_call``-only
targets (no ``prepare``, so their body is built again for every request)
hold too when they take the block's cached base64.
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.api_modes import MODES, run_via

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_media import VENDORS, noop
from llmport import Runtime
from llmport.testing.loopback import LoopbackServer, Reply
from wire import TARGETS, Wire

IMAGE = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 5000  # ~1.2 MB: counted as a big encode


def _call_only(wire: Wire) -> tuple[Any, str, Any]:
    """A ``_call``-only target as a row of the benchmark's table."""

    def make(final: bool) -> Any:
        reply = wire.text_reply("a picture") if final else wire.tool_call_reply("noop", {}, "c1")
        return reply.json

    return make, wire.model, lambda url: {**wire.endpoint_settings(url), **wire.credentials()}


CASES = {**VENDORS, **{w.id: _call_only(w) for w in TARGETS if w.id.startswith("callonly")}}


def _sent_image(vendor: str, body: dict[str, Any]) -> str:
    """The image's base64 as one request body carries it."""
    if vendor == "openai":
        return str(body["messages"][0]["content"][1]["image_url"]["url"]).split(",", 1)[1]
    if vendor == "openai-responses":
        return str(body["input"][0]["content"][1]["image_url"]).split(",", 1)[1]
    if vendor == "anthropic":
        return str(body["messages"][0]["content"][1]["source"]["data"])
    if vendor == "gemini":
        return str(body["contents"][0]["parts"][1]["inlineData"]["data"])
    if vendor.startswith("callonly"):
        return str(body["messages"][0]["content"][1]["data"])
    return str(body["messages"][0]["content"][1]["image"]["source"]["bytes"])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("vendor", sorted(CASES))
async def test_a_file_image_is_encoded_once_for_every_turn(
    vendor: str, mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make, model, settings = CASES[vendor]
    path = tmp_path / "picture.png"
    path.write_bytes(IMAGE)
    encodes: list[int] = []
    real = binascii.b2a_base64

    def counting(data: Any, *args: Any, **kwargs: Any) -> bytes:
        if len(data) >= 1 << 20:
            encodes.append(len(data))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(binascii, "b2a_base64", counting)
    replies = [Reply(json=make(False)), Reply(json=make(False)), Reply(json=make(True))]
    with LoopbackServer(replies) as server:
        prefix = model.split(":", 1)[0]
        rt = Runtime(model=model, providers={prefix: settings(server.url)})
        try:
            content = [{"type": "text", "text": "look"}, {"type": "image", "path": str(path)}]
            result = await run_via(mode, rt, content, tools=[noop])
        finally:
            rt.close()
        bodies = [json.loads(r.body) for r in server.requests]
    assert result.output == "a picture"
    assert len(bodies) == 3
    assert len(encodes) == 1, encodes
    for body in bodies:
        sent = _sent_image(vendor, body)
        decoded = base64.urlsafe_b64decode(sent) if vendor == "gemini" else base64.b64decode(sent)
        assert decoded == IMAGE
