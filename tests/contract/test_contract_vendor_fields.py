"""``exec(vendor={...})``: fields llmport does not model reach that vendor's body."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from llmport import Runtime
from llmport.errors import InputError, OptionError
from llmport.testing.loopback import LoopbackServer
from support.api_modes import MODES, run_via
from wire import TARGETS, Wire, raised

each_target = pytest.mark.parametrize("wire", TARGETS, ids=str)
each_mode = pytest.mark.parametrize("mode", MODES)
Make = Callable[..., Runtime]


@each_mode
@each_target
async def test_vendor_fields_reach_the_request_body(wire: Wire, mode: str, runtime: Make) -> None:
    with LoopbackServer([wire.text_reply("fine")]) as server:
        result = await run_via(
            mode,
            runtime(wire, server),
            "hi",
            vendor={wire.provider: wire.vendor_fields("some_field", {"a": 1})},
        )
        assert len(server.requests) == 1
    assert result.output == "fine"
    body = server.requests[0].json()
    assert wire.vendor_field(body, "some_field") == {"a": 1}, (
        f"vendor={{{wire.provider!r}: {{'some_field': ...}}}} is not in the body: {body!r}"
    )


@each_mode
@each_target
async def test_fields_for_other_vendors_are_ignored(wire: Wire, mode: str, runtime: Make) -> None:
    others = {w.provider for w in TARGETS if w.company != wire.company}
    vendor = {name: {"other_vendor_field": {"a": 1}} for name in sorted(others)}
    with LoopbackServer([wire.text_reply("fine")]) as server:
        result = await run_via(mode, runtime(wire, server), "hi", vendor=vendor)
        assert len(server.requests) == 1
    assert result.output == "fine"
    assert b"other_vendor_field" not in server.requests[0].body


@each_mode
@each_target
async def test_non_json_vendor_value_fails_before_any_request(
    wire: Wire, mode: str, runtime: Make
) -> None:
    vendor = {wire.provider: {"some_field": {1, 2}}}
    with LoopbackServer([wire.text_reply("never")]) as server:
        err = await raised(run_via(mode, runtime(wire, server), "hi", vendor=vendor))
        sent = len(server.requests)
    assert isinstance(err, OptionError), f"expected OptionError, got {err!r} ({sent} sent)"
    assert isinstance(err, InputError)
    assert sent == 0
