"""Every private name of the ``google-genai`` SDK this plugin uses, and only
here.

The fast path posts request JSON built and serialized once through the SDK's
own API client (its URL, headers, retries and errors) instead of calling
``models.generate_content`` (which builds pydantic objects, converts them
and re-serializes per send), and reads answers as JSON. To stay exact it
reuses the SDK's converters, its continuation helpers and its one-request
methods, which google-genai keeps private. Each is wrapped below in one
function that says what it is, why the public API does not do the job at the
same speed, and since which SDK version it has this shape (all of them have
it unchanged from google-genai 3.0 to 3.4). Each shape is pinned by
``tests/gemini/test_gemini_sdk_internals.py``: a release that moves one
fails one clearly named test. The SDK is imported inside the functions,
never at plugin import.
"""

from __future__ import annotations

from typing import Any

#: The SDK's private names used below (module, then attribute path).
USED: tuple[tuple[str, str], ...] = (
    ("google.genai._api_client", "BaseApiClient._build_request"),
    ("google.genai._api_client", "BaseApiClient._request"),
    ("google.genai._api_client", "BaseApiClient._async_request"),
    ("google.genai.models", "Models._generate_content"),
    ("google.genai.models", "AsyncModels._generate_content"),
    ("google.genai.models", "Models._generate_content_stream"),
    ("google.genai.models", "AsyncModels._generate_content_stream"),
    ("google.genai.models", "_Part_to_mldev"),
    ("google.genai.models", "_GenerateContentResponse_from_mldev"),
    ("google.genai.types", "GenerateContentResponse._from_response"),
    ("google.genai.batches", "_InlinedRequest_to_mldev"),
    ("google.genai._common", "convert_to_dict"),
    ("google.genai._common", "encode_unserializable_types"),
    ("google.genai._common", "recursive_dict_update"),
    ("google.genai._extra_utils", "should_continue_generation"),
    ("google.genai._extra_utils", "prepare_continuation_config"),
    ("google.genai._extra_utils", "merge_continuation_responses"),
    ("google.genai._extra_utils", "StreamContinuation"),
)

#: Private attributes set on instances (class, then attribute): not on the class.
ON_INSTANCES: tuple[tuple[str, str], ...] = (("google.genai.Client", "_api_client"),)


# --- The API client: one HTTP request, the SDK's way --------------------------


def api_client(client: Any) -> Any:
    """The ``BaseApiClient`` behind a ``genai.Client`` (URL, auth, retries, transport).

    ``Client._api_client``. Its public ``request`` takes a dict body and
    ``json.dumps`` it per send; only the private request methods below post
    bytes serialized once.
    """
    return client._api_client


def build_request(api: Any, path: str, http_options: Any) -> Any:
    """The SDK's ``HttpRequest`` for a ``POST`` to ``path`` (URL, headers, timeout).

    ``BaseApiClient._build_request(http_method, path, request_dict,
    http_options)``, as the public ``request`` makes it, with an empty body
    the caller replaces by its own bytes.
    """
    return api._build_request("post", path, {}, http_options)


def send(api: Any, request: Any, http_options: Any, *, stream: bool) -> Any:
    """Send ``request`` with the SDK's retries and errors; its ``HttpResponse``.

    ``BaseApiClient._request(http_request, http_options, stream)``; the
    public ``request`` / ``request_streamed`` build the request from a dict
    themselves.
    """
    return api._request(request, http_options, stream=stream)


async def asend(api: Any, request: Any, http_options: Any, *, stream: bool) -> Any:
    """Async :func:`send`: ``BaseApiClient._async_request``, same parameters."""
    return await api._async_request(request, http_options, stream=stream)


# --- One generate request, without the automatic continuation -------------------


def generate_once(models: Any, *, model: str, contents: Any, config: Any) -> Any:
    """One ``generateContent`` request (``Models`` or ``AsyncModels``: awaitable then).

    ``_generate_content(model=, contents=, config=)``. Public
    ``generate_content`` follows continuation tokens itself; a continued
    answer's further hops need the single request.
    """
    return models._generate_content(model=model, contents=contents, config=config)


def generate_stream_once(models: Any, *, model: str, contents: Any, config: Any) -> Any:
    """One ``streamGenerateContent`` request (chunks; awaitable for ``AsyncModels``).

    ``_generate_content_stream(model=, contents=, config=)``, for the same
    reason as :func:`generate_once`.
    """
    return models._generate_content_stream(model=model, contents=contents, config=config)


# --- Continuations, followed as generate_content follows them -----------------


def continuation_token(answer: Any) -> Any:
    """The token to continue ``answer`` with, or a falsy value when it is complete.

    ``_extra_utils.should_continue_generation(response)``.
    """
    from google.genai import _extra_utils

    return _extra_utils.should_continue_generation(answer)


def continuation_config(config: Any, token: Any) -> Any:
    """``config`` for the request continuing with ``token``.

    ``_extra_utils.prepare_continuation_config(config, token)``.
    """
    from google.genai import _extra_utils

    return _extra_utils.prepare_continuation_config(config, token)


def merge_continued(responses: list[Any], config: Any) -> Any:
    """One ``GenerateContentResponse`` from a continued answer's responses.

    ``_extra_utils.merge_continuation_responses(responses, config=)``.
    """
    from google.genai import _extra_utils

    return _extra_utils.merge_continuation_responses(responses, config=config)


def stream_continuation(config: Any) -> Any:
    """The SDK's state for a continued stream (``start_hop``, ``observe``, ``end_hop``).

    ``_extra_utils.StreamContinuation(config)``.
    """
    from google.genai import _extra_utils

    return _extra_utils.StreamContinuation(config)


# --- The SDK's converters, for JSON exactly as it writes and reads it ----------


def part_json(part: Any) -> dict[str, Any]:
    """A ``types.Part`` as the JSON ``generate_content`` sends.

    ``models._Part_to_mldev``, then ``_common.convert_to_dict`` and
    ``_common.encode_unserializable_types`` (bytes as base64), as the SDK
    chains them; there is no public serializer of the wire form.
    """
    from google.genai import _common, models

    converted = models._Part_to_mldev(part)
    out: dict[str, Any] = _common.encode_unserializable_types(_common.convert_to_dict(converted))
    return out


def inlined_request_json(api: Any, request: Any) -> dict[str, Any]:
    """A batch ``InlinedRequest`` as the JSON ``batches.create`` sends.

    ``batches._InlinedRequest_to_mldev(api_client, from_object)``, then
    ``_common.convert_to_dict``.
    """
    from google.genai import _common, batches

    out: dict[str, Any] = _common.convert_to_dict(batches._InlinedRequest_to_mldev(api, request))
    return out


def merge_body(wire: dict[str, Any], body: dict[str, Any]) -> None:
    """Merge ``body`` into ``wire`` in place, as the SDK merges ``extra_body``.

    ``_common.recursive_dict_update`` (it aligns key case first; llmport's own
    ``merge`` does not).
    """
    from google.genai import _common

    _common.recursive_dict_update(wire, body)


def response_object(data: Any, config: dict[str, Any]) -> Any:
    """An answer's JSON as the ``GenerateContentResponse`` ``generate_content`` returns.

    ``models._GenerateContentResponse_from_mldev(data, None, None)``, then
    ``types.GenerateContentResponse._from_response(response=, kwargs=)`` with
    the request's ``config`` (its ``parsed`` value); pydantic's public
    ``model_validate`` neither drops unknown fields nor sets ``parsed``.
    """
    from google.genai import models, types

    converted = models._GenerateContentResponse_from_mldev(data, None, None)
    return types.GenerateContentResponse._from_response(
        response=converted, kwargs={"config": config}
    )


# --- Answers the SDK could not read ----------------------------------------------------

#: Where google-genai reads an answer's JSON into its own shape (``models._*_from_vertex``,
#: ``_*_from_mldev``): what a 2xx body of the wrong shape fails in on the SDK's own path.
ANSWER_READERS = ("_from_vertex", "_from_mldev")


def failed_reading_answer(exc: BaseException) -> bool:
    """Whether ``exc`` was raised inside one of the SDK's readers of an answer.

    On the SDK's own path (Vertex AI, safety settings...) ``generate_content`` converts
    the body before llmport sees it: a ``candidates`` that is not a list fails there as a
    ``TypeError`` (``_GenerateContentResponse_from_vertex`` iterates it). Only the
    traceback tells that this was the answer's fault, not the request's. Read by the
    reader functions' names (no attribute is used): pinned by
    ``test_an_answer_the_sdk_cannot_read_is_told_by_its_reader``.
    """
    if not isinstance(exc, (TypeError, AttributeError, KeyError, IndexError)):
        return False
    frame = exc.__traceback__
    while frame is not None:
        code = frame.tb_frame.f_code
        module = str(frame.tb_frame.f_globals.get("__name__", ""))
        if module.startswith("google.genai") and code.co_name.endswith(ANSWER_READERS):
            return True
        frame = frame.tb_next
    return False
