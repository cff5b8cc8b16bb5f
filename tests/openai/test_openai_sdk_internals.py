"""Drift tests: every private ``openai`` name the plugin uses still has its shape.

The plugin reaches these only through ``llmport_openai.sdk_internals``; an
SDK release that moves or reshapes one fails the test named after it.
"""

from __future__ import annotations

import pytest
from llmport_openai import sdk_internals
from support.sdk_drift import has_parameters, parameters, resolve


@pytest.mark.parametrize(("module", "path"), sdk_internals.USED, ids=lambda v: str(v))
def test_each_private_name_the_plugin_uses_still_exists(module: str, path: str) -> None:
    assert resolve(module, path) is not None


def test_make_request_options_maps_call_arguments_to_options() -> None:
    make = resolve("openai._base_client", "make_request_options")
    assert has_parameters(make, ("extra_headers", "extra_query", "timeout", "security"))
    options = sdk_internals.request_options(
        {"extra_headers": {"x-a": "1"}, "extra_query": {"q": "1"}, "timeout": 3.0}
    )
    assert options == {
        "headers": {"x-a": "1"},
        "params": {"q": "1"},
        "timeout": 3.0,
        "security": {"bearer_auth": True},
    }


def test_path_template_quotes_a_model_as_one_segment() -> None:
    template = resolve("openai._utils", "path_template")
    assert parameters(template) == ["template", "kwargs"]
    assert sdk_internals.deployment_path("gpt-4o") == "/deployments/gpt-4o"
    assert sdk_internals.deployment_path("my model/v2") == "/deployments/my%20model%2Fv2"
    with pytest.raises(ValueError, match="dot-segment"):
        sdk_internals.deployment_path("..")
