"""Encode AWS event-stream frames (``application/vnd.amazon.eventstream``).

For tests, cassettes and benchmarks: a loopback server answers
``converse-stream`` with these bytes, and botocore decodes them exactly as
it decodes Bedrock's. botocore ships only the decoder, so the encoder is
here (pure ``struct`` + ``zlib``; no SDK import).

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
