"""The provider contract: prepare once, send many; clients per event loop; errors
that chain nothing and leak no key; vendor fields. Loopback server only."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import traceback
from typing import Any

import pytest
from gemini_helpers import isolated, run, runtime  # noqa: F401  (isolated: autouse)
from llmport import AuthenticationError, BadRequestError, ExecFailed, OverloadedError
from llmport.errors import PermissionDeniedError
from llmport.messages.types import Message, Request, TextBlock, ToolSpec
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from support.gemini_scenarios import answer, error, text_stream, usage

MODES = ["sync", "async"]
FLASH = "gemini:gemini-2.5-flash"
OK = Reply(json=answer("ok", [{"text": "fine"}], usage(5, 1)))
OK_STREAM = Reply(sse=text_stream("ok", ["fi", "ne"], 5, 1))

#: A key of Google's shape, and one of no known shape (a gateway's).
AIZA_KEY = "AIzaSyLEAKtest_0123456789abcdefghijklm"
CUSTOM_KEY = "LEAKcustomproxykey-0123456789abcdef"


def lookup(name: str) -> str:
    """Look a name up."""
    return f"found {name}"


def ok(streamed: bool) -> Reply:
    return OK_STREAM if streamed else OK


# --- prepare once ------------------------------------------------------------------------


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often the request is prepared, its contents converted and its family looked up."""
    from llmport_gemini import convert_in, provider

    counts = {"prepare": 0, "contents": 0, "family": 0}

    def counting(name: str, module: Any, attr: str) -> None:
        original = getattr(module, attr)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, attr, wrapper)

    counting("prepare", convert_in, "build_request")
    counting("contents", convert_in, "contents")
    counting("family", provider, "family_for")
    return counts


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("streamed", [False, True])
async def test_a_retry_resends_the_request_prepared_once(
    mode: str, streamed: bool, counted: dict[str, int]
) -> None:
    busy = Reply(status=503, json=error(503, "UNAVAILABLE", "busy"))
    vendor = {"gemini": {"generationConfig": {"responseModalities": ["TEXT"]}}}
    with LoopbackServer([busy, ok(streamed)]) as server:
        result = await run(
            mode,
            runtime(FLASH, base_url=server.url),
            content="Hi",
            vendor=vendor,
            tools=[lookup],
            temperature=0.5,
            stream=streamed,
        )
        first, second = (r.json() for r in server.requests)
    assert result.output == "fine" and isinstance(result.failures[0].error, OverloadedError)
    assert first == second  # the same body, vendor fields and function declarations included
    assert [d["name"] for d in first["tools"][0]["functionDeclarations"]] == ["lookup"]
    assert first["generationConfig"] == {"temperature": 0.5, "responseModalities": ["TEXT"]}
    assert counted == {"prepare": 1, "contents": 1, "family": 1}


@pytest.mark.parametrize("mode", MODES)
async def test_each_model_request_of_a_tool_loop_is_prepared_once(
    mode: str, counted: dict[str, int]
) -> None:
    call = answer("t", [{"functionCall": {"name": "lookup", "args": {"name": "a"}}}], usage(5, 2))
    with LoopbackServer([Reply(json=call), OK]) as server:
        result = await run(mode, runtime(FLASH, base_url=server.url), content="Hi", tools=[lookup])
        assert len(server.requests) == 2
    assert result.output == "fine"
    # Two model requests: each prepared once; the family is looked up once per model.
    assert counted == {"prepare": 2, "contents": 2, "family": 1}


# --- clients -------------------------------------------------------------------------------


def test_one_runtime_across_two_event_loops_then_close() -> None:
    clients: list[Any] = []
    with LoopbackServer([OK, OK, OK]) as server:
        rt = runtime(FLASH, max_retries=1, base_url=server.url)

        async def once() -> Any:
            out = await rt.async_exec("hi")
            (provider,) = rt.targets.providers()
            clients.append(await provider.async_client())  # this loop's client
            return out

        assert asyncio.run(once()) == "fine"
        assert asyncio.run(once()) == "fine"  # a new loop: a new client, not the closed one
        assert rt.exec("hi") == "fine"
        (provider,) = rt.targets.providers()
        sync_client = provider.client()
        rt.close()
        assert len(server.requests) == 3
    first, second = (c._api_client for c in clients)
    assert first is not second
    # Each loop's transport (and the SDK's own pool) was closed in that loop when it shut down.
    for api in (first, second):
        assert api._async_httpx_client.is_closed and api._httpx_client.is_closed
    assert sync_client._api_client._httpx_client.is_closed  # rt.close()


async def test_aclose_closes_the_running_loops_client() -> None:
    with LoopbackServer([OK]) as server:
        rt = runtime(FLASH, base_url=server.url)
        assert await rt.async_exec("hi") == "fine"
        (provider,) = rt.targets.providers()
        api = (await provider.async_client())._api_client
        assert not api._async_httpx_client.is_closed
        await rt.aclose()
    assert api._async_httpx_client.is_closed and api._httpx_client.is_closed


# --- errors: typed, chained to nothing, no key ---------------------------------------------


def echoing(status: int, grpc: str) -> Reply:
    """An error whose message and details echo the API key the request carried."""

    def handler(request: RecordedRequest) -> Reply:
        key = request.headers.get("x-goog-api-key", "")
        info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "metadata": {"key": key}}
        return Reply(status=status, json=error(status, grpc, f"rejected key {key}", [info]))

    return Reply(handler=handler)


def shows(err: BaseException, key: str) -> bool:
    """Whether ``key`` appears anywhere a user or a log would see ``err``."""
    text = "".join(traceback.format_exception(err)) + repr(err)
    return key in text or key in (getattr(err, "vendor_error", None) or "")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("key", [AIZA_KEY, CUSTOM_KEY])
async def test_a_key_echoed_in_a_permanent_error_never_leaks(
    mode: str, streamed: bool, key: str
) -> None:
    with LoopbackServer([echoing(400, "INVALID_ARGUMENT")]) as server:
        with pytest.raises(BadRequestError) as info:
            rt = runtime(FLASH, base_url=server.url, api_key=key)
            await run(mode, rt, content="Hi", stream=streamed)
        assert server.requests[0].headers["x-goog-api-key"] == key  # it was sent and echoed
    err = info.value
    assert err.__cause__ is None and err.__context__ is None
    assert "rejected key ***" in str(err)
    assert (err.vendor_error or "").startswith("ClientError: 400 INVALID_ARGUMENT")
    assert not shows(err, key)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("key", [AIZA_KEY, CUSTOM_KEY])
async def test_a_key_echoed_by_every_retried_5xx_never_leaks(
    mode: str, streamed: bool, key: str
) -> None:
    with LoopbackServer([echoing(503, "UNAVAILABLE")] * 2) as server:
        with pytest.raises(ExecFailed) as info:
            rt = runtime(FLASH, base_url=server.url, api_key=key, max_retries=2)
            await run(mode, rt, content="Hi", stream=streamed)
        assert len(server.requests) == 2
    failed = info.value
    assert len(failed.attempts) == 2
    for attempt in failed.attempts:
        assert isinstance(attempt.error, OverloadedError)
        assert attempt.error.__cause__ is None and attempt.error.__context__ is None
        assert not shows(attempt.error, key)
    assert not shows(failed, key)


INVALID_KEY_DETAILS = [
    {
        "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
        "locale": "en-US",
        "message": "API key not valid. Please pass a valid API key.",
    },
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reason", ["API_KEY_INVALID", "API_KEY_EXPIRED"])
async def test_an_invalid_key_is_an_authentication_error(mode: str, reason: str) -> None:
    # What the Gemini API answers for a bad key: 400 INVALID_ARGUMENT plus an ErrorInfo reason.
    details = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": reason,
            "domain": "googleapis.com",
            "metadata": {"service": "generativelanguage.googleapis.com"},
        },
        *INVALID_KEY_DETAILS,
    ]
    message = "API key not valid. Please pass a valid API key."
    body = error(400, "INVALID_ARGUMENT", message, details)
    with LoopbackServer([Reply(status=400, json=body), OK]) as server:
        with pytest.raises(AuthenticationError) as info:
            await run(mode, runtime(FLASH, base_url=server.url), content="Hi")
        assert len(server.requests) == 1  # permanent: never retried
    err = info.value
    assert not isinstance(err, PermissionDeniedError)
    assert (err.status, err.code, err.retryable) == (400, reason, False)
    assert str(err) == f"gemini 400 {reason}: {message}"


@pytest.mark.parametrize("mode", MODES)
async def test_other_invalid_arguments_stay_bad_requests(mode: str) -> None:
    body = error(400, "INVALID_ARGUMENT", "Invalid value at 'contents'", INVALID_KEY_DETAILS)
    with (
        LoopbackServer([Reply(status=400, json=body)]) as server,
        pytest.raises(BadRequestError) as info,
    ):
        await run(mode, runtime(FLASH, base_url=server.url), content="Hi")
    assert info.value.code == "INVALID_ARGUMENT"


# --- vendor fields -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("streamed", [False, True])
async def test_vendor_fields_merge_into_the_body(mode: str, streamed: bool) -> None:
    vendor = {
        "gemini": {
            "generationConfig": {
                "responseModalities": ["TEXT"],
                "thinkingConfig": {"includeThoughts": True},
            },
            "toolConfig": {"functionCallingConfig": {"allowedFunctionNames": ["lookup"]}},
            "tools": [{"googleSearch": {}}],
            "cachedContent": "cachedContents/abc123",
        },
        "openai": {"user": "u1"},  # another vendor's fields are not sent here
    }
    with LoopbackServer([ok(streamed)]) as server:
        await run(
            mode,
            runtime(FLASH, base_url=server.url),
            content="Hi",
            tools=[lookup],
            tool_choice="required",
            temperature=0.5,
            vendor=vendor,
            stream=streamed,
        )
        body = server.requests[0].json()
    # Objects merge with what llmport built; tool entries are added after the functions.
    assert body["generationConfig"] == {
        "temperature": 0.5,
        "responseModalities": ["TEXT"],
        "thinkingConfig": {"includeThoughts": True},
    }
    assert body["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["lookup"]}
    }
    functions, search = body["tools"]
    assert [d["name"] for d in functions["functionDeclarations"]] == ["lookup"]
    assert search == {"googleSearch": {}}
    assert body["cachedContent"] == "cachedContents/abc123"
    assert "user" not in body
    assert body["contents"] == [{"parts": [{"text": "Hi"}], "role": "user"}]


@pytest.mark.parametrize("mode", MODES)
async def test_a_tools_vendor_fields_merge_into_its_declaration(mode: str) -> None:
    from llmport_gemini.provider import GeminiProvider

    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    search = ToolSpec(
        "search",
        "Search the web.",
        schema,
        vendor={
            "gemini": {
                "behavior": "NON_BLOCKING",
                "parameters_json_schema": {"properties": {"q": {"description": "the query"}}},
            },
            "anthropic": {"defer_loading": True},
        },
    )
    plain = ToolSpec("plain", "No vendor fields.", {})
    request = Request(
        "gemini-2.5-flash", [Message("user", (TextBlock("Hi"),))], tools=[search, plain]
    )
    with LoopbackServer([OK]) as server:
        provider = GeminiProvider({"api_key": "test-key", "base_url": server.url})
        prepared = provider.prepare(request)
        if mode == "sync":
            response = provider.send(prepared)
            provider.close()
        else:
            response = await provider.asend(prepared)
            await provider.aclose()
        body = server.requests[0].json()
    assert response.text == "fine"
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "search",
                    "description": "Search the web.",
                    "behavior": "NON_BLOCKING",
                    "parameters_json_schema": {
                        "type": "object",
                        "properties": {"q": {"type": "string", "description": "the query"}},
                        "required": ["q"],
                    },
                },
                {
                    "name": "plain",
                    "description": "No vendor fields.",
                    "parameters_json_schema": {"type": "object", "properties": {}},
                },
            ]
        }
    ]
    assert schema == {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


# --- module structure ------------------------------------------------------------------------


def test_the_provider_imports_neither_the_entry_point_nor_the_sdk() -> None:
    code = (
        "import sys, llmport_gemini.provider, llmport_gemini.convert_in; "
        "assert 'llmport_gemini.plugin' not in sys.modules, 'plugin imported'; "
        "assert 'google.genai' not in sys.modules, 'SDK imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
