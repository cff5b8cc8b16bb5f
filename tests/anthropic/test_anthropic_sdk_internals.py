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
