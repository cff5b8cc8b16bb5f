"""``Runtime(timeout=)`` bounds every request the runtime makes, not only a run's, on every target.

Files, batches, background runs and token counts take no call options, so
the runtime gives its timeout to each provider instance it makes as the
instance's ``timeout`` setting (``llmport.engine.targets.with_runtime_timeout``),
and each plugin builds its clients with it. The hostile-peer table
(test_contract_hostile.py, ``endless-body``) plays a stalled vendor on every
such path; these pin the rule itself.
"""

from __future__ import annotations

import time

import pytest
from llmport.errors import OptionError, ProviderTimeoutError
from llmport.testing.loopback import LoopbackServer, Reply
from wire import TARGETS, Wire, make_runtime


@pytest.mark.parametrize("wire", TARGETS, ids=lambda w: w.id)
def test_the_runtime_timeout_is_each_instance_timeout_setting(wire: Wire) -> None:
    with LoopbackServer() as server, make_runtime(wire, server, timeout=3) as rt:
        assert rt.resolve(wire.model)[0].settings["timeout"] == 3


@pytest.mark.parametrize("wire", TARGETS, ids=lambda w: w.id)
def test_a_provider_timeout_setting_is_more_specific_and_stays(wire: Wire) -> None:
    with (
        LoopbackServer() as server,
        make_runtime(wire, server, settings={"timeout": 30}, timeout=3) as rt,
    ):
        assert rt.resolve(wire.model)[0].settings["timeout"] == 30


@pytest.mark.parametrize("bad", ["abc", -1, 0, float("nan"), float("inf"), True])
def test_a_bad_runtime_timeout_is_an_option_error_before_any_request(bad: object) -> None:
    wire = TARGETS[0]
    with LoopbackServer([Reply(json={"object": "list", "data": []})]) as server:
        with make_runtime(wire, server, timeout=bad) as rt, pytest.raises(OptionError):
            rt.files(provider=wire.provider)
        assert server.requests == []


def test_a_stalled_files_listing_ends_at_the_runtime_timeout() -> None:
    import openai  # noqa: F401 (a cold SDK import takes seconds on a loaded machine: not timed)

    wire = next(w for w in TARGETS if w.id == "openai-chat")
    # The server stays silent 4 s: the 0.5 s timeout must end the call long before.
    stalled = Reply(body=b'{"object": "list", ', stall=4.0)
    with (
        LoopbackServer([stalled]) as server,
        make_runtime(wire, server, timeout=0.5, max_retries=1) as rt,
    ):
        started = time.monotonic()
        with pytest.raises(ProviderTimeoutError):
            rt.files(provider=wire.provider)
        assert time.monotonic() - started < 3.0
