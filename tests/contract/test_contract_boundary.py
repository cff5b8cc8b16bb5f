"""The vendor boundary on every path that reaches a vendor, for every target.

One table: path (run, stream, count, batch submit / status / results /
cancel) x target x fault, sync and async. The loopback "vendor" answers

* ``401``: its error, echoing the key and the auth headers it received;
* ``200 {}``: an empty object where the success shape was due;
* ``200 error``: the vendor's error object (echoing the key) with status 200.

Whatever the fault, the call must raise a typed :class:`LlmportError` (a
401 an :class:`AuthenticationError`, a 200 that is not the documented
success a :class:`MalformedResponseError`, never an empty success), and
walking ``__cause__`` / ``__context__`` from it must find no non-llmport
exception and no character of the key (``leaks.LeakCheck``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from invariant_checks import (
    JOB_IDS,
    NO_BATCH,
    NO_COUNT,
    attempt_errors,
    batch_options,
    batch_settings,
    ended_job,
    key_echo_reply,
)
from leaks import LeakCheck
from llmport import Runtime
from llmport.errors import (
    AuthenticationError,
    LlmportError,
    MalformedResponseError,
    OptionError,
)
from llmport.testing.loopback import LoopbackServer, Reply
from wire import TARGETS, Wire

Make = Callable[..., Runtime]

FAULTS = ("401", "200-empty", "200-error")
PATHS = ("run", "stream", "count", "submit", "status", "results", "cancel")
BATCH_PATHS = ("submit", "status", "results", "cancel")


def _fault(wire: Wire, fault: str, secrets: list[str]) -> Reply:
    if fault == "200-empty":
        return Reply(json={})
    return key_echo_reply(wire, 401, secrets, as_200=fault == "200-error")


def _replies(wire: Wire, path: str, fault: str, secrets: list[str]) -> list[Reply]:
    replies = [_fault(wire, fault, secrets)]
    if path == "results":
        replies.insert(0, ended_job(wire))
    if path == "cancel" and wire.id in ("gemini", "bedrock"):
        # Their cancel answers an empty object on success: the fault is the status read next.
        replies.insert(0, Reply(json={}))
    if path == "submit" and wire.id == "bedrock":
        # S3 PutObject answers an empty 200: the fault is the job creation after it.
        replies.insert(0, Reply(body=b""))
    return replies


def _expected(path: str, fault: str) -> tuple[type[LlmportError], ...]:
    if fault == "401":
        return (AuthenticationError,)
    if path == "stream" and fault == "200-error":
        # An error object inside a 200 stream is how a vendor ends a stream in error
        # (Gemini's error chunk): translated as the error it names, or malformed.
        return (MalformedResponseError, AuthenticationError)
    return (MalformedResponseError,)


async def _call(rt: Runtime, wire: Wire, path: str, mode: str) -> Any:
    """Take ``path`` once; return what it returned (the test expects it to raise)."""
    sync = mode == "sync"
    if path == "run":
        return rt.run("hi") if sync else await rt.arun("hi")
    if path == "stream":
        if sync:
            return list(rt.stream("hi"))
        return [event async for event in rt.astream("hi")]
    if path == "count":
        return rt.count_tokens("hi") if sync else await rt.acount_tokens("hi")
    if path == "submit":
        options = batch_options(wire)
        requests = [{"custom_id": "a", "content": "hi"}]
        if sync:
            return rt.batch(requests, batch_options=options)
        return await rt.abatch(requests, batch_options=options)
    job = rt.batch_job(f"{wire.provider}:{JOB_IDS[wire.id]}")
    if path == "status":
        return job.status() if sync else await job.astatus()
    if path == "results":
        return job.results() if sync else await job.aresults()
    return job.cancel() if sync else await job.acancel()


CASES = [
    (wire, path, fault)
    for wire in TARGETS
    for path in PATHS
    for fault in FAULTS
    if not (path == "count" and wire.id in NO_COUNT)
    and not (path in BATCH_PATHS and wire.id in NO_BATCH)
]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(
    ("wire", "path", "fault"), CASES, ids=[f"{w.id}-{p}-{f}" for w, p, f in CASES]
)
async def test_every_vendor_path_returns_through_one_translation(
    wire: Wire, path: str, fault: str, mode: str, runtime: Make
) -> None:
    creds = wire.credentials("standard")
    secrets = wire.secrets(creds)
    check = LeakCheck(secrets)
    with LoopbackServer(_replies(wire, path, fault, secrets)) as server:
        settings = batch_settings(wire, server)
        rt = runtime(wire, server, creds=creds, max_retries=1, settings=settings)
        try:
            returned = await _call(rt, wire, path, mode)
        except Exception as exc:
            err: BaseException = exc
        else:
            pytest.fail(f"{path} answered a {fault} with a success: {returned!r}")
        reached = len(server.requests)
    assert reached >= 1, "the fault was never asked for"
    assert isinstance(err, LlmportError), f"a raw {type(err).__name__}: {err}"
    expected = _expected(path, fault)
    kinds = [type(e).__name__ for e in attempt_errors(err)]
    assert any(isinstance(e, expected) for e in attempt_errors(err)), (
        f"expected {[e.__name__ for e in expected]}, got {kinds}: {check.mask(str(err))}"
    )
    for one in attempt_errors(err):
        check.error(f"{path} {fault}", one)
    check.assert_clean()


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_gemini_job_id_of_the_wrong_form_is_an_option_error(
    mode: str, runtime: Make
) -> None:
    wire = next(w for w in TARGETS if w.id == "gemini")
    with LoopbackServer([]) as server:
        job = runtime(wire, server).batch_job("gemini:batch_abc123")
        with pytest.raises(OptionError, match="batches/"):
            if mode == "sync":
                job.status()
            else:
                await job.astatus()
        assert server.requests == []
