"""``Runtime(embed_cache="postgresql://...")``: vectors kept by content in PostgreSQL."""

from __future__ import annotations

import struct

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
