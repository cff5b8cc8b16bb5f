"""Deadlines on the async path: a cold client is made off the event loop, inside the deadline.

Importing a vendor SDK and building its client takes seconds on a loaded
machine. Made on the event loop, it blocks the loop and the deadline cannot
fire; ``ClientCache.aclient()`` makes it in a worker thread instead. The
plugin tests stand a slow client factory (3 s) against a 0.3 s deadline.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from llmport import Runtime, RunTimeout
from llmport.errors import ConfigError
from llmport.provider.clients import ClientCache

#: Far above the few ms measured once the factory is off the loop (room for a loaded CI
#: machine), far below the factory's 3 s.
BOUND = 2.0
SLOW = 3.0


class Made:
    """A fake async client: the thread it was made in, and whether it was closed."""

    def __init__(self) -> None:
        self.thread = threading.current_thread()
        self.closed = False

    async def aclose(self) -> None:
        self.closed = True


def slow_factory(made: list[Made], seconds: float = 0.3) -> Callable[[], Made]:
    def make() -> Made:
        time.sleep(seconds)
        client = Made()
        made.append(client)
        return client

    return make


# --- ClientCache.aclient ---------------------------------------------------------------


def test_aclient_makes_the_client_off_the_loop_once_and_caches_it() -> None:
    made: list[Made] = []
    cache: ClientCache[Made, Made] = ClientCache(Made, slow_factory(made))

    async def main() -> None:
        ticks = 0

        async def tick() -> None:  # the loop keeps running while the client is made
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(tick())
        first, second = await asyncio.gather(cache.aclient(), cache.aclient())
        ticker.cancel()
        assert first is second and len(made) == 1  # concurrent first calls share one build
        assert first.thread is not threading.current_thread()
        assert ticks >= 5, ticks
        assert await cache.aclient() is first and cache.for_loop() is first

    asyncio.run(main())
    assert made[0].closed  # closed with its loop, like for_loop()'s clients


def test_a_caller_cancelled_meanwhile_leaves_the_client_to_the_next_call() -> None:
    made: list[Made] = []
    cache: ClientCache[Made, Made] = ClientCache(Made, slow_factory(made))

    async def main() -> None:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await cache.aclient()
        client = await cache.aclient()
        assert made == [client]  # the first build finished and was kept

    asyncio.run(main())
    assert made[0].closed


def test_warm_async_runs_off_the_loop_and_the_client_is_made_on_it() -> None:
    warmed: list[threading.Thread] = []
    made: list[Made] = []

    def warm() -> None:
        time.sleep(0.2)
        warmed.append(threading.current_thread())

    cache: ClientCache[Made, Made] = ClientCache(Made, slow_factory(made, 0), warm_async=warm)

    async def main() -> None:
        client = await cache.aclient()
        assert client.thread is threading.current_thread()  # an aiohttp session needs the loop
        assert warmed[0] is not threading.current_thread()

    asyncio.run(main())


def test_a_failing_factory_raises_its_error_and_the_next_call_tries_again() -> None:
    attempts: list[int] = []

    def make() -> Made:
        attempts.append(1)
        if len(attempts) == 1:
            raise ConfigError("no key")
        return Made()

    cache: ClientCache[Made, Made] = ClientCache(Made, make)

    async def main() -> None:
        with pytest.raises(ConfigError, match="no key"):
            await cache.aclient()
        assert isinstance(await cache.aclient(), Made)

    asyncio.run(main())
    assert len(attempts) == 2


def test_asyncio_run_does_not_wait_for_a_build_its_caller_gave_up() -> None:
    made: list[Made] = []
    cache: ClientCache[Made, Made] = ClientCache(Made, slow_factory(made, SLOW))

    async def main() -> None:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.1):
                await cache.aclient()

    started = time.monotonic()
    asyncio.run(main())
    took = time.monotonic() - started
    print(f"\nasyncio.run returned after {took:.3f} s (the build takes {SLOW} s)")
    assert took < BOUND


# --- the plugins' async paths ------------------------------------------------------------


@pytest.fixture
def mute_url(mute_port: int) -> str:
    """A loopback server that accepts connections and never answers."""
    return f"http://127.0.0.1:{mute_port}"


def slowed(cls: Any, name: str, seconds: float = SLOW) -> Callable[..., Any]:
    """``cls.name`` made slow, like a cold SDK import (for monkeypatch)."""
    original = getattr(cls, name)

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(seconds)
        return original(*args, **kwargs)

    return slow


def openai_case(monkeypatch: pytest.MonkeyPatch, url: str) -> tuple[str, dict[str, Any]]:
    from llmport_openai.provider import OpenAIChatProvider, OpenAIResponsesProvider

    for cls in (OpenAIChatProvider, OpenAIResponsesProvider):
        monkeypatch.setattr(cls, "_make_client", slowed(cls, "_make_client"))
    return "openai:gpt-4o-mini", {"base_url": url + "/v1", "api_key": "sk-test"}


def anthropic_case(monkeypatch: pytest.MonkeyPatch, url: str) -> tuple[str, dict[str, Any]]:
    from llmport_anthropic.provider import AnthropicProvider

    monkeypatch.setattr(AnthropicProvider, "_make_async", slowed(AnthropicProvider, "_make_async"))
    return "anthropic:claude-sonnet-4-5", {"base_url": url, "api_key": "test"}


def gemini_case(monkeypatch: pytest.MonkeyPatch, url: str) -> tuple[str, dict[str, Any]]:
    from llmport_gemini.provider import GeminiProvider

    monkeypatch.setattr(GeminiProvider, "_warm_async", slowed(GeminiProvider, "_warm_async"))
    return "gemini:gemini-2.5-flash", {"base_url": url, "api_key": "test"}


def bedrock_case(monkeypatch: pytest.MonkeyPatch, url: str) -> tuple[str, dict[str, Any]]:
    import llmport_bedrock.provider as bedrock

    monkeypatch.setattr(bedrock, "_import_aiohttp", slowed(bedrock, "_import_aiohttp"))
    settings = {
        "endpoint_url": url,
        "region": "us-east-1",
        "aws_access_key_id": "AKIATESTTESTTESTTEST",
        "aws_secret_access_key": "test",
    }
    return "bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0", settings


@pytest.mark.parametrize("case", [openai_case, anthropic_case, gemini_case, bedrock_case])
def test_a_slow_client_factory_does_not_hold_the_async_deadline(
    case: Callable[[pytest.MonkeyPatch, str], tuple[str, dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    mute_url: str,
) -> None:
    model, settings = case(monkeypatch, mute_url)
    vendor = model.split(":", 1)[0]
    plugin = importlib.import_module(f"llmport_{vendor}.plugin")
    rt = Runtime(model=model, max_retries=1, providers={vendor: settings}, hooks=[plugin])

    async def main() -> float:
        started = time.monotonic()
        with pytest.raises(RunTimeout):
            await rt.async_exec("hi", deadline=0.3)
        return time.monotonic() - started

    try:
        took = asyncio.run(main())
    finally:
        rt.close()
    print(f"\n{vendor}: deadline 0.3 s, slow factory {SLOW} s, RunTimeout after {took:.3f} s")
    assert took < BOUND


PROVIDER_CLASSES = {
    "openai": ("llmport_openai.provider", "OpenAIChatProvider"),
    "anthropic": ("llmport_anthropic.provider", "AnthropicProvider"),
    "gemini": ("llmport_gemini.provider", "GeminiProvider"),
    "bedrock": ("llmport_bedrock.provider", "BedrockProvider"),
}


@pytest.mark.parametrize("mode", ["sync", "async", "stream", "astream"])
@pytest.mark.parametrize("case", [openai_case, anthropic_case, gemini_case, bedrock_case])
def test_a_cold_first_conversion_does_not_hold_the_deadline(
    case: Callable[[pytest.MonkeyPatch, str], tuple[str, dict[str, Any]]],
    mode: str,
    monkeypatch: pytest.MonkeyPatch,
    mute_url: str,
) -> None:
    """A provider's first prepare() may import its SDK (Gemini's does): under the deadline."""
    model, settings = case(monkeypatch, mute_url)
    vendor = model.split(":", 1)[0]
    module, name = PROVIDER_CLASSES[vendor]
    cls = getattr(importlib.import_module(module), name)
    monkeypatch.setattr(cls, "prepare", slowed(cls, "prepare"))
    plugin = importlib.import_module(f"llmport_{vendor}.plugin")
    rt = Runtime(model=model, max_retries=1, providers={vendor: settings}, hooks=[plugin])

    async def main() -> None:
        if mode == "astream":
            [event async for event in rt.astream("hi", deadline=0.3)]
        else:
            await rt.async_exec("hi", deadline=0.3)

    started = time.monotonic()
    try:
        with pytest.raises(RunTimeout):
            if mode == "sync":
                rt.exec("hi", deadline=0.3)
            elif mode == "stream":
                list(rt.stream("hi", deadline=0.3))
            else:
                asyncio.run(main())
        took = time.monotonic() - started
    finally:
        rt.close()
    print(f"\n{vendor} {mode}: deadline 0.3 s, cold prepare {SLOW} s, RunTimeout after {took:.3f}")
    assert took < BOUND


def test_only_a_cold_provider_converts_in_a_worker_thread() -> None:
    """The first conversion runs in a worker under the deadline; later ones run inline."""
    from llmport import ProviderInfo, Response, hookimpl
    from llmport.provider.contract import Prepared, Provider

    threads: list[str] = []

    class Counting(Provider):
        name = "counting"

        def prepare(self, request: Any) -> Prepared:
            threads.append(threading.current_thread().name)
            return Prepared(request)

        def send(self, prepared: Prepared) -> Response:
            return Response(text="ok")

    class Plugin:
        @hookimpl
        def llmport_providers(self, register: Any) -> None:
            register(ProviderInfo("counting", lambda settings, info: Counting(settings, info)))

    rt = Runtime(model="counting:m", hooks=[Plugin()])
    assert [rt.exec("hi", deadline=5) for _ in range(3)] == ["ok"] * 3
    main = threading.current_thread().name
    assert threads[0] != main and threads[1:] == [main, main], threads
