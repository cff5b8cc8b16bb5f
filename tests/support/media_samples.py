"""The fourth batch's image-output wire samples (``../shared/wire-samples/``), made replayable.

The recordings' images, thought signatures and encrypted reasoning are
truncated base64 (``...<truncated N chars>``), so they cannot be decoded.
:func:`replayable` swaps each for a real small value of the same kind (a PNG
for ``iVBORw0KGgo``, a JPEG for ``/9j/``, in a data URL too; short opaque
base64 otherwise) and
leaves every other field as recorded.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

WIRE = Path(__file__).resolve().parents[3] / "shared" / "wire-samples"
_CUT = "...<truncated"


def _png() -> bytes:
    """A real 1x1 PNG (signature, IHDR, IDAT, IEND)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\x00\x80\xff")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


#: What the recordings' truncated images stand for in the tests.
PNG = _png()
JPEG = bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffd9")
#: What a truncated signature or encrypted_content stands for (standard base64).
OPAQUE = base64.b64encode(b"opaque-signature").decode()


def _real(value: str) -> str:
    head = value.split(_CUT, 1)[0]
    url, comma, head = head.rpartition(",") if head.startswith("data:") else ("", "", head)
    if head.startswith("iVBORw0KGgo"):
        return url + comma + base64.b64encode(PNG).decode()
    if head.startswith(("/9j/", "_9j_")):
        return url + comma + base64.b64encode(JPEG).decode()
    return OPAQUE


def replayable(value: Any) -> Any:
    """``value`` with every truncated base64 string replaced by a real one (see above)."""
    if isinstance(value, dict):
        return {k: replayable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [replayable(v) for v in value]
    if isinstance(value, str) and _CUT in value:
        return _real(value)
    return value


def interactions(name: str) -> list[dict[str, Any]]:
    """The recorded exchanges of ``name`` (``"gemini/image-output-stream.json"``), replayable."""
    data: dict[str, Any] = json.loads((WIRE / name).read_text())
    return list(replayable(data["interactions"]))
