"""The batch cassettes' recorder: the tests' settings plus a multipart-aware body matcher.

File uploads (OpenAI's ``POST /v1/files``) are ``multipart/form-data`` with a
random boundary per request: the matcher compares them with the boundary
replaced, so the uploaded JSONL must still be byte-identical. Every other
body is compared as JSON (or exactly, when it is not JSON), as in the other
vendor tests.
"""

from __future__ import annotations

import json
import re
from typing import Any

from support.cassette_support import make_vcr

MATCH_ON = ["method", "scheme", "host", "port", "path", "query", "batch_body"]


def _header(request: Any, name: str) -> str:
    for key, value in (request.headers or {}).items():
        if key.lower() == name:
            return str(value[0] if isinstance(value, list) else value)
    return ""


def _normal(request: Any) -> Any:
    body = request.body
    if hasattr(body, "getvalue"):  # botocore may hand vcrpy a BytesIO
        body = body.getvalue()
    if body is None or body in (b"", ""):
        return None
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    found = re.search(r"boundary=([^;\s]+)", _header(request, "content-type"))
    if found:
        return body.replace(found.group(1), "BOUNDARY")
    try:
        return json.loads(body)
    except (ValueError, TypeError):
        return body


def _batch_body(r1: Any, r2: Any) -> None:
    assert _normal(r1) == _normal(r2), "request body differs from the cassette"


def _bytes_body(request: Any) -> Any:
    """Store a file-like body (botocore's S3 uploads) as its bytes."""
    if getattr(request, "_was_file", False) or getattr(request, "_was_iter", False):
        body = request.body_bytes  # vcrpy would hand the body back as a BytesIO / iterator
        request._was_file = request._was_iter = False
        request.body = body
    return request


def batch_vcr(**overrides: Any) -> Any:
    overrides.setdefault("before_record_request", _bytes_body)
    recorder = make_vcr(**overrides)
    recorder.register_matcher("batch_body", _batch_body)
    recorder.match_on = MATCH_ON
    return recorder
