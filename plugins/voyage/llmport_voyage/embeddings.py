"""Voyage AI's ``POST /v1/embeddings`` on the wire, as pure functions.

The body is what Voyage AI's SDK sends: ``input``, ``model``,
``input_type`` (``query`` / ``document`` / ``null``, the neutral values
as they are), ``truncation`` (``true`` cuts an over-long text at its end;
``false``: the API refuses it), ``output_dimension`` and ``output_dtype``
(``null`` unless asked) and ``encoding_format: "base64"``, so each
``data[].embedding`` is little-endian float32 in base64, decoded without a
list of floats. Usage is ``usage.total_tokens``.

An error is FastAPI's ``{"detail": "..."}`` (no ``error`` object, no type
or code): :func:`error_message` reads it.

Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llmport.provider.translate import bad_embeddings


def embed_body(
    model: str,
    texts: Sequence[str],
    *,
    input_type: str | None = None,
    dimensions: int | None = None,
    truncate: bool = False,
    output_dtype: str | None = None,
) -> dict[str, Any]:
    """The ``/v1/embeddings`` body for ``texts``."""
    return {
        "encoding_format": "base64",
        "input": list(texts),
        "input_type": input_type,
        "model": model,
        "output_dimension": dimensions,
        "output_dtype": output_dtype,
        "truncation": truncate,
    }


def read_embed(data: Any, provider: str) -> tuple[list[str], int | None]:
    """The base64 rows, in ``index`` order, and ``usage.total_tokens`` of an answer."""
    items = data.get("data") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        raise bad_embeddings(provider, "no 'data' list in the embedding answer")
    ordered: list[tuple[int, str]] = []
    for position, item in enumerate(items):
        vector = item.get("embedding") if isinstance(item, Mapping) else None
        if not isinstance(vector, str):
            raise bad_embeddings(provider, "an embedding that is not a base64 string")
        index = item.get("index", position)
        ordered.append((index if isinstance(index, int) else position, vector))
    ordered.sort(key=lambda pair: pair[0])
    usage = data.get("usage")
    tokens = usage.get("total_tokens") if isinstance(usage, Mapping) else None
    ok = isinstance(tokens, int) and not isinstance(tokens, bool)
    return [vector for _, vector in ordered], tokens if ok else None


def error_message(data: Any) -> str | None:
    """The message of a FastAPI-style error body (``{"detail": ...}``), if it is one."""
    detail = data.get("detail") if isinstance(data, Mapping) else None
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list) and detail:  # FastAPI's validation errors: [{msg, loc}, ...]
        first = detail[0]
        return str(first.get("msg", first)) if isinstance(first, Mapping) else str(first)
    return None
