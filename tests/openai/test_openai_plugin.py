"""Registration, lazy SDK import, capabilities, error classification, strict schemas."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import llmport_openai.plugin as plugin
import pytest
from llmport import (
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    OverloadedError,
    ProviderError,
    RateLimitError,
    UnsupportedFeatureError,
)
from llmport.plugins.host import PluginHost
from llmport.schema.transform import drop_added_nulls, has_optional, strict_schema
from llmport_openai import models
from llmport_openai.errors import stream_error, translate


def test_importing_llmport_and_the_plugin_imports_no_sdk() -> None:
    code = (
        "import sys, llmport, llmport_openai.plugin as p; p.provider_infos(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('openai', 'httpx2')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_entry_point_registers_both_prefixes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMPORT_PLUGINS", "openai")
    from llmport.plugins import host as plugins

    monkeypatch.setattr(plugins, "_loaded", {})
    providers = PluginHost().providers()
    assert {"openai", "openai-responses"} <= set(providers)
    assert providers["openai"].aliases["gpt-4o-mini"] == "openai:gpt-4o-mini"


@pytest.mark.parametrize(
    "model, image, audio, pdf",
    [
        ("gpt-4o-mini", True, False, True),
        ("gpt-4.1", True, False, True),
        ("gpt-5-mini", True, False, True),
        ("gpt-4o-audio-preview", False, True, False),
        ("gpt-4o-mini-audio-preview-2024-12-17", False, True, False),
        ("gpt-3.5-turbo", False, False, False),
        ("o3-mini", False, False, False),
        ("llama3.2", True, False, True),  # unknown names: the common case
    ],
)
def test_chat_capabilities(model: str, image: bool, audio: bool, pdf: bool) -> None:
    caps = plugin.provider_infos()[0].capabilities_for(model)
    assert ("image" in caps.input_modalities) is image
    assert ("audio" in caps.input_modalities) is audio
    assert ("application/pdf" in caps.file_types) is pdf
    if audio:
        assert caps.audio_types == {"audio/wav", "audio/mpeg"}


def test_responses_api_takes_no_audio() -> None:
    caps = plugin.provider_infos()[1].capabilities_for("gpt-4o-audio-preview")
    assert "audio" not in caps.input_modalities


def test_repr_never_shows_the_key() -> None:
    from llmport_openai.provider import OpenAIChatProvider

    provider = OpenAIChatProvider({"api_key": "sk-live-fake-secret-value-1234567890"})
    assert "secret" not in repr(provider) and "api_key=<set>" in repr(provider)


def test_unknown_setting_is_a_config_error() -> None:
    from llmport import ConfigError
    from llmport_openai.provider import OpenAIChatProvider

    with pytest.raises(ConfigError, match="base_ur"):
        OpenAIChatProvider({"base_ur": "http://x"})


def test_plugin_module_layout_has_no_cycle() -> None:
    """The tables live in models.py; plugin.py never imports provider.py (nor the reverse)."""
    code = (
        "import sys, llmport_openai.plugin as p; p.provider_infos(); "
        "print('llmport_openai.provider' in sys.modules, 'llmport_openai.models' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
    source = (Path(plugin.__file__).parent / "provider.py").read_text()
    assert "from .plugin" not in source and "import plugin" not in source
    assert plugin.provider_infos()[0].models == {
        **models.IMAGE_MODELS,
        **models.EMBEDDING_MODELS,
        **models.CHAT_MODELS,
    }
    assert plugin.provider_infos()[1].models == models.RESPONSES_MODELS


# --- OpenAI's own error codes (the status table and retry rule are the core's) ---------


def sdk_status_error(
    status: int, code: str | None, headers: dict[str, str] | None = None
) -> Exception:
    import httpx2
    import openai

    body = {"message": "boom", "type": "x", "param": None, "code": code}
    response = httpx2.Response(
        status,
        headers=headers or {},
        json={"error": body},
        request=httpx2.Request("POST", "https://api.openai.com/v1/chat/completions"),
    )
    client = openai.OpenAI(api_key="sk-test-not-a-key", max_retries=0)
    return client._make_status_error("boom", body=body, response=response)


def test_insufficient_quota_is_permanent_other_429s_are_not() -> None:
    quota = translate(sdk_status_error(429, "insufficient_quota"))
    assert isinstance(quota, RateLimitError) and not quota.retryable
    assert quota.code == "insufficient_quota" and quota.status == 429
    limited = translate(sdk_status_error(429, "rate_limit_exceeded", {"retry-after-ms": "250"}))
    assert isinstance(limited, RateLimitError) and limited.retryable
    assert limited.retry_after == 0.25


def test_x_should_retry_still_wins_over_the_vendor_code() -> None:
    err = translate(sdk_status_error(429, "insufficient_quota", {"x-should-retry": "true"}))
    assert err is not None and err.retryable


def test_status_errors_go_through_the_core_table() -> None:
    for status, cls, retryable in [
        (400, BadRequestError, False),
        (401, AuthenticationError, False),
        (404, NotFoundError, False),
        (409, ProviderError, True),
        (503, OverloadedError, True),
    ]:
        err = translate(sdk_status_error(status, None), provider="openai-responses")
        assert type(err) is cls and err.retryable is retryable and err.status == status
        assert err.provider == "openai-responses"


def test_stream_error_events_are_classified_by_code() -> None:
    assert stream_error("overloaded", "server_error", None, provider="openai").retryable
    limited = stream_error("slow", "rate_limit_exceeded", None, provider="openai")
    assert isinstance(limited, RateLimitError) and limited.retryable
    assert not stream_error("bad prompt", "invalid_prompt", None, provider="openai").retryable


def test_non_sdk_exceptions_are_not_translated_here() -> None:
    assert translate(ValueError("x")) is None  # transports are the core's (transport_error)


# --- strict schemas -----------------------------------------------------------------


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    return strict_schema(schema, vendor="openai", model="m", feature="response_format")


def test_strict_closes_nested_objects_and_makes_optionals_nullable() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "x"},
            "tags": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"k": {"type": "string"}},
                    "required": ["k"],
                },
            },
            "kind": {"enum": ["a", "b"]},
            "owner": {"$ref": "#/$defs/Person"},
        },
        "required": ["tags"],
        "$defs": {"Person": {"type": "object", "properties": {"n": {"type": "string"}}}},
    }
    out = strict(schema)
    assert (
        out["required"] == ["name", "tags", "kind", "owner"]
        and out["additionalProperties"] is False
    )
    assert out["properties"]["name"] == {"type": ["string", "null"]}  # default dropped
    assert out["properties"]["kind"] == {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}]}
    assert out["properties"]["owner"] == {"anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}]}
    assert out["properties"]["tags"]["items"]["additionalProperties"] is False
    assert out["$defs"]["Person"] == {
        "type": "object",
        "properties": {"n": {"type": ["string", "null"]}},
        "required": ["n"],
        "additionalProperties": False,
    }
    assert schema["required"] == ["tags"], "the caller's schema is not modified"


def test_strict_refusal_names_the_place() -> None:
    with pytest.raises(UnsupportedFeatureError, match="/properties/meta"):
        strict({"type": "object", "properties": {"meta": {"type": "object"}}})


def test_dropping_added_nulls_restores_the_original_shape() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": ["string", "null"]},
            "items": {"type": "array", "items": {"$ref": "#/$defs/I"}},
        },
        "required": ["items"],
        "$defs": {"I": {"type": "object", "properties": {"x": {"type": "integer"}}}},
    }
    value = {"a": None, "b": None, "items": [{"x": None}, {"x": 1}]}
    assert drop_added_nulls(schema, value) == {"b": None, "items": [{}, {"x": 1}]}
    assert has_optional(schema) and not has_optional(
        {"type": "object", "properties": {"a": {}}, "required": ["a"]}
    )
    assert json.dumps(drop_added_nulls(schema, {"items": []})) == '{"items": []}'
