"""A long list on Gemini's batch endpoint (100 per request): split, sent, joined in order.

2,500 inputs are 25 ``batchEmbedContents`` requests; each input's vector
carries its own number (the loopback server reads it from the text), so the
join is checked input by input; the usage is the sum of the 25 answers'; one
part answered 429 then 200 is retried alone.

CJK text is split by its tokens too: on Voyage AI (320,000 tokens per
request), 600 Chinese inputs of 600 characters (~1 token each) are two
requests, not one of ~360,000 tokens the API would refuse; one input over the
model's 32,000 tokens is refused before the wire.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from llmport import Backoff, Runtime
from llmport.errors import ContentError
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply

COUNT = 2500
MODEL = "gemini:gemini-embedding-001"
#: The part whose first input is this one is refused once with a 429.
THROTTLED = "input 1700"


class Vendor:
    """Answers each batch with vectors ``[n, 0.5, -1]`` for ``input n``; 429s one part once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.throttled = False
        self.batches: list[list[int]] = []

    def reply(self, request: RecordedRequest) -> Reply:
        texts = [r["content"]["parts"][0]["text"] for r in request.json()["requests"]]
        with self.lock:
            if texts[0] == THROTTLED and not self.throttled:
                self.throttled = True
                return Reply(
                    status=429,
                    headers={"retry-after": "0"},
                    json={
                        "error": {
                            "code": 429,
                            "message": "Resource exhausted",
                            "status": "RESOURCE_EXHAUSTED",
                        }
                    },
                )
            self.batches.append([int(text.split()[1]) for text in texts])
        rows = [{"values": [float(text.split()[1]), 0.5, -1.0]} for text in texts]
        return Reply(json={"embeddings": rows, "usageMetadata": {"promptTokenCount": len(texts)}})


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_2500_inputs_are_25_requests_joined_in_input_order(mode: str) -> None:
    vendor = Vendor()
    inputs = [f"input {i}" for i in range(COUNT)]
    with LoopbackServer([Reply(handler=vendor.reply)], repeat=True) as server:
        rt = Runtime(
            providers={"gemini": {"api_key": "test-key", "base_url": server.url}},
            backoff=Backoff.none(),
            max_retries=3,
        )
        kw: dict[str, Any] = {"model": MODEL, "dimensions": 3}
        result = rt.embed(inputs, **kw) if mode == "sync" else asyncio.run(rt.aembed(inputs, **kw))
        rt.close()
    assert len(server.requests) == 26  # 25 parts, one of them twice
    assert sorted(batch[0] for batch in vendor.batches) == list(range(0, COUNT, 100))
    assert all(len(batch) == 100 for batch in vendor.batches)
    assert vendor.throttled
    assert [row[0] for row in result] == [float(i) for i in range(COUNT)]
    assert result.usage.input_tokens == COUNT
    assert (len(result), result.dimensions) == (COUNT, 3)


#: Voyage AI's voyage-3.5: at most 320,000 tokens and 1,000 inputs per request, 32,000
#: tokens per input (docs.voyageai.com/docs/embeddings).
VOYAGE_REQUEST_TOKENS = 320_000


def voyage_reply(request: RecordedRequest) -> Reply:
    body = request.json()
    data = [
        {"object": "embedding", "embedding": "AACAPwAAAEAAAEBA", "index": i}  # [1, 2, 3]
        for i in range(len(body["input"]))
    ]
    usage = {"total_tokens": sum(len(text) for text in body["input"])}
    return Reply(json={"object": "list", "data": data, "model": body["model"], "usage": usage})


def voyage_runtime(server: LoopbackServer) -> Runtime:
    return Runtime(
        providers={"voyage": {"api_key": "test-key", "base_url": server.url}},
        backoff=Backoff.none(),
    )


def test_cjk_inputs_are_split_by_their_tokens_under_the_vendors_limit() -> None:
    # 601 CJK characters each, the first one telling the inputs apart.
    inputs = [chr(0x4E00 + i) + "漢字かな한글" * 100 for i in range(600)]
    with LoopbackServer([Reply(handler=voyage_reply)], repeat=True) as server:
        rt = voyage_runtime(server)
        result = rt.embed(inputs, model="voyage:voyage-3.5")
        rt.close()
        sent = [r.json()["input"] for r in server.requests]
    # Each CJK character is about one token: no request may carry more than the limit's worth.
    assert len(sent) == 2
    assert all(sum(len(text) for text in part) <= VOYAGE_REQUEST_TOKENS for part in sent)
    in_order = sorted(sent, key=lambda part: part[0])  # the parts are sent concurrently
    assert [text for part in in_order for text in part] == inputs
    assert len(result) == 600


def test_a_cjk_input_over_the_models_limit_is_refused_before_the_wire() -> None:
    with LoopbackServer([Reply(handler=voyage_reply)], repeat=True) as server:
        rt = voyage_runtime(server)
        with pytest.raises(ContentError, match="32,000 per input"):
            rt.embed(["short", "漢" * 40_000], model="voyage:voyage-3.5")  # ~40,000 tokens
        rt.close()
        assert server.requests == []
