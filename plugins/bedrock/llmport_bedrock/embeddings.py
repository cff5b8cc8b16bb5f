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
  [{embedding}]``; an image is ``image: {format, source: {bytes}}`` in place of
  ``text``. One text or one image per call.
* Titan Multimodal Embeddings G1 (``amazon.titan-embed-image-v1``): ``{inputText?,
  inputImage?, embeddingConfig: {outputEmbeddingLength}}`` → ``embedding``; a text and
  an image in one call give one vector (their average).

Images (:class:`~llmport.messages.embeddings.EmbedContent` inputs) go where the model's
page documents them: Cohere v4 takes ``inputs: [{content: [text, image_url]}]`` with
the image as a data URL, Titan Multimodal ``inputImage`` and Nova ``image`` as bare
base64.

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

from llmport.errors import UnsupportedContentError
from llmport.messages.embeddings import EmbedInput, EmbedRequest, EmbedResponse
from llmport.messages.types import MediaBlock, TextBlock, Usage
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
    model: str = ""


def _text(inputs: Sequence[EmbedInput], options: Options) -> str:
    """The one text of a one-text family's call (the core sends one input per call)."""
    (item,) = inputs
    if not isinstance(item, str):
        raise UnsupportedContentError("bedrock", options.model, "content blocks", "text only")
    return item


def titan_v1_body(inputs: Sequence[EmbedInput], options: Options) -> dict[str, Any]:
    """Titan Text Embeddings v1: ``{inputText}`` (one text; no dimensions, no task)."""
    return {"inputText": _text(inputs, options)}


def titan_v2_body(inputs: Sequence[EmbedInput], options: Options) -> dict[str, Any]:
    """Titan Text Embeddings v2: ``{inputText, dimensions?, normalize: true}`` (one text)."""
    body: dict[str, Any] = {"inputText": _text(inputs, options)}
    if options.dimensions is not None:
        body["dimensions"] = options.dimensions
    body["normalize"] = True  # the API's default, sent as AWS's examples send it
    return body


def _cohere_input_type(options: Options) -> str:
    return COHERE_INPUT_TYPES[options.input_type or DEFAULT_INPUT_TYPE]


def titan_image_body(inputs: Sequence[EmbedInput], options: Options) -> dict[str, Any]:
    """Titan Multimodal Embeddings G1: ``{inputText?, inputImage?, embeddingConfig}``.

    Source: Amazon Bedrock User Guide, "Amazon Titan Multimodal Embeddings G1" (request
    body: at least one of ``inputText`` and ``inputImage``, base64; both give their
    embeddings' average; ``outputEmbeddingLength`` 256, 384 or 1024) and its model page
    (256 text tokens, images of 25 MB and 2048x2048 pixels at most).
    """
    (item,) = inputs
    blocks = (TextBlock(item),) if isinstance(item, str) else item.blocks
    texts = [b.text for b in blocks if isinstance(b, TextBlock)]
    images = [b for b in blocks if isinstance(b, MediaBlock)]
    if len(texts) > 1 or len(images) > 1:
        raise UnsupportedContentError(
            "bedrock", options.model, f"{len(blocks)} blocks", "one text and one image at most"
        )
    body: dict[str, Any] = {}
    if texts:
        body["inputText"] = texts[0]
    if images:
        body["inputImage"] = images[0].base64()
    if options.dimensions is not None:
        body["embeddingConfig"] = {"outputEmbeddingLength": options.dimensions}
    return body


def cohere_v3_body(inputs: Sequence[EmbedInput], options: Options) -> dict[str, Any]:
    """Cohere Embed v3: ``{texts, input_type, truncate}`` (no model in the body)."""
    return {
        "texts": [_only_text(item, options) for item in inputs],
        "input_type": _cohere_input_type(options),
        "truncate": TRUNCATE[options.truncate],
    }


def _only_text(item: EmbedInput, options: Options) -> str:
    return _text((item,), options)


def cohere_v4_body(inputs: Sequence[EmbedInput], options: Options) -> dict[str, Any]:
    """Cohere Embed v4: v3's body and ``output_dimension`` when asked; with images,
    ``inputs`` of content parts in place of ``texts``.

    Source: Amazon Bedrock User Guide, "Cohere Embed v4" (``inputs: [{content: [{type:
    text}, {type: image_url, image_url: "data:<mime>;base64,..."}]}]`` for interleaved
    text and images; at most 96 texts or images a call).
    """
    body: dict[str, Any]
    if all(isinstance(item, str) for item in inputs):
        body = {"texts": list(inputs), "input_type": _cohere_input_type(options)}
    else:
        body = {"inputs": [_cohere_content(item) for item in inputs]}
        body["input_type"] = _cohere_input_type(options)
    if options.dimensions is not None:
        body["output_dimension"] = options.dimensions
    body["truncate"] = TRUNCATE[options.truncate]
    return body


def _cohere_content(item: EmbedInput) -> dict[str, Any]:
    blocks = (TextBlock(item),) if isinstance(item, str) else item.blocks
    return {
        "content": [
            {"type": "image_url", "image_url": f"data:{b.media_type};base64,{b.base64()}"}
            if isinstance(b, MediaBlock)
            else {"type": "text", "text": b.text}
            for b in blocks
        ]
    }


def nova_body(inputs: Sequence[EmbedInput], options: Options) -> dict[str, Any]:
    """Nova 2 multimodal embeddings: one ``SINGLE_EMBEDDING`` of one text or one image.

    Source: Amazon Nova User Guide, "Complete embeddings request and response schema"
    (``singleEmbeddingParams.image: {format: png|jpeg|gif|webp, source: {bytes}}``, the
    bytes base64 inline) beside the recorded text body.
    """
    (item,) = inputs
    params: dict[str, Any] = {
        "embeddingPurpose": NOVA_PURPOSES[options.input_type or DEFAULT_INPUT_TYPE]
    }
    if options.dimensions is not None:
        params["embeddingDimension"] = options.dimensions
    media = () if isinstance(item, str) else item.media
    if not media:
        text = item if isinstance(item, str) else item.texts[0]
        params["text"] = {"value": text, "truncationMode": TRUNCATE[options.truncate]}
    else:
        (image,) = media  # the model's max_embed_blocks is 1: the check allowed one block
        params["image"] = {
            "format": image.media_type.removeprefix("image/"),
            "source": {"bytes": image.base64()},
        }
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
    build: Callable[[Sequence[EmbedInput], Options], dict[str, Any]]
    read: Callable[[Any, str], list[Any]]


TITAN_V1 = EmbedFamily("titan-v1", titan_v1_body, read_titan)
TITAN_V2 = EmbedFamily("titan-v2", titan_v2_body, read_titan)
COHERE_V3 = EmbedFamily("cohere-v3", cohere_v3_body, read_cohere_v3)
COHERE_V4 = EmbedFamily("cohere-v4", cohere_v4_body, read_cohere_v4)
NOVA = EmbedFamily("nova", nova_body, read_nova)
TITAN_IMAGE = EmbedFamily("titan-image", titan_image_body, read_titan)

#: Model-id patterns (cross-region prefixes and ARNs too, hence the leading ``*``) → family.
FAMILY_PATTERNS: tuple[tuple[str, EmbedFamily], ...] = (
    ("*amazon.titan-embed-text-v1*", TITAN_V1),
    ("*amazon.titan-embed-text-v2*", TITAN_V2),
    ("*amazon.titan-embed-image-v1*", TITAN_IMAGE),
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
    options = Options(request.input_type, request.dimensions, request.truncate, request.model)
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
