"""The Gemini API version: v1beta by default on the Developer API, ``api_version`` to choose.

Every recorded wire sample is ``v1beta``, where ``includeThoughts``,
``urlContext`` and ``fileSearch`` live; google-genai 3.x alone would send
``v1``. The URL each setting gives is read where a loopback server received
it, on every path (sync, async on aiohttp and on httpx2), streamed and not.
"""

from __future__ import annotations

from typing import Any

import pytest
from gemini_helpers import PATHS, STREAMED, isolated, run, runtime, stream  # noqa: F401 (autouse)
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_gemini.provider import DEFAULT_API_VERSION, GeminiProvider
from support.gemini_scenarios import answer, text_stream, usage

MODEL = "gemini:gemini-2.5-flash"


async def _path_sent(path: tuple[str, str | None], streamed: bool, **settings: Any) -> str:
    reply = (
        Reply(sse=text_stream("ok", ["fi", "ne"], 5, 1))
        if streamed
        else Reply(json=answer("ok", [{"text": "fine"}], usage(5, 1)))
    )
    with LoopbackServer([reply]) as server:
        extra = {"async_transport": path[1]} if path[1] else {}
        rt = runtime(MODEL, base_url=server.url, **extra, **settings)
        if streamed:
            result = (await stream(path[0], rt, content="Hi"))[-1].result
        else:
            result = await run(path[0], rt, content="Hi")
        (request,) = server.requests
    assert result.output == "fine"
    sent: str = request.path
    return sent


@pytest.mark.parametrize("streamed", STREAMED)
@pytest.mark.parametrize("path", PATHS)
async def test_requests_go_to_v1beta_by_default(path: Any, streamed: bool) -> None:
    verb = "streamGenerateContent" if streamed else "generateContent"
    sent = await _path_sent(path, streamed)
    assert sent.startswith(f"/v1beta/models/gemini-2.5-flash:{verb}")


@pytest.mark.parametrize("streamed", STREAMED)
@pytest.mark.parametrize("path", PATHS)
async def test_api_version_v1_is_honoured(path: Any, streamed: bool) -> None:
    verb = "streamGenerateContent" if streamed else "generateContent"
    sent = await _path_sent(path, streamed, api_version="v1")
    assert sent.startswith(f"/v1/models/gemini-2.5-flash:{verb}")


async def test_the_sdk_environment_variable_is_honoured_when_the_setting_is_unset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_API_VERSION", "v1")
    sent = await _path_sent(("sync", None), False)
    assert sent.startswith("/v1/models/")


def test_vertex_ai_keeps_the_sdks_version() -> None:
    provider = GeminiProvider({"vertexai": True, "project": "p", "location": "us-central1"})
    assert provider.client_kwargs()["http_options"].api_version is None
    developer = GeminiProvider({"api_key": "k"})
    assert developer.client_kwargs()["http_options"].api_version == DEFAULT_API_VERSION == "v1beta"


async def test_api_version_from_llmport_toml(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "llmport.toml").write_text('[providers.gemini]\napi_version = "v1"\n')
    monkeypatch.chdir(tmp_path)
    sent = await _path_sent(("sync", None), False)
    assert sent.startswith("/v1/models/gemini-2.5-flash:generateContent")
