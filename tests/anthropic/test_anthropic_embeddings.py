"""Anthropic has no embeddings endpoint: ``rt.embed`` is refused typed, naming Voyage AI."""

from __future__ import annotations

import asyncio

import pytest
from llmport import Runtime
from llmport.errors import UnsupportedFeatureError


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_embed_is_refused_before_any_request_naming_voyage_ai(mode: str, mute_port: int) -> None:
    settings = {"api_key": "sk-ant-fake", "base_url": f"http://127.0.0.1:{mute_port}"}
    rt = Runtime(providers={"anthropic": settings})
    with pytest.raises(UnsupportedFeatureError, match=r'Voyage AI.*model="voyage:') as caught:
        if mode == "sync":
            rt.embed(["a text"], model="anthropic:claude-haiku-4-5")
        else:
            asyncio.run(rt.aembed(["a text"], model="anthropic:claude-haiku-4-5"))
    assert caught.value.__cause__ is None
