"""Secrets out of cassettes: scrub what is recorded, refuse what still holds one.

The rules are those of every other channel of llmport, from
:mod:`llmport.observe.redaction`: a configured key anywhere, any header that
carries one, a URL's password and secret query parameters, a vendor's
partial echo of a key. :func:`scrub` applies them to a newly recorded
interaction (in its readable form, string by string, so a mask never cuts a
JSON escape); :func:`find_secret` looks through a whole cassette about to be
written, including interactions loaded from the file, and names the first
place a secret remains.
"""

from __future__ import annotations

from typing import Any

from ..observe.redaction import header_secrets, redact, redact_data, redact_url

#: Body forms whose strings are scrubbed (base64 bodies are binary: images, audio).
_READABLE_FORMS = ("json", "events", "text")


def _settled(value: Any) -> Any:
    """``value`` redacted until redacting changes nothing more.

    One pass can leave a shape for the next (``sk-proj-<echo>`` becomes
    ``sk-proj-***``, itself an ``sk-`` key shape), and :func:`find_secret`
    refuses any string a pass would still change.
    """
    for _ in range(4):
        again = redact_data(value)
        if again == value:
            break
        value = again
    return value


def _scrub_headers(headers: dict[str, list[str]]) -> dict[str, list[str]]:
    """Headers with every value that carries a secret ``***``, the rest redacted.

    Not registered as secrets: a signed request's ``authorization`` names
    ordinary headers (``SignedHeaders=content-type;host``), whose fragments
    would then read as echoes everywhere.
    """
    return {
        name: ["***" if header_secrets({name: value}) else _settled(value) for value in values]
        for name, values in headers.items()
    }


def _scrub_body(body: dict[str, Any] | None) -> dict[str, Any] | None:
    if body is None:
        return None
    return {k: _settled(v) if k in _READABLE_FORMS else v for k, v in body.items()}


def scrub(interaction: dict[str, Any]) -> dict[str, Any]:
    """A readable interaction with every secret masked; headers first (their keys register)."""
    request, response = interaction["request"], interaction["response"]
    request_headers = _scrub_headers(request["headers"])
    response_headers = _scrub_headers(response["headers"])
    return {
        "request": {
            **request,
            "uri": _settled(redact_url(request["uri"])),
            "headers": request_headers,
            "body": _scrub_body(request["body"]),
        },
        "response": {
            **response,
            "headers": response_headers,
            "body": _scrub_body(response["body"]),
        },
    }


def find_secret(value: Any, where: str = "") -> str | None:
    """The path of the first string in ``value`` that still holds a secret, else ``None``."""
    if isinstance(value, str):
        return where if redact(value) != value else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = find_secret(str(key), f"{where}.{key}") or find_secret(item, f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = find_secret(item, f"{where}[{index}]")
            if found:
                return found
    return None
