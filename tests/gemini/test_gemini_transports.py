"""Every error class the same on each transport: sync (httpx2), async on aiohttp, async on httpx2.

Each case runs through the public API against a loopback server, streamed and
not, with a key the server may echo: the typed error, its status, code and
retry decision must not depend on the transport, and the key must appear
nowhere (message, repr, traceback, the vendor summary, any chained exception).
"""

from __future__ import annotations

import socket
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from gemini_helpers import PATHS, STREAMED, isolated, run, runtime, stream  # noqa: F401 (autouse)
from llmport import (
    AuthenticationError,
    BadRequestError,
    ExecFailed,
    NotFoundError,
    OverloadedError,
    RateLimitError,
)
from llmport.errors import (
    LlmportError,
    MalformedResponseError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    StreamInterrupted,
)
from llmport.testing.loopback import LoopbackServer, Reply
from support.gemini_scenarios import answer, error, text_stream, usage

MODEL = "gemini:gemini-2.5-flash"
KEY = "fake-gemini-transport-key-0123456789abcd"
OK = Reply(json=answer("ok", [{"text": "fine"}], usage(5, 1)))
OK_STREAM = Reply(sse=text_stream("ok", ["fi", "ne"], 5, 1))
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def settings(path: tuple[str, str | None], url: str, **more: Any) -> dict[str, Any]:
    transport = path[1]
    extra = {"async_transport": transport} if transport else {}
    return {"base_url": url, "api_key": KEY, **extra, **more}


async def call(
    path: tuple[str, str | None], streamed: bool, url: str, max_retries: int = 1, **more: Any
) -> Any:
    rt = runtime(MODEL, max_retries=max_retries, **settings(path, url, **more))
    if streamed:
        return (await stream(path[0], rt, content="Hi"))[-1].result
    return await run(path[0], rt, content="Hi")


def leaks(err: BaseException) -> list[str]:
    """Where the key shows in ``err``, or a chained exception that is not llmport's."""
    found = []
    text = "".join(traceback.format_exception(err)) + repr(err)
    if KEY in text or KEY in (getattr(err, "vendor_error", None) or ""):
        found.append(f"key shown by {type(err).__name__}")
    seen: set[int] = set()
    node: BaseException | None = err
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        for linked in (node.__cause__, node.__context__):
            if linked is not None and not isinstance(linked, LlmportError):
                found.append(f"chains {type(linked).__module__}.{type(linked).__name__}")
        for attempt in getattr(node, "attempts", ()):
            found.extend(leaks(attempt.error))
        node = node.__cause__ or node.__context__
    return found


async def failure(
    path: tuple[str, str | None], streamed: bool, url: str, **more: Any
) -> ProviderError:
    """The error of one call that fails (its only attempt), checked for leaks."""
    with pytest.raises((ExecFailed, ProviderError)) as info:
        await call(path, streamed, url, **more)
    raised = info.value
    err = raised.last_error if isinstance(raised, ExecFailed) else raised
    if isinstance(err, StreamInterrupted):  # cut after text reached the caller: its cause
        err = err.error  # type: ignore[assignment]
    assert isinstance(err, ProviderError)
    assert leaks(raised) == []
    assert err.provider == "gemini"
    return err


@contextmanager
def server_of(*replies: Reply) -> Iterator[LoopbackServer]:
    with LoopbackServer(list(replies)) as server:
        yield server
    for request in server.requests:  # the key went out, in its header, on every transport
        assert request.headers["x-goog-api-key"] == KEY


def echoing(status: int, grpc: str, details: list[dict[str, Any]] | None = None) -> Reply:
    """An error answer that repeats the request's key in its message."""
    return Reply(status=status, json=error(status, grpc, f"rejected key={KEY}", details))


# --- statuses --------------------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("streamed", STREAMED)
@pytest.mark.parametrize(
    ("status", "grpc", "cls"),
    [
        (400, "INVALID_ARGUMENT", BadRequestError),
        (401, "UNAUTHENTICATED", AuthenticationError),
        (403, "PERMISSION_DENIED", PermissionDeniedError),
        (404, "NOT_FOUND", NotFoundError),
    ],
)
async def test_permanent_statuses(
    path: Any, streamed: bool, status: int, grpc: str, cls: type[ProviderError]
) -> None:
    with server_of(echoing(status, grpc), OK) as server:
        err = await failure(path, streamed, server.url)
        assert len(server.requests) == 1
    assert type(err) is cls
    assert (err.status, err.code, err.retryable) == (status, grpc, False)
    assert str(err) == f"gemini {status} {grpc}: rejected key=***"
    assert (err.vendor_error or "").startswith(f"ClientError: {status} {grpc}")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("streamed", STREAMED)
@pytest.mark.parametrize("status", [400, 403])
async def test_an_invalid_key_is_an_authentication_error(
    path: Any, streamed: bool, status: int
) -> None:
    grpc = "INVALID_ARGUMENT" if status == 400 else "PERMISSION_DENIED"
    details = [{"@type": ERROR_INFO, "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]
    with server_of(echoing(status, grpc, details)) as server:
        err = await failure(path, streamed, server.url)
    assert type(err) is AuthenticationError
    assert (err.status, err.code, err.retryable) == (status, "API_KEY_INVALID", False)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("streamed", STREAMED)
async def test_429_carries_retry_after_and_the_rate_limit_headers(
    path: Any, streamed: bool
) -> None:
    headers = {
        "retry-after": "3",
        "x-ratelimit-limit-requests": "10",
        "x-ratelimit-remaining-requests": "0",
    }
    body = error(429, "RESOURCE_EXHAUSTED", "slow down")
    with server_of(Reply(status=429, json=body, headers=headers)) as server:
        err = await failure(path, streamed, server.url)
    assert type(err) is RateLimitError
    assert (err.status, err.code, err.retryable, err.retry_after) == (
        429,
        "RESOURCE_EXHAUSTED",
        True,
        3.0,
    )
    assert err.headers == headers


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("streamed", STREAMED)
@pytest.mark.parametrize(("status", "grpc"), [(500, "INTERNAL"), (503, "UNAVAILABLE")])
async def test_5xx_are_retried(path: Any, streamed: bool, status: int, grpc: str) -> None:
    delays: list[float] = []
    with server_of(echoing(status, grpc), OK_STREAM if streamed else OK) as server:
        rt = runtime(MODEL, delays, **settings(path, server.url))
        if streamed:
            result = (await stream(path[0], rt, content="Hi"))[-1].result
        else:
            result = await run(path[0], rt, content="Hi")
        assert len(server.requests) == 2
    err = result.failures[0].error
    assert type(err) is OverloadedError
    assert (err.status, err.code, err.retryable) == (status, grpc, True)
    assert leaks(err) == []
    assert result.output == "fine"


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("streamed", STREAMED)
@pytest.mark.parametrize("ctype", ["text/html", "application/json"])
@pytest.mark.parametrize(("status", "cls"), [(400, BadRequestError), (503, OverloadedError)])
async def test_an_error_status_with_a_body_that_is_not_json_keeps_its_status(
    path: Any, streamed: bool, ctype: str, status: int, cls: type[ProviderError]
) -> None:
    # A proxy's error page, even one labelled JSON, is still that status's error.
    page = Reply(
        status=status, body=b"<html>upstream says no</html>", headers={"content-type": ctype}
    )
    with server_of(page) as server:
        err = await failure(path, streamed, server.url)
    assert type(err) is cls
    reason = "Bad Request" if status == 400 else "Service Unavailable"  # the reason phrase
    assert (err.status, err.code, err.retryable) == (status, reason, status >= 500)
    assert str(err) == f"gemini {status} {reason}: <html>upstream says no</html>"


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("streamed", STREAMED)
async def test_an_error_status_with_an_empty_body_keeps_its_status(
    path: Any, streamed: bool
) -> None:
    with server_of(Reply(status=503, body=b"")) as server:
        err = await failure(path, streamed, server.url)
    assert type(err) is OverloadedError
    assert (err.status, err.code, err.retryable) == (503, "Service Unavailable", True)


# --- answers that cannot be read ----------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
async def test_a_whole_answer_that_is_not_json_is_malformed(path: Any) -> None:
    with server_of(Reply(body=b'{"candidates": [ {"content": {"pa')) as server:
        err = await failure(path, False, server.url)
    assert type(err) is MalformedResponseError
    assert err.retryable


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("streamed", STREAMED)
async def test_a_truncated_answer_is_retryable(path: Any, streamed: bool) -> None:
    cut = (
        Reply(sse=text_stream("cut", ["never ", "finished ", "at all"], 5, 3), truncate=True)
        if streamed
        else Reply(json=OK.json, truncate=True)
    )
    with server_of(cut) as server:
        err = await failure(path, streamed, server.url)
    assert isinstance(err, (MalformedResponseError, ProviderConnectionError))
    assert err.retryable


# --- connections and timeouts ---------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("streamed", STREAMED)
async def test_connection_refused(path: Any, streamed: bool) -> None:
    with socket.socket() as sock:  # a port nobody listens on once this closes
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    err = await failure(path, streamed, f"http://127.0.0.1:{port}")
    assert type(err) is ProviderConnectionError
    assert err.retryable


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("streamed", STREAMED)
async def test_connection_reset(path: Any, streamed: bool) -> None:
    with server_of(Reply(reset=True)) as server:
        err = await failure(path, streamed, server.url)
    assert type(err) is ProviderConnectionError
    assert err.retryable


@contextmanager
def hanging_up() -> Iterator[str]:
    """A server that reads each request, then closes the connection without a word."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.05)
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                data = b""
                while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(body) < length and (chunk := conn.recv(65536)):
                    body += chunk
                # The whole request read (unread bytes would make close() send an RST):
                # FIN, an orderly hang-up with no answer.
                conn.shutdown(socket.SHUT_RDWR)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        done.set()
        thread.join()
        listener.close()


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("streamed", STREAMED)
async def test_server_disconnected_without_an_answer(path: Any, streamed: bool) -> None:
    with hanging_up() as url:
        err = await failure(path, streamed, url)
    assert type(err) is ProviderConnectionError
    assert err.retryable


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("streamed", STREAMED)
async def test_timeout(path: Any, streamed: bool) -> None:
    slow = (
        Reply(delay=0.6, sse=text_stream("s", ["late"], 5, 1))
        if streamed
        else Reply(delay=0.6, json=OK.json)
    )
    with server_of(slow) as server:
        err = await failure(path, streamed, server.url, timeout=0.2)
    assert type(err) is ProviderTimeoutError
    assert err.retryable


# --- the happy path on each transport ---------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("streamed", STREAMED)
async def test_answers_arrive_the_same(path: Any, streamed: bool) -> None:
    with server_of(OK_STREAM if streamed else OK) as server:
        result = await call(path, streamed, server.url)
        sent = server.requests[0]
    assert result.output == "fine"
    assert sent.method == "POST"
    assert sent.path.endswith(":streamGenerateContent?alt=sse" if streamed else ":generateContent")
    assert sent.json()["contents"] == [{"parts": [{"text": "Hi"}], "role": "user"}]


# --- proxies from the environment -------------------------------------------------------------

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "ws_proxy", "wss_proxy")


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


@pytest.mark.usefixtures("no_proxy_env")
@pytest.mark.parametrize("path", PATHS)
async def test_a_proxy_from_the_environment_is_used(
    path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with server_of(OK) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        result = await call(path, False, "http://gemini.invalid")  # resolvable only by the proxy
        sent = proxy.requests[0]
    assert result.output == "fine"
    assert sent.path == "http://gemini.invalid/v1beta/models/gemini-2.5-flash:generateContent"


@pytest.mark.usefixtures("no_proxy_env")
async def test_the_aiohttp_session_reads_the_environment_only_when_it_names_a_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With trust_env, aiohttp looks proxies and .netrc up in a thread on every request.
    from llmport_gemini import aio

    without = aio.session()
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    with_proxy = aio.session()
    assert (without.trust_env, with_proxy.trust_env) == (False, True)
    await without.close()
    await with_proxy.close()
