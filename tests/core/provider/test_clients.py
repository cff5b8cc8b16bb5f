"""ClientCache: one sync client; one async client per event loop, closed inside its loop."""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import pytest
from llmport.provider.clients import ClientCache


class FakeClient:
    """Records where it was closed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.closed_in: asyncio.AbstractEventLoop | str | None = None

    def close(self) -> None:
        self.closed_in = "sync"

    async def aclose(self) -> None:
        self.closed_in = asyncio.get_running_loop()


def make_cache(made: list[FakeClient]) -> ClientCache[FakeClient, FakeClient]:
    def make(name: str) -> Any:
        def build() -> FakeClient:
            client = FakeClient(name)
            made.append(client)
            return client

        return build

    return ClientCache(make("sync"), make("async"))


def test_the_sync_client_is_made_once_on_first_use() -> None:
    made: list[FakeClient] = []
    cache = make_cache(made)
    assert made == []
    clients = set()
    threads = [threading.Thread(target=lambda: clients.add(id(cache.sync()))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(clients) == 1 and len(made) == 1
    cache.close()
    assert made[0].closed_in == "sync"


def test_each_event_loop_gets_its_own_client_closed_inside_that_loop() -> None:
    made: list[FakeClient] = []
    cache = make_cache(made)
    seen: list[tuple[FakeClient, asyncio.AbstractEventLoop]] = []

    async def use() -> None:
        first = cache.for_loop()
        assert cache.for_loop() is first  # cached within the loop
        seen.append((first, asyncio.get_running_loop()))

    asyncio.run(use())
    asyncio.run(use())
    (a, loop_a), (b, loop_b) = seen
    assert a is not b
    # asyncio.run cancelled each keeper at shutdown: each client closed in its own loop.
    assert a.closed_in is loop_a and b.closed_in is loop_b


def test_a_dropped_cache_still_closes_its_client_when_the_loop_ends(
    recwarn: pytest.WarningsRecorder,
) -> None:
    made: list[FakeClient] = []

    async def main() -> asyncio.AbstractEventLoop:
        cache = make_cache(made)
        cache.for_loop()
        del cache
        gc.collect()  # the keeper must survive: the loop's timer holds it
        await asyncio.sleep(0)
        assert made[0].closed_in is None
        return asyncio.get_running_loop()

    loop = asyncio.run(main())
    assert made[0].closed_in is loop
    assert not [w for w in recwarn if "destroyed" in str(w.message)]


async def test_aclose_closes_at_once_even_before_the_keeper_ran() -> None:
    made: list[FakeClient] = []
    cache = make_cache(made)
    cache.for_loop()
    await cache.aclose()  # no await between: the keeper task has not started
    assert made[0].closed_in is asyncio.get_running_loop()
    assert cache.open_loops == 0
    assert cache.for_loop() is not made[0]  # a fresh client afterwards
    await cache.aclose()


async def test_close_from_the_running_loop_closes_its_client_there() -> None:
    made: list[FakeClient] = []
    cache = make_cache(made)
    cache.for_loop()
    await asyncio.sleep(0)
    cache.close()
    for _ in range(3):
        await asyncio.sleep(0)
    assert made[0].closed_in is asyncio.get_running_loop()
