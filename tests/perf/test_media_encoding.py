"""One base64 encode and one data URL per media block, shared by every turn (SPEC §8)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace
from typing import Any

import pytest
from llmport.types import MediaBlock

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
B64 = base64.b64encode(PNG).decode()  # computed before any counting


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
