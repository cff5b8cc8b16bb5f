"""The embedding cassettes (``cassettes/embeddings/``, made from the wire samples) replay.

No base URL and no loopback: the plugins build the vendors' own URLs, and
vcrpy matches method, URL and JSON body against what the samples recorded,
sync and async; every interaction is played.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llmport import Embeddings, Runtime
from support.embed_scenarios import SCENARIOS
from support.vertex_support import FakeCredentials


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_cassette_replays(name: str, mode: str, cassette: Any) -> None:
    scenario = SCENARIOS[name]
    settings = dict(scenario.settings)
    if scenario.provider == "gemini-vertex":
        settings["credentials"] = FakeCredentials()
    rt = Runtime(providers={scenario.provider: settings})
    model = f"{scenario.provider}:{scenario.model}"
    with cassette(scenario.cassette, allow_playback_repeats=False):
        result: Embeddings
        if mode == "sync":
            result = rt.embed(list(scenario.inputs), model=model, **scenario.call)
        else:
            result = asyncio.run(rt.aembed(list(scenario.inputs), model=model, **scenario.call))
    rt.close()
    assert (len(result), result.dimensions) == (len(scenario.inputs), scenario.dimensions)
    assert result.usage.input_tokens == scenario.tokens
