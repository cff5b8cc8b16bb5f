"""Secrets out of cassettes: scrub what is recorded, refuse what still holds one.

The rules are those of every other channel of llmport, from
:mod:`llmport.observe.redaction`: a configured key anywhere, any header that
carries one, a URL's password and secret query parameters, a vendor's
partial echo of a key. :func:`scrub` applies them to a newly recorded
interaction (in its readable form, string by string, so a mask never cuts a
JSON escape); :func:`find_secret` looks through a whole cassette about to be
written, including interactions loaded from the file, and names the first
place a secret remains.

Both take a :class:`~llmport.observe.redaction.Redactor` holding the keys of
this cassette (what the recorded code used, the configured keys), not the
process's whole registry: a key some other test registered must neither
mask this cassette's text nor have it refused.
"""

from __future__ import annotations

from typing import Any

from ..observe.redaction import Redactor, redact_url

#: Body forms whose strings are scrubbed (base64 bodies are binary: images, audio).
_READABLE_FORMS = ("json", "events", "text")


def _settled(value: Any, redactor: Redactor) -> Any:
    """``value`` redacted until redacting changes nothing more.

    One pass can leave a shape for the next (``sk-proj-<echo>`` becomes
    ``sk-proj-***``, itself an ``sk-`` key shape), and :func:`find_secret`
    refuses any string a pass would still change.
    """
    for _ in range(4):
        again = redactor.redact_data(value)
        if again == value:
            break
        value = again
    return value


def _scrub_headers(headers: dict[str, list[str]], redactor: Redactor) -> dict[str, list[str]]:
    """Headers with every value that carries a secret ``***``, the rest redacted.

    Not registered as secrets: a signed request's ``authorization`` names
    ordinary headers (``SignedHeaders=content-type;host``), whose fragments
    would then read as echoes everywhere (:func:`bearer_tokens` are the exception).
    """
    return {
        name: [
            "***" if redactor.header_secrets({name: value}) else _settled(value, redactor)
            for value in values
        ]
        for name, values in headers.items()
    }


def _scrub_body(body: dict[str, Any] | None, redactor: Redactor) -> dict[str, Any] | None:
    if body is None:
        return None
    return {k: _settled(v, redactor) if k in _READABLE_FORMS else v for k, v in body.items()}


def bearer_tokens(headers: dict[str, list[str]]) -> list[str]:
    """The bearer tokens a request's ``authorization`` headers send.

    A bearer token is a credential whole, and one minted by an SDK (Google
    credentials on Vertex AI, refreshed hourly) is in no provider's settings:
    the interaction's own keys, so a vendor's echo of one is masked too.
    """
    found = []
    for name, values in headers.items():
        if name.lower() == "authorization":
            for value in values:
                scheme, _, token = str(value).partition(" ")
                if scheme.lower() == "bearer" and token.strip():
                    found.append(token.strip())
    return found


def scrub(interaction: dict[str, Any], redactor: Redactor) -> dict[str, Any]:
    """A readable interaction with every secret of ``redactor`` (and every shape) masked,
    the bearer tokens its request sent among them."""
    request, response = interaction["request"], interaction["response"]
    tokens = bearer_tokens(request["headers"])
    if tokens:
        redactor = Redactor([*redactor.secrets, *tokens])
    request_headers = _scrub_headers(request["headers"], redactor)
    response_headers = _scrub_headers(response["headers"], redactor)
    return {
        "request": {
            **request,
            "uri": _settled(redact_url(request["uri"]), redactor),
            "headers": request_headers,
            "body": _scrub_body(request["body"], redactor),
        },
        "response": {
            **response,
            "headers": response_headers,
            "body": _scrub_body(response["body"], redactor),
        },
    }


def find_secret(value: Any, redactor: Redactor, where: str = "") -> str | None:
    """The path of the first string in ``value`` that still holds a secret, else ``None``."""
    if isinstance(value, str):
        return where if redactor.redact(value) != value else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = find_secret(str(key), redactor, f"{where}.{key}") or find_secret(
                item, redactor, f"{where}.{key}"
            )
            if found:
                return found
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = find_secret(item, redactor, f"{where}[{index}]")
            if found:
                return found
    return None
