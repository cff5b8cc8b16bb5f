"""Converse and ConverseStream without botocore's per-call machinery.

``client.converse`` spends most of its Python time on work llmport does not
need per attempt: the event hooks, the user-agent string rebuilt per call,
the endpoint ruleset, validating and serializing the same parameters again
on every retry, and walking the answer's shape model. This module does a
Converse (or ConverseStream) call with only what the wire needs:

* the body is serialized **once per prepared request** with botocore's own
  rest-json serializer and parameter validator (so the bytes, the URL and
  the ``ParamValidationError`` report are exactly ``client.converse``'s),
  and reused by every attempt;
* each attempt is signed with botocore's :class:`~botocore.auth.SigV4Auth`
  (fresh timestamp, the credentials as the session resolves and refreshes
  them) and sent on the client's own HTTP session (its pool, timeouts,
  proxies and TLS settings, and its exceptions, translated as before), or
  on an aiohttp session for the async API;
* a 2xx JSON answer is read with ``json.loads``; the blob members a Converse
  answer can hold are base64-decoded as botocore would; an error status is
  parsed by botocore's own rest-json parser into the ``ClientError`` that
  ``client.converse`` raises, so every error is classified as before;
* a 2xx ConverseStream answer is read as its bytes arrive and cut into
  frames (both CRCs checked) by :class:`~llmport_bedrock.eventstream.Frames`;
  an event frame is read with ``json.loads`` and shaped by a plan made
  once from the event shape (:class:`StreamShape`: botocore's JSON shape
  walk, as data): members the shape does not name dropped (Bedrock pads
  events with a ``p`` member), ``null`` members left out, blob members
  base64-decoded. botocore's decoder and shape walk cost more per event
  than everything else on the stream path. Any other frame (an exception
  or error frame, a frame that fails a check, an event the plan cannot
  read: a timestamp, a union with an unknown or no member) goes to
  botocore's own event-stream decoder and parser, so the event dicts and
  the ``EventStreamError`` or ``ChecksumMismatch`` are exactly what
  ``client.converse_stream(...)["stream"]`` yields and raises.

Used only when the client signs with SigV4 (no ``AWS_BEARER_TOKEN_BEDROCK``
API key, no ``auth_scheme_preference`` or ``signature_version``
configured); otherwise the provider calls boto3.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Iterator, Mapping
from typing import Any, NoReturn

from llmport.errors import MalformedResponseError

from . import sdk_internals
from .convert_in import VENDOR, ConversePrepared, MediaBytes, media_of
from .errors import call, input_error
from .eventstream import Frame, Frames

#: Members of a Converse content block whose ``source.bytes`` is a blob.
_MEDIA = ("image", "document", "video", "audio")

#: Most bytes taken from the socket per read of a stream (a read returns what has arrived).
_CHUNK = 65536


def usable(client: Any) -> bool:
    """Whether ``client`` signs Converse with plain SigV4 (the only scheme done here)."""
    config = client.meta.config
    if getattr(config, "signature_version", None) not in (None, "v4"):
        return False
    if getattr(config, "auth_scheme_preference", None):
        return False
    # botocore prefers a Bedrock API key (bearer token) from the environment when set.
    return not os.environ.get("AWS_BEARER_TOKEN_BEDROCK")


class Wire:
    """What a direct Converse call needs from one boto3 client, looked up once."""

    __slots__ = (
        "endpoint_url",
        "event_parser",
        "event_shape",
        "http",
        "operation",
        "parser",
        "proxy",
        "region",
        "serializer",
        "signing_name",
        "stream_operation",
        "stream_shape",
        "user_agent",
    )

    def __init__(self, client: Any) -> None:
        from botocore.parsers import create_parser  # type: ignore[import-untyped]
        from botocore.serialize import create_serializer  # type: ignore[import-untyped]

        meta = client.meta
        model = meta.service_model
        self.operation = model.operation_model("Converse")
        self.stream_operation = model.operation_model("ConverseStream")
        self.serializer = create_serializer(model.protocol, include_validation=True)
        self.parser = create_parser(model.protocol)
        # What botocore's EventStream parses each frame with: an event-stream
        # parser of the protocol's class (the one the parser makes for itself,
        # with the same default timestamp and blob parsers) and the shape of
        # the answer's ``stream`` member.
        self.event_parser: Any = type(self.parser).EVENT_STREAM_PARSER_CLS()
        output = self.stream_operation.output_shape
        self.event_shape: Any = output.members[output.serialization["payload"]]
        self.stream_shape = StreamShape(self.event_shape)
        self.endpoint_url: str = meta.endpoint_url.rstrip("/")
        self.region: str = meta.region_name
        self.signing_name: str = model.signing_name or model.endpoint_prefix
        # The client's own urllib3 session: its pool, timeouts, proxies and CA bundle.
        self.http: Any = sdk_internals.http_session(client)
        self.user_agent = _botocore_agent()
        self.proxy: tuple[Any, Any] | None = None  # see env_proxy

    def env_proxy(self) -> tuple[Any, Any]:
        """``(proxy URL, proxy auth)`` for the async path from ``HTTP(S)_PROXY`` / ``NO_PROXY``.

        Looked up once (botocore honours the same variables); aiohttp's own
        ``trust_env`` would look them, and ``.netrc``, up on a thread every request.
        """
        if self.proxy is None:
            from aiohttp.helpers import get_env_proxy_for_url
            from yarl import URL

            try:
                self.proxy = get_env_proxy_for_url(URL(self.endpoint_url))
            except LookupError:
                self.proxy = (None, None)
        return self.proxy

    def body(self, prepared: ConversePrepared) -> tuple[str, bytes]:
        """``(path, body)`` of ``prepared``: validated and serialized on first use, then reused.

        A ``ParamValidationError`` is an :class:`~llmport.errors.OptionError`
        raised before anything is sent, with botocore's report.
        """
        wire = prepared.wire
        if wire is None:
            wire = prepared.wire = self._serialize(prepared, self.operation)
        return wire

    def stream_body(self, prepared: ConversePrepared) -> tuple[str, bytes]:
        """:meth:`body` for ConverseStream (``/model/{id}/converse-stream``)."""
        wire = prepared.stream_wire
        if wire is None:
            wire = prepared.stream_wire = self._serialize(prepared, self.stream_operation)
        return wire

    def _serialize(self, prepared: ConversePrepared, operation: Any) -> tuple[str, bytes]:
        media = media_of(prepared.payload)
        for marker in media:  # encoded (once per exec) before botocore builds anything
            marker.block.base64_bytes()
        request = call(
            input_error, self.serializer.serialize_to_request, prepared.payload, operation
        )
        body = request["body"]
        data = body if isinstance(body, bytes) else body.encode("utf-8")
        return request["url_path"], _splice(data, media)

    def signed(self, path: str, body: bytes, credentials: Any) -> Any:
        """A botocore ``AWSRequest`` for one attempt, SigV4-signed now (fresh timestamp)."""
        from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
        from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]

        request = AWSRequest(
            method="POST",
            url=self.endpoint_url + path,
            data=body,
            headers={"Content-Type": "application/json", "User-Agent": self.user_agent},
        )
        SigV4Auth(credentials, self.signing_name, self.region).add_auth(request)
        return request

    def send(self, path: str, body: bytes, credentials: Any) -> dict[str, Any]:
        """One signed POST on the client's HTTP session; the answer as ``client.converse``'s."""
        response = self.http.send(self.signed(path, body, credentials).prepare())
        return self.answer(response.status_code, response.headers, response.content)

    def answer(self, status: int, headers: Mapping[str, str], content: bytes) -> dict[str, Any]:
        """The answer as a dict (2xx), or raise the ``ClientError`` botocore would."""
        if status >= 300:
            self._raise(status, headers, content)
        try:
            answer = json.loads(content)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            # As botocore's parser: an empty answer, which the conversion rejects (retryable).
            answer = {}
        try:
            _decode_blobs(answer)
        except (binascii.Error, TypeError, AttributeError, ValueError):
            raise MalformedResponseError(
                f"{VENDOR}: the answer holds a malformed base64 member", provider=VENDOR
            ) from None
        answer["ResponseMetadata"] = {
            "RequestId": _header(headers, "x-amzn-requestid"),
            "HTTPStatusCode": status,
        }
        return answer

    def _raise(
        self, status: int, headers: Mapping[str, str], content: bytes, operation: Any = None
    ) -> NoReturn:
        from botocore.awsrequest import HeadersDict
        from botocore.exceptions import ClientError  # type: ignore[import-untyped]

        operation = operation or self.operation
        response = {
            "status_code": status,
            "headers": HeadersDict({str(k): str(v) for k, v in headers.items()}),
            "body": content,
        }
        parsed = self.parser.parse(response, operation.output_shape)
        raise ClientError(parsed, operation.name)

    # -- ConverseStream ------------------------------------------------------------

    def open_stream(self, path: str, body: bytes, credentials: Any) -> tuple[Events, str | None]:
        """One signed ConverseStream POST on the client's HTTP session, its body left unread.

        Returns the events (read as they arrive) and the request id; an error
        status raises the ``ClientError`` ``client.converse_stream`` raises.
        """
        request = self.signed(path, body, credentials).prepare()
        request.stream_output = True  # botocore's session then leaves the body unread
        response = self.http.send(request)
        if response.status_code >= 300:
            self.stream_error(response.status_code, response.headers, response.content)
        return Events(self, response.raw), _header(response.headers, "x-amzn-requestid")

    def stream_error(self, status: int, headers: Mapping[str, str], content: bytes) -> NoReturn:
        """Raise the ``ClientError`` of a ConverseStream answer with an error status."""
        self._raise(status, headers, content, self.stream_operation)

    def frame_event(
        self, headers: dict[str, str] | None, payload: bytes, raw: bytes
    ) -> dict[str, Any]:
        """One frame from :class:`~llmport_bedrock.eventstream.Frames` as an event dict.

        A plain event frame is read here; any other goes to :meth:`event`.
        """
        if headers is not None and headers.get(":message-type") == "event":
            read = self.stream_shape.read(headers.get(":event-type"), payload)
            if read is not None:
                return read
        from botocore.eventstream import EventStreamBuffer  # type: ignore[import-untyped]

        buffer = EventStreamBuffer()
        buffer.add_data(raw)  # botocore raises its own error for a frame that fails a check
        message = next(iter(buffer), None)
        if message is None:
            raise MalformedResponseError(f"{VENDOR}: a malformed stream frame", provider=VENDOR)
        return self.event(message)

    def event(self, message: Any) -> dict[str, Any]:
        """One decoded frame as botocore's ``EventStream`` yields it (an exception frame raises).

        The same steps as ``EventStream._parse_event``: the frame as a
        response dict, parsed against the ``stream`` member's shape, and an
        ``EventStreamError`` for an exception or error frame.
        """
        response = message.to_response_dict()
        parsed: dict[str, Any] = self.event_parser.parse(response, self.event_shape)
        if response["status_code"] == 200:
            return parsed
        from botocore.exceptions import EventStreamError

        raise EventStreamError(parsed, self.stream_operation.name)


class Events:
    """The events of a ConverseStream answer on urllib3, decoded as its bytes arrive.

    Iterating gives what ``client.converse_stream(...)["stream"]`` gives;
    :meth:`close` closes the response (its connection too, unless the body
    was read to the end, which returned it to the pool).
    """

    __slots__ = ("_raw", "_wire")

    def __init__(self, wire: Wire, raw: Any) -> None:
        self._wire = wire
        self._raw = raw

    def __iter__(self) -> Iterator[dict[str, Any]]:
        frames = Frames()
        event = self._wire.frame_event
        # read1: what has arrived (up to _CHUNK), not a full _CHUNK as stream() waits for.
        read = self._raw.read1
        while chunk := read(_CHUNK):
            for headers, payload, raw in frames.feed(chunk):
                parsed = event(headers, payload, raw)
                if parsed:
                    yield parsed

    def close(self) -> None:
        """Close the response."""
        self._raw.close()


class AsyncEvents:
    """The events of a ConverseStream answer on aiohttp, decoded as its bytes arrive."""

    __slots__ = ("_frames", "_ready", "_response", "_wire")

    def __init__(self, wire: Wire, response: Any) -> None:
        self._wire = wire
        self._response = response
        self._frames = Frames()
        self._ready: list[Frame] = []

    async def next(self) -> dict[str, Any] | None:
        """The next event; None at the end of the body."""
        ready, event = self._ready, self._wire.frame_event
        while True:
            while ready:
                parsed = event(*ready.pop(0))
                if parsed:
                    return parsed
            # readany: what has arrived (iter_any's step), b"" at the end of the body.
            chunk = await self._response.content.readany()
            if not chunk:
                return None
            ready.extend(self._frames.feed(chunk))

    def close(self) -> None:
        """Close the response (a body read to the end has already freed its connection)."""
        self._response.close()


def _splice(body: bytes, media: list[MediaBytes]) -> bytes:
    """``body`` with each media marker's base64 replaced by its block's cached base64.

    botocore serialized the payload with the markers (a few bytes each); the
    image goes in once, as the bytes the block already encoded, so a tool
    loop encodes it once and the body is the only other copy.
    """
    if not media:
        return body
    # (bytes, is JSON text): botocore orders fields by its shape, not the payload's.
    pieces: list[tuple[bytes, bool]] = [(body, True)]
    for marker in media:
        token = base64.b64encode(marker)
        at = next((i for i, (p, text) in enumerate(pieces) if text and token in p), None)
        if at is None:  # cannot happen: botocore writes every blob as its base64
            raise ValueError(f"{marker!r} is missing from the serialized body")
        head, _, tail = pieces[at][0].partition(token)
        pieces[at : at + 1] = [(head, True), (marker.block.base64_bytes(), False), (tail, True)]
    return b"".join(p for p, _ in pieces)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:  # a plain dict from aiohttp's CIMultiDict copy keeps its casing
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return None if value is None else str(value)


def _decode_blobs(answer: dict[str, Any]) -> None:
    """Base64-decode, in place, every blob member a Converse answer's content can hold."""
    output = answer.get("output")
    message = output.get("message") if isinstance(output, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict) or "text" in block:
            continue  # the common case: nothing to decode
        _decode_media(block)
        if "toolResult" in block:
            for item in block["toolResult"].get("content") or ():
                _decode_media(item)
        guard = block.get("guardContent")
        if isinstance(guard, dict):
            _decode_media(guard)
        reasoning = block.get("reasoningContent")
        if isinstance(reasoning, dict) and isinstance(reasoning.get("redactedContent"), str):
            reasoning["redactedContent"] = base64.b64decode(reasoning["redactedContent"])


class _Unread(Exception):
    """A value the plan does not read as botocore would: the frame goes to botocore."""


class StreamShape:
    """ConverseStream's event shape as a plan: botocore's JSON shape walk, without botocore.

    A plan is ``None`` (a scalar or a document: as ``json.loads`` gives it),
    ``"blob"`` (base64-decoded), ``("list", item)``, ``("map", value)`` or
    ``("struct", members, union)`` with ``members`` ``(name, json name,
    plan)``; a timestamp, or a shape met again inside itself, is ``"botocore"``.
    """

    __slots__ = ("events",)

    def __init__(self, event_shape: Any) -> None:
        self.events = {
            name: _plan(member, ())
            for name, member in event_shape.members.items()
            if member.serialization.get("event") and not member.metadata.get("exception")
        }

    def read(self, kind: str | None, payload: bytes) -> dict[str, Any] | None:
        """``{kind: event}`` as botocore parses it, or ``None`` to let botocore parse it."""
        plan = self.events.get(kind or "")
        if plan is None or kind is None:
            return None
        try:
            data = json.loads(payload)
            return {kind: _shaped(data, plan)} if isinstance(data, dict) else None
        except (_Unread, ValueError):
            return None


def _plan(shape: Any, inside: tuple[str, ...]) -> Any:
    kind = shape.type_name
    if kind == "structure":
        if getattr(shape, "is_document_type", False):
            return None
        if shape.name in inside:
            return "botocore"
        members = tuple(
            (name, member.serialization.get("name", name), _plan(member, (*inside, shape.name)))
            for name, member in shape.members.items()
        )
        return ("struct", members, bool(getattr(shape, "is_tagged_union", False)))
    if kind == "list":
        return ("list", _plan(shape.member, inside))
    if kind == "map":
        return ("map", _plan(shape.value, inside))
    if kind == "blob":
        return "blob"
    if kind == "timestamp":
        return "botocore"
    return None


def _shaped(value: Any, plan: Any) -> Any:
    """``value`` as botocore's parser makes it under ``plan`` (:class:`StreamShape`)."""
    if plan is None:
        return value
    if plan == "blob":
        if not isinstance(value, str):
            raise _Unread
        try:
            return base64.b64decode(value)
        except (binascii.Error, ValueError):
            raise _Unread from None
    if plan == "botocore":
        raise _Unread
    if plan[0] == "struct":
        if value is None:
            return None
        if not isinstance(value, dict):
            raise _Unread
        if plan[2]:  # a union: exactly one known member set, as botocore checks
            present = [k for k, v in value.items() if v is not None and k != "__type"]
            if len(present) != 1 or all(present[0] != json_name for _, json_name, _ in plan[1]):
                raise _Unread
        shaped = {}
        for name, json_name, member in plan[1]:
            raw = value.get(json_name)
            if raw is not None:
                shaped[name] = _shaped(raw, member)
        return shaped
    if plan[0] == "list":
        if not isinstance(value, list):
            raise _Unread
        return [None if item is None else _shaped(item, plan[1]) for item in value]
    if not isinstance(value, dict):
        raise _Unread
    return {key: _shaped(item, plan[1]) for key, item in value.items()}


def _decode_media(block: dict[str, Any]) -> None:
    for kind in _MEDIA:
        media = block.get(kind)
        if isinstance(media, dict):
            source = media.get("source")
            if isinstance(source, dict) and isinstance(source.get("bytes"), str):
                source["bytes"] = base64.b64decode(source["bytes"])


def _botocore_agent() -> str:
    import botocore  # type: ignore[import-untyped]

    return f"Botocore/{botocore.__version__} llmport-bedrock"
