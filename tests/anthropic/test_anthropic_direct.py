"""The async unstreamed call posted straight through aiohttp (``llmport_anthropic.direct``).

Each case runs one call posted directly and one through the SDK's
``client.post`` (``direct.usable`` patched off), against the same scripted
answer on one loopback server, and compares what the server received and
what the caller got: the same request (method, path, every header, body), the
same result, or the same llmport error with the same message. The contract
suite's fault and hostile tables run the direct path too (it is the default
for a plain client); here are the cases where it must step aside.
"""

from __future__ import annotations

import asyncio
import gc
import gzip
import json
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from llmport import Runtime
from llmport.messages.types import FinalEvent
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from llmport_anthropic import direct
from support.anthropic_scenarios import error, message, text_stream, usage

MODEL = "claude-haiku-4-5-20251001"
ANSWER = message("msg_ok", MODEL, [{"type": "text", "text": "fine"}], "end_turn", usage(5, 1))
OK = Reply(json=ANSWER)


@pytest.fixture
def posted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URL of each call posted directly."""
    seen: list[str] = []
    post = direct.post

    async def counting(client: Any, route: direct.Route, body: bytes) -> bytes:
        seen.append(str(route.url))
        return await post(client, route, body)

    monkeypatch.setattr(direct, "post", counting)
    return seen


@pytest.fixture
def sdk_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A switch: inside ``with sdk_only():`` every call goes through ``client.post``."""
    import contextlib

    @contextlib.contextmanager
    def switch() -> Iterator[None]:
        with monkeypatch.context() as patch:
            patch.setattr(direct, "usable", lambda client: False)
            yield

    yield switch


def runtime(server: LoopbackServer, **settings: Any) -> Runtime:
    providers = {"anthropic": {"api_key": "test-key", "base_url": server.url, **settings}}
    return Runtime(model="anthropic:claude-haiku-4-5", max_retries=1, providers=providers)


async def outcome(rt: Runtime, **options: Any) -> tuple[str | None, str | None]:
    """``(text, None)`` or ``(None, "ErrorType: message")`` of one call."""
    try:
        return await rt.async_exec("Hi", **options), None
    except Exception as err:  # every failure is compared, whatever its type
        return None, f"{type(err).__name__}: {err}"


def seen(requests: list[RecordedRequest]) -> list[tuple[Any, ...]]:
    """What the server saw of each request: method, path, headers (names in lower case), body."""
    return [
        (r.method, r.path, {k.lower(): v for k, v in r.headers.items()}, r.body) for r in requests
    ]


async def both_ways(replies: list[Reply], posted: list[str], sdk_only: Any, **options: Any) -> Any:
    """The outcomes of one direct call and one SDK call given ``replies``, and what each sent."""
    with LoopbackServer([OK, *replies, *replies]) as server:
        rt = runtime(server)
        await rt.async_exec("warm")  # both ways then share a client made and used
        direct_way = await outcome(rt, **options)
        assert len(posted) == 2, "a plain client's calls are posted directly"
        first = len(server.requests)
        with sdk_only():
            sdk_way = await outcome(rt, **options)
        assert len(posted) == 2
        rt.close()
    return direct_way, sdk_way, (server.requests[1:first], server.requests[first:])


ANSWERS = {
    "200": OK,
    "200 gzip": Reply(
        body=gzip.compress(json.dumps(ANSWER).encode()),
        headers={"content-type": "application/json", "content-encoding": "gzip"},
    ),
    "200 not JSON": Reply(body=b"<html>oops</html>", headers={"content-type": "text/html"}),
    "200 invalid UTF-8": Reply(
        body=b'{"id": "\xff\xfe"}', headers={"content-type": "application/json"}
    ),
    "400": Reply(status=400, json=error("invalid_request_error", "bad field", "req_1")),
    "401": Reply(status=401, json=error("authentication_error", "bad key", "req_2")),
    "404": Reply(status=404, json=error("not_found_error", "no model", "req_3")),
    "429 retry-after": Reply(
        status=429, json=error("rate_limit_error", "slow", "req_4"), headers={"retry-after": "7"}
    ),
    "500": Reply(status=500, json=error("api_error", "boom", "req_5")),
    "502 html": Reply(
        status=502, body=b"<html>bad gateway</html>", headers={"content-type": "text/html"}
    ),
    "529": Reply(status=529, json=error("overloaded_error", "busy", "req_6")),
    "reset": Reply(reset=True),
    "truncated": Reply(json=ANSWER, truncate=True),
}
REDIRECTS = {
    # Followed by both (the SDK's httpx client follows redirects): a 307 keeps the POST.
    "307 then 200": [Reply(status=307, body=b"", headers={"location": "/v2/messages"}), OK],
    "302 then 200": [Reply(status=302, body=b"", headers={"location": "/v2/messages"}), OK],
    "303 then 404": [
        Reply(status=303, body=b"", headers={"location": "/gone"}),
        Reply(status=404, json=error("not_found_error", "gone", "req_7")),
    ],
}


@pytest.mark.parametrize("case", [*ANSWERS, *REDIRECTS])
async def test_a_direct_call_sends_and_answers_as_client_post(
    case: str, posted: list[str], sdk_only: Any
) -> None:
    replies = REDIRECTS[case] if case in REDIRECTS else [ANSWERS[case]]
    direct_way, sdk_way, (sent_direct, sent_sdk) = await both_ways(replies, posted, sdk_only)
    assert direct_way == sdk_way
    assert seen(sent_direct) == seen(sent_sdk)
    assert len(sent_direct) == len(replies)
    if case in ("200", "200 gzip", "307 then 200", "302 then 200"):
        assert direct_way == ("fine", None)
    else:
        assert direct_way[1] is not None


async def test_a_timeout_is_the_same_error_both_ways(posted: list[str], sdk_only: Any) -> None:
    slow = Reply(json=ANSWER, delay=2)
    direct_way, sdk_way, _ = await both_ways([slow], posted, sdk_only, timeout=0.3)
    assert direct_way == sdk_way
    assert direct_way[1] is not None and "ProviderTimeoutError" in direct_way[1]


async def test_a_refused_connection_is_the_same_error_both_ways(
    posted: list[str], sdk_only: Any
) -> None:
    with socket.socket() as sock:  # a port nothing listens on once this closes
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    providers = {"anthropic": {"api_key": "test-key", "base_url": f"http://127.0.0.1:{port}"}}
    rt = Runtime(model="anthropic:claude-haiku-4-5", max_retries=1, providers=providers)
    direct_way = await outcome(rt)
    assert len(posted) == 1, "a client's first call is posted directly too"
    with sdk_only():
        sdk_way = await outcome(rt)
    assert direct_way == sdk_way
    assert direct_way[1] is not None and "ProviderConnectionError" in direct_way[1]


async def test_each_request_option_set_has_its_own_route(posted: list[str]) -> None:
    with LoopbackServer([OK], repeat=True) as server:
        rt = runtime(server, default_headers={"x-team": "blue"})
        for timeout in (30, 40, 30):
            assert await rt.async_exec("Hi", timeout=timeout) == "fine"
        provider = rt.route("anthropic:m")[0]
        client = await provider.clients.aclient()
        assert provider.routes.size(client) == 2
    sent = [r.headers for r in server.requests]
    assert [h.get("x-stainless-timeout") for h in sent] == ["30", "40", "30"]
    assert all(h.get("x-team") == "blue" for h in sent)
    assert len(posted) == 3


async def test_routes_are_bounded(monkeypatch: pytest.MonkeyPatch, posted: list[str]) -> None:
    monkeypatch.setattr(direct, "MAX_ROUTES", 3)
    with LoopbackServer([OK], repeat=True) as server:
        rt = runtime(server)
        for timeout in range(10, 20):
            await rt.async_exec("Hi", timeout=timeout)
        provider = rt.route("anthropic:m")[0]
        assert provider.routes.size(await provider.clients.aclient()) <= 3
    assert len(posted) == 10


# -- where the SDK must do the work ---------------------------------------------------------


async def test_the_sdks_debug_log_sends_through_the_sdk(
    posted: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="anthropic")
    with LoopbackServer([OK], repeat=True) as server:
        rt = runtime(server)
        assert await rt.async_exec("Hi") == "fine"
    assert posted == []
    assert "Sending HTTP Request" in caplog.text


async def test_a_current_trace_context_sends_through_the_sdk(posted: list[str]) -> None:
    """The SDK writes the trace context into headers: a direct post would drop it."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider

    tracer = TracerProvider().get_tracer("test")
    with LoopbackServer([OK], repeat=True) as server:
        rt = runtime(server)
        await rt.async_exec("warm")
        assert len(posted) == 1
        with tracer.start_as_current_span("app"):
            assert await rt.async_exec("Hi") == "fine"
    assert len(posted) == 1
    assert "traceparent" in {k.lower() for k in server.requests[-1].headers}


async def test_the_httpx_transport_sends_through_the_sdk(posted: list[str]) -> None:
    with LoopbackServer([OK], repeat=True) as server:
        rt = runtime(server, async_transport="httpx")
        assert await rt.async_exec("Hi") == "fine"
    assert posted == []


async def test_streams_and_sync_calls_send_through_the_sdk(posted: list[str]) -> None:
    stream = Reply(sse=text_stream("msg_s", MODEL, ["fi", "ne"], 5, 1))
    with LoopbackServer([OK, stream]) as server:
        rt = runtime(server)
        assert rt.exec("Hi") == "fine"
        final = [event async for event in rt.astream("Hi")][-1]
        assert isinstance(final, FinalEvent) and final.result.text == "fine"
    assert posted == []


async def test_endless_redirects_end_in_a_connection_error_both_ways(
    posted: list[str], sdk_only: Any
) -> None:
    """Each way stops after the httpx client's limit; the SDK's own way may stop earlier."""
    loop = Reply(status=302, body=b"", headers={"location": "/again"})
    with LoopbackServer([OK, loop], repeat=True) as server:
        rt = runtime(server)
        await rt.async_exec("warm")
        direct_way = await outcome(rt)
        with sdk_only():
            sdk_way = await outcome(rt)
    assert len(posted) == 2
    for way in (direct_way, sdk_way):
        assert way[1] is not None and "ProviderConnectionError" in way[1]
    assert len(server.requests) < 50


async def test_a_routes_repr_shows_no_credentials() -> None:
    with LoopbackServer([OK], repeat=True) as server:
        providers = {"anthropic": {"api_key": "sk-ant-secret-0123456789", "base_url": server.url}}
        rt = Runtime(model="anthropic:claude-haiku-4-5", providers=providers)
        assert await rt.async_exec("Hi") == "fine"
        provider = rt.route("anthropic:m")[0]
        client = await provider.clients.aclient()
        (route,) = provider.routes.routes(client)
    # A URL may hold a password (aiohttp then refuses it beside the SDK's auth header).
    assert "sk-ant-secret" not in repr(route) and server.url not in repr(route)


async def test_a_cancelled_direct_call_leaves_the_client_usable(posted: list[str]) -> None:
    """A call cancelled while it waits on its answer releases its connection."""
    slow = Reply(json=ANSWER, delay=1.0)
    with LoopbackServer([OK, slow, OK]) as server:
        rt = runtime(server)
        await rt.async_exec("warm")
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(rt.async_exec("Hi"), 0.2)
        assert await rt.async_exec("Hi") == "fine"
    assert len(posted) == 3
    assert len(server.requests) == 3


async def _held_per_call_in_flight(rt: Runtime, server: LoopbackServer, calls: int) -> float:
    """GC-tracked objects per call while ``calls`` wait on their answers (collector off)."""
    await rt.async_exec("warm")
    first = len(server.requests)
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        tasks = [asyncio.ensure_future(rt.async_exec("Hi")) for _ in range(calls)]
        for _ in range(1000):  # until every call's request has arrived (10 s at most)
            if len(server.requests) >= first + calls or any(t.done() for t in tasks):
                break
            await asyncio.sleep(0.01)
        held = (len(gc.get_objects()) - before) / calls
    finally:
        gc.enable()
    assert await asyncio.gather(*tasks) == ["fine"] * calls
    return held


async def test_a_direct_call_holds_far_fewer_objects_in_flight(
    posted: list[str], sdk_only: Any
) -> None:
    """What the direct post is for: ~57 fewer objects per call waiting on its answer.

    The server's own per-connection objects (its threads share this process)
    are the same both ways, so the difference is the client's path alone.
    """
    calls = 30
    held_answer = Reply(json=ANSWER, delay=0.5)
    with LoopbackServer([OK, held_answer], repeat=True) as server:
        direct_way = await _held_per_call_in_flight(runtime(server), server, calls)
        with sdk_only():
            sdk_way = await _held_per_call_in_flight(runtime(server), server, calls)
    assert len(posted) == calls + 1
    assert direct_way <= sdk_way - 30, f"{direct_way:.1f} vs {sdk_way:.1f} objects per call"
