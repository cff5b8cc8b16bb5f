"""Cassette helpers shared by the vendor tests (``from support.cassette_support import ...``)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"

# Headers and query parameters that may hold credentials: never stored.
SECRET_HEADERS = [
    "authorization",
    "x-api-key",
    "api-key",
    "cookie",
    "set-cookie",
    "x-goog-api-key",
    "x-amz-security-token",
    "x-amz-date",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
]
SECRET_QUERY = ["key", "api_key", "access_token"]


def _json_body(r1: Any, r2: Any) -> None:
    """Match request bodies as JSON (key order and whitespace do not matter)."""

    def parse(body: Any) -> Any:
        if body is None or body == b"" or body == "":
            return None
        if isinstance(body, bytes):
            body = body.decode("utf-8")
        try:
            return json.loads(body)
        except (ValueError, TypeError):
            return body

    assert parse(r1.body) == parse(r2.body), "request body differs from the cassette"


def make_vcr(**overrides: Any) -> Any:
    import vcr

    recorder = vcr.VCR(
        cassette_library_dir=str(CASSETTES),
        record_mode=os.environ.get("LLMPORT_RECORD_MODE", "none"),
        match_on=["method", "scheme", "host", "port", "path", "query", "json_body"],
        filter_headers=SECRET_HEADERS,
        filter_query_parameters=SECRET_QUERY,
        decode_compressed_response=True,
        # allow_playback_repeats is a use_cassette() option (False by default)
    )
    recorder.register_matcher("json_body", _json_body)
    for key, value in overrides.items():
        setattr(recorder, key, value)
    return recorder


def request_json(cass: Any, index: int = 0) -> Any:
    """The JSON body of the ``index``-th request the cassette matched."""
    body = cass.requests[index].body
    return json.loads(body.decode() if isinstance(body, bytes) else body)


def clean_recording(
    data: dict[str, Any], vendor_host: str, keep_request: set[str], keep_response: set[str]
) -> dict[str, Any]:
    """A cassette recorded against the loopback server, made to look like the vendor's traffic.

    The loopback URI prefix becomes ``vendor_host``; only the listed headers
    are kept (so no credential, date or connection header survives); header
    values sent as bytes (botocore) are stored as text.
    """
    for interaction in data["interactions"]:
        request, response = interaction["request"], interaction["response"]
        request["uri"] = re.sub(r"^http://127\.0\.0\.1:\d+", vendor_host, request["uri"])
        request["headers"] = {
            k: [x.decode() if isinstance(x, bytes) else x for x in v]
            for k, v in request["headers"].items()
            if k.lower() in keep_request
        }
        response["headers"] = {
            k: v for k, v in response["headers"].items() if k.lower() in keep_response
        }
    return data


def rewrite_recording(
    path: Path, vendor_host: str, keep_request: set[str], keep_response: set[str]
) -> None:
    """:func:`clean_recording` applied to the cassette file at ``path``, in place."""
    import yaml

    data = clean_recording(
        yaml.safe_load(path.read_text()), vendor_host, keep_request, keep_response
    )
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120))


def shown(cassette: Path, capsys: Any) -> list[str]:
    """What ``llmport cassette show`` prints for ``cassette`` (it must succeed)."""
    from llmport.cli.main import main

    assert main(["cassette", "show", str(cassette)]) == 0
    lines: list[str] = capsys.readouterr().out.splitlines()
    return lines


def hostile_exchanges(url: str) -> list[Any]:
    """Garbled exchanges at ``url``: truncated bodies, wrong shapes, bytes that are not UTF-8.

    A plugin's cassette reader must return ``None`` or a neutral view for each,
    never raise (``llmport cassette show`` then reads it generically).
    """
    from llmport.plugin_api import RecordedExchange

    wrong_shapes: list[Any] = [None, 7, "text", [1, "x"], {"input": 5}, {"messages": {"a": 1}}]
    bodies: list[Any] = [
        None,
        {"text": '{"output": [{"type": "mess'},  # a truncated JSON answer
        {"base64": "//79"},  # bytes that are not UTF-8
        {"json": {"output": "x", "data": 3, "choices": 1, "embeddings": "x", "body": 2}},
        {"json": {"data": [{"embedding": "not base64!"}], "output": [{"type": 5}]}},
        {"json": {"embeddings": {"float": [[1.0], [1.0, 2.0]]}, "embedding": [[]]}},
        {"events": [{"event": "x", "data": "not json"}, {"data": {"type": 3}}, {"data": [1]}]},
        {"events": [{"data": {"type": "response.output_text.delta"}}]},  # fields missing
        {"aws_events": [{"headers": {":event-type": "contentBlockDelta"}, "payload": {}}]},
        {"aws_events": [{"headers": 5, "payload": {"json": {"delta": 3, "usage": "x"}}}]},
    ]
    sent: list[Any] = [*wrong_shapes, {"model": "m", "input": [{"type": "function_call"}]}]
    return [
        RecordedExchange("POST", url, body_sent, received)
        for body_sent in sent
        for received in bodies
    ]
