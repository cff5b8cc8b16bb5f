"""The Redis key-value store: the embedding cache and ``RunContext.store`` in Redis."""

from __future__ import annotations

import logging
import struct
import time
from typing import Any

import pytest
from llmport import Runtime
from llmport.errors import OptionError, SessionStoreUnavailable
from llmport.messages.estimate import text_tokens
from llmport.provider.config import Config
from llmport.sessions.kv import open_kv
from llmport.testing import Script, scripted_vector
from llmport_redis import RedisKV


@pytest.fixture
def kv_url(redis_url: str, prefix: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The shared Redis with this test's own key prefix, llmport-redis selected."""
    monkeypatch.setenv("LLMPORT_PLUGINS", "redis")
    return f"{redis_url}?prefix={prefix}"


def runtime(url: str) -> Runtime:
    return Runtime(model="scripted:test", hooks=[Script()], config=Config(), embed_cache=url)


def as_float32(values: list[float]) -> tuple[float, ...]:
    return struct.unpack(f"<{len(values)}f", struct.pack(f"<{len(values)}f", *values))


def test_a_reindex_sends_only_the_changed_inputs(kv_url: str) -> None:
    corpus = [f"document {i}" for i in range(200)]
    first = runtime(kv_url)
    done = first.embed(corpus)
    first.close()
    assert done.usage.input_tokens == sum(text_tokens(t) for t in corpus)
    changed = list(corpus)
    for i in range(0, 200, 20):
        changed[i] = f"edited document {i}"
    again = runtime(kv_url)  # another runtime: only Redis is shared
    result = again.embed(changed)
    again.close()
    edited = [changed[i] for i in range(0, 200, 20)]
    assert result.usage.input_tokens == sum(text_tokens(t) for t in edited)
    assert result.usage.requests == 1
    assert list(result) == [as_float32(scripted_vector(t)) for t in changed]


def test_the_url_opens_the_store_the_hook_registers(kv_url: str) -> None:
    store = open_kv(kv_url)
    assert isinstance(store, RedisKV)
    store.close()


def test_put_get_delete_and_search_newest_first(kv_url: str) -> None:
    store = RedisKV.from_url(kv_url)
    store.put(("users", "ada"), "facts", {"likes": "tea"})
    store.put(("users", "bob"), "facts", {"likes": "coffee"})
    store.put(("teams",), "facts", {"likes": "tea"})
    item = store.get(("users", "ada"), "facts")
    assert item is not None and item.value == {"likes": "tea"}
    assert item.namespace == ("users", "ada") and item.updated <= time.time()
    assert store.get(("users", "ada"), "other") is None
    found = store.search(("users",))
    assert [i.namespace for i in found] == [("users", "bob"), ("users", "ada")]
    assert [i.namespace for i in store.search(filter={"likes": "tea"})] == [
        ("teams",),
        ("users", "ada"),
    ]
    assert len(store.search(limit=1)) == 1
    store.delete(("users", "ada"), "facts")
    assert store.get(("users", "ada"), "facts") is None
    assert [i.namespace for i in store.search(("users",))] == [("users", "bob")]
    with pytest.raises(OptionError):
        store.put(("users",), "k", {1, 2})  # not JSON
    with pytest.raises(OptionError):
        store.get(("users",), "")
    store.close()


def test_redis_down_is_a_typed_error_naming_it_in_bounded_time(mute_port: int) -> None:
    store = RedisKV.from_url(f"redis://:sekrit-pass@127.0.0.1:{mute_port}/0?timeout=0.4")
    started = time.monotonic()
    with pytest.raises(SessionStoreUnavailable) as caught:
        store.get(("a",), "b")
    assert time.monotonic() - started < 3.0  # two tries of 0.1 s each, far under
    assert caught.value.service == f"Redis at 127.0.0.1:{mute_port}"
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    assert "sekrit-pass" not in str(caught.value)
    store.close()


def test_an_embed_call_never_fails_for_a_cache_that_is_down(
    mute_port: int, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("LLMPORT_PLUGINS", "redis")
    rt = runtime(f"redis://127.0.0.1:{mute_port}/0?timeout=0.4")
    with caplog.at_level(logging.WARNING, logger="llmport"):
        result = rt.embed(["one", "two"])
    rt.close()
    assert list(result) == [as_float32(scripted_vector(t)) for t in ("one", "two")]
    assert "embedding cache" in caplog.text


def test_a_1000_input_corpus_is_one_pipeline_to_read_and_one_per_part_to_write(
    kv_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    trips: list[str] = []
    real = RedisKV._run

    def counted(self: RedisKV, operation: Any) -> Any:
        trips.append(operation.__name__)
        return real(self, operation)

    monkeypatch.setattr(RedisKV, "_run", counted)
    corpus = [f"document {i}" for i in range(1000)]
    rt = runtime(kv_url)
    first = rt.embed(corpus)
    rt.close()
    assert trips == ["read"] + ["write"] * first.usage.requests
    trips.clear()
    rt = runtime(kv_url)
    again = rt.embed(corpus)
    rt.close()
    assert again.usage.requests == 0 and trips == ["read"]
    assert list(again) == [as_float32(scripted_vector(t)) for t in corpus]


def test_get_many_and_put_many(kv_url: str) -> None:
    store = RedisKV.from_url(kv_url)
    store.put_many(("ns",), {"a": {"n": 1}, "b": [2]})
    store.put("ns", "c", 3)
    found = store.get_many(("ns",), ["a", "b", "c", "missing"])
    assert {k: item.value for k, item in found.items()} == {"a": {"n": 1}, "b": [2], "c": 3}
    assert sorted(item.key for item in store.search(("ns",), limit=10)) == ["a", "b", "c"]
    assert store.get_many(("ns",), []) == {}
    store.close()
