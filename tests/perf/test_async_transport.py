"""The async transport choice: aiohttp by default when installed, configurable."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llmport.errors import ConfigError
from llmport.provider.clients import async_transport


def test_default_is_aiohttp_when_installed() -> None:
    pytest.importorskip("aiohttp")
    assert async_transport({}) == "aiohttp"


def test_setting_wins_and_is_checked() -> None:
    assert async_transport({"async_transport": "httpx"}) == "httpx"
    assert async_transport({"async_transport": "aiohttp"}) == "aiohttp"
    with pytest.raises(ConfigError):
        async_transport({"async_transport": "curl"})


def _provider(vendor: str, transport: str) -> Any:
    settings = {"api_key": "k", "base_url": "http://127.0.0.1:9", "async_transport": transport}
    if vendor == "openai":
        from llmport_openai.provider import OpenAIChatProvider

        return OpenAIChatProvider(settings)
    from llmport_anthropic.provider import AnthropicProvider

    return AnthropicProvider(settings)


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_plugins_build_their_async_client_on_the_chosen_transport(vendor: str) -> None:
    pytest.importorskip("aiohttp")

    async def client_class(transport: str) -> str:
        provider = _provider(vendor, transport)
        name = type(provider.clients.for_loop()._client).__name__.lower()
        await provider.aclose()
        return name

    assert "aiohttp" in asyncio.run(client_class("aiohttp"))
    assert "aiohttp" not in asyncio.run(client_class("httpx"))
