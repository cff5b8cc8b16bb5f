"""How a sent request is matched to a recorded one, and what differs when none matches.

A request matches on its method, its URL path and its canonical body: JSON
bodies compare as values (key order and whitespace do not matter, as on
the wire; list order does), with *volatile* fields left out. A volatile field
is a dotted path into the body, ``*`` standing for any key or index
(``metadata.user_id``, ``messages.*.id``). :func:`first_difference` names
the JSON path where two requests part, for the replay error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

from ..provider.wire import loads as strict_json

#: What a request is matched on by default.
DEFAULT_MATCH = ("method", "path", "body")
#: Every part a request can be matched on.
MATCH_PARTS = ("method", "scheme", "host", "port", "path", "query", "body")
_MISSING = object()


def canonical_body(body: Any, ignore: Iterable[str] = ()) -> Any:
    """A request body as a comparable value: parsed JSON minus the ``ignore`` paths."""
    if body is None or body in (b"", ""):
        return None
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    try:
        value = strict_json(text)
    except ValueError:
        return _multipart(text) or text
    for path in ignore:
        value = _without(value, path.split("."))
    return value


def _multipart(text: str) -> dict[str, Any] | None:
    """A ``multipart/form-data`` body (a file upload) as its parts, else None.

    Its boundary is random on every request, so the parts are compared, not
    the bytes: ``{"multipart": [{"headers": [...], "content": ...}]}``, a
    JSON part's content parsed.
    """
    first, _, rest = text.partition("\r\n")
    boundary = first[2:]
    if not first.startswith("--") or not boundary or not text.rstrip().endswith(f"{first}--"):
        return None
    parts = []
    for chunk in rest.rstrip()[: -len(first) - 2].split(f"\r\n{first}\r\n"):
        head, _, content = chunk.partition("\r\n\r\n")
        content = content.removesuffix("\r\n")
        try:
            parsed: Any = strict_json(content)
        except ValueError:
            parsed = content
        parts.append({"headers": head.split("\r\n"), "content": parsed})
    return {"multipart": parts}


def _without(value: Any, parts: Sequence[str]) -> Any:
    """``value`` with the dotted path ``parts`` removed (``*`` matches every key/index)."""
    if not parts:
        return value
    head, rest = parts[0], parts[1:]
    if isinstance(value, dict):
        keys = list(value) if head == "*" else [head]
        out = dict(value)
        for key in keys:
            if key in out:
                if rest:
                    out[key] = _without(out[key], rest)
                else:
                    del out[key]
        return out
    if isinstance(value, list):
        if head == "*":
            return [_without(v, rest) for v in value] if rest else []
        if head.isdigit() and int(head) < len(value):
            index = int(head)
            if not rest:
                return value[:index] + value[index + 1 :]
            return [*value[:index], _without(value[index], rest), *value[index + 1 :]]
    return value


def request_part(part: str, method: str, uri: str) -> Any:
    """The ``part`` of a request that is not its body (``method``, ``host``, ``path``, ...)."""
    if part == "method":
        return method.upper()
    split = urlsplit(uri)
    return {
        "scheme": split.scheme,
        "host": split.hostname,
        "port": split.port,
        "path": split.path,
        "query": sorted(split.query.split("&")) if split.query else [],
    }[part]


def first_difference(recorded: Any, sent: Any, path: str = "$") -> tuple[str, Any, Any] | None:
    """The first JSON path where ``recorded`` and ``sent`` differ, with both values there."""
    if isinstance(recorded, dict) and isinstance(sent, dict):
        for key in sorted(set(recorded) | set(sent), key=str):
            found = first_difference(
                recorded.get(key, _MISSING), sent.get(key, _MISSING), f"{path}.{key}"
            )
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(sent, list):
        for index in range(max(len(recorded), len(sent))):
            found = first_difference(
                recorded[index] if index < len(recorded) else _MISSING,
                sent[index] if index < len(sent) else _MISSING,
                f"{path}[{index}]",
            )
            if found:
                return found
        return None
    if recorded == sent and type(recorded) is type(sent):
        return None
    return path, _shown(recorded), _shown(sent)


def _shown(value: Any) -> Any:
    return "<absent>" if value is _MISSING else value


def describe(
    method: str,
    uri: str,
    body: Any,
    candidates: list[tuple[str, str, Any]],
    match: Sequence[str],
    ignore: Sequence[str],
) -> tuple[str, str, Any, Any]:
    """Why a request matched none of ``candidates`` (method, uri, body each).

    Returns a message, the differing path and both values, against the
    candidate that agrees on the most parts (the same path first).
    """
    sent_body = canonical_body(body, ignore)
    best: tuple[int, str, Any, Any] | None = None
    for rec_method, rec_uri, rec_body in candidates:
        score, found = 0, None
        for part in match:
            if part == "body":
                diff = first_difference(canonical_body(rec_body, ignore), sent_body)
            else:
                mine = request_part(part, rec_method, rec_uri)
                theirs = request_part(part, method, uri)
                diff = None if mine == theirs else (part, mine, theirs)
            if diff is None:
                score += 1
            elif found is None:
                found = diff
        if found is not None and (best is None or score > best[0]):
            best = (score, *found)
    where = f"{method.upper()} {urlsplit(uri).path}"
    if best is None:
        return (f"{where} has no recorded interaction left to replay", "", None, None)
    _, path, recorded, sent = best
    return (
        f"{where} differs from the cassette at {path}: recorded {recorded!r}, sent {sent!r}",
        path,
        recorded,
        sent,
    )
