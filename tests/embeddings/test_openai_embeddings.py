"""OpenAI embeddings through the real plugin: cassettes, splitting, retries, hostile answers."""

from __future__ import annotations

import base64
import json
import math
import struct
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from llmport import Runtime
from llmport.controls.retry import Backoff
from llmport.errors import ContentError, MalformedResponseError, UnsupportedFeatureError
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from llmport_openai.profiles import PROFILES
from make_openai_cassettes import value
from support.embed_helpers import answer, embed, hundred_runtime, identifiable

KEY = "sk-fake-embeddings-0123456789"


# -- the recorded samples, replayed through the real plugin and SDK ---------------------


@pytest.mark.parametrize(
    ("name", "inputs", "kw", "dims", "tokens"),
    [
        ("openai/embed_documents.yaml", ["hello", "world"], {}, 1536, 2),
        ("openai/embed_dimensions.yaml", ["Hello, world!"], {"dimensions": 128}, 128, 4),
    ],
)
def test_recorded_sample_replays(
    cassette: Any,
    mode: str,
    name: str,
    inputs: list[str],
    kw: dict[str, Any],
    dims: int,
    tokens: int,
) -> None:
    rt = Runtime(providers={"openai": {"api_key": KEY}})
    with cassette(name) as cass:
        result = embed(rt, mode, inputs, model="openai:text-embedding-3-small", **kw)
    sent = json.loads(cass.requests[0].body)
    recorded = json.loads(cass.data[0][0].body)
    assert sent == recorded  # the recorded shape: base64 asked for, dimensions where given
    assert cass.requests[0].path == "/v1/embeddings"
    assert (len(result), result.dimensions) == (len(inputs), dims)
    assert result.usage.input_tokens == tokens and result.model == "text-embedding-3-small"
    for i, row in enumerate(result):
        assert row == tuple(value(i, j) for j in range(dims))
    assert isinstance(result.data, bytearray) and len(result.data) == len(inputs) * dims * 4


# -- the loopback server: splitting, order, retries --------------------------------------


class Vendor:
    """Answers each request with identifiable vectors; one part is refused once with a 429."""

    def __init__(self, throttle: str | None = None) -> None:
        self.throttle = throttle
        self.lock = threading.Lock()
        self.throttled = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        body = request.json()
        with self.lock:
            if self.throttle in body["input"] and not self.throttled:
                self.throttled += 1
                return Reply(status=429, json={"error": {"message": "slow down", "type": "rate"}})
        return Reply(json=answer(body))


@pytest.fixture
def vendor_server() -> Iterator[tuple[LoopbackServer, Vendor]]:
    vendor = Vendor(throttle="text-1234")
    with LoopbackServer([Reply(handler=vendor)], repeat=True) as server:
        yield server, vendor


def test_2500_inputs_in_25_requests_joined_in_order_with_one_retry(
    vendor_server: tuple[LoopbackServer, Vendor], mode: str
) -> None:
    server, vendor = vendor_server
    rt = hundred_runtime(server.url)
    texts = [f"text-{i}" for i in range(2500)]
    result = embed(rt, mode, texts, model="hundred:embedder")
    assert len(result) == 2500 and result.dimensions == 4
    assert list(result) == [tuple(identifiable(t)) for t in texts]
    bodies = [r.json() for r in server.requests]
    assert len(bodies) == 26  # 25 parts, one of them sent twice
    assert all(r.path == "/embeddings" for r in server.requests)
    sizes = sorted(len(b["input"]) for b in bodies)
    assert sizes == [100] * 26
    retried = [b["input"] for b in bodies if "text-1234" in b["input"]]
    assert retried == [texts[1200:1300]] * 2  # the throttled part alone, resent as it was
    others = [b["input"][0] for b in bodies if "text-1234" not in b["input"]]
    assert (
        sorted(others, key=lambda t: int(t.split("-")[1])) == texts[0:1200:100] + texts[1300::100]
    )
    assert vendor.throttled == 1
    assert result.usage.input_tokens == 2500 and result.usage.requests == 25
    assert rt.usage.input_tokens == 2500


def test_a_failed_part_fails_the_call_naming_its_inputs(mode: str) -> None:
    def handler(request: RecordedRequest) -> Reply:
        body = request.json()
        if "text-250" in body["input"]:
            return Reply(status=400, json={"error": {"message": "bad input", "type": "invalid"}})
        return Reply(json=answer(body))

    with LoopbackServer([Reply(handler=handler)], repeat=True) as server:
        rt = hundred_runtime(server.url)
        with pytest.raises(Exception, match="inputs 200-299 of 300") as caught:
            embed(rt, mode, [f"text-{i}" for i in range(300)], model="hundred:embedder")
    assert caught.value.embed_inputs == range(200, 300)  # type: ignore[attr-defined]
    assert type(caught.value).__name__ == "BadRequestError"


def test_floats_are_read_where_the_service_answers_floats(mode: str) -> None:
    def handler(request: RecordedRequest) -> Reply:
        return Reply(json=answer(request.json(), b64=False))

    with LoopbackServer([Reply(handler=handler)], repeat=True) as server:
        rt = Runtime(
            providers={"lmstudio": {"base_url": server.url + "/v1"}}, backoff=Backoff.none()
        )
        result = embed(rt, mode, ["text-1", "text-22"], model="lmstudio:nomic-embed")
        sent = server.requests[0].json()
    assert "encoding_format" not in sent  # LM Studio does not document base64
    assert list(result) == [tuple(identifiable("text-1")), tuple(identifiable("text-22"))]


# -- hostile answers: a 2xx that is not vectors for the inputs --------------------------


def _b64(*values: float) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


HOSTILE = {
    "wrong count": {"data": [{"index": 0, "embedding": _b64(1.0, 2.0)}], "usage": {}},
    "wrong dimensions": {
        "data": [
            {"index": 0, "embedding": _b64(1.0, 2.0)},
            {"index": 1, "embedding": _b64(1.0, 2.0, 3.0)},
        ]
    },
    "nan": {
        "data": [
            {"index": 0, "embedding": _b64(1.0, math.nan)},
            {"index": 1, "embedding": _b64(1.0, 2.0)},
        ]
    },
    "nan as floats": {
        "data": [{"index": 0, "embedding": [1.0, "NaN"]}, {"index": 1, "embedding": [1.0, 2.0]}]
    },
    "error object": {"error": {"message": "model overloaded", "type": "server_error"}},
    "empty object": {},
    "not base64": {"data": [{"index": 0, "embedding": "%%%"}, {"index": 1, "embedding": "%%%"}]},
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_answers_are_malformed(case: str, mode: str) -> None:
    with LoopbackServer([Reply(json=HOSTILE[case])], repeat=True) as server:
        rt = Runtime(
            providers={"openai": {"base_url": server.url + "/v1", "api_key": KEY}},
            backoff=Backoff.none(),
        )
        with pytest.raises(MalformedResponseError) as caught:
            embed(rt, mode, ["a", "b"], model="openai:text-embedding-3-small")
    error = caught.value
    chain: BaseException | None = error
    while chain is not None:  # I1: no foreign exception anywhere in the chain
        assert chain.__module__.startswith("llmport"), chain
        chain = chain.__cause__ or chain.__context__
    assert KEY not in str(error)


def test_parts_answering_different_sizes_are_malformed(mode: str) -> None:
    def handler(request: RecordedRequest) -> Reply:
        body = request.json()
        width = 2 if "text-0" in body["input"] else 3
        data = [
            {"index": i, "embedding": _b64(*([1.0] * width))} for i in range(len(body["input"]))
        ]
        return Reply(json={"data": data})

    with LoopbackServer([Reply(handler=handler)], repeat=True) as server:
        rt = hundred_runtime(server.url)
        with pytest.raises(MalformedResponseError, match="dimensions"):
            embed(rt, mode, [f"text-{i}" for i in range(150)], model="hundred:embedder")


# -- checks before the wire -------------------------------------------------------------


def test_dimensions_refused_on_ada(mute_port: int) -> None:
    rt = Runtime(
        providers={"openai": {"base_url": f"http://127.0.0.1:{mute_port}", "api_key": KEY}}
    )
    with pytest.raises(UnsupportedFeatureError, match=r"fixed \(it always answers 1536\)"):
        rt.embed(["x"], model="openai:text-embedding-ada-002", dimensions=256)
    with pytest.raises(UnsupportedFeatureError, match="at most 1536"):
        rt.embed(["x"], model="openai:text-embedding-3-small", dimensions=2048)


def test_an_over_long_input_is_refused_with_index_and_tokens(mute_port: int) -> None:
    rt = Runtime(
        providers={"openai": {"base_url": f"http://127.0.0.1:{mute_port}", "api_key": KEY}}
    )
    texts = ["short", "x" * 40_000]
    with pytest.raises(ContentError, match=r"content block 1: ~10,000 tokens \(estimated\)"):
        rt.embed(texts, model="openai:text-embedding-3-small")


def test_openai_splits_by_its_documented_limits() -> None:
    from llmport.engine.embed import split_inputs

    caps = (
        Runtime().resolve("openai:text-embedding-3-small")[0].capabilities("text-embedding-3-small")
    )
    assert (caps.max_embed_inputs, caps.max_embed_request_tokens) == (2048, 300_000)
    many = ["word"] * 5000  # 1 token each: split by count
    assert split_inputs(many, caps) == [(0, 2048), (2048, 4096), (4096, 5000)]
    big = ["x" * 32_000] * 40  # 8,000 tokens each: 37 per request fit in 300,000
    assert split_inputs(big, caps) == [(0, 37), (37, 40)]


def test_every_profile_embeds_or_refuses_typed_with_its_document() -> None:
    embedding = {
        p for p, profile in PROFILES.items() if profile.embed_models or profile.embed_any_model
    }
    assert embedding == {
        "ollama",
        "vllm",
        "lmstudio",
        "openrouter",
        "mistral",
        "together",
        "fireworks",
    }
    for prefix, profile in PROFILES.items():
        assert profile.embed_docs.startswith("https://"), prefix
        assert bool(profile.embed_refusal) != (prefix in embedding), prefix
    rt = Runtime()
    for prefix in sorted(set(PROFILES) - embedding):
        with pytest.raises(UnsupportedFeatureError, match=PROFILES[prefix].embed_refusal[:20]):
            rt.embed(["x"], model=f"{prefix}:anything")


def test_input_type_is_dropped_and_vendor_fields_merged_for_openai(mode: str) -> None:
    with LoopbackServer(
        [Reply(handler=lambda r: Reply(json=answer(r.json())))], repeat=True
    ) as srv:
        rt = Runtime(providers={"openai": {"base_url": srv.url + "/v1", "api_key": KEY}})
        embed(
            rt,
            mode,
            ["text-1"],
            model="openai:text-embedding-3-small",
            input_type="query",
            vendor={"openai": {"user": "u-42"}},
        )
        body = srv.requests[0].json()
    assert body == {
        "model": "text-embedding-3-small",
        "input": ["text-1"],
        "encoding_format": "base64",
        "user": "u-42",
    }


def test_vectors_of_another_size_than_asked_are_malformed(mode: str) -> None:
    # A server that ignores dimensions=: 4 values came back for dimensions=2.
    with LoopbackServer(
        [Reply(handler=lambda r: Reply(json=answer(r.json())))], repeat=True
    ) as srv:
        rt = Runtime(providers={"openai": {"base_url": srv.url + "/v1", "api_key": KEY}})
        with pytest.raises(MalformedResponseError, match="4 values for dimensions=2"):
            embed(rt, mode, ["text-1"], model="openai:text-embedding-3-small", dimensions=2)
