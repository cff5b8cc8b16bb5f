"""Each embedding vendor's own rules: hostile answers, typed refusals, errors, secrets.

A hostile server (wrong count of vectors, wrong dimensions, NaN, a 200 that
holds an error object) gives :class:`MalformedResponseError`; what a vendor
cannot do is refused typed before any request; an error status is the typed
error with the vendor's message and no key in it.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from llmport import Embeddings, Runtime
from llmport.errors import (
    BadRequestError,
    ConfigError,
    ExecFailed,
    MalformedResponseError,
    UnknownModelWarning,
    UnsupportedFeatureError,
)
from llmport.testing.loopback import LoopbackServer, Reply
from support.embed_samples import response_body
from support.embed_scenarios import HOSTILE_TARGETS, SCENARIOS, answer_with, vectors
from support.vertex_support import FakeCredentials

TEXTS = ["first", "second"]


def runtime(provider: str, url: str | None, settings: dict[str, Any]) -> Runtime:
    given = dict(settings)
    if url is not None:
        given["endpoint_url" if provider == "bedrock" else "base_url"] = url
    if provider == "gemini-vertex":
        given["credentials"] = FakeCredentials()
    return Runtime(providers={provider: given}, max_retries=1)


def embed(rt: Runtime, mode: str, inputs: Any, **kw: Any) -> Embeddings:
    try:
        if mode == "sync":
            return rt.embed(inputs, **kw)
        return asyncio.run(rt.aembed(inputs, **kw))
    finally:
        rt.close()


def hostile_rows(kind: str, size: int) -> list[list[float]]:
    rows = vectors(len(TEXTS), size)
    if kind == "count":
        return [*rows, rows[0]]
    if kind == "unequal":
        return [rows[0], rows[1][:-1]]
    if kind == "size":
        return [row[:-1] for row in rows]
    rows[1][3] = math.nan
    return rows


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind", ["count", "unequal", "size", "nan", "error-object"])
@pytest.mark.parametrize("provider", list(HOSTILE_TARGETS))
def test_a_hostile_answer_is_malformed(provider: str, kind: str, mode: str) -> None:
    model, size, settings = HOSTILE_TARGETS[provider]
    if kind == "error-object":
        answer: Any = {"error": {"code": 500, "message": "internal", "status": "INTERNAL"}}
    else:
        answer = answer_with(provider, hostile_rows(kind, size))
    with LoopbackServer([Reply(json=answer)]) as server:
        rt = runtime(provider, server.url, settings)
        with pytest.raises((MalformedResponseError, ExecFailed)) as caught:
            embed(rt, mode, TEXTS, model=f"{provider}:{model}", dimensions=size)
    error = caught.value
    # retried ones (a 200 holding an error may be transient) end as ExecFailed after max_retries
    last = error.last_error if isinstance(error, ExecFailed) else error
    assert isinstance(last, MalformedResponseError)
    assert len(server.requests) == 1


@pytest.mark.parametrize("provider", list(HOSTILE_TARGETS))
def test_a_good_answer_of_the_same_shape_passes(provider: str) -> None:
    """The hostile answers above differ from a good one only where they are hostile."""
    model, size, settings = HOSTILE_TARGETS[provider]
    rows = vectors(len(TEXTS), size)
    with LoopbackServer([Reply(json=answer_with(provider, rows))]) as server:
        result = embed(
            runtime(provider, server.url, settings),
            "sync",
            TEXTS,
            model=f"{provider}:{model}",
            dimensions=size,
        )
    assert [list(row) for row in result] == rows


# -- typed refusals before any request -------------------------------------------------


@pytest.mark.parametrize(
    ("target", "kw"),
    [
        ("anthropic:claude-sonnet-4-5", {}),
        ("bedrock:amazon.titan-embed-text-v1", {"dimensions": 256}),  # a fixed size
        ("bedrock:amazon.titan-embed-text-v2:0", {"dimensions": 300}),  # not offered
        ("cohere:embed-english-v3.0", {"dimensions": 512}),
        ("voyage:voyage-3.5", {"truncate": "start"}),  # Voyage AI cuts only the end
        ("gemini-vertex:gemini-embedding-001", {"truncate": "start"}),  # autoTruncate: the end
        ("bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0", {}),  # a chat model
    ],
)
def test_what_a_vendor_cannot_do_is_refused_before_any_request(
    target: str, kw: dict[str, Any], mute_port: int
) -> None:
    provider = target.split(":", 1)[0]
    settings = {
        "anthropic": {"api_key": "sk-ant-fake"},
        "bedrock": SCENARIOS["bedrock_titan_v2_dimensions"].settings,
        "cohere": {"api_key": "test-key"},
        "voyage": {"api_key": "test-key"},
        "gemini-vertex": {"project": "p", "location": "us-central1"},
    }[provider]
    rt = runtime(provider, f"http://127.0.0.1:{mute_port}", settings)
    with pytest.raises(UnsupportedFeatureError):
        embed(rt, "sync", ["text"], model=target, **kw)


@pytest.mark.parametrize("target", ["cohere:embed-v4.0", "voyage:voyage-3.5"])
def test_chat_on_an_embedding_only_provider_is_refused(target: str) -> None:
    rt = Runtime(providers={target.split(":")[0]: {"api_key": "test-key"}})
    with pytest.raises(UnsupportedFeatureError, match="chat"):
        rt.run("hello", model=target)


@pytest.mark.parametrize(
    ("provider", "variable"), [("cohere", "CO_API_KEY"), ("voyage", "VOYAGE_API_KEY")]
)
def test_no_key_is_a_config_error_before_any_request(provider: str, variable: str) -> None:
    model = HOSTILE_TARGETS[provider][0]
    with pytest.raises(ConfigError, match=variable):
        Runtime().embed("text", model=f"{provider}:{model}")


@pytest.mark.parametrize("provider", ["cohere", "voyage"])
def test_the_key_comes_from_the_environment_and_goes_as_a_bearer_token(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    variable = {"cohere": "CO_API_KEY", "voyage": "VOYAGE_API_KEY"}[provider]
    monkeypatch.setenv(variable, "env-key-123")
    model, size, _ = HOSTILE_TARGETS[provider]
    with LoopbackServer([Reply(json=answer_with(provider, vectors(1, size)))]) as server:
        rt = Runtime(providers={provider: {"base_url": server.url}})
        embed(rt, "sync", "text", model=f"{provider}:{model}")
    headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer env-key-123"


# -- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_voyage_fastapi_error_is_typed_with_its_detail_and_no_key(mode: str) -> None:
    scenario = SCENARIOS["voyage_documents"]
    detail = response_body("voyage/error-400-unknown-model.json")
    with LoopbackServer([Reply(status=400, json=detail)]) as server:
        rt = runtime("voyage", server.url, {"api_key": "pa-secret-key-value"})
        with pytest.raises(BadRequestError) as caught, pytest.warns(UnknownModelWarning):
            embed(rt, mode, ["Hello, world!"], model="voyage:nonexistent", input_type="query")
    error = caught.value
    assert error.status == 400 and "Model nonexistent is not supported" in str(error)
    assert "pa-secret-key-value" not in str(error) and error.__cause__ is None
    assert error.__context__ is None
    assert server.requests[0].json() == scenario.requests()[0]["body"] | {
        "input": ["Hello, world!"],
        "input_type": "query",
        "model": "nonexistent",
    }


def test_cohere_error_message_is_typed() -> None:
    reply = Reply(status=401, json={"id": "x", "message": "invalid api token"})
    with LoopbackServer([reply]) as server:
        rt = runtime("cohere", server.url, {"api_key": "co-secret-key"})
        with pytest.raises(Exception) as caught:
            embed(rt, "sync", "text", model="cohere:embed-v4.0")
    assert "invalid api token" in str(caught.value)
    assert "co-secret-key" not in str(caught.value)
    assert type(caught.value).__name__ == "AuthenticationError"


def test_gemini_with_vertexai_on_embeds_with_vertex_ai_limits() -> None:
    """``gemini:`` with ``vertexai=True`` posts ``:predict``, one input per request."""
    answer = answer_with("gemini-vertex", vectors(1, 8))
    settings = {"vertexai": True, "project": "p", "location": "us-central1"}
    with LoopbackServer([Reply(json=answer)], repeat=True) as server:
        rt = runtime("gemini", server.url, {**settings, "credentials": FakeCredentials()})
        result = embed(rt, "sync", TEXTS, model="gemini:gemini-embedding-001")
    assert [r.path.rsplit("/", 1)[-1] for r in server.requests] == [
        "gemini-embedding-001:predict"
    ] * len(TEXTS)
    assert len(result) == len(TEXTS)
