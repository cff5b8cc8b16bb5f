"""Voyage AI's ``POST /v1/embeddings`` on the wire, as pure functions.

The body is what Voyage AI's SDK sends: ``input``, ``model``,
``input_type`` (``query`` / ``document`` / ``null``, the neutral values
as they are), ``truncation`` (``true`` cuts an over-long text at its end;
``false``: the API refuses it), ``output_dimension`` and ``output_dtype``
(``null`` unless asked) and ``encoding_format: "base64"``, so each
``data[].embedding`` is little-endian float32 in base64, decoded without a
list of floats. Usage is ``usage.total_tokens``.

The multimodal models (``voyage-multimodal-3``, ``-3.5``) are called at ``POST
/v1/multimodalembeddings`` (:func:`multimodal_body`): ``inputs: [{content: [parts]}]``,
each input's text and images (``image_base64`` data URLs) fused into one vector, and
``output_encoding: "base64"``; the answer has the same ``data`` and ``usage``.

An error is FastAPI's ``{"detail": "..."}`` (no ``error`` object, no type
or code): :func:`error_message` reads it.

Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llmport.messages.embeddings import EmbedInput, EmbedResponse
from llmport.messages.types import MediaBlock, Usage
from llmport.provider.translate import bad_embeddings

#: The endpoints: text models, and the multimodal ones (every input of theirs goes there).
TEXT_PATH = "/v1/embeddings"
MULTIMODAL_PATH = "/v1/multimodalembeddings"


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


def multimodal_body(
    model: str,
    inputs: Sequence[EmbedInput],
    *,
    input_type: str | None = None,
    dimensions: int | None = None,
    truncate: bool = False,
) -> dict[str, Any]:
    """The ``/v1/multimodalembeddings`` body for ``inputs`` (texts and content blocks).

    Source: Voyage AI API reference, "Multimodal embeddings" (``POST
    /v1/multimodalembeddings``: ``inputs`` of ``content`` lists of ``text`` and
    ``image_base64`` parts, a data URL of PNG, JPEG, WebP or GIF; at most 1,000 inputs,
    16 million pixels and 20 MB an image, 32k tokens an input, 560 pixels a token).
    """
    body: dict[str, Any] = {
        "inputs": [{"content": _parts(item)} for item in inputs],
        "model": model,
        "input_type": input_type,
        "truncation": truncate,
        "output_encoding": "base64",
    }
    if dimensions is not None:
        body["output_dimension"] = dimensions
    return body


def _parts(item: EmbedInput) -> list[dict[str, Any]]:
    if isinstance(item, str):
        return [{"type": "text", "text": item}]
    return [
        {"type": "image_base64", "image_base64": f"data:{b.media_type};base64,{b.base64()}"}
        if isinstance(b, MediaBlock)
        else {"type": "text", "text": b.text}
        for b in item.blocks
    ]


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


def answer(data: Any, model: str, provider: str) -> EmbedResponse:
    """The vectors of one answer, with its billed input tokens (a live call's and a recording's)."""
    items, tokens = read_embed(data, provider)
    return EmbedResponse.from_base64(
        items, usage=Usage(input_tokens=tokens or 0, requests=1), model=model
    )


def error_message(data: Any) -> str | None:
    """The message of a FastAPI-style error body (``{"detail": ...}``), if it is one."""
    detail = data.get("detail") if isinstance(data, Mapping) else None
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list) and detail:  # FastAPI's validation errors: [{msg, loc}, ...]
        first = detail[0]
        return str(first.get("msg", first)) if isinstance(first, Mapping) else str(first)
    return None
