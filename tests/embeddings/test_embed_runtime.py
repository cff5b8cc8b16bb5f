"""What each embed call gets from the runtime: cache, budgets, DAG, deadlines, normalize."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from llmport import Budget, Runtime, Session, agentic_function, hookimpl
from llmport.controls.retry import Backoff
from llmport.errors import (
    BudgetExceeded,
    ExecFailed,
    OptionError,
    ProviderTimeoutError,
    RunTimeout,
    TokenLimitExceeded,
)
from llmport.messages.embeddings import EmbedRequest, EmbedResponse
from llmport.messages.types import ModelCapabilities
from llmport.provider.contract import ProviderInfo
from llmport.sessions.kv import MemoryStore, SqliteKV
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from support.embed_helpers import (
    TableEmbedder,
    TablePlugin,
    answer,
    embed,
    hundred_runtime,
    vector_of,
)

# -- the cache: a re-index pays only for what changed -----------------------------------


def test_second_run_with_10_changed_inputs_sends_exactly_those_10(mode: str, tmp_path: Any) -> None:
    with LoopbackServer(
        [Reply(handler=lambda r: Reply(json=answer(r.json())))], repeat=True
    ) as srv:
        cache = str(tmp_path / "cache.sqlite")  # SQLite, the default store
        corpus = [f"text-{i}" for i in range(1000)]
        embed(hundred_runtime(srv.url, embed_cache=cache), mode, corpus, model="hundred:embedder")
        assert sum(len(r.json()["input"]) for r in srv.requests) == 1000
        before = len(srv.requests)
        changed = [f"text-{i}" if i % 100 else f"text-{i + 5000}" for i in range(1000)]
        second = hundred_runtime(srv.url, embed_cache=cache)  # a new process, the same file
        result = embed(second, mode, changed, model="hundred:embedder")
        sent = [r.json()["input"] for r in srv.requests[before:]]
    assert sent == [[f"text-{i + 5000}" for i in range(0, 1000, 100)]]  # exactly the 10
    assert list(result) == [tuple(_identifiable(t)) for t in changed]
    assert result.usage.input_tokens == 10 and result.usage.requests == 1


def _identifiable(text: str) -> list[float]:
    n = float(text.split("-")[1])
    return [n, float(len(text)), 1.0, -n]


def test_cache_keys_on_model_dimensions_and_input_type(table: TablePlugin, mode: str) -> None:
    rt = Runtime(model="table:embed", hooks=[table], embed_cache=MemoryStore())
    embed(rt, mode, ["a", "b"])
    embed(rt, mode, ["a", "b"])  # all from the cache
    embed(rt, mode, ["a", "b"], input_type="query")  # another input type: sent again
    sent = [r.inputs for p in table.providers for r in p.requests]  # type: ignore[attr-defined]
    assert sent == [("a", "b"), ("a", "b")]
    again = embed(rt, mode, ["b", "a"])
    assert list(again) == [tuple(vector_of("b")), tuple(vector_of("a"))]
    assert again.usage.requests == 0


def test_a_cache_that_cannot_be_read_or_written_never_fails_the_call(
    table: TablePlugin, caplog: pytest.LogCaptureFixture
) -> None:
    class Down:
        def get(self, namespace: Any, key: str) -> Any:
            raise ConnectionError("redis is down")

        def put(self, namespace: Any, key: str, value: Any) -> None:
            raise ConnectionError("redis is down")

    rt = Runtime(model="table:embed", hooks=[table], embed_cache=Down())
    assert list(rt.embed(["a"])) == [tuple(vector_of("a"))]
    assert "could not be read" in caplog.text and "could not be written" in caplog.text


def test_embed_cache_setting_is_checked(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(OptionError, match="embed_cache"):
        Runtime(embed_cache=3)
    monkeypatch.chdir(tmp_path)
    rt = Runtime(embed_cache=True)
    assert rt.embed_cache is not None and isinstance(rt.embed_cache.store, SqliteKV)


# -- the session DAG ----------------------------------------------------------------------


def test_an_embed_call_inside_an_agentic_function_is_a_dag_node(
    table: TablePlugin, mode: str
) -> None:
    rt = Runtime(model="table:embed", hooks=[table])

    @agentic_function
    def index(texts: list[str]) -> int:
        if mode == "sync":
            return len(rt.embed(texts))
        return len(asyncio.run(rt.aembed(texts)))

    with Session() as session:
        assert index(["alpha", "beta"]) == 2
    (node,) = [n for n in session.nodes() if n.kind == "embed"]
    assert node.name == "table:embed" and node.parent is not None
    assert node.parent.name == "index"
    assert node.data["inputs"] == 2 and len(node.data["hashes"]) == 2
    assert "alpha" not in str(node.data)  # hashes, never the texts
    assert node.result["usage"]["input_tokens"] == 9 and node.result["dimensions"] == 4
    assert session.usage().input_tokens == 9


def test_outside_an_agentic_function_no_node_is_written(table: TablePlugin) -> None:
    rt = Runtime(model="table:embed", hooks=[table])
    with Session() as session:
        rt.embed(["alpha"])
    assert [n for n in session.nodes() if n.kind == "embed"] == []


# -- budgets ---------------------------------------------------------------------------


def test_a_budget_refuses_a_part_before_it_is_sent(table: TablePlugin, mode: str) -> None:
    rt = Runtime(model="table:embed", hooks=[table], budget=Budget(input_tokens=3))
    embed(rt, mode, ["aaaa", "bbbb"])  # 2 tokens estimated, 8 counted by the vendor
    with pytest.raises(TokenLimitExceeded):
        embed(rt, mode, ["cccc"])
    sent = [r.inputs for p in table.providers for r in p.requests]  # type: ignore[attr-defined]
    assert sent == [("aaaa", "bbbb")]
    assert rt.ledger is not None and rt.ledger.used.input_tokens == 8


def test_a_cost_budget_counts_embedding_cost() -> None:
    with LoopbackServer(
        [Reply(handler=lambda r: Reply(json=answer(r.json())))], repeat=True
    ) as srv:
        rt = Runtime(
            providers={"openai": {"base_url": srv.url + "/v1", "api_key": "sk-fake-cost"}},
            budget=Budget(cost_usd="0.00000001"),  # below one request of 2 tokens
        )
        with pytest.raises(BudgetExceeded, match="cost_usd"):
            rt.embed(["text-1", "text-2"], model="openai:text-embedding-3-small")
        with pytest.raises(BudgetExceeded):  # spent: the next call is refused before sending
            rt.embed(["text-3"], model="openai:text-embedding-3-small")
        assert len(srv.requests) == 1


def test_embedding_cost_comes_from_the_price_table() -> None:
    with LoopbackServer(
        [Reply(handler=lambda r: Reply(json=answer(r.json())))], repeat=True
    ) as srv:
        rt = Runtime(
            providers={"openai": {"base_url": srv.url + "/v1", "api_key": "sk-fake-cost"}},
            budget=Budget(cost_usd="1"),
        )
        result = rt.embed(["text-1", "text-2"], model="openai:text-embedding-3-small")
    assert result.usage.input_tokens == 2
    cost = result.usage.cost
    assert cost is not None and 0 < cost < 0.000001  # $0.02 per million tokens


# -- deadlines and normalize -----------------------------------------------------------


#: Seconds :class:`Slow` takes to answer: far past every bound below (a loaded machine
#: cannot make a bounded call look unbounded, nor the other way round).
SLOW = 2.0


class Slow(TableEmbedder):
    def _embed(self, request: EmbedRequest) -> EmbedResponse:
        time.sleep(SLOW)
        return super()._embed(request)

    async def _async_embed(self, request: EmbedRequest) -> EmbedResponse:
        await asyncio.sleep(SLOW)
        return await super()._async_embed(request)


@pytest.mark.parametrize("count", [1, 7])
def test_deadline_bounds_the_whole_call(mode: str, count: int) -> None:
    rt = Runtime(model="table:embed", hooks=[TablePlugin(Slow)], backoff=Backoff.none())
    started = time.monotonic()
    with pytest.raises(RunTimeout):
        embed(rt, mode, [f"t{i}" for i in range(count)], deadline=0.2)
    assert time.monotonic() - started < SLOW / 2


def test_the_runtimes_deadline_is_every_calls_default(mode: str) -> None:
    rt = Runtime(
        model="table:embed", hooks=[TablePlugin(Slow)], backoff=Backoff.none(), deadline=0.2
    )
    started = time.monotonic()
    with pytest.raises(RunTimeout):
        embed(rt, mode, ["t0", "t1"])
    assert time.monotonic() - started < SLOW / 2


def test_the_runtimes_timeout_gives_up_each_request_then_retries(mode: str) -> None:
    slow = TablePlugin(Slow)
    rt = Runtime(
        model="table:embed", hooks=[slow], backoff=Backoff.none(), max_retries=2, timeout=0.2
    )
    started = time.monotonic()
    with pytest.raises(ExecFailed) as caught:
        embed(rt, mode, ["t0", "t1"])
    assert time.monotonic() - started < SLOW / 2
    assert [type(f.error) for f in caught.value.attempts] == [ProviderTimeoutError] * 2


def test_a_bad_runtime_timeout_is_an_option_error_before_any_request(mode: str) -> None:
    table = TablePlugin()
    rt = Runtime(model="table:embed", hooks=[table], timeout="soon")
    with pytest.raises(OptionError, match="timeout"):
        embed(rt, mode, ["t0"])
    assert all(not p.requests for p in table.providers)  # type: ignore[attr-defined]


def test_normalize_gives_unit_vectors(rt: Runtime, mode: str) -> None:
    result = embed(rt, mode, ["alpha", "beta", "gamma", "delta"], normalize=True)
    for text, row in zip(["alpha", "beta", "gamma", "delta"], result, strict=True):
        assert math.isclose(math.hypot(*row), 1.0, rel_tol=1e-6)
        raw = vector_of(text)
        assert math.isclose(row[0], raw[0] / math.hypot(*raw), rel_tol=1e-6)


def test_parts_run_concurrently(mode: str) -> None:
    """Seven parts of one input each, each answered after 0.2 s: together well under 1.4 s."""

    class Counting(Slow):
        busy = 0
        most = 0
        lock = threading.Lock()

        def _embed(self, request: EmbedRequest) -> EmbedResponse:
            with self.lock:
                type(self).busy += 1
                type(self).most = max(self.most, self.busy)
            try:
                time.sleep(0.2)
                return TableEmbedder._embed(self, request)
            finally:
                with self.lock:
                    type(self).busy -= 1

        async def _async_embed(self, request: EmbedRequest) -> EmbedResponse:
            return await asyncio.to_thread(self._embed, request)

    caps = ModelCapabilities(embeddings=True, max_embed_inputs=1)

    class Plugin:
        @hookimpl
        def llmport_providers(self, register: Callable[[ProviderInfo], None]) -> None:
            register(ProviderInfo(prefix="table", factory=Counting, models={"*": caps}))

    rt = Runtime(model="table:embed", hooks=[Plugin()])
    embed(rt, mode, [f"t{i}" for i in range(7)])
    assert Counting.most > 1


def test_parts_are_split_by_tokens_per_request() -> None:
    with LoopbackServer([Reply(handler=_echo)], repeat=True) as srv:
        rt = hundred_runtime(srv.url, max_embed_request_tokens=4)
        rt.embed([f"text-{i}" for i in range(5)], model="hundred:embedder")  # 2 tokens each
        assert sorted(len(r.json()["input"]) for r in srv.requests) == [1, 2, 2]  # concurrent


def _echo(request: RecordedRequest) -> Reply:
    return Reply(json=answer(request.json()))


def test_a_limit_bounds_the_parts_in_flight(mode: str) -> None:
    """``Limit(concurrency=1)``: the seven parts go one at a time, all of them answered."""
    from llmport import Limit

    class Counting(TableEmbedder):
        busy = 0
        most = 0
        lock = threading.Lock()

        def _embed(self, request: EmbedRequest) -> EmbedResponse:
            with self.lock:
                type(self).busy += 1
                type(self).most = max(self.most, self.busy)
            try:
                time.sleep(0.02)
                return TableEmbedder._embed(self, request)
            finally:
                with self.lock:
                    type(self).busy -= 1

        async def _async_embed(self, request: EmbedRequest) -> EmbedResponse:
            return await asyncio.to_thread(self._embed, request)

    caps = ModelCapabilities(embeddings=True, max_embed_inputs=1)

    class Plugin:
        @hookimpl
        def llmport_providers(self, register: Callable[[ProviderInfo], None]) -> None:
            register(ProviderInfo(prefix="table", factory=Counting, models={"*": caps}))

    rt = Runtime(model="table:embed", hooks=[Plugin()], limits={"table:*": Limit(concurrency=1)})
    result = embed(rt, mode, [f"t{i}" for i in range(7)])
    assert len(result) == 7 and Counting.most == 1


def test_observers_see_the_call_and_its_agentic_function(table: TablePlugin) -> None:
    seen: list[tuple[str, str | None, int]] = []

    class Observer:
        @hookimpl
        def llmport_observe(self, event: str, payload: dict[str, Any], info: Any) -> None:
            if event.startswith("embed_"):
                seen.append((event, info.function, payload["inputs"]))

    rt = Runtime(model="table:embed", hooks=[table, Observer()])

    @agentic_function
    def index(texts: list[str]) -> int:
        return len(rt.embed(texts))

    with Session():
        index(["a", "b", "c"])
    rt.embed(["d"])
    assert seen == [
        ("embed_start", "index", 3),
        ("embed_end", "index", 3),
        ("embed_start", None, 1),
        ("embed_end", None, 1),
    ]


def test_a_cache_opened_from_a_path_is_closed_with_the_runtime(
    table: TablePlugin, tmp_path: Any
) -> None:
    from llmport import SessionError

    rt = Runtime(model="table:embed", hooks=[table], embed_cache=str(tmp_path / "c.sqlite"))
    rt.embed(["a"])
    store = rt.embed_cache.store if rt.embed_cache is not None else None
    rt.close()
    with pytest.raises(SessionError, match="closed database"):
        store.get(("x",), "y")  # type: ignore[union-attr]
    given = MemoryStore()
    Runtime(model="table:embed", hooks=[table], embed_cache=given).close()
    given.put(("x",), "y", 1)  # a store the caller gave stays theirs
