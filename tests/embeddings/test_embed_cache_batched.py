"""The embedding cache reads and writes the key-value store in batches, not key by key."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from llmport import Runtime
from llmport.provider.config import Config
from llmport.sessions.kv import Item, MemoryStore, SqliteKV, get_many, put_many
from llmport.testing import Script


class Counted:
    """A store that counts every call made to the store it wraps (one call: one round trip)."""

    def __init__(self, inner: Any, *, batched: bool = True) -> None:
        self.inner, self.calls = inner, Counter[str]()
        if batched:
            self.get_many, self.put_many = self._get_many, self._put_many

    def get(self, namespace: Any, key: str) -> Item | None:
        self.calls["get"] += 1
        found: Item | None = self.inner.get(namespace, key)
        return found

    def put(self, namespace: Any, key: str, value: Any) -> None:
        self.calls["put"] += 1
        self.inner.put(namespace, key, value)

    def _get_many(self, namespace: Any, keys: Iterable[str]) -> dict[str, Item]:
        self.calls["get_many"] += 1
        return get_many(self.inner, namespace, keys)

    def _put_many(self, namespace: Any, values: Mapping[str, Any]) -> None:
        self.calls["put_many"] += 1
        put_many(self.inner, namespace, values)


def runtime(store: Any) -> Runtime:
    return Runtime(model="scripted:test", hooks=[Script()], config=Config(), embed_cache=store)


CORPUS = [f"document {i}" for i in range(1000)]


def test_a_1000_input_corpus_is_one_read_and_one_write_per_part() -> None:
    store = Counted(MemoryStore())
    first = runtime(store).embed(CORPUS)
    parts = first.usage.requests
    assert store.calls == {"get_many": 1, "put_many": parts}
    store.calls.clear()
    changed = [t if i % 100 else f"edited {i}" for i, t in enumerate(CORPUS)]
    again = runtime(store).embed(changed)
    assert again.usage.requests == 1  # the 10 changed inputs, one request
    assert store.calls == {"get_many": 1, "put_many": 1}


def test_a_store_without_batches_is_read_key_by_key() -> None:
    store = Counted(MemoryStore(), batched=False)
    runtime(store).embed(CORPUS[:50])
    assert store.calls == {"get": 50, "put": 50}
    store.calls.clear()
    assert runtime(store).embed(CORPUS[:50]).usage.requests == 0
    assert store.calls == {"get": 50}


@pytest.mark.parametrize("make", [MemoryStore, "sqlite"])
def test_get_many_returns_the_kept_keys_across_sqlite_chunks(make: Any, tmp_path: Any) -> None:
    store = SqliteKV(str(tmp_path / "kv.sqlite")) if make == "sqlite" else make()
    keys = [f"k{i}" for i in range(2500)]  # more than one IN (...) chunk
    store.put_many(("ns",), {k: {"n": i} for i, k in enumerate(keys) if i % 3})
    found = store.get_many(("ns",), [*keys, "missing", "k1"])
    assert sorted(found) == sorted(k for i, k in enumerate(keys) if i % 3)
    assert found["k1"].value == {"n": 1} and found["k1"].namespace == ("ns",)
    assert store.get_many(("other",), keys) == {}
    assert store.get(("ns",), "k2") is not None and store.get(("ns",), "k3") is None


def test_sqlite_put_many_is_one_transaction(tmp_path: Any) -> None:
    store = SqliteKV(str(tmp_path / "kv.sqlite"))
    with pytest.raises(Exception, match="JSON"):
        store.put_many(("ns",), {"a": 1, "b": object()})  # the second is not JSON
    assert store.get_many(("ns",), ["a", "b"]) == {}  # nothing half-written
