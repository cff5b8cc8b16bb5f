"""The readable cassette format: vcrpy's interactions as YAML a person can review.

One interaction per request. Bodies are stored as what they are, not as
opaque strings: ``{json: ...}`` for JSON, ``{events: [...]}`` for a
Server-Sent Events stream (one item per event, its ``data`` parsed), ``{aws_events:
[...]}`` for an AWS event stream (one item per frame: its string headers and
its payload), ``{text: ...}`` or ``{base64: ...}`` otherwise. Loading turns
each form back into the exact bytes a client parses, so a stream replays as
the same events in the same order.

A streamed response may also keep ``event_times``: when each event arrived,
in seconds after the response's headers (:mod:`.cassette_timing`), so a
replay can release the events as they came.

Large media strings in request bodies (base64 images, PDFs, audio, data
URLs) go to side files named by their SHA-256 next to the cassette
(``<name>.media/<hash>``), replaced in the YAML by ``llmport-media:<hash>``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import struct
import zlib
from pathlib import Path
from typing import Any

from ..provider.wire import loads as strict_json
from .cassette_timing import (
    ARRIVALS_KEY,
    MAX_EVENT_SECONDS,
    PACED_KEY,
    check_event_times,
    event_times,
    frame_ends,
    paced_chunks,
    sse_event_ends,
)

#: The file format version written at the top of each cassette.
FORMAT_VERSION = 1
#: A request string at least this long that looks like base64 or a data URL goes to a side file.
MEDIA_MIN_CHARS = 4096
MEDIA_MARKER = "llmport-media:"
_BASE64ISH = re.compile(r"(?:data:[\w/+.\-]+;base64,)?[A-Za-z0-9+/=_\-\s]+")  # standard or URL-safe
#: Headers not kept: they describe the stored bytes, which loading re-encodes.
_DROPPED_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding"})
#: A side file's name: the SHA-256 of its contents, nothing else (never a path).
_DIGEST = re.compile(r"[0-9a-f]{64}")
#: Most values a cassette may hold once its YAML aliases are expanded (a large
#: recording holds tens of thousands; an alias bomb holds billions).
MAX_VALUES = 2_000_000


# --- bodies --------------------------------------------------------------------------------


def _as_bytes(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    if hasattr(body, "getvalue"):  # a file body (botocore's S3 uploads), as vcrpy hands it on
        return bytes(body.getvalue())
    if hasattr(body, "__next__"):  # an iterator body: its chunks
        return b"".join(_as_bytes(chunk) for chunk in body)
    return bytes(body)


def stored_body(raw: Any, content_type: str = "") -> dict[str, Any] | None:
    """``raw`` bytes as the readable form the cassette stores (``None`` for no body)."""
    data = _as_bytes(raw)
    if not data:
        return None
    if "vnd.amazon.eventstream" in content_type:
        frames = decode_event_stream(data)
        if frames is not None:
            return {"aws_events": frames}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}
    if "text/event-stream" in content_type:
        return {"events": decode_sse(text)}
    try:
        return {"json": strict_json(text)}
    except ValueError:
        return {"text": text}


def body_bytes(stored: dict[str, Any] | None) -> bytes:
    """The bytes a stored body stands for (the inverse of :func:`stored_body`)."""
    if not stored:
        return b""
    if "json" in stored:
        return json.dumps(stored["json"], ensure_ascii=False).encode("utf-8")
    if "events" in stored:
        return encode_sse(stored["events"])
    if "aws_events" in stored:
        return encode_event_stream(stored["aws_events"])
    if "base64" in stored:
        return base64.b64decode(stored["base64"], validate=True)  # garbage is an error
    return str(stored.get("text", "")).encode("utf-8")


# --- Server-Sent Events ---------------------------------------------------------------------


def decode_sse(text: str) -> list[dict[str, Any]]:
    """SSE text as a list of events: ``{event, id, retry, data}`` (data parsed if JSON)."""
    events: list[dict[str, Any]] = []
    for block in re.split(r"\r?\n\r?\n", text):
        if not block.strip():
            continue
        event: dict[str, Any] = {}
        data: list[str] = []
        for line in re.split(r"\r?\n", block):
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                data.append(value)
            elif name == "":
                event.setdefault("comment", value)
            else:
                event[name] = value
        if data:
            joined = "\n".join(data)
            try:
                event["data"] = strict_json(joined)
            except ValueError:
                event["data"] = joined
        events.append(event)
    return events


def encode_sse(events: list[dict[str, Any]]) -> bytes:
    """The SSE bytes of :func:`decode_sse`'s events."""
    out: list[str] = []
    for event in events:
        lines = [f": {event['comment']}"] if "comment" in event else []
        lines += [f"{k}: {v}" for k, v in event.items() if k not in ("comment", "data")]
        if "data" in event:
            data = event["data"]
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
            lines += [f"data: {line}" for line in text.split("\n")]
        out.append("\n".join(lines) + "\n\n")
    return "".join(out).encode("utf-8")


# --- AWS event stream (application/vnd.amazon.eventstream) ----------------------------------

_STRING_HEADER = 7


def decode_event_stream(data: bytes) -> list[dict[str, Any]] | None:
    """AWS event-stream frames as ``{headers, payload}`` items; ``None`` if not decodable.

    Only string-valued headers are understood (all Bedrock sends); a frame with
    another header type, or bytes that are not frames at all (a peer may send
    anything under that content type), keep the stream stored as base64 instead.
    """
    try:
        return _frames(data)
    except (IndexError, UnicodeDecodeError, struct.error):
        return None


def _frames(data: bytes) -> list[dict[str, Any]] | None:
    frames: list[dict[str, Any]] = []
    at = 0
    while at < len(data):
        if len(data) - at < 16:
            return None
        total, headers_len = struct.unpack(">II", data[at : at + 8])
        if total < 16 + headers_len:
            return None  # not a frame: it could not hold its own prelude, headers and CRC
        frame = data[at : at + total]
        headers = _frame_headers(frame[12 : 12 + headers_len])
        if headers is None or len(frame) != total:
            return None
        payload = frame[12 + headers_len : total - 4]
        try:
            shown: Any = {"json": strict_json(payload)}
        except ValueError:
            shown = {"base64": base64.b64encode(payload).decode("ascii")}
        frames.append({"headers": headers, "payload": shown})
        at += total
    return frames


def _frame_headers(raw: bytes) -> dict[str, str] | None:
    headers: dict[str, str] = {}
    at = 0
    while at < len(raw):
        size = raw[at]
        name = raw[at + 1 : at + 1 + size].decode("utf-8")
        at += 1 + size
        if raw[at] != _STRING_HEADER:
            return None
        (length,) = struct.unpack(">H", raw[at + 1 : at + 3])
        headers[name] = raw[at + 3 : at + 3 + length].decode("utf-8")
        at += 3 + length
    return headers


def encode_event_stream(frames: list[dict[str, Any]]) -> bytes:
    """The wire bytes of :func:`decode_event_stream`'s frames (CRCs recomputed)."""
    out = bytearray()
    for frame in frames:
        headers = b"".join(
            bytes([len(name.encode())])
            + name.encode()
            + bytes([_STRING_HEADER])
            + struct.pack(">H", len(value.encode()))
            + value.encode()
            for name, value in frame["headers"].items()
        )
        shown = frame["payload"]
        if "json" in shown:
            payload = json.dumps(shown["json"], separators=(",", ":")).encode("utf-8")
        else:
            payload = base64.b64decode(shown["base64"], validate=True)
        total = 16 + len(headers) + len(payload)
        prelude = struct.pack(">II", total, len(headers))
        prelude += struct.pack(">I", zlib.crc32(prelude))
        message = prelude + headers + payload
        out += message + struct.pack(">I", zlib.crc32(message))
    return bytes(out)


# --- media side files -----------------------------------------------------------------------


def media_dir(cassette: Path) -> Path:
    """Where a cassette's large media bodies live: ``<stem>.media/`` beside it."""
    return cassette.with_name(cassette.stem + ".media")


def _is_media(text: str) -> bool:
    if len(text) < MEDIA_MIN_CHARS or not _BASE64ISH.fullmatch(text[:256] + text[-64:]):
        return False
    try:
        base64.b64decode(text.split(",", 1)[-1], validate=False)
    except (binascii.Error, ValueError):
        return False
    return True


def store_media(value: Any, cassette: Path) -> Any:
    """``value`` with every large media string written to a side file and replaced by a marker."""
    if isinstance(value, str) and _is_media(value):
        digest = hashlib.sha256(value.encode()).hexdigest()
        folder = media_dir(cassette)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / digest
        if not target.exists():
            target.write_text(value, encoding="ascii")
        return MEDIA_MARKER + digest
    if isinstance(value, dict):
        return {k: store_media(v, cassette) for k, v in value.items()}
    if isinstance(value, list):
        return [store_media(v, cassette) for v in value]
    return value


def load_media(value: Any, cassette: Path) -> Any:
    """``value`` with every media marker replaced by its side file's contents.

    A marker names a side file by the SHA-256 of its contents: anything else
    (a path, ``../``) or a file whose contents no longer hash to its name is
    refused with ``ValueError``, so an edited cassette cannot read other files.
    """
    if isinstance(value, str) and value.startswith(MEDIA_MARKER):
        digest = value[len(MEDIA_MARKER) :]
        if not _DIGEST.fullmatch(digest):
            raise ValueError(f"{value[:80]!r} does not name a media side file (a SHA-256)")
        data = (media_dir(cassette) / digest).read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            raise ValueError(f"media side file {digest} was changed after recording")
        return data.decode("ascii")
    if isinstance(value, dict):
        return {k: load_media(v, cassette) for k, v in value.items()}
    if isinstance(value, list):
        return [load_media(v, cassette) for v in value]
    return value


# --- what a loaded file must be -------------------------------------------------------------

_TEXT_HEADERS = {
    "type": "object",
    "additionalProperties": {
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
    },
}


def _one_of_bodies(**forms: Any) -> dict[str, Any]:
    """A stored body: ``null`` or an object with exactly one of ``forms``."""
    return {
        "anyOf": [{"type": "null"}]
        + [
            {
                "type": "object",
                "required": [name],
                "additionalProperties": False,
                "properties": {name: form},
            }
            for name, form in forms.items()
        ]
    }


_BODY = _one_of_bodies(
    json={},
    text={"type": "string"},
    base64={"type": "string"},
    events={"type": "array", "items": {"type": "object"}},
    aws_events={
        "type": "array",
        "items": {
            "type": "object",
            "required": ["headers", "payload"],
            "properties": {
                "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                "payload": _one_of_bodies(json={}, base64={"type": "string"}),
            },
        },
    },
)

#: The stored form (JSON Schema): what :func:`replayable` can turn back into bytes.
STORED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "version": {"type": "integer"},
        "interactions": {
            "type": ["array", "null"],
            "items": {
                "type": "object",
                "required": ["request", "response"],
                "properties": {
                    "request": {
                        "type": "object",
                        "required": ["method", "uri"],
                        "properties": {
                            "method": {"type": "string"},
                            "uri": {"type": "string"},
                            "headers": {"anyOf": [{"type": "null"}, _TEXT_HEADERS]},
                            "body": _BODY,
                        },
                    },
                    "response": {
                        "type": "object",
                        "required": ["status"],
                        "properties": {
                            "status": {
                                "type": "object",
                                "required": ["code"],
                                "properties": {
                                    "code": {"type": "integer", "minimum": 100, "maximum": 599},
                                    "message": {"type": "string"},
                                },
                            },
                            "headers": {"anyOf": [{"type": "null"}, _TEXT_HEADERS]},
                            "body": _BODY,
                            "event_times": {
                                "type": "array",
                                "items": {
                                    "type": "number",
                                    "minimum": 0,
                                    "maximum": MAX_EVENT_SECONDS,
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def count_values(data: Any, limit: int = MAX_VALUES) -> int:
    """How many values ``data`` holds, walking shared (aliased) ones each time they occur.

    Raises ``ValueError`` past ``limit``: the walk stops there, so a YAML alias
    bomb costs ``limit`` steps, not the billions it expands to.
    """
    seen, stack = 0, [data]
    while stack:
        value = stack.pop()
        seen += 1
        if seen > limit:
            raise ValueError(f"it holds more than {limit:,} values once its aliases are expanded")
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return seen


def is_plain_vcrpy(data: Any) -> bool:
    """Whether ``data`` is a cassette in vcrpy's own format (bodies as ``{string: ...}``)."""
    interactions = data.get("interactions") if isinstance(data, dict) else None
    return isinstance(interactions, list) and any(
        isinstance(i, dict)
        and isinstance(i.get("response"), dict)
        and isinstance(i["response"].get("body"), dict)
        and "string" in i["response"]["body"]
        for i in interactions
    )


def check_stored(data: Any) -> None:
    """Raise ``ValueError`` naming the first place where ``data`` is not a stored cassette."""
    from ..schema.build import validation_errors

    count_values(data)
    errors = validation_errors(STORED_SCHEMA, data)
    if errors:
        raise ValueError(errors[0])
    for index, interaction in enumerate(data.get("interactions") or []):
        response = interaction["response"]
        if "event_times" in response:
            where = f"interactions/{index}/response/event_times"
            check_event_times(response["event_times"], len(_events_of(response.get("body"))), where)


def _events_of(body: dict[str, Any] | None) -> list[Any]:
    """The events (or frames) of a stored stream body; none for any other body."""
    if not body:
        return []
    events = body.get("events", body.get("aws_events"))
    return events if isinstance(events, list) else []


# --- whole interactions ---------------------------------------------------------------------


def _headers(raw: Any, drop: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    """Headers as ``{name: [values]}`` with text values (botocore sends bytes)."""
    out: dict[str, list[str]] = {}
    for name, values in dict(raw or {}).items():
        if str(name).lower() in drop:
            continue
        listed = values if isinstance(values, list) else [values]
        out[str(name)] = [v.decode() if isinstance(v, bytes) else str(v) for v in listed]
    return out


def _content_type(headers: dict[str, list[str]]) -> str:
    for name, values in headers.items():
        if name.lower() == "content-type" and values:
            return values[0].lower()
    return ""


def readable(
    interaction: dict[str, Any], cassette: Path, side_files: bool = True
) -> dict[str, Any]:
    """One vcrpy interaction dict in the stored, readable form.

    ``side_files=False`` leaves large media inline instead of writing side
    files (for reading a plain vcrpy cassette without touching the disk).
    """
    request, response = interaction["request"], interaction["response"]
    request_headers = _headers(request.get("headers"), _DROPPED_HEADERS)
    response_headers = _headers(response.get("headers"), _DROPPED_HEADERS)
    request_body = stored_body(request.get("body"), _content_type(request_headers))
    if side_files and request_body is not None and "json" in request_body:
        request_body = {"json": store_media(request_body["json"], cassette)}
    raw_response = (response.get("body") or {}).get("string")
    response_body = stored_body(raw_response, _content_type(response_headers))
    shown_response: dict[str, Any] = {
        "status": dict(response["status"]),
        "headers": response_headers,
        "body": response_body,
    }
    times = _stored_event_times(response, raw_response, response_body)
    if times is not None:
        shown_response["event_times"] = times
    return {
        "request": {
            "method": request["method"],
            "uri": request["uri"],
            "headers": request_headers,
            "body": request_body,
        },
        "response": shown_response,
    }


def _stored_event_times(
    response: dict[str, Any], raw: Any, body: dict[str, Any] | None
) -> list[float] | None:
    """The event times to store: kept from the file, or from the arrivals just recorded."""
    if "event_times" in response:
        return list(response["event_times"])
    marks = response.get(ARRIVALS_KEY)
    events = _events_of(body)
    if not marks or not events or body is None:
        return None
    data = _as_bytes(raw)
    if marks[-1][0] != len(data):
        return None  # the marks counted other bytes (a compressed body): no times
    ends = frame_ends(data) if "aws_events" in body else sse_event_ends(data)
    times = event_times(ends, marks) if len(ends) == len(events) else None
    return times


def _event_chunks(body: dict[str, Any]) -> list[bytes]:
    """A stream body's bytes event by event (they add up to :func:`body_bytes`)."""
    if "aws_events" in body:
        return [encode_event_stream([frame]) for frame in body["aws_events"]]
    return [encode_sse([event]) for event in body["events"]]


def replayable(stored: dict[str, Any], cassette: Path) -> dict[str, Any]:
    """A stored interaction back in vcrpy's form (the exact bytes to replay)."""
    request, response = stored["request"], stored["response"]
    request_body = request.get("body")
    if request_body is not None and "json" in request_body:
        request_body = {"json": load_media(request_body["json"], cassette)}
    replayed: dict[str, Any] = {
        "status": response["status"],
        "headers": response.get("headers") or {},
        "body": {"string": body_bytes(response.get("body"))},
    }
    times = response.get("event_times")
    if times is not None and _events_of(response.get("body")):
        replayed["event_times"] = times
        replayed[PACED_KEY] = paced_chunks(_event_chunks(response["body"]), times)
    return {
        "request": {
            "method": request["method"],
            "uri": request["uri"],
            "headers": request.get("headers") or {},
            "body": body_bytes(request_body) or None,
        },
        "response": replayed,
    }
