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

import logging
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

#: The SDK's private names used below (module, then attribute path).
USED: tuple[tuple[str, str], ...] = (
    ("anthropic._base_client", "make_request_options"),
    ("anthropic._base_client", "BaseClient._calculate_nonstreaming_timeout"),
    ("anthropic._constants", "MODEL_NONSTREAMING_TOKENS"),
    ("anthropic.lib._tracing", "messages_create_request_attributes"),
    ("anthropic.lib.vertex._client", "request_path"),
    ("anthropic.lib.vertex._auth", "load_auth"),
    ("anthropic._models", "FinalRequestOptions.construct"),
    ("anthropic._base_client", "get_platform"),
    ("anthropic._utils", "asyncify"),
    ("anthropic._base_client", "AsyncAPIClient._copy_and_prepare"),
    ("anthropic._base_client", "AsyncAPIClient._prepare_options"),
    ("anthropic._base_client", "AsyncAPIClient._prepare_request"),
    ("anthropic._base_client", "BaseClient._build_request"),
    ("anthropic._base_client", "BaseClient._make_status_error_from_response"),
    ("anthropic._base_client", "BaseClient._tracer"),
    ("anthropic._vendor.httpx_aiohttp.transport", "AiohttpTransport"),
    ("anthropic._vendor.httpx_aiohttp.transport", "map_aiohttp_exceptions"),
)
#: Private attributes read off instances (set in ``__init__``: class, attribute).
ON_INSTANCES: tuple[tuple[str, str], ...] = (
    ("anthropic.AsyncAnthropic", "_client"),
    ("anthropic.AsyncAnthropic", "_middleware"),
    ("anthropic.AsyncAnthropic", "_idempotency_header"),
    ("anthropic.AsyncAnthropic", "_platform"),
    ("anthropic.AsyncAnthropic", "_open_telemetry"),
    ("httpx2.AsyncClient", "_mounts"),
    ("httpx2.AsyncClient", "_event_hooks"),
    ("httpx2.AsyncClient", "_transport"),
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


# -- posting straight through the SDK's aiohttp session (llmport_anthropic.direct) ----------


def sends_plainly(client: Any) -> bool:
    """Whether ``client`` sends a request exactly as it built it, through aiohttp alone.

    True for a plain ``AsyncAnthropic`` (not a subclass: Vertex AI's signs each
    request) with no middleware (``_middleware``, since anthropic 2.10), no
    per-request auth (``custom_auth``: a credential chain's token cache), no
    idempotency header (``_idempotency_header``), the SDK's debug log off (it
    logs each request), and an httpx client with no event hooks or mounts
    over the SDK's vendored aiohttp transport (``anthropic._vendor.httpx_aiohttp``)
    with no proxy.
    Any of these otherwise: the SDK's own ``post`` does the work.
    """
    import anthropic
    from anthropic._vendor.httpx_aiohttp.transport import AiohttpTransport

    http = client._client
    transport = getattr(http, "_transport", None)
    return (
        type(client) is anthropic.AsyncAnthropic
        and not client._middleware
        and client.custom_auth is None
        and client._idempotency_header is None
        and not _SDK_LOG.isEnabledFor(logging.DEBUG)
        and not http._mounts
        and not any(http._event_hooks.values())
        and type(transport) is AiohttpTransport
        and transport.proxy is None
    )


def redirects(client: Any) -> tuple[bool, int]:
    """Whether the client's httpx client follows redirects, and at most how many.

    ``client._client`` is the SDK's ``httpx2.AsyncClient`` (its public
    ``follow_redirects`` and ``max_redirects``): the SDK lets it follow them.
    """
    http = client._client
    return bool(http.follow_redirects), int(http.max_redirects)


def session(client: Any) -> Any:
    """The ``aiohttp.ClientSession`` of the SDK's aiohttp transport, made as the transport makes it.

    ``AiohttpTransport.client``: a session, or what makes one on the
    transport's first request (``get_client``); the same step here, so both
    ways share one session and its connections. Same names since the
    transport was vendored (anthropic 2.0).
    """
    import aiohttp

    transport = client._client._transport
    if not isinstance(transport.client, aiohttp.ClientSession):
        transport.client = transport.get_client()
    return transport.client


def traces_nothing(client: Any) -> bool:
    """Whether the SDK would start no span and add no trace header to a request now.

    ``client._tracer`` (``None``: its spans are off, or OpenTelemetry is not
    installed), else: no tracer provider given to the client, none set
    globally (OpenTelemetry's proxy provider: every span it starts is a
    no-op), and an empty current context (no span or baggage a propagator
    could write into headers). The SDK starts its span per request and keeps
    it only when it records or propagates; these are the cases where it
    would do neither.
    """
    if client._tracer is None:
        return True
    from opentelemetry import context, trace

    return (
        client._open_telemetry.get("tracer_provider") is None
        and isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
        and not context.get_current()
    )


async def built_request(client: Any, path: str, options: Mapping[str, Any]) -> Any:
    """The ``httpx2.Request`` ``client.post(path, content=b"", options=options)`` would send.

    The SDK's own steps before it sends, once: ``FinalRequestOptions.construct``
    as ``post`` does, ``_copy_and_prepare`` (``request``), ``_prepare_options``
    and ``_build_request`` with no retry taken and ``_prepare_request``
    (``_attempt_request``): the URL, headers (credentials, platform, version,
    the options' extra headers) and timeout. The client's platform is resolved
    first if no request has yet, as ``request`` does (``get_platform`` in a
    worker thread through ``asyncify``: it may block). Same names since
    anthropic 2.10.
    """
    from anthropic._base_client import get_platform
    from anthropic._models import FinalRequestOptions
    from anthropic._utils import asyncify

    if client._platform is None:
        client._platform = await asyncify(get_platform)()
    prepared = FinalRequestOptions.construct(method="post", url=path, content=b"", **options)
    prepared = await client._copy_and_prepare(prepared)
    prepared = await client._prepare_options(prepared)
    request = client._build_request(prepared, retries_taken=0)
    await client._prepare_request(request)
    return request


def raise_transport_error(error: Exception, request: Any) -> NoReturn:
    """Raise what the SDK raises when its aiohttp transport raised ``error`` for ``request``.

    The vendored transport's ``map_aiohttp_exceptions`` turns an aiohttp error
    into an httpx one; ``_attempt_request`` then raises ``APITimeoutError`` for
    a timeout, the SDK's own errors as they are and ``APIConnectionError`` for
    anything else, each from the error it replaces.
    """
    import anthropic
    import httpx2
    from anthropic._vendor.httpx_aiohttp.transport import map_aiohttp_exceptions

    try:
        with map_aiohttp_exceptions():
            raise error
    except httpx2.TimeoutException as mapped:
        raise anthropic.APITimeoutError(request=request) from mapped
    except anthropic.AnthropicError:
        raise
    except Exception as mapped:
        raise anthropic.APIConnectionError(request=request) from mapped


def status_error(client: Any, response: Any) -> Exception:
    """The SDK's error for an answer of status ``response.status_code`` (not 2xx).

    ``_make_status_error_from_response`` (same signature since anthropic 2.0):
    the typed ``APIStatusError`` subclass with the body's message, as
    ``client.post`` raises it.
    """
    error: Exception = client._make_status_error_from_response(response)
    return error


_SDK_LOG = logging.getLogger("anthropic._base_client")
