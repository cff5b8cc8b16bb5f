"""rt.embed / rt.aembed on every target: embeds where the vendor does, refuses where not.

Per target of :data:`embed_targets.EMBED_TARGETS` (the table a vendor joins by
adding its row), against the loopback "vendor" answering in the target's own
format: the vectors come back in input order with one usage; a part answering
429 is retried alone; a hostile 2xx (a wrong count of vectors, an error
object, ``{}``) is a :class:`MalformedResponseError`; a vendor that starts its
answer and goes silent is given up at ``Runtime(timeout=)`` (a
:class:`ProviderTimeoutError`) or the call's ``deadline=`` (a
:class:`RunTimeout`), long before it hangs up; bad inputs fail typed before
any request. Every other target refuses typed before any request,
with the reason :data:`embed_targets.NO_EMBEDDINGS` gives.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from embed_targets import DIMS, EMBED_TARGETS, NO_EMBEDDINGS, EmbedTarget, vector_of
from llmport import Embeddings, Runtime
from llmport.errors import (
    ContentError,
    ExecFailed,
    MalformedResponseError,
    ProviderTimeoutError,
    RunTimeout,
    UnsupportedContentError,
    UnsupportedFeatureError,
)
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from support.media_samples import JPEG, PNG
from wire import EMBED_ONLY_TARGETS, PROFILE_TARGETS, TARGETS, Wire

Make = Callable[..., Runtime]
ALL = TARGETS + PROFILE_TARGETS + EMBED_ONLY_TARGETS
EMBEDDING = [w for w in ALL if w.id in EMBED_TARGETS]
REFUSING = [w for w in ALL if w.id not in EMBED_TARGETS]
TEXTS = ["alpha", "beta", "gamma", "delta", "epsilon"]


async def embed(rt: Runtime, mode: str, inputs: Any, **kw: Any) -> Embeddings:
    if mode == "sync":
        return rt.embed(inputs, **kw)
    return await rt.aembed(inputs, **kw)


def test_every_target_embeds_or_says_why_not() -> None:
    ids = {w.id for w in ALL}
    assert set(EMBED_TARGETS) <= ids and set(NO_EMBEDDINGS) <= ids
    assert set(EMBED_TARGETS) | set(NO_EMBEDDINGS) == ids
    assert not set(EMBED_TARGETS) & set(NO_EMBEDDINGS)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("wire", EMBEDDING, ids=str)
async def test_vectors_come_back_in_input_order_with_one_usage(
    wire: Wire, mode: str, runtime: Make
) -> None:
    target = EMBED_TARGETS[wire.id]
    with LoopbackServer([Reply(handler=target.answer)], repeat=True) as server:
        result = await embed(runtime(wire, server), mode, TEXTS, model=target.model)
        sent = [target.inputs(r) for r in server.requests]
        paths = [r.path.split("?")[0] for r in server.requests]
    assert (len(result), result.dimensions) == (len(TEXTS), DIMS)
    assert list(result) == [vector_of(t) for t in TEXTS]
    assert sorted(t for inputs in sent for t in inputs) == sorted(TEXTS)
    assert all(p.endswith(target.path) for p in paths), paths
    assert result.usage.input_tokens == len(TEXTS) * target.tokens_per_input
    assert result.usage.requests == len(sent)


@pytest.mark.parametrize("wire", EMBEDDING[:4], ids=str)
async def test_a_part_answering_429_is_retried_alone(wire: Wire, runtime: Make) -> None:
    target = EMBED_TARGETS[wire.id]
    throttled: list[RecordedRequest] = []

    def answer(request: RecordedRequest) -> Reply:
        if not throttled:
            throttled.append(request)
            return Reply(
                status=429, headers={"retry-after": "0"}, json={"error": {"message": "slow"}}
            )
        return target.answer(request)

    with LoopbackServer([Reply(handler=answer)], repeat=True) as server:
        result = await embed(runtime(wire, server), "async", TEXTS, model=target.model)
        sent = [target.inputs(r) for r in server.requests]
    assert list(result) == [vector_of(t) for t in TEXTS]
    assert sent[0] == sent[1]  # the refused request, sent again as it was


def _one_vector_short(target: EmbedTarget) -> Callable[[RecordedRequest], Reply]:
    def answer(request: RecordedRequest) -> Reply:
        good = target.answer(request)
        count = len(target.inputs(request))
        return Reply(json=_drop_last(good.json, count), headers=good.headers)

    return answer


def _drop_last(body: Any, count: int) -> Any:
    """``body`` with every list of ``count`` items one shorter, wherever the vendor keeps
    its vectors (OpenAI ``data``, Gemini ``embeddings``, Cohere ``embeddings.float``)."""
    if isinstance(body, list):
        return body[:-1] if len(body) == count else body
    if isinstance(body, dict):
        return {key: _drop_last(value, count) for key, value in body.items()}
    return body


def _one_vector_too_many(target: EmbedTarget) -> Callable[[RecordedRequest], Reply]:
    def answer(request: RecordedRequest) -> Reply:
        good = target.answer(request)
        count = len(target.inputs(request))
        return Reply(json=_repeat_last(good.json, count), headers=good.headers)

    return answer


def _repeat_last(body: Any, count: int) -> Any:
    """``body`` with the last item of every list of ``count`` items repeated (one vector more)."""
    if isinstance(body, list):
        return [*body, body[-1]] if len(body) == count else body
    if isinstance(body, dict):
        return {key: _repeat_last(value, count) for key, value in body.items()}
    return body


HOSTILE: dict[str, Callable[[EmbedTarget], Callable[[RecordedRequest], Reply]]] = {
    "empty object": lambda t: lambda r: Reply(json={}),
    "error object": lambda t: lambda r: Reply(json={"error": {"message": "overloaded"}}),
    "one vector short": _one_vector_short,
    "one vector too many": _one_vector_too_many,
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("wire", EMBEDDING, ids=str)
async def test_a_hostile_2xx_is_malformed(wire: Wire, case: str, runtime: Make) -> None:
    target = EMBED_TARGETS[wire.id]
    reply = Reply(handler=HOSTILE[case](target))
    with LoopbackServer([reply], repeat=True) as server, pytest.raises(MalformedResponseError):
        await embed(runtime(wire, server), "sync", TEXTS[:2], model=target.model)


def offered_dimensions(rt: Runtime, model: str) -> int | None:
    """A ``dimensions=`` value ``model`` takes (not the loopback's :data:`DIMS`), or None."""
    provider, name, *_ = rt.resolve(model)
    caps = provider.capabilities(name)
    if not caps.flexible_dimensions:
        return None
    choices = caps.embedding_dimension_choices
    return min(choices) if choices else DIMS + 1


#: The targets whose model takes ``dimensions=`` (their answer of DIMS values is then the
#: wrong size); a fixed-size model's answers meet the count cases above.
SIZED = [w for w in EMBEDDING if offered_dimensions(Runtime(), EMBED_TARGETS[w.id].model)]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("wire", SIZED, ids=str)
async def test_vectors_of_another_size_than_asked_are_malformed(
    wire: Wire, mode: str, runtime: Make
) -> None:
    target = EMBED_TARGETS[wire.id]
    with LoopbackServer([Reply(handler=target.answer)], repeat=True) as server:
        rt = runtime(wire, server)
        asked = offered_dimensions(rt, target.model)
        with pytest.raises(MalformedResponseError, match=f"dimensions={asked}"):
            await embed(rt, mode, TEXTS[:2], model=target.model, dimensions=asked)
        assert len(server.requests) == 1  # the same request gets the same answer: no retry


#: Seconds the stalled vendor stays silent before it hangs up; a bounded call ends long
#: before (its timeout or deadline is 0.3 s: the bound leaves room for a loaded machine).
STALL = 6.0
BOUND = 3.0


def stalled(request: RecordedRequest) -> Reply:
    """The start of an answer, then silence on an open connection."""
    return Reply(body=b'{"data": [', stall=STALL)


#: The timeout on every target in both modes (each vendor's client is cut); the deadline,
#: the core's own, on each target in one mode (they take the modes in turn).
STALL_CASES = [
    pytest.param(w, m, "timeout", id=f"{w.id}-{m}-timeout")
    for w in EMBEDDING
    for m in ("sync", "async")
] + [
    pytest.param(w, ("sync", "async")[i % 2], "deadline", id=f"{w.id}-deadline")
    for i, w in enumerate(EMBEDDING)
]


@pytest.mark.parametrize(("wire", "mode", "limit"), STALL_CASES)
async def test_a_stalled_vendor_is_a_typed_timeout_in_bounded_time(
    wire: Wire, mode: str, limit: str, runtime: Make
) -> None:
    target = EMBED_TARGETS[wire.id]
    with LoopbackServer([Reply(handler=stalled)], repeat=True) as server:
        if limit == "timeout":
            rt, call = runtime(wire, server, max_retries=1, timeout=0.3), {}
        else:
            rt, call = runtime(wire, server, max_retries=1), {"deadline": 0.3}
        started = time.monotonic()
        with pytest.raises((ExecFailed, RunTimeout)) as caught:
            await embed(rt, mode, TEXTS[:2], model=target.model, **call)
        took = time.monotonic() - started
    assert took < BOUND, f"{took:.2f} s: the stalled request was not given up"
    if limit == "timeout":  # every attempt timed out (one here), each a typed timeout
        assert isinstance(caught.value, ExecFailed)
        assert all(isinstance(f.error, ProviderTimeoutError) for f in caught.value.attempts)
    else:
        assert isinstance(caught.value, RunTimeout)


#: An image whose bytes contradict its declared type (JPEG bytes declared PNG).
LYING_IMAGE = {"type": "image", "media_type": "image/png", "data": JPEG}


@pytest.mark.parametrize(
    "bad", ["", [], [1], ["ok", None], b"bytes", [LYING_IMAGE]], ids=lambda b: repr(b)[:40]
)
@pytest.mark.parametrize("wire", EMBEDDING, ids=str)
async def test_bad_inputs_fail_typed_before_any_request(
    wire: Wire, bad: Any, runtime: Make
) -> None:
    with LoopbackServer([], repeat=False) as server:
        with pytest.raises(ContentError):
            await embed(runtime(wire, server), "sync", bad, model=EMBED_TARGETS[wire.id].model)
        assert server.requests == []


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("wire", REFUSING, ids=str)
async def test_a_target_without_embeddings_refuses_typed_before_any_request(
    wire: Wire, mode: str, runtime: Make
) -> None:
    with LoopbackServer([], repeat=False) as server:
        with pytest.raises(UnsupportedFeatureError) as caught:
            await embed(runtime(wire, server), mode, TEXTS, model=wire.model)
        assert server.requests == []
    assert caught.value.feature == "embeddings"


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("wire", EMBEDDING, ids=str)
async def test_an_image_is_embedded_where_documented_and_refused_typed_elsewhere(
    wire: Wire, mode: str, runtime: Make
) -> None:
    target = EMBED_TARGETS[wire.id]
    inputs = ["a caption", [{"type": "image", "data": PNG, "media_type": "image/png"}, "x"]]
    with LoopbackServer([Reply(handler=target.answer)], repeat=True) as server:
        rt = runtime(wire, server)
        if target.media_model is None:
            with pytest.raises(UnsupportedContentError, match="text only"):
                await embed(rt, mode, inputs, model=target.model)
            assert server.requests == []
            return
        result = await embed(rt, mode, inputs, model=target.media_model)
        sent = [target.inputs(r) for r in server.requests]
    assert sent == [["a caption", "img+x"]]
    assert list(result) == [vector_of("a caption"), vector_of("img+x")]
