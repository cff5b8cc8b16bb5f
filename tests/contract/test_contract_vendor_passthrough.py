"""``vendor={...}`` and ``Tool(vendor=...)`` are a raw passthrough: no llmport table refuses
them, on any path that builds a request.

The fields below would each be refused before the wire if given as llmport
options on some vendor (no ``seed`` on Anthropic or Bedrock, a temperature
outside every vendor's range, ``top_k`` where llmport does not map it); given
through ``vendor=`` they go out verbatim (the vendor decides), on exec and
stream (sync and async), and count_tokens and batch accept them too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from invariant_checks import NO_BATCH, batch_options, batch_settings
from llmport import Runtime, Tool, tool
from llmport.errors import InputError
from llmport.testing.loopback import LoopbackServer, Reply
from support.api_modes import MODES, run_via
from wire import TARGETS, Wire, raised

Make = Callable[..., Runtime]
each_target = pytest.mark.parametrize("wire", TARGETS, ids=str)

#: Raw fields (name -> value) llmport's own option checks would refuse somewhere.
RAW: dict[str, Any] = {"seed": 7, "temperature": 7.5, "top_k": -3, "x_raw_probe": {"a": [1]}}


def _vendor(wire: Wire) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name, value in RAW.items():
        for key, nested in wire.vendor_fields(name, value).items():
            if isinstance(nested, dict) and isinstance(fields.get(key), dict):
                fields[key] = {**fields[key], **nested}
            else:
                fields[key] = nested
    return {wire.provider: fields}


def lookup(city: str) -> str:
    """Look ``city`` up."""
    return city


#: (field, value) a ``Tool(vendor=...)`` probe adds to the tool's entry. Converse's
#: toolSpec is a closed schema botocore checks (the SDK's own validation, which
#: the vendor-truth rules leave alone): its probe is ``strict``, which the tables give only to
#: models with native structured output.
TOOL_PROBES = {"bedrock": ("strict", True)}
TOOL_PROBE = ("x_tool_probe", {"strict": True})


def _tool(wire: Wire) -> Tool:
    """A tool carrying its vendor probe (see :data:`TOOL_PROBES`)."""
    name, value = TOOL_PROBES.get(wire.provider, TOOL_PROBE)
    return tool(vendor={wire.provider: {name: value}})(lookup)


@pytest.mark.parametrize("stream", [False, True], ids=["run", "stream"])
@pytest.mark.parametrize("mode", MODES)
@each_target
async def test_vendor_fields_llmport_would_refuse_as_options_go_out_verbatim(
    wire: Wire, mode: str, stream: bool, runtime: Make
) -> None:
    reply = wire.stream_text_reply(["fi", "ne"]) if stream else wire.text_reply("fine")
    with LoopbackServer([reply]) as server:
        rt = runtime(wire, server)
        result = await run_via(mode, rt, "hi", stream=stream, vendor=_vendor(wire))
        (request,) = server.requests
    assert result.output == "fine"
    body = request.json()
    for name, value in RAW.items():
        assert wire.vendor_field(body, name) == value, (name, body)


def _found(value: Any, key: str) -> list[Any]:
    """Every value under ``key`` anywhere in the JSON ``value``."""
    if isinstance(value, dict):
        here = [value[key]] if key in value else []
        return here + [f for v in value.values() for f in _found(v, key)]
    if isinstance(value, list):
        return [f for v in value for f in _found(v, key)]
    return []


#: The vendors' plugins (the call-only test plugins send no per-tool vendor fields).
VENDORS = [w for w in TARGETS if not w.id.startswith("callonly")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", VENDORS, ids=str)
async def test_tool_vendor_fields_go_out_verbatim(wire: Wire, mode: str, runtime: Make) -> None:
    # Haiku 3 on Bedrock has no strict tool use in llmport's table: the field goes anyway.
    model = "bedrock:anthropic.claude-3-haiku-20240307-v1:0" if wire.id == "bedrock" else None
    with LoopbackServer([wire.text_reply("fine")]) as server:
        rt = runtime(wire, server)
        result = await run_via(
            mode, rt, "hi", model=model, tools=[_tool(wire)], vendor=_vendor(wire)
        )
        (request,) = server.requests
    assert result.output == "fine"
    name, value = TOOL_PROBES.get(wire.provider, TOOL_PROBE)
    assert _found(request.json(), name) == [value]


@pytest.mark.parametrize("mode", MODES)
@each_target
async def test_count_tokens_takes_the_same_vendor_fields(
    wire: Wire, mode: str, runtime: Make
) -> None:
    with LoopbackServer([]) as server:
        rt = runtime(wire, server, max_retries=1)
        call = (
            rt.acount_tokens("hi", tools=[_tool(wire)], vendor=_vendor(wire))
            if mode == "async"
            else _sync(rt.count_tokens, "hi", tools=[_tool(wire)], vendor=_vendor(wire))
        )
        err = await raised(call)
    # The loopback answers 599 to a counting request: a vendor error or an estimate,
    # never an input error raised by llmport's tables.
    assert not isinstance(err, InputError), repr(err)


async def _sync(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


@pytest.mark.parametrize("wire", [w for w in TARGETS if w.id not in NO_BATCH], ids=str)
async def test_batch_takes_the_same_vendor_fields(wire: Wire, runtime: Make) -> None:
    requests = [{"custom_id": "a", "content": "hi", "vendor": _vendor(wire)}]
    # Bedrock puts the requests in S3 first (an empty 200): the job creation is next.
    first = [Reply(body=b"")] if wire.id == "bedrock" else []
    with LoopbackServer(first) as server:
        rt = runtime(wire, server, max_retries=1, settings=batch_settings(wire, server))
        err = await raised(_sync(rt.batch, requests, batch_options=batch_options(wire)))
        sent = [r.body for r in server.requests]
    # The loopback refuses the submission (or its next step) with a 599: what matters
    # is that the request went out with the raw fields, not an input error before it.
    assert not isinstance(err, InputError), repr(err)
    assert any(b"x_raw_probe" in body and b"seed" in body for body in sent), sent
