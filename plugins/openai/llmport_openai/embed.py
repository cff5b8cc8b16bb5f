"""OpenAI's Embeddings API (``POST /v1/embeddings``) to and from llmport's neutral types.

* :func:`embed_body` builds the JSON body of one
  :class:`~llmport.messages.embeddings.EmbedRequest`: ``model``, ``input``
  (always a list), ``encoding_format: "base64"`` where the service returns
  base64 (OpenAI, and the compatible servers documented to), ``dimensions``
  (or the service's own field name), and the caller's vendor fields.
* :func:`embed_answer` reads the answer: base64 vectors are decoded straight
  into the float32 buffer (no list of floats is built); a service that
  answers floats anyway is read as rows. ``data[].index`` orders the rows; a
  2xx without ``data`` (an error object, NaN) is a
  :class:`~llmport.errors.MalformedResponseError`, never an empty success.

Imports nothing of the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmport.errors import MalformedResponseError
from llmport.messages.embeddings import EmbedRequest, EmbedResponse
from llmport.messages.types import Usage

__all__ = ["embed_answer", "embed_body"]


def embed_body(
    request: EmbedRequest, *, base64: bool = True, dimensions_field: str = "dimensions"
) -> dict[str, Any]:
    """The JSON body of ``request`` (``vendor=`` fields last, so they may override)."""
    body: dict[str, Any] = {"model": request.model, "input": list(request.texts)}
    if base64:
        body["encoding_format"] = "base64"
    if request.dimensions is not None:
        body[dimensions_field] = request.dimensions
    body.update(request.options)
    return body


def embed_answer(answer: Any, request: EmbedRequest, provider: str) -> EmbedResponse:
    """The vectors of ``answer`` (the parsed JSON body) for ``request``, in input order."""
    if not isinstance(answer, Mapping) or not isinstance(answer.get("data"), list):
        raise _malformed(answer, provider)
    items = answer["data"]
    vectors = [_embedding(item, provider) for item in _in_order(items, provider)]
    usage = _usage(answer.get("usage"))
    model = str(answer.get("model") or request.model)
    if vectors and all(isinstance(v, str) for v in vectors):
        return EmbedResponse.from_base64(vectors, usage=usage, model=model)
    if all(isinstance(v, list) for v in vectors):
        return EmbedResponse.from_rows(vectors, usage=usage, model=model)
    raise MalformedResponseError(
        "embedding answer: vectors are neither base64 strings nor lists of numbers",
        provider=provider,
        retryable=False,
    )


def _in_order(items: list[Any], provider: str) -> list[Any]:
    """``data`` sorted by ``index`` (the documented order key; absent: as listed)."""
    if not all(isinstance(item, Mapping) for item in items):
        raise MalformedResponseError(
            "embedding answer: data holds something other than objects",
            provider=provider,
            retryable=False,
        )
    if all(isinstance(item.get("index"), int) for item in items):
        return sorted(items, key=lambda item: item["index"])
    return items


def _embedding(item: Mapping[str, Any], provider: str) -> Any:
    vector = item.get("embedding")
    if vector is None:
        raise MalformedResponseError(
            "embedding answer: an item has no embedding", provider=provider, retryable=False
        )
    return vector


def _usage(raw: Any) -> Usage:
    """``usage.prompt_tokens`` (OpenAI) or ``total_tokens`` (services that give only it)."""
    if not isinstance(raw, Mapping):
        return Usage(requests=1)
    tokens = raw.get("prompt_tokens")
    if not isinstance(tokens, int):
        tokens = raw.get("total_tokens")
    return Usage(input_tokens=tokens if isinstance(tokens, int) else 0, requests=1)


def _malformed(answer: Any, provider: str) -> MalformedResponseError:
    error = answer.get("error") if isinstance(answer, Mapping) else None
    if isinstance(error, Mapping):  # a 200 carrying an error object
        message = str(error.get("message") or error.get("type") or "error")
        return MalformedResponseError(
            f"embedding answer is an error object: {message}", provider=provider, retryable=False
        )
    kind = type(answer).__name__
    return MalformedResponseError(
        f"embedding answer has no 'data' list (got a {kind})", provider=provider, retryable=False
    )
