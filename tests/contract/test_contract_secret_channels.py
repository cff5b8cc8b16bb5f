"""Secrets on every channel: all llmport sends or records passes the redactor.

Each channel is tested with the standard and the odd-format ("custom") key
of every target, and with three echoes of the key: all of it, 12
characters from its middle, and its last 12 characters (a vendor's or a
tool's partial echo). A partial echo leaks when any 8 consecutive
characters of the key survive, not counting its public prefix
(``sk-proj-``, ``AIza``) nor a run that is a plain word.

==================  ========================================  ==============================
channel             how the secret gets there                 where it must not appear
==================  ========================================  ==============================
tool result         a tool returns it                         every request body posted to
tool error          a tool raises quoting it                  the vendor, the RunResult
                                                              (messages), stream events, OTel
                                                              spans (capture on)
MCP result / error  a real MCP stdio server echoes its env    the same, MCPServer.call_tool's
                                                              output and MCPToolError
vendor error        the vendor echoes part of the key         the error and the logs
mcp serve result    a served tool returns / raises with the   the MCP client's CallToolResult
                    OPENAI_API_KEY of the serving process
logs                a base_url with ``user:password@``        every log record (httpx's too)
errors              ``default_headers`` under any name,       the error (str, repr, traceback,
                    which the vendor echoes back              chain) and the logs
==================  ========================================  ==============================
"""

from __future__ import annotations

import json
import secrets as random_secrets
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from invariant_checks import (
    LeakyToolset,
    PartialLeakCheck,
    body_start,
    debug_logging,
    echo,
    echo_slice,
    serve_calls,
)
from llmport import Runtime, tool
from llmport.messages.types import FinalEvent
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from llmport_mcp import MCPServer, MCPToolError
from llmport_otel import OpenTelemetry
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from wire import PROFILE_TARGETS, TARGETS, Wire, profile_modes, raised

Make = Callable[..., Runtime]
KEY_FORMATS = ["standard", "custom"]
ECHOES = ["whole", "middle", "tail"]
#: Every target and every built-in profile (its own key variable and key shape).
EVERY_WIRE = TARGETS + PROFILE_TARGETS
#: The profiles only with their own key shape: the custom key is the same for every
#: target, and the compatible services of TARGETS already run it on this wire.
MATRIX = [(w, fmt) for w in TARGETS for fmt in KEY_FORMATS] + [
    (w, "standard") for w in PROFILE_TARGETS
]
each_key = pytest.mark.parametrize(("wire", "fmt"), MATRIX, ids=[f"{w}-{fmt}" for w, fmt in MATRIX])
each_echo = pytest.mark.parametrize("echo_kind", ECHOES)
DEMO = Path(__file__).resolve().parent.parent / "mcp" / "servers" / "demo_server.py"


@pytest.fixture
def tracing() -> Iterator[tuple[OpenTelemetry, InMemorySpanExporter]]:
    """An OpenTelemetry plugin with content capture on, and the spans it finished."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield OpenTelemetry(provider, capture_content=True), exporter
    provider.shutdown()


def masked_results(wire: Wire, request: RecordedRequest) -> list[str]:
    """The tool results a request posts, each of which must show a mask."""
    return [text for _, text in wire.tool_results(request.json())]


# --- tool results and tool errors -------------------------------------------------------


def leaky_tools(payload: str) -> list[Any]:
    @tool
    def lookup(order: str) -> str:
        """Look an order up."""
        return f"order {order}: the gateway answered for {payload}"

    @tool
    def refund(order: str) -> str:
        """Refund an order."""
        raise RuntimeError(f"the gateway refused the key {payload}")

    return [lookup, refund]


#: (wire, key format, way): each built-in profile one way (they take the two in turn)
#: with its own key shape.
TOOL_CASES = [
    (w, fmt, way)
    for w, way in profile_modes(TARGETS, ["run", "astream"])
    for fmt in (KEY_FORMATS if w in TARGETS else ["standard"])
]


@each_echo
@pytest.mark.parametrize(
    ("wire", "fmt", "way"), TOOL_CASES, ids=[f"{w}-{fmt}-{way}" for w, fmt, way in TOOL_CASES]
)
async def test_tool_results_and_errors_are_redacted_before_they_are_posted(
    wire: Wire,
    fmt: str,
    echo_kind: str,
    way: str,
    runtime: Make,
    tracing: tuple[OpenTelemetry, InMemorySpanExporter],
) -> None:
    creds = wire.credentials(fmt)
    secrets = wire.secrets(creds)
    echoes = [echo(s, echo_kind) for s in secrets]
    # (The AKIAFAKEFAKEFAKEFAKE test key's middle, KEFAKEFAKEFA, is a "plain word".)
    check = PartialLeakCheck.echoed(secrets, (echo_kind,))
    otel, exporter = tracing
    payload = " / ".join(echoes)
    args = json.dumps({"order": "A-17"})
    if way == "run":
        replies = [
            wire.tool_call_reply("lookup", {"order": "A-17"}, "call_1"),
            wire.tool_call_reply("refund", {"order": "A-17"}, "call_2"),
            wire.text_reply("done"),
        ]
    else:
        replies = [
            wire.stream_tool_call_reply("lookup", [args[:5], args[5:]], "call_1"),
            wire.stream_tool_call_reply("refund", [args], "call_2"),
            wire.stream_text_reply(["do", "ne"]),
        ]
    events: list[Any] = []
    with LoopbackServer(replies) as server:
        rt = runtime(wire, server, creds=creds, hooks=[otel])
        if way == "run":
            result = rt.run("hi", tools=leaky_tools(payload))
        else:
            events = [e async for e in rt.astream("hi", tools=leaky_tools(payload))]
            assert isinstance(events[-1], FinalEvent)
            result = events[-1].result
        requests = list(server.requests)
    check.bodies(way, requests)
    check.result(way, result)
    check.events(way, events)
    check.spans(way, exporter)
    check.assert_clean()
    # The tools did run and answer: their (masked) result and error were posted.
    assert len(requests) == 3 and result.output == "done"
    posted = masked_results(wire, requests[2])  # the last request holds both results
    assert any("the gateway answered for" in text for text in posted), posted
    assert any("the gateway refused the key" in text for text in posted), posted
    assert all("***" in text for text in posted), posted


# --- a vendor's partial echo of the key in its error ------------------------------------------


@pytest.mark.parametrize("echo_kind", ["middle", "tail"])
@each_key
async def test_a_vendors_partial_echo_of_the_key_is_masked(
    wire: Wire, fmt: str, echo_kind: str, runtime: Make, caplog: pytest.LogCaptureFixture
) -> None:
    creds = wire.credentials(fmt)
    secrets = wire.secrets(creds)
    echoes = [echo(s, echo_kind) for s in secrets]
    check = PartialLeakCheck.echoed(secrets, (echo_kind,))
    debug_logging(caplog)
    message = "Incorrect API key provided: " + ", ".join(f"****{e}****" for e in echoes)
    with LoopbackServer([wire.error_reply(401, message)]) as server:
        rt = runtime(wire, server, creds=creds)
        err = await raised(rt.arun("hi"))
    assert err is not None
    check.error(f"401 echoing the key's {echo_kind}", err)
    check.logs(f"401 echoing the key's {echo_kind}", caplog)
    check.assert_clean()


def half_masked(secret: str) -> str:
    """The secret as a vendor masks it itself: its start and end around stars.

    Gemini's shape (``AIzaSyFA**********hijk``): the public prefix and 4 more
    characters, 10 stars, the last 4 characters (8 of the key's own).
    """
    head = body_start(secret) + 4
    return f"{secret[:head]}{'*' * 10}{secret[-4:]}"


@each_key
async def test_a_vendors_own_half_masking_of_the_key_is_masked(
    wire: Wire, fmt: str, runtime: Make, caplog: pytest.LogCaptureFixture
) -> None:
    """A vendor that stars the middle of the key itself still shows 8 of its characters."""
    creds = wire.credentials(fmt)
    secrets = wire.secrets(creds)
    shown = [half_masked(s) for s in secrets]
    check = PartialLeakCheck([*secrets, *shown])
    debug_logging(caplog)
    message = "API key not valid. Please pass a valid API key: " + ", ".join(shown)
    with LoopbackServer([wire.error_reply(400 if "gemini" in wire.id else 401, message)]) as server:
        rt = runtime(wire, server, creds=creds)
        err = await raised(rt.arun("hi"))
    assert err is not None
    check.error("an error quoting the vendor's half-masked key", err)
    check.logs("an error quoting the vendor's half-masked key", caplog)
    check.assert_clean()
    assert "***" in str(err), str(err)


# --- MCP results and errors -----------------------------------------------------------------


@each_echo
@pytest.mark.parametrize("fmt", KEY_FORMATS)
async def test_mcp_results_and_errors_are_redacted(
    fmt: str, echo_kind: str, runtime: Make, tracing: tuple[OpenTelemetry, InMemorySpanExporter]
) -> None:
    """A real MCP stdio server given the key in ``env`` echoes it in a result and an error."""
    wire = TARGETS[0]
    creds = wire.credentials(fmt)
    (secret,) = wire.secrets(creds)
    check = PartialLeakCheck([secret, echo(secret, echo_kind)])
    otel, exporter = tracing
    start, end = echo_slice(secret, echo_kind)
    args = {"key": "VAULT_TOKEN", "start": start, "end": end}
    vault = MCPServer(
        "vault",
        command=[sys.executable, str(DEMO)],
        env={"VAULT_TOKEN": secret},
        timeout=20,
        connect_timeout=20,  # starting it imports the SDK: more than the default 5 s when loaded
    )
    replies = [
        wire.tool_call_reply("env_value", args, "call_1"),
        wire.tool_call_reply("env_error", args, "call_2"),
        wire.text_reply("done"),
    ]
    try:
        with LoopbackServer(replies) as server:
            rt = runtime(wire, server, creds=creds, hooks=[otel])
            result = rt.run("hi", tools=[vault])
            requests = list(server.requests)
        direct = vault.call_tool("env_value", args)
        with pytest.raises(MCPToolError) as failed:
            vault.call_tool("env_error", args)
    finally:
        vault.close()
    check.bodies("MCP", requests)
    check.result("MCP", result)
    check.spans("MCP", exporter)
    check.text("MCPServer.call_tool output", f"{direct} {direct.blocks!r}")
    error = failed.value
    check.text("MCPToolError str/repr", f"{error} {error!r}")
    assert error.output is not None
    check.text("MCPToolError.output", f"{error.output} {error.output.blocks!r}")
    check.text("MCPServer.stderr", vault.stderr)
    check.assert_clean()
    posted = masked_results(wire, requests[2])  # the last request holds both results
    assert len(posted) == 2 and all("***" in text for text in posted), posted
    assert "cannot use ***" in str(error) and "***" in direct


# --- llmport mcp serve -----------------------------------------------------------------------


@each_echo
@pytest.mark.parametrize("fmt", KEY_FORMATS)
async def test_mcp_serve_results_and_errors_are_redacted(
    fmt: str, echo_kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The serving process has the key in its environment (no Runtime runs there)."""
    # A key this process has never seen: only the serve side can have learnt it.
    body = random_secrets.token_hex(16)
    secret = f"sk-proj-{body}" if fmt == "standard" else f"LEAKserve-{body}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    check = PartialLeakCheck([], [secret])  # random: any fragment of it is a leak
    texts, errors = await serve_calls(
        LeakyToolset(*echo_slice(secret, echo_kind)), ["reveal", "explode"]
    )
    for i, text in enumerate(texts):
        check.text(f"mcp serve CallToolResult content[{i}]", text)
    check.assert_clean()
    assert errors == [False, True]
    assert texts[0].startswith("using ") and "PermissionError" in texts[1], texts
    assert all("***" in text for text in texts), texts


# --- logs: a base URL with user info ---------------------------------------------------------

URL_WIRES = [w for w in EVERY_WIRE if "base_url" in w.endpoint_settings("http://h")]


@pytest.mark.parametrize("wire", URL_WIRES, ids=[w.id for w in URL_WIRES])
async def test_a_base_url_password_reaches_no_log(
    wire: Wire, runtime: Make, caplog: pytest.LogCaptureFixture
) -> None:
    password = f"pw{random_secrets.token_hex(12)}"
    check = PartialLeakCheck([], [password])
    debug_logging(caplog)
    with LoopbackServer([wire.text_reply("fine")]) as server:
        url = wire.endpoint_settings(server.url)["base_url"]
        url = url.replace("://", f"://gateway:{password}@", 1)
        rt = runtime(wire, server, creds=wire.credentials("custom"), settings={"base_url": url})
        result = rt.run("hi")  # sync: the httpx client (aiohttp refuses user info with a key)
        check.text("repr(Runtime)", repr(rt))
    check.logs("base_url with user info", caplog)
    check.result("base_url with user info", result)
    check.assert_clean()
    assert result.output == "fine"
    # The request URL was logged (by httpx or httpx2), with its password masked.
    assert any("gateway:***@" in r.getMessage() for r in caplog.records), caplog.text[:2000]


# --- errors: default headers of any name -----------------------------------------------------

#: Targets with a default_headers setting (Bedrock and the _call-only test plugin have none).
HEADER_WIRES = [
    w for w in EVERY_WIRE if w.provider not in ("bedrock", "callonly", "callonly-stream")
]


def echo_every_header(wire: Wire, value: str) -> Reply:
    """A 401 that echoes every header received, and a partial echo of ``value``."""

    def answer(request: RecordedRequest) -> Reply:
        sent = "; ".join(f"{name}: {v}" for name, v in request.headers.items())
        message = f"Bad gateway credentials ({value[3:15]}...). You sent: {sent}"
        return wire.error_reply(401, message)

    return Reply(handler=answer)


@pytest.mark.parametrize("logs", ["debug", "default"])
@pytest.mark.parametrize("header", ["X-Gateway-Auth", "X-Tenant"])
@pytest.mark.parametrize("wire", HEADER_WIRES, ids=[w.id for w in HEADER_WIRES])
async def test_default_headers_of_any_name_never_appear_in_errors(
    wire: Wire, header: str, logs: str, runtime: Make, caplog: pytest.LogCaptureFixture
) -> None:
    """At the default log levels too: a vendor SDK at DEBUG may send another way."""
    value = f"GW{random_secrets.token_hex(14)}"
    check = PartialLeakCheck([], [value])
    if logs == "debug":
        debug_logging(caplog)
    with LoopbackServer([echo_every_header(wire, value)]) as server:
        settings = {"default_headers": {header: value}}
        rt = runtime(wire, server, creds=wire.credentials("custom"), settings=settings)
        err = await raised(rt.arun("hi"))
        check.text("repr(Runtime)", repr(rt))
        received = {k.lower(): v for k, v in server.requests[0].headers.items()}
    assert received.get(header.lower()) == value  # the header was sent as configured
    assert err is not None
    check.error(f"401 echoing {header}", err)
    check.logs(f"401 echoing {header}", caplog)
    check.assert_clean()
