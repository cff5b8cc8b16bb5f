"""rt.generate_image / rt.agenerate_image on every target: images where the vendor has an
image endpoint, a typed refusal before any request everywhere else.

Per target of :data:`image_targets.IMAGE_TARGETS`, against the loopback "vendor"
answering in the target's documented shape: the images come back (as many as
asked, PNG, the bytes sent) with the request's usage; a 429 is retried; a
hostile 2xx (one image too few, an error object, ``{}``) is a
:class:`MalformedResponseError`; a vendor that starts its answer and goes
silent is given up at ``Runtime(timeout=)`` or the call's ``deadline=``; bad
inputs fail typed before any request. Every other target refuses typed before
any request, with the reason :data:`image_targets.NO_IMAGES` gives.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from image_targets import IMAGE_TARGETS, NO_IMAGES, PNG, ImageTarget, asked
from llmport import Images, Runtime
from llmport.errors import (
    ContentError,
    ExecFailed,
    MalformedResponseError,
    OptionError,
    ProviderTimeoutError,
    RunTimeout,
    UnsupportedFeatureError,
)
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from wire import EMBED_ONLY_TARGETS, PROFILE_TARGETS, TARGETS, Wire

Make = Callable[..., Runtime]
ALL = TARGETS + PROFILE_TARGETS + EMBED_ONLY_TARGETS
IMAGING = [w for w in ALL if w.id in IMAGE_TARGETS]
REFUSING = [w for w in ALL if w.id not in IMAGE_TARGETS]


async def generate(rt: Runtime, mode: str, prompt: Any, **kw: Any) -> Images:
    if mode == "sync":
        return rt.generate_image(prompt, **kw)
    return await rt.agenerate_image(prompt, **kw)


def test_every_target_generates_or_says_why_not() -> None:
    ids = {w.id for w in ALL}
    assert set(IMAGE_TARGETS) | set(NO_IMAGES) == ids
    assert not set(IMAGE_TARGETS) & set(NO_IMAGES)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("wire", IMAGING, ids=str)
async def test_images_come_back_as_asked(wire: Wire, mode: str, runtime: Make) -> None:
    target = IMAGE_TARGETS[wire.id]
    with LoopbackServer([Reply(handler=target.answer)]) as server:
        images = await generate(runtime(wire, server), mode, "a fox", model=target.model, n=2)
        (request,) = server.requests
    assert [block.data for block in images] == [PNG, PNG]
    assert {block.media_type for block in images} == {"image/png"}
    assert request.path.split("?")[0].endswith(target.path) and asked(request) == 2
    assert images.usage.requests == 1


@pytest.mark.parametrize("wire", IMAGING, ids=str)
async def test_a_429_is_retried(wire: Wire, runtime: Make) -> None:
    target = IMAGE_TARGETS[wire.id]
    throttled = Reply(status=429, headers={"retry-after": "0"}, json={"error": {"message": "x"}})
    with LoopbackServer([throttled, Reply(handler=target.answer)]) as server:
        images = await generate(runtime(wire, server), "async", "a fox", model=target.model)
        assert len(server.requests) == 2
    assert len(images) == 1


def _one_too_few(target: ImageTarget) -> Callable[[RecordedRequest], Reply]:
    def answer(request: RecordedRequest) -> Reply:
        reply = target.answer(request)
        body = dict(reply.json)
        for key in ("data", "predictions", "images"):
            if key in body:
                body[key] = body[key][:-1]
        return Reply(json=body)

    return answer


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("case", ["one-too-few", "error-object", "empty"])
@pytest.mark.parametrize("wire", IMAGING, ids=str)
async def test_a_hostile_2xx_is_malformed(wire: Wire, case: str, mode: str, runtime: Make) -> None:
    target = IMAGE_TARGETS[wire.id]
    replies = {
        "one-too-few": Reply(handler=_one_too_few(target)),
        "error-object": Reply(json={"error": {"message": "no", "code": 500}}),
        "empty": Reply(json={}),
    }
    with LoopbackServer([replies[case]], repeat=True) as server:
        rt = runtime(wire, server, max_retries=1)
        with pytest.raises((MalformedResponseError, ExecFailed)) as caught:
            await generate(rt, mode, "a fox", model=target.model, n=2)
    error = caught.value
    last = error.attempts[-1].error if isinstance(error, ExecFailed) else error
    assert isinstance(last, MalformedResponseError)


#: Seconds the stalled vendor stays silent before it hangs up; a bounded call ends long
#: before (its timeout or deadline is 0.3 s: the bound leaves room for a loaded machine).
STALL = 6.0
BOUND = 3.0


def stalled(request: RecordedRequest) -> Reply:
    """The start of an answer, then silence on an open connection."""
    return Reply(body=b'{"data": [', stall=STALL)


@pytest.mark.parametrize("limit", ["timeout", "deadline"])
@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("wire", IMAGING, ids=str)
async def test_a_stalled_vendor_is_a_typed_timeout_in_bounded_time(
    wire: Wire, mode: str, limit: str, runtime: Make
) -> None:
    target = IMAGE_TARGETS[wire.id]
    with LoopbackServer([Reply(handler=stalled)], repeat=True) as server:
        if limit == "timeout":
            rt, call = runtime(wire, server, max_retries=1, timeout=0.3), {}
        else:
            rt, call = runtime(wire, server, max_retries=1), {"deadline": 0.3}
        started = time.monotonic()
        with pytest.raises((ExecFailed, RunTimeout)) as caught:
            await generate(rt, mode, "a fox", model=target.model, **call)
        took = time.monotonic() - started
    assert took < BOUND, f"{took:.2f} s: the stalled request was not given up"
    if limit == "timeout":  # every attempt timed out (one here), each a typed timeout
        assert isinstance(caught.value, ExecFailed)
        assert all(isinstance(f.error, ProviderTimeoutError) for f in caught.value.attempts)
    else:
        assert isinstance(caught.value, RunTimeout)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(
    ("prompt", "kw", "error"),
    [
        ("", {}, ContentError),
        (b"a fox", {}, ContentError),
        ("a fox", {"n": 0}, OptionError),
        ("a fox", {"n": 99}, UnsupportedFeatureError),
        ("a fox", {"size": "7x7"}, UnsupportedFeatureError),
        ("a fox", {"quality": 3}, OptionError),
    ],
)
@pytest.mark.parametrize("wire", IMAGING, ids=str)
async def test_bad_input_fails_typed_before_any_request(
    wire: Wire, mode: str, prompt: Any, kw: dict[str, Any], error: type[Exception], runtime: Make
) -> None:
    target = IMAGE_TARGETS[wire.id]
    with LoopbackServer([]) as server:
        with pytest.raises(error):
            await generate(runtime(wire, server), mode, prompt, model=target.model, **kw)
        assert server.requests == []


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("wire", REFUSING, ids=str)
async def test_targets_without_images_refuse_typed(wire: Wire, mode: str, runtime: Make) -> None:
    with LoopbackServer([]) as server:
        with pytest.raises(UnsupportedFeatureError, match="image generation"):
            await generate(runtime(wire, server), mode, "a fox")
        assert server.requests == []
