"""One base64 encode and one data URL per media block, shared by every turn."""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace
from typing import Any

import pytest
from llmport.messages.types import MediaBlock

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
B64 = base64.b64encode(PNG).decode()  # computed before any counting
SAFE = base64.urlsafe_b64encode(PNG).decode()


@pytest.fixture
def encodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = binascii.b2a_base64

    def counting(data: Any, *args: Any, **kw: Any) -> bytes:
        calls.append(len(data))
        return real(data, *args, **kw)

    monkeypatch.setattr(binascii, "b2a_base64", counting)
    return calls


def test_data_url_is_built_once_and_encoded_once(encodes: list[int]) -> None:
    block = MediaBlock("image", "image/png", data=PNG)
    first = block.data_url()
    assert first == "data:image/png;base64," + B64
    assert block.data_url() is first  # every turn sends the same string
    assert block.base64() == B64  # sliced, not encoded again
    assert len(encodes) == 1


def test_base64_first_then_data_url(encodes: list[int]) -> None:
    block = MediaBlock("image", "image/png", data=PNG)
    b64 = block.base64()
    assert block.base64() is b64
    assert block.data_url() == "data:image/png;base64," + b64
    assert block.data_url() is block.data_url()
    assert len(encodes) == 1


def test_copies_share_the_encoding(encodes: list[int]) -> None:
    # The engine re-makes blocks with dataclasses.replace (cache marks, kind checks).
    block = MediaBlock("image", "image/png", data=PNG)
    url = block.data_url()
    assert replace(block, filename="x.png").data_url() is url
    assert len(encodes) == 1


def test_url_reference_has_no_encoding() -> None:
    block = MediaBlock("image", "image/png", url="https://example.com/a.png")
    with pytest.raises(ValueError):
        block.data_url()
    with pytest.raises(ValueError):
        block.base64()


def test_urlsafe_base64_is_encoded_once_and_shared(encodes: list[int]) -> None:
    block = MediaBlock("image", "image/png", data=PNG)
    safe = block.urlsafe_base64()
    assert safe == SAFE
    assert block.urlsafe_base64() is safe
    assert len(encodes) == 1
    other = MediaBlock("image", "image/png", data=PNG)
    other.base64()  # the standard form first: the URL-safe one is translated, not encoded
    assert other.urlsafe_base64() == safe and len(encodes) == 2


def test_gemini_encodes_an_image_once_for_every_turn(encodes: list[int]) -> None:
    from llmport.messages.types import Message, TextBlock, ToolCall, ToolResult
    from llmport_gemini.convert_in import wire_contents

    image = MediaBlock("image", "image/png", data=PNG)
    turns = [Message("user", (TextBlock("what is this?"), image))]
    for i in range(3):  # each turn of a tool loop converts the whole conversation again
        bodies = wire_contents(turns, "gemini-2.5-flash")
        assert bodies[0]["parts"][1]["inlineData"]["data"] == SAFE
        call = ToolCall(f"c{i}", "look", {}, "{}")
        turns += [
            Message("assistant", tool_calls=(call,)),
            Message("tool", tool_results=(ToolResult(f"c{i}", "look", "ok"),)),
        ]
    assert len(encodes) == 1
