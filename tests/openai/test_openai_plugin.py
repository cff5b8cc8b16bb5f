"""Registration, lazy SDK import, capabilities, error classification, strict schemas."""

from __future__ import annotations

import email.utils
import json
import subprocess
import sys
import time
from typing import Any

import llmport_openai.plugin as plugin
import pytest
from llmport import (
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    UnsupportedFeatureError,
)
from llmport.plugins import PluginHost
from llmport_openai.convert_in import drop_added_nulls, has_optional, to_strict
from llmport_openai.errors import from_status, redact, retry_after


def test_importing_llmport_and_the_plugin_imports_no_sdk() -> None:
    code = (
        "import sys, llmport, llmport_openai.plugin as p; p.provider_infos(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('openai', 'httpx2')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_entry_point_registers_both_prefixes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMPORT_PLUGINS", "openai")
    from llmport import plugins

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


def test_repr_and_errors_never_show_the_key() -> None:
    from llmport_openai.provider import OpenAIChatProvider

    provider = OpenAIChatProvider({"api_key": "sk-live-fake-secret-value-1234567890"})
    assert "secret" not in repr(provider) and "api_key=<set>" in repr(provider)
    assert (
        redact("Incorrect API key provided: sk-live-fake-secret-value-1234567890.")
        == "Incorrect API key provided: sk-***."
    )


def test_unknown_setting_is_a_config_error() -> None:
    from llmport import ConfigError
    from llmport_openai.provider import OpenAIChatProvider

    with pytest.raises(ConfigError, match="base_ur"):
        OpenAIChatProvider({"base_ur": "http://x"})


# --- error classification -------------------------------------------------------------


@pytest.mark.parametrize(
    "status, cls, retryable",
    [
        (400, BadRequestError, False),
        (401, AuthenticationError, False),
        (403, PermissionDeniedError, False),
        (404, NotFoundError, False),
        (408, ProviderTimeoutError, True),
        (409, ProviderError, True),
        (422, BadRequestError, False),
        (429, RateLimitError, True),
        (500, OverloadedError, True),
        (503, OverloadedError, True),
        (418, ProviderError, False),
    ],
)
def test_status_classification(status: int, cls: type, retryable: bool) -> None:
    err = from_status(status, "boom", provider="openai")
    assert type(err) is cls and err.retryable is retryable and err.status == status


def test_insufficient_quota_and_x_should_retry() -> None:
    assert not from_status(429, "quota", provider="openai", code="insufficient_quota").retryable
    assert not from_status(
        500, "x", provider="openai", headers={"x-should-retry": "false"}
    ).retryable
    assert from_status(400, "x", provider="openai", headers={"x-should-retry": "true"}).retryable


def test_retry_after_headers() -> None:
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({}) is None and retry_after(None) is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (retry_after({"retry-after": later}) or 0) <= 31


# --- strict schemas -----------------------------------------------------------------


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    return to_strict(schema, vendor="openai", model="m", feature="response_format")


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
