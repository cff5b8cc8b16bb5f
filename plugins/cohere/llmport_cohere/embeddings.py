"""Cohere's ``POST /v2/embed`` and ``POST /v1/tokenize`` on the wire, as pure functions.

The body is what Cohere's SDK sends: ``input_type`` (``search_query`` /
``search_document``; Cohere requires one from v3 on, so a call without
``input_type`` embeds documents), ``max_tokens`` and ``output_dimension``
(``null`` unless asked), ``model``, ``texts``, ``truncate`` (``END`` /
``START``, or ``NONE``: an over-long text is an error rather than cut) and
``embedding_types: ["float"]``. A request holding media (``embed-v4.0``, see
:func:`content_inputs`) sends ``inputs: [{content: [...]}]`` in place of ``texts``,
every input's text and images as parts of its own content. The answer holds
``embeddings.float`` (one
row per text) and the usage in ``meta.billed_units.input_tokens``. Vendor
fields (``vendor={"cohere": {...}}``) go over the body's top level (another
input type such as ``classification``, ``max_tokens``).

Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llmport.messages.embeddings import EmbedInput, EmbedResponse
from llmport.messages.types import MediaBlock, Usage
from llmport.provider.translate import bad_embeddings

INPUT_TYPES = {"query": "search_query", "document": "search_document"}
#: Cohere requires an input type (v3 and later): a call without one embeds documents.
DEFAULT_INPUT_TYPE = "document"
TRUNCATE = {None: "NONE", "start": "START", "end": "END"}


def embed_body(
    model: str,
    inputs: Sequence[EmbedInput],
    *,
    input_type: str | None = None,
    dimensions: int | None = None,
    truncate: str | None = None,
) -> dict[str, Any]:
    """The ``/v2/embed`` body for ``inputs``: ``texts``, or ``inputs`` when one holds media."""
    body: dict[str, Any] = {
        "input_type": INPUT_TYPES[input_type or DEFAULT_INPUT_TYPE],
        "max_tokens": None,
        "model": model,
        "output_dimension": dimensions,
    }
    if all(isinstance(item, str) for item in inputs):
        body["texts"] = list(inputs)
    else:
        body["inputs"] = content_inputs(inputs)
    body["truncate"] = TRUNCATE[truncate]
    body["embedding_types"] = ["float"]
    return body


def content_inputs(inputs: Sequence[EmbedInput]) -> list[dict[str, Any]]:
    """``inputs: [{content: [parts]}]``, one per input, its text and images fused.

    Source: Cohere API reference, "Embed API (v2)" (``inputs``: content of ``text`` and
    ``image_url`` parts, ``image_url.url`` a data URL) and Cohere's "Multimodal
    Embeddings" guide; the images' limits (PNG, JPEG, WebP, GIF; 5 MB) are Cohere's
    changelog "Embed v3.0 Models are now Multimodal".
    """
    return [{"content": parts(item)} for item in inputs]


def parts(item: EmbedInput) -> list[dict[str, Any]]:
    """One input's content parts: its text, and each image as a data URL."""
    if isinstance(item, str):
        return [{"type": "text", "text": item}]
    out: list[dict[str, Any]] = []
    for block in item.blocks:
        if isinstance(block, MediaBlock):
            url = f"data:{block.media_type};base64,{block.base64()}"
            out.append({"type": "image_url", "image_url": {"url": url}})
        else:
            out.append({"type": "text", "text": block.text})
    return out


def read_embed(data: Any, provider: str) -> tuple[list[Any], int | None]:
    """Rows (``embeddings.float``) and billed input tokens of a ``/v2/embed`` answer."""
    embeddings = data.get("embeddings") if isinstance(data, Mapping) else None
    rows = embeddings.get("float") if isinstance(embeddings, Mapping) else None
    if not isinstance(rows, list):
        raise bad_embeddings(provider, "no 'embeddings.float' list in the embedding answer")
    meta = data.get("meta")
    billed = meta.get("billed_units") if isinstance(meta, Mapping) else None
    tokens = billed.get("input_tokens") if isinstance(billed, Mapping) else None
    if isinstance(tokens, (int, float)) and not isinstance(tokens, bool):
        return rows, int(tokens)
    return rows, None


def answer(data: Any, model: str, provider: str) -> EmbedResponse:
    """The vectors of one answer, with its billed input tokens (a live call's and a recording's)."""
    rows, tokens = read_embed(data, provider)
    return EmbedResponse.from_rows(
        rows, usage=Usage(input_tokens=tokens or 0, requests=1), model=model
    )


def tokenize_body(model: str, text: str) -> dict[str, Any]:
    """The ``/v1/tokenize`` body (a v1 path: v2 has no tokenizer)."""
    return {"model": model, "text": text}


def read_tokenize(data: Any, provider: str) -> int:
    """The number of tokens a ``/v1/tokenize`` answer lists."""
    tokens = data.get("tokens") if isinstance(data, Mapping) else None
    if not isinstance(tokens, list):
        raise bad_embeddings(provider, "no 'tokens' list in the tokenize answer")
    return len(tokens)
