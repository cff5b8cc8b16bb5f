"""``Runtime(embed_cache="postgresql://...")``: vectors kept by content in PostgreSQL."""

from __future__ import annotations

import struct
from collections import Counter
from typing import Any

import pytest
from llmport import Runtime
from llmport.messages.estimate import text_tokens
from llmport.provider.config import Config
from llmport.testing import Script, scripted_vector


def runtime(pg_url: str) -> Runtime:
    return Runtime(model="scripted:test", hooks=[Script()], config=Config(), embed_cache=pg_url)


def test_a_reindex_sends_only_the_changed_inputs(pg_url: str) -> None:
    corpus = [f"document {i}" for i in range(200)]
    first = runtime(pg_url).embed(corpus)
    assert first.usage.input_tokens == sum(text_tokens(t) for t in corpus)
    changed = list(corpus)
    for i in range(0, 200, 20):
        changed[i] = f"edited document {i}"
    again = runtime(pg_url).embed(changed)  # another runtime: only the database is shared
    edited = [changed[i] for i in range(0, 200, 20)]
    assert again.usage.input_tokens == sum(text_tokens(t) for t in edited)
    assert again.usage.requests == 1
    assert list(again) == [as_float32(scripted_vector(t)) for t in changed]


def as_float32(values: list[float]) -> tuple[float, ...]:
    return struct.unpack(f"<{len(values)}f", struct.pack(f"<{len(values)}f", *values))


def test_a_1000_input_corpus_is_one_query_to_read_and_one_per_part_to_write(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import llmport_postgres.store as pg

    trips = Counter[str]()
    real = pg.with_connection

    def counted(pool: Any, display: str, action: Any, deadline: float) -> Any:
        trips[getattr(action, "__name__", "?")] += 1
        return real(pool, display, action, deadline)

    rt = runtime(pg_url)
    corpus = [f"document {i}" for i in range(1000)]
    monkeypatch.setattr(pg, "with_connection", counted)
    first = rt.embed(corpus)
    assert trips == {"run": 1, "write": first.usage.requests}  # one SELECT ... ANY, one per part
    second = runtime(pg_url)  # a new runtime: the cache is opened (the schema) on first use
    trips.clear()
    again = second.embed(corpus)
    assert again.usage.requests == 0 and trips["run"] == 1 and "write" not in trips
    assert list(again) == [as_float32(scripted_vector(t)) for t in corpus]


def test_get_many_and_put_many(pg_url: str) -> None:
    from llmport_postgres.store import PostgresKV

    store = PostgresKV(pg_url)
    store.put_many(("ns",), {"a": {"n": 1}, "b": [2]})
    store.put("ns", "c", 3)
    found = store.get_many(("ns",), ["a", "b", "c", "missing", "a"])
    assert {k: item.value for k, item in found.items()} == {"a": {"n": 1}, "b": [2], "c": 3}
    assert store.get_many(("other",), ["a"]) == {} and store.get_many(("ns",), []) == {}
