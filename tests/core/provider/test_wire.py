"""``llmport.provider.wire`` bodies, and MediaBlock's one encoding and released bytes."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from llmport.messages.content import load_block
from llmport.messages.types import MediaBlock, Message, TextBlock
from llmport.provider import wire

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20
B64 = base64.b64encode(PNG)
URLSAFE = base64.urlsafe_b64encode(PNG).decode()


def _sdk_style(body: Any) -> bytes:
    """How the vendor SDKs serialize a JSON body."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _path_block(tmp_path: Path) -> MediaBlock:
    path = tmp_path / "chart.png"
    path.write_bytes(PNG)
    block = load_block({"type": "image", "path": path}, 0)
    assert isinstance(block, MediaBlock)
    return block


def test_a_body_is_the_sdk_serialization_with_media_spliced_in() -> None:
    block = MediaBlock("image", "image/png", data=PNG)
    body = {
        "model": "m",
        "text": 'é ü 漢字 "quoted" \u2028 \\',
        "content": [
            {"type": "image_url", "image_url": {"url": wire.data_url_of(block)}},
            {"type": "base64", "data": wire.base64_of(block)},
        ],
        "n": 1.5,
        "none": None,
        "tuple": (1, 2),
    }
    encoded = wire.encode(body)
    assert len(encoded.media) == 2 and len(encoded.pieces) == 3
    assert encoded.bytes() == _sdk_style(wire.plain(body))
    assert len(encoded) == len(encoded.bytes())
    sent = json.loads(encoded.bytes())
    assert sent["content"][0]["image_url"]["url"] == "data:image/png;base64," + B64.decode()
    assert sent["content"][1]["data"] == B64.decode()
    assert wire.dumps(body) == encoded.bytes()


def test_a_body_without_media_is_not_copied() -> None:
    encoded = wire.encode({"a": [1, "b"]})
    assert encoded.bytes() is encoded.pieces[0]


def test_nan_is_refused_as_by_the_sdks() -> None:
    with pytest.raises(ValueError):
        wire.dumps({"x": float("nan")})


def test_splices_compare_to_their_strings_and_never_show_bytes() -> None:
    block = MediaBlock("image", "image/png", data=PNG, filename="chart.png")
    assert wire.data_url_of(block) == block.data_url()
    assert wire.base64_of(block) == block.base64()
    assert wire.base64_of(block) == wire.base64_of(block)
    assert wire.base64_of(block) != wire.data_url_of(block)
    assert "chart.png" in repr(wire.base64_of(block)) and B64.decode()[:20] not in repr(
        wire.base64_of(block)
    )
    assert wire.plain({"a": (wire.base64_of(block),)}) == {"a": [block.base64()]}


def test_one_encode_shared_by_every_form_and_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = binascii.b2a_base64

    def counting(data: Any, *args: Any, **kwargs: Any) -> bytes:
        calls.append(len(data))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(binascii, "b2a_base64", counting)
    block = MediaBlock("image", "image/png", data=PNG)
    copy = dataclasses.replace(block, index=4)
    assert copy.base64_bytes() is block.base64_bytes() and block.base64_bytes() == B64
    assert block.base64() == B64.decode() and block.data_url().endswith(B64.decode())
    assert block.urlsafe_base64() == URLSAFE
    for _ in range(3):
        wire.dumps({"a": wire.data_url_of(copy), "b": wire.base64_of(block)})
    assert calls == [len(PNG)]


def test_bytes_read_from_a_path_are_released_once_encoded(tmp_path: Path) -> None:
    block = _path_block(tmp_path)
    before = dataclasses.replace(block, cache=None)  # a copy made before encoding
    assert block._raw() == PNG and block.size == len(PNG)
    block.base64_bytes()
    for b in (block, before):
        assert b._raw() is None  # released for every copy at once
        assert b.inline and b.size == len(PNG) and b.describe().endswith("chart.png)")
        assert b.data == PNG  # decoded on demand
        assert b.data is not b.data  # not cached again
    after = dataclasses.replace(block, index=2)  # a copy made after: released too
    assert after._raw() is None and after.data == PNG and after.size == len(PNG)
    assert after.base64_bytes() is block.base64_bytes()


def test_the_callers_own_bytes_are_kept(tmp_path: Path) -> None:
    block = MediaBlock("image", "image/png", data=PNG)
    block.base64_bytes()
    assert block._raw() is PNG and block.data is PNG
    given = load_block({"type": "image", "data": PNG}, 0)
    assert isinstance(given, MediaBlock)
    given.base64_bytes()
    assert given.data is PNG


def test_a_released_block_round_trips_through_to_dict(tmp_path: Path) -> None:
    block = _path_block(tmp_path)
    block.base64_bytes()
    message = Message("user", (TextBlock("look"), block))
    back = Message.from_dict(json.loads(json.dumps(message.to_dict())))
    restored = back.blocks[1]
    assert isinstance(restored, MediaBlock)
    assert restored.data == PNG and restored.media_type == "image/png"
    assert restored.filename == "chart.png" and restored.size == len(PNG)


def test_a_url_block_has_no_inline_bytes() -> None:
    block = MediaBlock("image", "image/png", url="https://example.com/a.png")
    assert not block.inline and block.size == 0 and block.data is None
    with pytest.raises(ValueError, match="URL reference"):
        block.base64_bytes()


def test_importing_wire_imports_nothing_heavy() -> None:
    code = (
        "import sys, llmport, llmport.provider.wire; "
        "print(sorted(m for m in ('httpx', 'httpx2', 'openai', 'anthropic', 'pydantic') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- loads: vendor answers read by jiter, refused as the standard library would ----------


def _openai_answer(rows: int, dims: int) -> bytes:
    """An embeddings answer of random base64 float32 vectors, as OpenAI sends it."""
    import random
    import struct

    rng = random.Random(7)
    data = [
        {
            "object": "embedding",
            "index": i,
            "embedding": base64.b64encode(
                struct.pack(f"<{dims}f", *(rng.uniform(-1, 1) for _ in range(dims)))
            ).decode(),
        }
        for i in range(rows)
    ]
    return json.dumps({"object": "list", "data": data, "model": "m"}).encode()


def test_a_base64_embedding_answer_is_read_without_the_standard_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = _openai_answer(20, 1536)
    assert b"e1" in body or b"E1" in body  # base64 that looks like an exponent, often
    monkeypatch.setattr(json, "loads", _no_slow_path)  # wire imports json when it needs it
    assert len(wire.loads(body)["data"]) == 20


def _no_slow_path(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the answer took the standard library's slow reading")


@pytest.mark.parametrize(
    "text",
    ['{"a": 1e400}', "[1.0, -1e400]", '{"v": [[1.5, 2e308]]}', '{"n": ' + "9" * 5000 + "}"],
)
def test_numbers_jiter_reads_otherwise_are_refused_as_the_standard_library_does(
    text: str,
) -> None:
    with pytest.raises(json.JSONDecodeError):
        wire.loads(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("[1e308, 1e308]", [1e308, 1e308]),  # each finite, their sum is not
        ('{"n": ' + "9" * 400 + "}", {"n": int("9" * 400)}),
        ('[{"a": [1, 2.5, true]}, "x", null]', [{"a": [1, 2.5, True]}, "x", None]),
    ],
)
def test_finite_numbers_and_long_integers_are_read(text: str, value: Any) -> None:
    assert wire.loads(text) == value
