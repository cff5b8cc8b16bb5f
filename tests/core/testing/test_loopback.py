"""The LoopbackServer that fault tests rely on: every reply and fault kind."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from typing import Any

import pytest
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply, sse_bytes


def post(
    server: LoopbackServer,
    path: str = "/v1/chat",
    body: Any = None,
    timeout: float = 2.0,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    host, port = server.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        payload = json.dumps(body).encode() if body is not None else b""
        conn.request(
            "POST",
            path,
            body=payload,
            headers={"content-type": "application/json", **(headers or {})},
        )
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def test_binds_loopback_only() -> None:
    with LoopbackServer() as server:
        assert server.url.startswith("http://127.0.0.1:")


def test_json_replies_in_order_and_requests_recorded() -> None:
    with LoopbackServer(
        [Reply(json={"n": 1}), Reply(json={"n": 2}, headers={"x-request-id": "r2"})]
    ) as server:
        status, _, body = post(server, "/v1/a", {"q": 1}, headers={"authorization": "Bearer t"})
        assert (status, json.loads(body)) == (200, {"n": 1})
        status, headers, body = post(server, "/v1/b?x=1", {"q": 2})
        assert json.loads(body) == {"n": 2} and headers["x-request-id"] == "r2"
        assert headers["content-type"] == "application/json"
        first, second = server.requests
        assert (first.method, first.path, first.json()) == ("POST", "/v1/a", {"q": 1})
        assert first.headers["authorization"] == "Bearer t"
        assert second.path == "/v1/b?x=1"
        assert server.unplayed == 0


def test_rate_limit_with_retry_after() -> None:
    reply = Reply(
        status=429,
        headers={"retry-after": "2", "retry-after-ms": "1500"},
        json={"error": {"type": "rate_limit_error", "message": "slow down"}},
    )
    with LoopbackServer([reply]) as server:
        status, headers, body = post(server)
    assert status == 429
    assert headers["retry-after"] == "2" and headers["retry-after-ms"] == "1500"
    assert json.loads(body)["error"]["message"] == "slow down"


@pytest.mark.parametrize("status", [500, 503, 529])
def test_server_errors(status: int) -> None:
    with LoopbackServer(
        [Reply(status=status, json={"error": {"message": "overloaded"}})]
    ) as server:
        assert post(server)[0] == status


def test_connection_reset() -> None:
    with LoopbackServer([Reply(reset=True), Reply(json={"ok": True})]) as server:
        with pytest.raises((ConnectionResetError, http.client.RemoteDisconnected)):
            post(server)
        assert json.loads(post(server)[2]) == {"ok": True}  # the server keeps serving
        assert len(server.requests) == 2


def test_delay_beyond_the_client_timeout() -> None:
    with (
        LoopbackServer([Reply(delay=0.5, json={"late": True})]) as server,
        pytest.raises((TimeoutError, socket.timeout)),
    ):
        post(server, timeout=0.1)


def test_delay_within_the_timeout_arrives() -> None:
    with LoopbackServer([Reply(delay=0.05, json={"late": False})]) as server:
        assert json.loads(post(server, timeout=2)[2]) == {"late": False}


#: A wait far longer than any test should take: a held reply must end long before.
HOLD = 60.0
#: Seconds a held reply may take to notice it is over (generous, for a loaded machine).
NOTICE = 10.0


def reply_threads() -> list[threading.Thread]:
    """The server threads answering a request now."""
    return [t for t in threading.enumerate() if "process_request" in t.name]


def ends_within(seconds: float, done: Any) -> bool:
    end = time.monotonic() + seconds
    while not done():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.parametrize(
    "held", [Reply(delay=HOLD, json={}), Reply(body=b'{"id": ', stall=HOLD)], ids=["delay", "stall"]
)
def test_a_held_reply_ends_when_the_client_hangs_up(held: Reply) -> None:
    before = set(reply_threads())
    with LoopbackServer([held]) as server:
        with pytest.raises((TimeoutError, socket.timeout)):
            post(server, timeout=0.2)
        # The client gave up and closed: the server's thread for it ends too, not in 60 s.
        assert ends_within(NOTICE, lambda: not set(reply_threads()) - before)


def test_stopping_the_server_ends_a_held_reply() -> None:
    server = LoopbackServer([Reply(body=b'{"id": ', stall=HOLD)]).start()
    host, port = server.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=HOLD * 2)
    conn.request("POST", "/v1/chat", body=b"{}")
    response = conn.getresponse()  # the headers came; the body never ends
    outcome: list[BaseException] = []

    def read_body() -> None:
        try:
            response.read()
        except http.client.IncompleteRead as cut:
            outcome.append(cut)

    reader = threading.Thread(target=read_body, daemon=True)
    reader.start()
    server.stop()
    reader.join(NOTICE)
    conn.close()
    assert not reader.is_alive(), "the client still waits on a stopped server"
    assert len(outcome) == 1  # the body was cut short when the server stopped


def test_malformed_json() -> None:
    with LoopbackServer([Reply(body=b'{"choices": [')]) as server:
        status, headers, body = post(server)
    assert status == 200 and headers["content-type"] == "application/json"
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)


def test_truncated_json_body_promises_more_than_it_sends() -> None:
    with (
        LoopbackServer([Reply(json={"text": "x" * 100}, truncate=True)]) as server,
        pytest.raises(http.client.IncompleteRead),
    ):
        post(server)


def test_sse_stream() -> None:
    events: list[dict[str, Any] | str] = [
        {"event": "message_start", "data": {"type": "message_start"}},
        {"data": {"delta": "Hel"}},
        "[DONE]",
    ]
    with LoopbackServer([Reply(sse=events)]) as server:
        status, headers, body = post(server)
    assert status == 200 and headers["content-type"] == "text/event-stream"
    assert body == (
        b'event: message_start\ndata: {"type": "message_start"}\n\n'
        b'data: {"delta": "Hel"}\n\ndata: [DONE]\n\n'
    )
    assert body == sse_bytes(events)


def test_truncated_sse_stream_is_cut_short() -> None:
    events = [{"data": {"i": i, "pad": "y" * 20}} for i in range(10)]
    with LoopbackServer([Reply(sse=events, truncate=True)]) as server:
        status, _, body = post(server)
    full = sse_bytes(events)
    assert status == 200
    assert 0 < len(body) < len(full) and full.startswith(body)
    assert not body.endswith(b"\n\n") or body.count(b"\n\n") < 10


def test_handler_computes_the_reply() -> None:
    def echo(request: RecordedRequest) -> Reply:
        return Reply(json={"you_sent": request.json(), "path": request.path})

    with LoopbackServer([Reply(handler=echo)]) as server:
        assert json.loads(post(server, "/echo", {"a": 1})[2]) == {
            "you_sent": {"a": 1},
            "path": "/echo",
        }


def test_exhausted_script_answers_599() -> None:
    with LoopbackServer([Reply(json={})]) as server:
        post(server)
        status, _, body = post(server)
    assert status == 599 and b"exhausted" in body


def test_repeat_serves_the_last_reply_forever() -> None:
    with LoopbackServer([Reply(json={"n": 1}), Reply(json={"n": 2})], repeat=True) as server:
        bodies = [json.loads(post(server)[2])["n"] for _ in range(4)]
    assert bodies == [1, 2, 2, 2]


def test_unplayed_counts_what_is_left() -> None:
    with LoopbackServer([Reply(json={}), Reply(json={}), Reply(json={})]) as server:
        post(server)
        assert server.unplayed == 2


def test_stopping_twice_is_harmless() -> None:
    server = LoopbackServer([Reply(json={})]).start()
    server.stop()
    server.stop()
    assert server.stopping.is_set()
