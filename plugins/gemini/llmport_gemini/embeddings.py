"""Gemini embeddings on the wire: request bodies and answers, as pure functions.

Two endpoints, one per service:

* the Developer API's ``POST models/{model}:batchEmbedContents`` (what
  google-genai calls even for one text): ``requests: [{model, content:
  {parts: [{text}]}, taskType?, outputDimensionality?}]`` → ``embeddings:
  [{values}]`` and, on some models, ``usageMetadata.promptTokenCount``;
* Vertex AI's ``POST publishers/google/models/{model}:predict``:
  ``instances: [{content, task_type?}]`` (a plain string, snake_case) and
  ``parameters: {outputDimensionality?, autoTruncate?}`` →
  ``predictions[].embeddings {values, statistics: {token_count, truncated}}``;
  for ``multimodalembedding@001`` (:func:`multimodal_body`), ``instances: [{text}
  | {image: {bytesBase64Encoded}}]`` and ``parameters.dimension`` →
  ``predictions[].textEmbedding`` / ``imageEmbedding``.

The neutral ``input_type`` is Gemini's ``taskType`` (``RETRIEVAL_QUERY`` /
``RETRIEVAL_DOCUMENT``), except on ``gemini-embedding-2``, which takes no task
type: Google's guide writes the task into the text instead (``task: search
result | query: …`` for a query, ``title: none | text: …`` for a document).
Vendor fields (``vendor={"gemini": {...}}``) go into each request of a
batch (``taskType: "CLASSIFICATION"``, ``title``) or into Vertex AI's
``parameters``; the one field that is not sent, ``task``, names the task
``gemini-embedding-2`` is told in its text (``"question answering"``).

Nothing here does I/O or imports google-genai; the provider sends the bodies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llmport.errors import OptionError, UnsupportedFeatureError
from llmport.messages.embeddings import EmbedInput, EmbedRequest, EmbedResponse
from llmport.messages.types import Usage
from llmport.provider.translate import bad_embeddings

#: The Developer API's method (google-genai calls it even for one text).
BATCH = ":batchEmbedContents"
#: Vertex AI's method for embedding models.
PREDICT = ":predict"

#: Vertex AI's multimodal embedding model (images too; its own instance and answer shapes).
MULTIMODAL_MODELS = frozenset({"multimodalembedding@001"})

#: The neutral input type → Gemini's ``taskType`` (``task_type`` on Vertex's ``:predict``).
TASK_TYPES = {"query": "RETRIEVAL_QUERY", "document": "RETRIEVAL_DOCUMENT"}
#: The model that is told its task in the text rather than in ``taskType``.
TASK_PREFIX_MODELS = frozenset({"gemini-embedding-2"})
#: The task a query is embedded for on :data:`TASK_PREFIX_MODELS` unless ``task=`` says.
DEFAULT_PREFIX_TASK = "search result"
#: Tasks whose two sides are alike: a document is prefixed like a query.
SYMMETRIC_TASKS = frozenset({"classification", "clustering", "sentence similarity"})


def model_name(model: str) -> str:
    """``gemini-embedding-001`` for ``models/gemini-embedding-001`` or ``gemini-embedding-001``."""
    return model.removeprefix("models/")


def prefixed(text: str, input_type: str | None, task: str | None) -> str:
    """``text`` with the task written in, as ``gemini-embedding-2`` is conditioned.

    No input type and no task: the text as it is. A document of an asymmetric
    task: ``title: none | text: …``; otherwise ``task: {task} | query: …``.
    """
    if input_type is None and task is None:
        return text
    chosen = task or DEFAULT_PREFIX_TASK
    if input_type == "document" and chosen not in SYMMETRIC_TASKS:
        return f"title: none | text: {text}"
    return f"task: {chosen} | query: {text}"


def batch_body(
    model: str,
    texts: Sequence[str],
    *,
    input_type: str | None = None,
    dimensions: int | None = None,
    task: str | None = None,
) -> dict[str, Any]:
    """The Developer API's ``batchEmbedContents`` body for ``texts`` (one request each)."""
    name = model_name(model)
    by_prefix = name in TASK_PREFIX_MODELS
    task_type = None if by_prefix else (task or TASK_TYPES.get(input_type or ""))
    requests: list[dict[str, Any]] = []
    for text in texts:
        value = prefixed(text, input_type, task) if by_prefix else text
        one: dict[str, Any] = {"content": {"parts": [{"text": value}]}, "model": f"models/{name}"}
        if dimensions is not None:
            one["outputDimensionality"] = dimensions
        if task_type:
            one["taskType"] = task_type
        requests.append(one)
    return {"requests": requests}


def predict_body(
    texts: Sequence[str],
    *,
    input_type: str | None = None,
    dimensions: int | None = None,
    task: str | None = None,
    auto_truncate: bool | None = None,
) -> dict[str, Any]:
    """Vertex AI's ``:predict`` body for ``texts`` (``autoTruncate`` only when asked)."""
    task_type = task or TASK_TYPES.get(input_type or "")
    instances: list[dict[str, Any]] = []
    for text in texts:
        one: dict[str, Any] = {"content": text}
        if task_type:
            one["task_type"] = task_type
        instances.append(one)
    body: dict[str, Any] = {"instances": instances}
    parameters: dict[str, Any] = {}
    if dimensions is not None:
        parameters["outputDimensionality"] = dimensions
    if auto_truncate is not None:
        parameters["autoTruncate"] = auto_truncate
    if parameters:
        body["parameters"] = parameters
    return body


def multimodal_body(inputs: Sequence[EmbedInput], *, dimensions: int | None) -> dict[str, Any]:
    """Vertex AI's ``:predict`` body for ``multimodalembedding@001``: one instance per input,
    ``{text}`` or ``{image: {bytesBase64Encoded}}``.

    Source: Google Cloud, "Get multimodal embeddings" (request body ``instances[].text`` /
    ``instances[].image.bytesBase64Encoded``, ``parameters.dimension``; answer
    ``predictions[].textEmbedding`` / ``imageEmbedding``).
    """
    instances: list[dict[str, Any]] = []
    for item in inputs:
        media = () if isinstance(item, str) else item.media
        if media:
            instances.append({"image": {"bytesBase64Encoded": media[0].base64()}})
        else:
            instances.append({"text": item if isinstance(item, str) else item.texts[0]})
    body: dict[str, Any] = {"instances": instances}
    if dimensions is not None:
        body["parameters"] = {"dimension": dimensions}
    return body


def read_multimodal(data: Any, provider: str) -> tuple[list[Any], int | None]:
    """Rows of a ``multimodalembedding@001`` answer: each prediction's text or image vector."""
    rows: list[Any] = []
    for prediction in _list(data, "predictions", provider):
        found = None
        if isinstance(prediction, Mapping):
            found = prediction.get("imageEmbedding", prediction.get("textEmbedding"))
        if not isinstance(found, list):
            raise bad_embeddings(provider, "a prediction without textEmbedding or imageEmbedding")
        rows.append(found)
    return rows, None


def _list(data: Any, key: str, provider: str) -> list[Any]:
    value = data.get(key) if isinstance(data, Mapping) else None
    if not isinstance(value, list):
        raise bad_embeddings(provider, f"no {key!r} list in the embedding answer")
    return value


def _values(item: Any, provider: str) -> Any:
    values = item.get("values") if isinstance(item, Mapping) else None
    if not isinstance(values, list):
        raise bad_embeddings(provider, "an embedding without a 'values' list")
    return values


def read_batch(data: Any, provider: str) -> tuple[list[Any], int | None]:
    """Rows and input tokens (None if the model reports none) of a ``batchEmbedContents`` answer."""
    rows = [_values(item, provider) for item in _list(data, "embeddings", provider)]
    usage = data.get("usageMetadata")
    tokens = usage.get("promptTokenCount") if isinstance(usage, Mapping) else None
    return rows, tokens if isinstance(tokens, int) else None


def read_predict(data: Any, provider: str) -> tuple[list[Any], int | None]:
    """Rows and input tokens (the sum of ``statistics.token_count``) of a ``:predict`` answer."""
    rows: list[Any] = []
    tokens = 0
    counted = False
    for prediction in _list(data, "predictions", provider):
        embeddings = prediction.get("embeddings") if isinstance(prediction, Mapping) else None
        rows.append(_values(embeddings, provider))
        stats = embeddings.get("statistics") if isinstance(embeddings, Mapping) else None
        count = stats.get("token_count") if isinstance(stats, Mapping) else None
        if isinstance(count, (int, float)) and not isinstance(count, bool):
            tokens += int(count)
            counted = True
    return rows, tokens if counted else None


def payload(request: EmbedRequest, *, vertex: bool, provider: str) -> dict[str, Any]:
    """What the provider posts for ``request``: ``path``, ``method`` and ``body`` (no I/O).

    Raises typed errors first: a ``task`` that is not a string, ``truncate="start"``
    on Vertex AI (``autoTruncate`` cuts only the end).
    """
    fields = dict(request.options)
    task = fields.pop("task", None)
    if task is not None and not isinstance(task, str):
        raise OptionError(f"{provider}: the task must be a string, got {type(task).__name__}")
    name = model_name(request.model)
    if vertex:
        if request.truncate == "start":
            raise UnsupportedFeatureError(
                provider, name, 'truncate="start"', "Vertex AI's autoTruncate cuts only the end"
            )
        if name in MULTIMODAL_MODELS:
            body = multimodal_body(request.inputs, dimensions=request.dimensions)
            body.update(fields)
            return {"path": f"publishers/google/models/{name}", "method": PREDICT, "body": body}
        auto = True if request.truncate == "end" else None
        body = predict_body(
            request.texts,
            input_type=request.input_type,
            dimensions=request.dimensions,
            task=task,
            auto_truncate=auto,
        )
        if fields:
            body["parameters"] = {**body.get("parameters", {}), **fields}
        return {"path": f"publishers/google/models/{name}", "method": PREDICT, "body": body}
    body = batch_body(
        name,
        request.texts,
        input_type=request.input_type,
        dimensions=request.dimensions,
        task=task,
    )
    for one in body["requests"]:
        one.update(fields)
    return {"path": f"models/{name}", "method": BATCH, "body": body}


def answer(data: Any, request: EmbedRequest, method: str, provider: str) -> EmbedResponse:
    """The vectors of a ``batchEmbedContents`` or ``:predict`` answer (sizes: the core's)."""
    read = read_predict if method == PREDICT else read_batch
    if method == PREDICT and model_name(request.model) in MULTIMODAL_MODELS:
        read = read_multimodal
    rows, tokens = read(data, provider)
    return EmbedResponse.from_rows(
        rows,
        usage=Usage(input_tokens=tokens or 0, requests=1),
        model=model_name(request.model),
    )
