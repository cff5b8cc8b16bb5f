"""Bedrock embeddings on the wire: InvokeModel bodies and answers per model family.

InvokeModel (``POST /model/{modelId}/invoke``, the id percent-encoded, an
inference-profile id such as ``us.cohere.embed-v4:0`` as it is) takes each
family's own JSON. One builder and one reader per family:

* Titan Text Embeddings v1 (``amazon.titan-embed-text-v1``): ``{inputText}``;
  v2 (``amazon.titan-embed-text-v2:0``): ``{inputText, dimensions?,
  normalize}`` → ``embedding`` and ``inputTextTokenCount``. One text per call.
* Cohere Embed v3 (``cohere.embed-english-v3`` / ``-multilingual-v3``):
  ``{texts, input_type, truncate}`` → ``embeddings: [[…]]``
  (``response_type: embeddings_floats``); v4 (``cohere.embed-v4:0``) also
  takes ``output_dimension`` and answers by type, ``embeddings: {float: [[…]]}``.
* Nova 2 multimodal embeddings (``amazon.nova-2-multimodal-embeddings-v1:0``):
  ``{taskType: SINGLE_EMBEDDING, singleEmbeddingParams: {embeddingPurpose,
  embeddingDimension?, text: {value, truncationMode}}}`` → ``embeddings:
  [{embedding}]``. One text per call.

Only Titan repeats the input token count in the body; every family's answer
carries it in the ``x-amzn-bedrock-input-token-count`` header, which the
provider passes to the readers. The neutral ``input_type`` is Cohere's
``input_type`` (``search_query`` / ``search_document``) and Nova's
``embeddingPurpose`` (``GENERIC_RETRIEVAL`` / ``GENERIC_INDEX``); Titan has
none, so it is dropped there. Vendor fields (``vendor={"bedrock": {...}}``)
are merged over the top level of the body by the provider (Cohere's
``input_type: "classification"``, …).

Nothing here does I/O or imports boto3.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from llmport.messages.embeddings import EmbedRequest, EmbedResponse
from llmport.messages.types import Usage
from llmport.provider.translate import bad_embeddings

#: The response header in which InvokeModel reports the input tokens.
TOKEN_HEADER = "x-amzn-bedrock-input-token-count"

COHERE_INPUT_TYPES = {"query": "search_query", "document": "search_document"}
NOVA_PURPOSES = {"query": "GENERIC_RETRIEVAL", "document": "GENERIC_INDEX"}
#: Cohere and Nova need a task; with no ``input_type``, a text is embedded as a document.
DEFAULT_INPUT_TYPE = "document"
#: The neutral ``truncate=`` → Cohere ``truncate`` and Nova ``truncationMode``.
TRUNCATE = {None: "NONE", "start": "START", "end": "END"}


@dataclass(slots=True, frozen=True)
class Options:
    """The neutral options one InvokeModel body is built from."""

    input_type: str | None = None
    dimensions: int | None = None
    truncate: str | None = None


def titan_v1_body(texts: Sequence[str], options: Options) -> dict[str, Any]:
    """Titan Text Embeddings v1: ``{inputText}`` (one text; no dimensions, no task)."""
    (text,) = texts
    return {"inputText": text}


def titan_v2_body(texts: Sequence[str], options: Options) -> dict[str, Any]:
    """Titan Text Embeddings v2: ``{inputText, dimensions?, normalize: true}`` (one text)."""
    (text,) = texts
    body: dict[str, Any] = {"inputText": text}
    if options.dimensions is not None:
        body["dimensions"] = options.dimensions
    body["normalize"] = True  # the API's default, sent as AWS's examples send it
    return body


def _cohere_input_type(options: Options) -> str:
    return COHERE_INPUT_TYPES[options.input_type or DEFAULT_INPUT_TYPE]


def cohere_v3_body(texts: Sequence[str], options: Options) -> dict[str, Any]:
    """Cohere Embed v3: ``{texts, input_type, truncate}`` (no model in the body)."""
    return {
        "texts": list(texts),
        "input_type": _cohere_input_type(options),
        "truncate": TRUNCATE[options.truncate],
    }


def cohere_v4_body(texts: Sequence[str], options: Options) -> dict[str, Any]:
    """Cohere Embed v4: v3's body and ``output_dimension`` when asked."""
    body: dict[str, Any] = {"texts": list(texts), "input_type": _cohere_input_type(options)}
    if options.dimensions is not None:
        body["output_dimension"] = options.dimensions
    body["truncate"] = TRUNCATE[options.truncate]
    return body


def nova_body(texts: Sequence[str], options: Options) -> dict[str, Any]:
    """Nova 2 multimodal embeddings: one ``SINGLE_EMBEDDING`` of one text."""
    (text,) = texts
    params: dict[str, Any] = {
        "embeddingPurpose": NOVA_PURPOSES[options.input_type or DEFAULT_INPUT_TYPE]
    }
    if options.dimensions is not None:
        params["embeddingDimension"] = options.dimensions
    params["text"] = {"value": text, "truncationMode": TRUNCATE[options.truncate]}
    return {"taskType": "SINGLE_EMBEDDING", "singleEmbeddingParams": params}


def _field(data: Any, key: str, kind: type, provider: str) -> Any:
    value = data.get(key) if isinstance(data, Mapping) else None
    if not isinstance(value, kind):
        raise bad_embeddings(provider, f"no {key!r} {kind.__name__} in the embedding answer")
    return value


def read_titan(data: Any, provider: str) -> list[Any]:
    """Titan: one row, ``embedding``."""
    return [_field(data, "embedding", list, provider)]


def read_cohere_v3(data: Any, provider: str) -> list[Any]:
    """Cohere v3: ``embeddings`` is the list of rows."""
    return list(_field(data, "embeddings", list, provider))


def read_cohere_v4(data: Any, provider: str) -> list[Any]:
    """Cohere v4: ``embeddings.float`` is the list of rows."""
    return list(_field(_field(data, "embeddings", dict, provider), "float", list, provider))


def read_nova(data: Any, provider: str) -> list[Any]:
    """Nova: one row per ``embeddings[].embedding``."""
    items = _field(data, "embeddings", list, provider)
    return [_field(item, "embedding", list, provider) for item in items]


def input_tokens(headers: Mapping[str, Any], data: Any) -> int | None:
    """The input tokens: the response header, else Titan's ``inputTextTokenCount``."""
    header = {k.lower(): v for k, v in headers.items()}.get(TOKEN_HEADER)
    if header is not None and str(header).isdigit():
        return int(header)
    count = data.get("inputTextTokenCount") if isinstance(data, Mapping) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


@dataclass(slots=True, frozen=True)
class EmbedFamily:
    """One Bedrock embedding family: its body builder and answer reader."""

    name: str
    build: Callable[[Sequence[str], Options], dict[str, Any]]
    read: Callable[[Any, str], list[Any]]


TITAN_V1 = EmbedFamily("titan-v1", titan_v1_body, read_titan)
TITAN_V2 = EmbedFamily("titan-v2", titan_v2_body, read_titan)
COHERE_V3 = EmbedFamily("cohere-v3", cohere_v3_body, read_cohere_v3)
COHERE_V4 = EmbedFamily("cohere-v4", cohere_v4_body, read_cohere_v4)
NOVA = EmbedFamily("nova", nova_body, read_nova)

#: Model-id patterns (cross-region prefixes and ARNs too, hence the leading ``*``) → family.
FAMILY_PATTERNS: tuple[tuple[str, EmbedFamily], ...] = (
    ("*amazon.titan-embed-text-v1*", TITAN_V1),
    ("*amazon.titan-embed-text-v2*", TITAN_V2),
    ("*cohere.embed-english-v3*", COHERE_V3),
    ("*cohere.embed-multilingual-v3*", COHERE_V3),
    ("*cohere.embed-v4*", COHERE_V4),
    ("*amazon.nova-2-multimodal-embeddings*", NOVA),
)


def embed_family(model: str) -> EmbedFamily | None:
    """The embedding family of ``model`` (an id, a regional id or an ARN), or None."""
    for pattern, family in FAMILY_PATTERNS:
        if fnmatchcase(model, pattern):
            return family
    return None


@dataclass(slots=True, frozen=True)
class EmbedCall:
    """One InvokeModel call, built once: the model id, its family and the body's bytes."""

    model: str
    family: EmbedFamily
    body: bytes


def embed_call(request: EmbedRequest, model: str, family: EmbedFamily) -> EmbedCall:
    """The InvokeModel call for ``request`` (``model`` is the id sent; vendor fields merged)."""
    options = Options(request.input_type, request.dimensions, request.truncate)
    body = {**family.build(request.inputs, options), **request.options}
    return EmbedCall(model, family, json.dumps(body).encode())


def answer(
    data: Any, headers: Mapping[str, Any], request: EmbedRequest, family: EmbedFamily, provider: str
) -> EmbedResponse:
    """The vectors of one InvokeModel answer (the core holds their size to ``request``)."""
    return EmbedResponse.from_rows(
        family.read(data, provider),
        usage=Usage(input_tokens=input_tokens(headers, data) or 0, requests=1),
        model=request.model,
    )
