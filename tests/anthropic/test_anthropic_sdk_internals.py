"""Drift tests: every private ``anthropic`` name the plugin uses still has its shape.

The plugin reaches these only through ``llmport_anthropic.sdk_internals``;
an SDK release that moves or reshapes one fails the test named after it.
"""

from __future__ import annotations

from collections.abc import Mapping

import anthropic
import pytest
from llmport_anthropic import sdk_internals
from support.sdk_drift import has_parameters, parameters, resolve


@pytest.mark.parametrize(("module", "path"), sdk_internals.USED, ids=lambda v: str(v))
def test_each_private_name_the_plugin_uses_still_exists(module: str, path: str) -> None:
    assert resolve(module, path) is not None


def test_make_request_options_takes_the_span_arguments_create_gives() -> None:
    make = resolve("anthropic._base_client", "make_request_options")
    names = ("extra_headers", "extra_query", "timeout", "span_name", "span_route")
    assert has_parameters(make, (*names, "span_attributes"))
    options = sdk_internals.request_options({"extra_headers": {"x-a": "1"}, "timeout": 3.0})
    assert options["headers"] == {"x-a": "1"}
    assert options["timeout"] == 3.0
    assert options["span_name"] == "anthropic.messages.create"


def test_messages_create_request_attributes_reads_the_body_alone() -> None:
    attributes = sdk_internals.messages_span_attributes()
    assert parameters(attributes) == ["body"]
    assert isinstance(attributes({"model": "claude-x", "max_tokens": 5}), Mapping)


def test_model_nonstreaming_tokens_is_a_table_of_token_caps() -> None:
    table = resolve("anthropic._constants", "MODEL_NONSTREAMING_TOKENS")
    assert isinstance(table, dict) and table
    model, cap = next(iter(table.items()))
    assert sdk_internals.model_nonstreaming_tokens(model) == cap > 0
    assert sdk_internals.model_nonstreaming_tokens("no-such-model") is None


def test_calculate_nonstreaming_timeout_gives_a_timeout_or_refuses_long_requests() -> None:
    method = resolve("anthropic._base_client", "BaseClient._calculate_nonstreaming_timeout")
    assert parameters(method) == ["self", "max_tokens", "max_nonstreaming_tokens"]
    client = anthropic.Anthropic(api_key="test-key")
    timeout = sdk_internals.nonstreaming_timeout(client, 1024, None)
    assert timeout.read == 600 and timeout.connect == 5.0
    with pytest.raises(ValueError, match="Streaming is required"):
        sdk_internals.nonstreaming_timeout(client, 1024, 512)


def test_public_default_timeout_is_a_default_clients_timeout() -> None:
    """The provider tells a default client's timeout by it (once a private import)."""
    assert anthropic.Anthropic(api_key="test-key").timeout == anthropic.DEFAULT_TIMEOUT
    assert anthropic.Anthropic(api_key="test-key", timeout=7.0).timeout != anthropic.DEFAULT_TIMEOUT


def test_vertex_request_path_encodes_each_value_as_one_segment() -> None:
    request_path = resolve("anthropic.lib.vertex._client", "request_path")
    assert callable(request_path)
    path = sdk_internals.vertex_request_path(
        "/projects/{project_id}/models/{model}:{specifier}",
        project_id="p-1",
        model="claude-x@2025",
        specifier="rawPredict",
    )
    assert path.startswith("/projects/p-1/models/claude-x") and path.endswith(":rawPredict")


def test_vertex_load_auth_takes_the_project_id() -> None:
    load_auth = resolve("anthropic.lib.vertex._auth", "load_auth")
    assert "project_id" in parameters(load_auth)


# -- the direct post (llmport_anthropic.direct) -----------------------------------------------


def _aiohttp_client(**kwargs: object) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key="test-key",
        base_url="http://127.0.0.1:9",
        max_retries=0,
        http_client=anthropic.DefaultAioHttpClient(),
        **kwargs,  # type: ignore[arg-type]
    )


def test_each_private_instance_attribute_is_set_by_the_constructors() -> None:
    client = _aiohttp_client()
    for owner, name in sdk_internals.ON_INSTANCES:
        instance = client if owner.startswith("anthropic.") else client._client
        assert type(instance).__mro__[0].__module__.split(".")[0] in {"anthropic", "httpx2"}
        assert hasattr(instance, name), f"{owner}.{name}"


def test_a_plain_aiohttp_client_sends_plainly_and_others_do_not() -> None:
    assert sdk_internals.sends_plainly(_aiohttp_client())
    on_httpx = anthropic.AsyncAnthropic(api_key="k", base_url="http://127.0.0.1:9", max_retries=0)
    assert not sdk_internals.sends_plainly(on_httpx)


async def test_built_request_is_what_post_would_send() -> None:
    client = _aiohttp_client(default_headers={"x-team": "blue"})
    options = sdk_internals.request_options({"extra_headers": {"x-a": "1"}, "timeout": 3.0})
    request = await sdk_internals.built_request(client, "/v1/messages", options)
    assert request.method == "POST" and str(request.url) == "http://127.0.0.1:9/v1/messages"
    headers = request.headers
    assert headers["x-a"] == "1" and headers["x-team"] == "blue"
    assert headers["x-stainless-retry-count"] == "0" and headers["x-stainless-timeout"] == "3.0"
    assert "test-key" in (headers.get("x-api-key") or headers.get("authorization") or "")
    assert request.extensions["timeout"]["read"] == 3.0
    session = sdk_internals.session(client)
    assert session is sdk_internals.session(client)  # made once, as the transport makes it
    await client.close()
    assert session.closed


async def test_transport_errors_become_the_sdks_errors() -> None:
    import aiohttp
    import httpx2

    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/messages")
    with pytest.raises(anthropic.APITimeoutError):
        sdk_internals.raise_transport_error(aiohttp.ServerTimeoutError("slow"), request)
    with pytest.raises(anthropic.APIConnectionError) as raised:
        sdk_internals.raise_transport_error(aiohttp.ClientPayloadError("cut"), request)
    assert isinstance(raised.value.__cause__, httpx2.ReadError)
    with pytest.raises(anthropic.APIConnectionError):
        sdk_internals.raise_transport_error(RuntimeError("Session is closed"), request)


def test_status_error_is_the_typed_sdk_error() -> None:
    import httpx2

    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/messages")
    body = b'{"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}'
    answer = httpx2.Response(429, content=body, request=request)
    error = sdk_internals.status_error(_aiohttp_client(), answer)
    assert isinstance(error, anthropic.RateLimitError) and "slow" in str(error)


def test_the_sdk_traces_nothing_without_a_provider_or_a_context() -> None:
    from opentelemetry import context, trace

    client = _aiohttp_client()
    # No test sets a global tracer provider (it cannot be unset): the proxy one is in place.
    unset = isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    assert sdk_internals.traces_nothing(client) is unset

    token = context.attach(context.set_value("app", 1))
    try:
        assert not sdk_internals.traces_nothing(client)
    finally:
        context.detach(token)
