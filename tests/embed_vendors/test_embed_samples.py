"""Every fourth-batch embedding sample (but OpenAI's) through the real plugin and ``rt.embed``.

A loopback server answers with the recorded answers; the request llmport
sends must be the recorded one (method, path, body), and the vectors come
back with the recorded count, length and usage, sync and async.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from llmport import Embeddings, Runtime
from llmport.testing.loopback import LoopbackServer
from support.embed_scenarios import SCENARIOS, Scenario
from support.vertex_support import FakeCredentials


def settings_for(scenario: Scenario, url: str) -> dict[str, Any]:
    """The scenario's provider settings, pointed at the loopback server."""
    given = dict(scenario.settings)
    if scenario.provider == "bedrock":
        given["endpoint_url"] = url
    else:
        given["base_url"] = url
    if scenario.provider == "gemini-vertex":
        given["credentials"] = FakeCredentials()
    return given


def embed(scenario: Scenario, url: str, mode: str) -> Embeddings:
    rt = Runtime(providers={scenario.provider: settings_for(scenario, url)})
    model = f"{scenario.provider}:{scenario.model}"
    try:
        if mode == "sync":
            return rt.embed(list(scenario.inputs), model=model, **scenario.call)
        return asyncio.run(rt.aembed(list(scenario.inputs), model=model, **scenario.call))
    finally:
        rt.close()


def sent(server: LoopbackServer) -> list[tuple[str, str, Any]]:
    return sorted(
        ((r.method, r.path, r.json()) for r in server.requests), key=lambda r: json.dumps(r[2])
    )


def recorded(scenario: Scenario) -> list[tuple[str, str, Any]]:
    out = []
    for request in scenario.requests():
        parts = urlsplit(request["uri"])
        out.append((request["method"], parts.path, request["body"]))
    return sorted(out, key=lambda r: json.dumps(r[2]))


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_recorded_request_goes_out_and_the_recorded_answer_comes_back(
    name: str, mode: str
) -> None:
    scenario = SCENARIOS[name]
    with LoopbackServer(scenario.replies()) as server:
        result = embed(scenario, server.url, mode)
    assert sent(server) == recorded(scenario)
    assert len(result) == len(scenario.inputs)
    assert result.dimensions == scenario.dimensions
    assert result.usage.input_tokens == scenario.tokens
    assert all(len(row) == scenario.dimensions for row in result)
