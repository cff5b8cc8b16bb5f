"""Gemini on Vertex AI (``gemini-vertex:``) against a loopback server.

The server stands in for ``https://{location}-aiplatform.googleapis.com``
(``base_url``); credentials are injected (a google-auth-like object whose
refresh mints a token), so nothing reaches Google. Checked: the URL shape
(``/v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent``,
streamed and counted), the bearer header, project and location from the
environment or Application Default Credentials, express mode, and errors.
"""

from __future__ import annotations

from typing import Any

import pytest
from gemini_helpers import isolated  # noqa: F401  (autouse)
from llmport import AuthenticationError, ConfigError, Runtime, UnsupportedFeatureError
from llmport.errors import InputError
from llmport.messages.types import MediaBlock, Message, TextBlock
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_gemini.models import (
    EMBEDDING_MODELS,
    FAMILIES,
    VERTEX_EMBEDDING_MODELS,
    VERTEX_IMAGEN_MODELS,
)
from llmport_gemini.plugin import llmport_providers
from llmport_gemini.vertex import GeminiVertexProvider
from support.api_modes import MODES, events_via, run_via
from support.gemini_scenarios import answer, error, text_stream, usage
from support.vertex_support import SCENARIOS, FakeCredentials, replay

MODEL = "gemini-2.5-flash"
OK = Reply(json=answer("r1", [{"text": "fine"}], usage(3, 1)))
OK_STREAM = Reply(sse=text_stream("r2", ["fi", "ne"], 3, 1))


def models_path(project: str = "p", location: str = "us-central1") -> str:
    return f"/v1/projects/{project}/locations/{location}/publishers/google/models/{MODEL}"


def auth(sent: Any) -> str:
    return next(v for k, v in sent.headers.items() if k.lower() == "authorization")


def runtime(server: LoopbackServer, **settings: Any) -> Runtime:
    given = {
        "project": "p",
        "location": "us-central1",
        "credentials": FakeCredentials(),
        "base_url": server.url,
        **settings,
    }
    return Runtime(
        model=f"gemini-vertex:{MODEL}",
        providers={"gemini-vertex": {k: v for k, v in given.items() if v is not None}},
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
async def test_url_and_bearer_token(mode: str, stream: bool) -> None:
    with LoopbackServer([OK_STREAM if stream else OK]) as server:
        rt = runtime(server)
        result = await run_via(mode, rt, "Hi", stream=stream)
        rt.close()
    assert result.output == "fine"
    (sent,) = server.requests
    verb = ":streamGenerateContent?alt=sse" if stream else ":generateContent"
    assert sent.path == models_path() + verb
    assert auth(sent) == "Bearer vertex-token-1"
    assert "x-goog-api-key" not in {k.lower() for k in sent.headers}
    assert sent.json()["contents"] == [{"parts": [{"text": "Hi"}], "role": "user"}]


@pytest.mark.parametrize("mode", MODES)
async def test_count_tokens_goes_to_vertex(mode: str) -> None:
    with LoopbackServer([Reply(json={"totalTokens": 7})]) as server:
        rt = runtime(server)
        counted = rt.count_tokens("Hi") if mode == "sync" else await rt.acount_tokens("Hi")
        rt.close()
    assert counted.input_tokens == 7
    assert server.requests[0].path == models_path() + ":countTokens"


def test_project_and_location_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "env-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    monkeypatch.setenv("GEMINI_API_KEY", "a-developer-api-key-not-for-vertex")
    with LoopbackServer([OK]) as server:
        rt = runtime(server, project=None, location=None)
        assert rt.run("Hi").output == "fine"
        rt.close()
    (sent,) = server.requests
    assert sent.path == models_path("env-project", "europe-west4") + ":generateContent"
    assert auth(sent) == "Bearer vertex-token-1"  # the Developer API key is not used


def test_application_default_credentials_give_project_and_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import google.auth

    credentials = FakeCredentials()
    scopes: list[Any] = []

    def default(scopes: Any = None, **_: Any) -> tuple[Any, str]:
        seen.append(scopes)
        return credentials, "adc-project"

    seen = scopes
    monkeypatch.setattr(google.auth, "default", default)
    with LoopbackServer([OK]) as server:
        rt = runtime(server, project=None, credentials=None, location="us-east1")
        assert rt.run("Hi").output == "fine"
        rt.close()
    assert scopes == [["https://www.googleapis.com/auth/cloud-platform"]]
    (sent,) = server.requests
    assert sent.path == models_path("adc-project", "us-east1") + ":generateContent"
    assert auth(sent) == "Bearer vertex-token-1"


async def test_adc_serves_the_sync_and_the_async_client_and_its_token_is_masked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import google.auth

    credentials = FakeCredentials()
    monkeypatch.setattr(google.auth, "default", lambda **_: (credentials, "adc-project"))
    echo = error(401, "UNAUTHENTICATED", "token vertex-token-1 expired")
    with LoopbackServer([OK, Reply(status=401, json=echo)]) as server:
        rt = runtime(server, project=None, credentials=None)
        assert rt.run("Hi").output == "fine"
        with pytest.raises(AuthenticationError) as raised:
            await rt.arun("Hi")
        await rt.aclose()
        rt.close()
    assert [r.path.split("/")[3] for r in server.requests] == ["adc-project", "adc-project"]
    assert "vertex-token-1" not in str(raised.value)


def test_no_credentials_anywhere_is_a_config_error_before_any_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    with LoopbackServer([]) as server:
        rt = runtime(server, project=None, credentials=None)
        with pytest.raises(ConfigError, match="no Google credentials") as raised:
            rt.run("Hi")
    assert server.requests == []
    assert raised.value.__cause__ is None


def test_express_mode_sends_the_key_not_a_project() -> None:
    with LoopbackServer([OK]) as server:
        rt = runtime(server, project=None, location=None, credentials=None, api_key="express-key")
        assert rt.run("Hi").output == "fine"
        rt.close()
    (sent,) = server.requests
    assert sent.path == f"/v1/publishers/google/models/{MODEL}:generateContent"
    assert {k.lower(): v for k, v in sent.headers.items()}["x-goog-api-key"] == "express-key"


def test_a_403_is_a_permission_error_with_the_token_masked() -> None:
    body = error(403, "PERMISSION_DENIED", "caller lacks aiplatform.endpoints.predict")
    with LoopbackServer([Reply(status=403, json=body)]) as server:
        rt = runtime(server)
        with pytest.raises(AuthenticationError) as raised:
            rt.run("Hi")
        rt.close()
    assert "vertex-token" not in str(raised.value)
    assert raised.value.__cause__ is None


def test_vendor_fields_for_gemini_apply_on_vertex_too() -> None:
    with LoopbackServer([OK]) as server:
        rt = runtime(server)
        vendor = {
            "gemini": {"labels": {"team": "a"}, "cachedContent": "c1"},
            "gemini-vertex": {"labels": {"team": "b"}},
        }
        rt.run("Hi", vendor=vendor)
        rt.close()
    body = server.requests[0].json()
    assert body["labels"] == {"team": "b"} and body["cachedContent"] == "c1"


def test_a_developer_api_switch_is_refused() -> None:
    with pytest.raises(ConfigError, match="always Vertex AI"):
        GeminiVertexProvider({"vertexai": False})


def test_batch_is_refused_before_any_request() -> None:
    with LoopbackServer([]) as server:
        rt = runtime(server)
        with pytest.raises(UnsupportedFeatureError):
            rt.batch([{"custom_id": "a", "content": "Hi"}])
    assert server.requests == []


def test_registered_with_the_gemini_capability_table() -> None:
    found: list[Any] = []
    llmport_providers(found.append)
    infos = {info.prefix: info for info in found}
    vertex, gemini = infos["gemini-vertex"], infos["gemini"]
    chat = {p: f.caps for p, f in FAMILIES.items()}
    assert vertex.models == {**VERTEX_IMAGEN_MODELS, **VERTEX_EMBEDDING_MODELS, **chat}
    assert gemini.models == {**EMBEDDING_MODELS, **chat}
    # the same embedding model takes one input per :predict, 100 per batchEmbedContents
    assert vertex.capabilities_for("gemini-embedding-001").max_embed_inputs == 1
    assert gemini.capabilities_for("gemini-embedding-001").max_embed_inputs == 100
    assert vertex.capabilities_for(MODEL).reasoning


async def test_what_the_model_cannot_take_is_refused_before_any_request() -> None:
    video = MediaBlock("video", "video/x-unknown", data=b"\x00" * 64)
    with LoopbackServer([]) as server:
        rt = runtime(server)
        with pytest.raises(InputError):
            await events_via("async", rt, [Message("user", (TextBlock("x"), video))])
        await rt.aclose()
    assert server.requests == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["vertex/gemini_text.yaml", "vertex/gemini_stream.yaml"])
async def test_cassettes_replay_on_the_regional_endpoint(
    mode: str, name: str, cassette: Any
) -> None:
    cass, result = await replay(mode, name, cassette)
    scenario = SCENARIOS[name]
    verb = ":streamGenerateContent?alt=sse" if scenario.stream else ":generateContent"
    assert cass.requests[0].uri == (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/llmport-test/locations/"
        f"us-central1/publishers/google/models/{MODEL}{verb}"
    )
    expected = (
        "The capital of France is Paris.\n"
        if scenario.stream
        else "Hello! How can I help you today?"
    )
    assert result.output == expected


def test_an_instance_with_its_own_base_url_is_sent_no_environment_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Neither Application Default Credentials nor GOOGLE_API_KEY go to another host."""
    import google.auth

    credentials = FakeCredentials("adc-token")
    monkeypatch.setattr(google.auth, "default", lambda **_: (credentials, "adc-project"))
    monkeypatch.setenv("GOOGLE_API_KEY", "AIzaFAKEenvironmentKEY0123456789abcdefg")
    with LoopbackServer([OK]) as server:
        for plugin in ("gemini-vertex", "gemini"):
            given = {"plugin": plugin, "vertexai": True, "base_url": server.url}
            if plugin == "gemini-vertex":
                del given["vertexai"]
            rt = Runtime(model=f"proxy:{MODEL}", providers={"proxy": given})
            with pytest.raises(ConfigError, match="never the environment's"):
                rt.run("Hi")
            rt.close()
        assert server.requests == [] and credentials.refreshes == 0
