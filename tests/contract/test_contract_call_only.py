"""The ``_call``-only targets really are ``_call``-only, and the exceptions table is true.

A plugin with only ``_call`` / ``_async_call`` (optionally
``_stream`` / ``_astream``) is complete. The contract suite proves it by
running on ``call_only.py``'s two providers; that proof holds only while they
override none of the fast contract's methods, and while every entry of
``wire.NOT_APPLICABLE`` names a real target and a real contract test.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import call_only
import pytest
from llmport import ExecFailed, Runtime
from llmport.plugin_api import MalformedResponseError, Provider
from llmport.testing.loopback import LoopbackServer, Reply
from support.api_modes import MODES, run_via
from wire import NOT_APPLICABLE, TARGETS, Wire, raised

CALL_ONLY = [w for w in TARGETS if w.plugins == (call_only,)]

FAST_CONTRACT = ("prepare", "send", "asend", "send_stream", "asend_stream")


@pytest.mark.parametrize(
    "cls", [call_only.CallOnlyProvider, call_only.CallOnlyStreamingProvider], ids=str
)
def test_the_plugin_implements_the_call_contract_only(cls: type[Provider]) -> None:
    for name in FAST_CONTRACT:
        assert getattr(cls, name) is getattr(Provider, name), f"{cls.__name__} overrides {name}"
    for name in ("_call", "_async_call"):
        assert getattr(cls, name) is not getattr(Provider, name), f"{name} missing"
    streams = cls is call_only.CallOnlyStreamingProvider
    for name in ("_stream", "_astream"):
        assert (getattr(cls, name) is not getattr(Provider, name)) == streams


def test_every_exception_names_a_target_and_a_contract_test() -> None:
    ids = {w.id for w in TARGETS}
    tests: set[str] = set()
    for path in Path(__file__).parent.glob("test_contract_*.py"):
        module = importlib.import_module(path.stem)
        tests |= {name for name in vars(module) if name.startswith("test_")}
    for (target, test), reason in NOT_APPLICABLE.items():
        assert target in ids, f"no target {target!r}"
        assert test in tests, f"no contract test {test!r}"
        assert len(reason) > 20, f"give the reason {target!r} cannot run {test!r}"


NOT_AN_ANSWER: dict[str, Any] = {
    "empty": {},
    "error-with-200": {"error": {"message": "no", "code": "tiny_500"}},
    "calls-without-ids": {"calls": [{"name": "f"}], "stop": "tool_use", "usage": {}},
}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("body", list(NOT_AN_ANSWER.values()), ids=list(NOT_AN_ANSWER))
@pytest.mark.parametrize("wire", CALL_ONLY, ids=str)
async def test_a_200_that_is_not_an_answer_is_malformed_never_an_empty_success(
    wire: Wire, body: Any, mode: str, stream: bool, runtime: Callable[..., Runtime]
) -> None:
    reply = Reply(sse=[{"data": body}]) if stream and wire.id == "callonly-stream" else None
    with LoopbackServer([reply or Reply(json=body)]) as server:
        rt = runtime(wire, server, max_retries=1)
        err = await raised(run_via(mode, rt, "hi", stream=stream))
    assert isinstance(err, ExecFailed), repr(err)  # malformed is transient: one attempt allowed
    assert isinstance(err.last_error, MalformedResponseError), repr(err.last_error)
