"""Every private name of the ``anthropic`` SDK this plugin uses, and only here.

The fast path posts a body serialized once through ``client.post`` instead
of calling ``messages.create(**params)`` (which rebuilds and re-serializes
the body on every send); to send exactly what ``create`` would, it needs the
request options, timeout and span attributes ``create`` computes, which the
SDK keeps in private modules. Each is wrapped below in one function that
says what it is, why the public API does not do the job at the same speed,
and since which SDK version it has this shape. Each shape is pinned by
``tests/anthropic/test_anthropic_sdk_internals.py``: a release that moves
one fails one clearly named test. The SDK is imported inside the functions,
never at plugin import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: The SDK's private names used below (module, then attribute path).
USED: tuple[tuple[str, str], ...] = (
    ("anthropic._base_client", "make_request_options"),
    ("anthropic._base_client", "BaseClient._calculate_nonstreaming_timeout"),
    ("anthropic._constants", "MODEL_NONSTREAMING_TOKENS"),
    ("anthropic.lib._tracing", "messages_create_request_attributes"),
    ("anthropic.lib.vertex._client", "request_path"),
    ("anthropic.lib.vertex._auth", "load_auth"),
)


def request_options(call: Mapping[str, Any]) -> dict[str, Any]:
    """The ``options`` ``messages.create`` passes to ``client.post`` for ``call``.

    ``call`` holds ``extra_headers`` and optionally ``extra_query`` and
    ``timeout``. ``anthropic._base_client.make_request_options`` with the span
    name, route and attributes ``create`` gives (its tracing reads them).
    Public ``create`` builds these but also re-serializes the body per send;
    there is no public builder. Shape (keyword-only ``span_name``,
    ``span_route``, ``span_attributes``) since anthropic 2.0.
    """
    from anthropic._base_client import make_request_options

    options = make_request_options(
        **call,
        span_name="anthropic.messages.create",
        span_route="/v1/messages",
        span_attributes=messages_span_attributes(),
    )
    return dict(options)


def messages_span_attributes() -> Callable[[object], Mapping[str, Any]]:
    """What ``create`` gives as ``span_attributes``: attributes read from the body.

    ``anthropic.lib._tracing.messages_create_request_attributes``, taking the
    request body only since anthropic 2.7 (2.0-2.6 take ``client, body,
    extra_headers`` and ``create`` wraps it in a lambda). No public equivalent.
    """
    from anthropic.lib._tracing import messages_create_request_attributes

    attributes: Callable[[object], Mapping[str, Any]] = messages_create_request_attributes
    return attributes


def model_nonstreaming_tokens(model: str) -> int | None:
    """The most ``max_tokens`` ``create`` sends unstreamed for ``model`` (``None``: no cap).

    ``anthropic._constants.MODEL_NONSTREAMING_TOKENS`` (a dict, since
    anthropic 2.0), the table ``create`` checks; not exported publicly.
    """
    from anthropic._constants import MODEL_NONSTREAMING_TOKENS

    limit: int | None = MODEL_NONSTREAMING_TOKENS.get(model)
    return limit


def nonstreaming_timeout(client: Any, max_tokens: int, max_nonstreaming_tokens: int | None) -> Any:
    """The timeout ``create`` uses for a long unstreamed request (an ``httpx`` timeout).

    ``client._calculate_nonstreaming_timeout`` (``BaseClient``, same two
    parameters since anthropic 2.0); it raises ``ValueError`` for a request
    too long to send unstreamed, as ``create`` does. Only ``create`` calls it
    publicly, at the cost of re-serializing the body.
    """
    return client._calculate_nonstreaming_timeout(max_tokens, max_nonstreaming_tokens)


def vertex_request_path(template: str, **values: str) -> str:
    """``template`` filled as ``AnthropicVertex`` fills its ``rawPredict`` paths.

    ``anthropic.lib.vertex._client.request_path`` (a template and keyword
    values; absent in anthropic 2.0, present at the lowest declared 2.10):
    percent-encodes each value as one path segment. The public client builds
    the path only inside ``messages.create``, which re-serializes the body per
    send; the Vertex provider posts bytes serialized once.
    """
    from anthropic.lib.vertex._client import request_path

    return str(request_path(template, **values))


def vertex_default_credentials(project: str | None) -> tuple[Any, str | None]:
    """Google Application Default Credentials (a first token minted) and their project.

    ``anthropic.lib.vertex._auth.load_auth(project_id=...)`` (since anthropic
    2.0): the same google-auth lookup ``AnthropicVertex`` does, so llmport
    finds credentials exactly where the SDK would. No public function exposes it.
    """
    from anthropic.lib.vertex._auth import load_auth

    found: tuple[Any, str | None] = load_auth(project_id=project)
    return found
