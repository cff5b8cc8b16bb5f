"""AWS event-stream frames (``application/vnd.amazon.eventstream``): encode and cut.

The encoder is for tests, cassettes and benchmarks: a loopback server
answers ``converse-stream`` with these bytes, and botocore decodes them
exactly as it decodes Bedrock's (botocore ships only the decoder).

:class:`Frames` cuts a stream's bytes into frames as they arrive, checking
both CRCs, and reads their string headers: the stream path's fast decoder
(botocore's decoder costs more per event than the rest of the stream path
together). A frame it does not read itself (a checksum mismatch, a header
of another type) is returned whole, for botocore to decode and report.
Pure ``struct`` + ``zlib``; no SDK import.

A frame is: total length (uint32), headers length (uint32), CRC32 of those
8 bytes, the headers, the payload, and a CRC32 of everything before it.
Every header here is a string header: name length (1 byte), name, type 7,
value length (uint16), value.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterable, Mapping
from typing import Any

_STRING = 7
_PRELUDE = struct.Struct("!III")
_LENGTH = struct.Struct("!H")
_CRC = struct.Struct("!I")
#: botocore's limits on a frame's headers and payload.
_MAX_HEADERS_LENGTH = 128 * 1024
_MAX_PAYLOAD_LENGTH = 24 * 1024 * 1024

#: One frame as :class:`Frames` returns it: ``(headers, payload, raw)``.
Frame = tuple[dict[str, str] | None, bytes, bytes]


def encode_headers(headers: Mapping[str, str]) -> bytes:
    out = bytearray()
    for name, value in headers.items():
        raw_name, raw_value = name.encode("utf-8"), value.encode("utf-8")
        out += struct.pack("!B", len(raw_name)) + raw_name
        out += struct.pack("!BH", _STRING, len(raw_value)) + raw_value
    return bytes(out)


def encode_frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One binary event-stream message."""
    head = encode_headers(headers)
    total = 12 + len(head) + len(payload) + 4
    prelude = struct.pack("!II", total, len(head))
    prelude += struct.pack("!I", zlib.crc32(prelude) & 0xFFFFFFFF)
    body = prelude + head + payload
    return body + struct.pack("!I", zlib.crc32(body) & 0xFFFFFFFF)


def event_frame(event_type: str, data: Mapping[str, Any]) -> bytes:
    """A Converse stream event (``messageStart``, ``contentBlockDelta``, ``metadata``...)."""
    headers = {
        ":event-type": event_type,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return encode_frame(headers, json.dumps(data).encode("utf-8"))


def exception_frame(exception_type: str, message: str) -> bytes:
    """An exception inside the stream (``throttlingException``, ``validationException``...)."""
    headers = {
        ":exception-type": exception_type,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_frame(headers, json.dumps({"message": message}).encode("utf-8"))


def encode_stream(events: Iterable[Mapping[str, Any]]) -> bytes:
    """Frames for events in the wire-samples form.

    Each event is ``{"event_type": name, "data": {...}}`` or
    ``{"message_type": "exception", "exception_type": name, "data": {"message": ...}}``.
    """
    out = bytearray()
    for event in events:
        if event.get("message_type") == "exception":
            out += exception_frame(
                event["exception_type"], event.get("data", {}).get("message", "")
            )
        else:
            out += event_frame(event["event_type"], event["data"])
    return bytes(out)


class Frames:
    """Cut event-stream bytes into frames as they arrive.

    :meth:`feed` takes the next chunk and returns the frames it completed, each
    ``(headers, payload, raw)``: ``headers`` is ``None`` when this reader does
    not read the frame itself (a CRC mismatch, a header that is not a string),
    and ``raw`` the frame's whole bytes, for botocore's decoder then.
    """

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> list[Frame]:
        """The frames ``chunk`` completes (a partial frame waits for the next chunk)."""
        data = self._pending + chunk if self._pending else chunk
        frames: list[Frame] = []
        start, end = 0, len(data)
        while end - start >= 12:
            total, head_length, prelude_crc = _PRELUDE.unpack_from(data, start)
            if not _sound_prelude(data, start, total, head_length, prelude_crc):
                # Not a frame: botocore reports it as soon as the prelude is in, as before.
                frames.append((None, b"", data[start:]))
                start = end
                break
            if end - start < total:
                break
            raw = data[start : start + total]
            start += total
            frames.append(_frame(raw, head_length))
        self._pending = data[start:]
        return frames


def _sound_prelude(data: bytes, start: int, total: int, head_length: int, crc: int) -> bool:
    """The checks botocore makes of a prelude: its CRC, and lengths within its limits."""
    payload_length = total - head_length - 16
    return (
        zlib.crc32(data[start : start + 8]) == crc
        and head_length <= _MAX_HEADERS_LENGTH
        and 0 <= payload_length <= _MAX_PAYLOAD_LENGTH
    )


def _frame(raw: bytes, head_length: int) -> Frame:
    """One whole frame read: its string headers and payload, or ``(None, b"", raw)``."""
    if zlib.crc32(raw[:-4]) != _CRC.unpack_from(raw, len(raw) - 4)[0]:
        return None, b"", raw
    headers: dict[str, str] = {}
    at, stop = 12, 12 + head_length
    while at < stop:
        name_end = at + 1 + raw[at]
        if name_end + 3 > stop or raw[name_end] != _STRING:
            return None, b"", raw
        value_start = name_end + 3
        value_end = value_start + _LENGTH.unpack_from(raw, name_end + 1)[0]
        if value_end > stop:
            return None, b"", raw
        try:
            headers[raw[at + 1 : name_end].decode()] = raw[value_start:value_end].decode()
        except UnicodeDecodeError:
            return None, b"", raw
        at = value_end
    return headers, raw[stop:-4], raw
