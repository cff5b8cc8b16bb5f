"""Drift tests: every private ``google-genai`` name the plugin uses still has its shape.

The plugin reaches these only through ``llmport_gemini.sdk_internals``; an
SDK release that moves or reshapes one fails the test named after it.
"""

from __future__ import annotations

import base64
import inspect
from typing import Any

import pytest
from google import genai
from google.genai import types
from llmport_gemini import sdk_internals
from support.sdk_drift import parameters, resolve

NO_SCHEMA: dict[str, Any] = {
    "response_schema": None,
    "response_json_schema": None,
    "include_all_fields": None,
}


def answer(text: str, **candidate: Any) -> dict[str, Any]:
    return {"candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, **candidate}]}


@pytest.mark.parametrize(("module", "path"), sdk_internals.USED, ids=lambda v: str(v))
def test_each_private_name_the_plugin_uses_still_exists(module: str, path: str) -> None:
    assert resolve(module, path) is not None


def test_client_api_client_is_the_base_api_client() -> None:
    assert sdk_internals.ON_INSTANCES == (("google.genai.Client", "_api_client"),)
    api = sdk_internals.api_client(genai.Client(api_key="test-key"))
    assert isinstance(api, resolve("google.genai._api_client", "BaseApiClient"))


def test_api_client_builds_a_post_with_the_key_for_a_path() -> None:
    api = sdk_internals.api_client(genai.Client(api_key="test-key"))
    request = sdk_internals.build_request(api, "models/m:generateContent", None)
    assert request.method == "post"
    assert request.url.endswith("/models/m:generateContent")
    assert request.headers["x-goog-api-key"] == "test-key"
    request.data = b"{}"  # the plugin sends its own bytes in place of the dict body


@pytest.mark.parametrize(("path", "is_async"), [("_request", False), ("_async_request", True)])
def test_api_client_sends_a_built_request(path: str, is_async: bool) -> None:
    method = resolve("google.genai._api_client", f"BaseApiClient.{path}")
    assert parameters(method) == ["self", "http_request", "http_options", "stream"]
    assert inspect.iscoroutinefunction(method) is is_async


@pytest.mark.parametrize("owner", ["Models", "AsyncModels"])
@pytest.mark.parametrize("name", ["_generate_content", "_generate_content_stream"])
def test_one_request_generate_methods_take_model_contents_config(owner: str, name: str) -> None:
    method = resolve("google.genai.models", f"{owner}.{name}")
    assert parameters(method) == ["self", "model", "contents", "config"]
    assert inspect.iscoroutinefunction(method) is (owner == "AsyncModels")


def test_part_json_is_the_wire_form_with_url_safe_base64() -> None:
    assert sdk_internals.part_json(types.Part(text="hi")) == {"text": "hi"}
    blob = types.Part(inline_data=types.Blob(data=b"\xff\xfe", mime_type="image/png"))
    assert sdk_internals.part_json(blob) == {
        "inlineData": {"data": "__4=", "mime_type": "image/png"}
    }


def test_inlined_request_json_is_the_batch_wire_form() -> None:
    api = sdk_internals.api_client(genai.Client(api_key="test-key"))
    content = types.Content(role="user", parts=[types.Part(text="hi")])
    request = types.InlinedRequest(model="models/m", contents=[content])
    assert sdk_internals.inlined_request_json(api, request) == {
        "request": {"model": "models/m", "contents": [{"parts": [{"text": "hi"}], "role": "user"}]}
    }


def test_merge_body_aligns_key_case_and_merges_recursively() -> None:
    wire: dict[str, Any] = {"generationConfig": {"temperature": 0.5}}
    sdk_internals.merge_body(wire, {"generation_config": {"topK": 3}})
    assert wire == {"generationConfig": {"temperature": 0.5, "topK": 3}}


def test_response_object_drops_unknown_fields_and_parses_json() -> None:
    config = {**NO_SCHEMA, "response_json_schema": {"type": "object"}}
    response = sdk_internals.response_object({**answer('{"a": 1}'), "futureField": 1}, config)
    assert isinstance(response, types.GenerateContentResponse)
    assert response.text == '{"a": 1}'
    assert response.parsed == {"a": 1}


def test_continuation_helpers_follow_a_token() -> None:
    token = base64.b64encode(b"tok").decode()
    done = sdk_internals.response_object(answer("x", finishReason="STOP"), NO_SCHEMA)
    going = answer("x", finishReason="CONTINUATION", continuationToken=token)
    first = sdk_internals.response_object(going, NO_SCHEMA)
    assert not sdk_internals.continuation_token(done)
    assert sdk_internals.continuation_token(first) == b"tok"
    config = types.GenerateContentConfig(temperature=0.1)
    assert sdk_internals.continuation_config(config, b"tok").continuation_token == b"tok"
    assert sdk_internals.merge_continued([first, done], config=config).text == "xx"
    stream = sdk_internals.stream_continuation(config)
    assert all(callable(getattr(stream, m)) for m in ("start_hop", "observe", "end_hop"))


def test_an_answer_the_sdk_cannot_read_is_told_by_its_reader() -> None:
    """``failed_reading_answer`` knows the SDK's answer readers by their names."""
    from google.genai import models

    for reader in (models._GenerateContentResponse_from_vertex,):
        with pytest.raises(TypeError) as info:
            reader({"candidates": 5})
        assert reader.__name__.endswith(sdk_internals.ANSWER_READERS)
        assert sdk_internals.failed_reading_answer(info.value)
    assert not sdk_internals.failed_reading_answer(TypeError("raised by llmport itself"))
