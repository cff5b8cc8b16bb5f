"""Claude on Vertex AI (``anthropic-vertex:``) against a loopback server.

The server stands in for ``https://{region}-aiplatform.googleapis.com/v1``
(``base_url``); credentials are injected (an access token, or a
google-auth ``Credentials`` object), so nothing reaches Google. Checked:
the URL shape (``rawPredict`` / ``streamRawPredict``, ``count-tokens``),
the bearer header, the body (no ``model``, ``anthropic_version``),
capabilities of Vertex ids, settings and credential errors, and that the
request is byte for byte what the SDK's own ``AnthropicVertex`` client sends.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest
from llmport import AuthenticationError, ConfigError, Runtime, UnsupportedFeatureError
from llmport.errors import InputError
from llmport.messages.types import MediaBlock, Message, Request, TextBlock
from llmport.provider.wire import plain
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_anthropic.plugin import llmport_providers
from llmport_anthropic.vertex import VERTEX_VERSION, AnthropicVertexProvider
from support.anthropic_scenarios import error, message, text_stream, usage
from support.api_modes import MODES, run_via
from support.vertex_support import SCENARIOS, FakeCredentials, replay

MODEL = "claude-sonnet-4-5@20250929"
TOKEN = "ya29.vertex-test-access-token"
PROJECT = "my-project"
REGION = "us-east5"
BASE = f"/v1/projects/{PROJECT}/locations/{REGION}/publishers/anthropic/models"
FINE = [{"type": "text", "text": "fine"}]
OK = Reply(json=message("msg_v", MODEL, FINE, "end_turn", usage(5, 1)))
OK_STREAM = Reply(sse=text_stream("msg_v", MODEL, ["fi", "ne"], 5, 1))


def auth(sent: Any) -> str:
    """The request's Authorization header, whatever its case on the wire."""
    return next(v for k, v in sent.headers.items() if k.lower() == "authorization")


def settings(server: LoopbackServer, **extra: Any) -> dict[str, Any]:
    return {
        "region": REGION,
        "project_id": PROJECT,
        "access_token": TOKEN,
        "base_url": server.url + "/v1",
        **extra,
    }


def runtime(server: LoopbackServer, **extra: Any) -> Runtime:
    return Runtime(
        model=f"anthropic-vertex:{MODEL}",
        providers={"anthropic-vertex": settings(server, **extra)},
        max_retries=1,
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
async def test_url_auth_and_body(mode: str, stream: bool) -> None:
    with LoopbackServer([OK_STREAM if stream else OK]) as server:
        result = await run_via(mode, runtime(server), "Hi", stream=stream)
    assert result.output == "fine"
    (sent,) = server.requests
    verb = "streamRawPredict" if stream else "rawPredict"
    assert sent.method == "POST"
    assert sent.path == f"{BASE}/{MODEL}:{verb}"
    assert auth(sent) == f"Bearer {TOKEN}"
    assert "x-api-key" not in {k.lower() for k in sent.headers}
    body = sent.json()
    assert "model" not in body
    assert body["anthropic_version"] == VERTEX_VERSION
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    assert body.get("stream", False) is stream


def _request(stream: bool) -> Request:
    pdf = MediaBlock("file", "application/pdf", data=b"%PDF-1.4\n" + b"x" * 300)
    return Request(
        model=MODEL,
        messages=[Message("user", (TextBlock("Read: é 漢字"), pdf))],
        system="Be brief.",
        stream=stream,
        options={"temperature": 1, "stop": ["END"]},
        vendor={"anthropic-vertex": {"custom_field": {"a": 1}}},
    )


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
def test_the_request_is_what_the_sdk_vertex_client_sends(stream: bool) -> None:
    refuse = Reply(status=400, json=error("invalid_request_error", "bad", "req_1"))
    with LoopbackServer([refuse, refuse]) as server:
        provider = AnthropicVertexProvider(settings(server))
        prepared = provider.prepare(_request(stream))
        client = provider.clients.sync()
        assert isinstance(client, anthropic.AnthropicVertex)
        params = plain(prepared.params)
        with pytest.raises(anthropic.BadRequestError):
            if stream:
                client.messages.create(**{**params, "stream": True}).close()
            else:
                client.messages.create(**params)
        with pytest.raises(Exception, match="bad"):
            if stream:
                list(provider.send_stream(prepared))
            else:
                provider.send(prepared)
        provider.close()
    old, new = server.requests
    assert new.path == old.path
    # The SDK's own client fills in its current API version; Vertex AI's documented one is ours.
    old_body, new_body = old.json(), new.json()
    assert old_body.pop("anthropic_version") and new_body.pop("anthropic_version") == VERTEX_VERSION
    assert json.dumps(new_body) == json.dumps(old_body)
    volatile = {"x-stainless-retry-count", "x-stainless-read-timeout", "content-length"}
    same = {k.lower(): v for k, v in old.headers.items() if k.lower() not in volatile}
    assert {k.lower(): v for k, v in new.headers.items() if k.lower() not in volatile} == same


@pytest.mark.parametrize("mode", MODES)
async def test_count_tokens_goes_to_the_count_endpoint(mode: str) -> None:
    with LoopbackServer([Reply(json={"input_tokens": 12})]) as server:
        rt = runtime(server)
        if mode == "sync":
            counted = rt.count_tokens("Hi")
        else:
            counted = await rt.acount_tokens("Hi")
    assert counted.input_tokens == 12
    (sent,) = server.requests
    assert sent.path == f"{BASE}/count-tokens:rawPredict"
    assert auth(sent) == f"Bearer {TOKEN}"
    assert sent.json()["model"] == MODEL
    assert sent.json()["anthropic_version"] == VERTEX_VERSION


def test_region_and_project_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLOUD_ML_REGION", "europe-west1")
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "env-project")
    with LoopbackServer([OK]) as server:
        rt = Runtime(
            model=f"anthropic-vertex:{MODEL}",
            providers={"anthropic-vertex": {"access_token": TOKEN, "base_url": server.url + "/v1"}},
        )
        assert rt.run("Hi").output == "fine"
    assert server.requests[0].path == (
        f"/v1/projects/env-project/locations/europe-west1/publishers/anthropic/models/"
        f"{MODEL}:rawPredict"
    )


def test_google_credentials_are_refreshed_into_a_bearer_token() -> None:
    credentials = FakeCredentials("refreshed-token")
    with LoopbackServer([OK]) as server:
        rt = Runtime(
            model=f"anthropic-vertex:{MODEL}",
            providers={
                "anthropic-vertex": {
                    **settings(server),
                    "access_token": None,
                    "credentials": credentials,
                }
            },
        )
        assert rt.run("Hi").output == "fine"
    assert auth(server.requests[0]) == "Bearer refreshed-token-1"


def test_application_default_credentials_give_the_token_and_the_project(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import google.auth

    credentials = FakeCredentials("refreshed-token")
    scopes: list[Any] = []

    def default(scopes: Any = None, **_: Any) -> tuple[Any, str]:
        scopes_seen.append(scopes)
        return credentials, "adc-project"

    scopes_seen = scopes
    monkeypatch.setattr(google.auth, "default", default)
    monkeypatch.delenv("ANTHROPIC_VERTEX_PROJECT_ID", raising=False)
    with LoopbackServer([OK]) as server:
        given = {**settings(server), "access_token": None}
        del given["project_id"]
        rt = Runtime(model=f"anthropic-vertex:{MODEL}", providers={"anthropic-vertex": given})
        assert rt.run("Hi").output == "fine"
    assert scopes == [["https://www.googleapis.com/auth/cloud-platform"]]
    (sent,) = server.requests
    assert sent.path.startswith("/v1/projects/adc-project/locations/us-east5/")
    assert auth(sent) == "Bearer refreshed-token-1"


async def test_adc_project_serves_the_sync_and_the_async_client_and_its_token_is_masked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import google.auth

    credentials = FakeCredentials("refreshed-token")
    monkeypatch.setattr(google.auth, "default", lambda **_: (credentials, "adc-project"))
    monkeypatch.delenv("ANTHROPIC_VERTEX_PROJECT_ID", raising=False)
    echo = {"type": "error", "error": {"type": "authentication_error", "message": ""}}
    echo["error"]["message"] = "token refreshed-token-1 is not allowed here"
    with LoopbackServer([OK, Reply(status=401, json=echo)]) as server:
        given = {**settings(server), "access_token": None}
        del given["project_id"]
        rt = Runtime(model=f"anthropic-vertex:{MODEL}", providers={"anthropic-vertex": given})
        assert rt.run("Hi").output == "fine"
        with pytest.raises(AuthenticationError) as raised:
            await rt.arun("Hi")
        await rt.aclose()
    assert [r.path.split("/")[3] for r in server.requests] == ["adc-project", "adc-project"]
    assert "refreshed-token-1" not in str(raised.value)


def test_application_default_credentials_found_nowhere_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    with LoopbackServer([]) as server:
        rt = Runtime(
            model=f"anthropic-vertex:{MODEL}",
            providers={"anthropic-vertex": {**settings(server), "access_token": None}},
        )
        with pytest.raises(ConfigError, match="no Google credentials") as raised:
            rt.run("Hi")
    assert server.requests == []
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


@pytest.mark.parametrize(
    ("missing", "unset", "match"),
    [
        ("region", "CLOUD_ML_REGION", "no region"),
        ("project_id", "ANTHROPIC_VERTEX_PROJECT_ID", "no project"),
    ],
)
def test_missing_region_or_project_is_a_config_error_before_any_request(
    monkeypatch: pytest.MonkeyPatch, missing: str, unset: str, match: str
) -> None:
    monkeypatch.delenv(unset, raising=False)
    with LoopbackServer([]) as server:
        given = settings(server)
        del given[missing]
        rt = Runtime(model=f"anthropic-vertex:{MODEL}", providers={"anthropic-vertex": given})
        with pytest.raises(ConfigError, match=match):
            rt.run("Hi")
    assert server.requests == []


def test_an_unknown_setting_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"unknown setting.*api_key"):
        AnthropicVertexProvider({"region": REGION, "api_key": "sk-ant-x"})


def test_a_401_is_an_authentication_error_and_the_token_is_masked() -> None:
    body = {"error": {"code": 401, "message": f"bad token {TOKEN}", "status": "UNAUTHENTICATED"}}
    with (
        LoopbackServer([Reply(status=401, json=body)]) as server,
        pytest.raises(AuthenticationError) as raised,
    ):
        runtime(server).run("Hi")
    assert TOKEN not in str(raised.value)
    assert raised.value.__cause__ is None


def test_batch_is_refused_before_any_request() -> None:
    with LoopbackServer([]) as server:
        rt = runtime(server)
        with pytest.raises(UnsupportedFeatureError):
            rt.batch([{"custom_id": "a", "content": "Hi"}])
    assert server.requests == []


def _registered() -> Any:
    found: list[Any] = []
    llmport_providers(found.append)
    return next(info for info in found if info.prefix == "anthropic-vertex")


@pytest.mark.parametrize(
    ("model", "reasoning", "structured", "max_output"),
    [
        ("claude-sonnet-4-5@20250929", True, True, 64_000),
        ("claude-opus-4@20250514", True, False, 32_000),
        ("claude-sonnet-4@20250514", True, False, 64_000),
        ("claude-3-5-haiku@20241022", False, False, 8192),
        ("claude-3-haiku@20240307", False, False, 4096),
    ],
)
def test_vertex_ids_have_their_models_capabilities(
    model: str, reasoning: bool, structured: bool, max_output: int
) -> None:
    info = _registered()
    caps = AnthropicVertexProvider({"region": REGION}, info).capabilities(model)
    assert (caps.reasoning, caps.native_structured_output) == (reasoning, structured)
    assert caps.max_output_tokens == max_output
    assert AnthropicVertexProvider({"region": REGION}).capabilities(model) == caps


def test_what_the_model_cannot_take_is_refused_before_any_request() -> None:
    audio = MediaBlock("audio", "audio/wav", data=b"RIFF0000WAVE")
    with LoopbackServer([]) as server:
        rt = runtime(server)
        with pytest.raises(InputError):
            rt.run([Message("user", (TextBlock("listen"), audio))])
        with pytest.raises(InputError):
            rt.run("think", model="anthropic-vertex:claude-3-haiku@20240307", reasoning="high")
    assert server.requests == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["vertex/claude_text.yaml", "vertex/claude_stream.yaml"])
async def test_cassettes_replay_on_the_regional_endpoint(
    mode: str, name: str, cassette: Any
) -> None:
    cass, result = await replay(mode, name, cassette)
    scenario = SCENARIOS[name]
    verb = "streamRawPredict" if scenario.stream else "rawPredict"
    assert cass.requests[0].uri == (
        "https://us-east5-aiplatform.googleapis.com/v1/projects/llmport-test/locations/"
        f"us-east5/publishers/anthropic/models/{scenario.model}:{verb}"
    )
    body = json.loads(cass.requests[0].body)
    assert body["anthropic_version"] == VERTEX_VERSION and "model" not in body
    assert result.output == ("Hello" if scenario.stream else "The capital of France is Paris.")


def test_an_instance_with_its_own_base_url_is_sent_no_default_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Application Default Credentials are the environment's: they go only to Google."""
    import google.auth

    credentials = FakeCredentials("adc-token")
    monkeypatch.setattr(google.auth, "default", lambda **_: (credentials, "adc-project"))
    with LoopbackServer([OK]) as server:
        given = {**settings(server), "access_token": None, "plugin": "anthropic-vertex"}
        rt = Runtime(model=f"proxy:{MODEL}", providers={"proxy": given})
        with pytest.raises(ConfigError, match="Application Default Credentials"):
            rt.run("Hi")
        assert server.requests == [] and credentials.refreshes == 0
        # Its own access_token is sent.
        given["access_token"] = TOKEN
        rt = Runtime(model=f"proxy:{MODEL}", providers={"proxy": given})
        assert rt.run("Hi").output == "fine"
    assert auth(server.requests[0]) == f"Bearer {TOKEN}"
