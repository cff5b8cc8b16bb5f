"""The provider contract: prepare once (every check and conversion), then send* only do I/O.

Most tests run through a Runtime against a LoopbackServer; the per-tool
``vendor`` fields are driven at the provider level (``prepare`` then
``send``), since they live on :class:`~llmport.messages.types.ToolSpec`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import llmport_openai.convert_in as convert_in
import llmport_openai.plugin as plugin
import pytest
from llmport import OptionError, UnsupportedContentError
from llmport.messages.types import MediaBlock, Message, Request, TextBlock, ToolSpec
from llmport.provider.contract import Prepared
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_openai.provider import OpenAIPrepared
from support.openai_scenarios import (
    FAKE_KEY,
    _stream_text_chunks,
    chat_usage,
    completion,
    error_body,
    message_item,
    response_obj,
)

OK = Reply(json=completion("chatcmpl-ok", content="fine", usage=chat_usage(3, 1)))
BUSY = Reply(status=500, json=error_body("The server had an error", "server_error", None))
OK_RESPONSES = Reply(
    json=response_obj("resp_ok", [message_item("msg_ok", "fine")], usage=(3, 1, 0, 0))
)


def counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Count the calls of ``convert_in.<name>`` (the whole request conversion)."""
    calls: list[int] = []
    original = getattr(convert_in, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(convert_in, name, wrapper)
    return calls


@pytest.mark.parametrize(
    "model, converter, ok",
    [
        ("openai:gpt-4o-mini", "build_chat_request", OK),
        ("openai-responses:gpt-5-mini", "build_responses_request", OK_RESPONSES),
    ],
    ids=["chat", "responses"],
)
def test_a_retry_resends_the_prepared_request_without_converting_again(
    drive: Any, runtime: Any, monkeypatch: pytest.MonkeyPatch, model: str, converter: str, ok: Reply
) -> None:
    calls = counting(monkeypatch, converter)
    with LoopbackServer([BUSY, BUSY, ok]) as server:
        rt = runtime(model, base_url=server.url + "/v1")
        run = drive.run(rt, content="hi", temperature=0.1, vendor={"openai": {"user": "u"}})
    assert run.output == "fine" and run.attempts == 3
    assert len(calls) == 1, "converted once per model request, not once per attempt"
    bodies = [r.json() for r in server.requests]
    assert bodies[0] == bodies[1] == bodies[2] and bodies[0]["user"] == "u"


def test_a_retried_stream_is_converted_once(
    drive: Any, runtime: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = counting(monkeypatch, "build_chat_request")
    words = ["po", "ng"]
    with LoopbackServer(
        [
            Reply(sse=_stream_text_chunks("cut", words), truncate=True),
            Reply(sse=_stream_text_chunks("whole", words)),
        ]
    ) as server:
        rt = runtime("openai:gpt-4o-mini", base_url=server.url + "/v1")
        events = drive.stream(rt, content="hi", stream_retry="restart")
    assert events[-1].result.output == "pong" and len(calls) == 1
    assert server.requests[0].json() == server.requests[1].json()


def provider(index: int, server: LoopbackServer) -> Any:
    return plugin.provider_infos()[index].create(
        {"api_key": FAKE_KEY, "base_url": server.url + "/v1"}
    )


def request(model: str, *tools: ToolSpec, **fields: Any) -> Request:
    return Request(
        model=model, messages=[Message("user", (TextBlock("hi"),))], tools=list(tools), **fields
    )


def test_prepare_sends_nothing_and_refuses_early() -> None:
    with LoopbackServer([OK]) as server:
        chat = provider(0, server)
        prepared = chat.prepare(request("gpt-4o-mini", options={"temperature": 0.5}))
        assert isinstance(prepared, OpenAIPrepared) and server.requests == []
        assert prepared.payload["extra_body"] == {"temperature": 0.5}
        assert prepared.stream_payload == {}  # only the form the run sends is built
        streamed = chat.prepare(request("gpt-4o-mini", stream=True))
        assert streamed.stream_payload["stream"] is True and streamed.payload == {}
        with pytest.raises(OptionError, match="presence_penalty"):
            chat.prepare(request("gpt-4o-mini", options={"presence_penalty": 1}))
        png = MediaBlock("image", "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 8, index=0)
        with pytest.raises(UnsupportedContentError, match=r"gpt-3\.5-turbo"):
            chat.prepare(Request(model="gpt-3.5-turbo", messages=[Message("user", (png,))]))
        assert chat.send(prepared).text == "fine"
        with pytest.raises(TypeError, match="prepare"):
            chat.send(Prepared(prepared.request))
        chat.close()
    assert len(server.requests) == 1


GET_RATE = {
    "type": "object",
    "properties": {"from_currency": {"type": "string"}, "to_currency": {"type": "string"}},
    "required": ["from_currency", "to_currency"],
}


def test_responses_tool_vendor_fields_build_the_tool_search_request() -> None:
    """The body of wire-samples/openai-responses/tool-search.json (a real recording)."""
    deferred = {"openai-responses": {"defer_loading": True}}
    tools = [
        ToolSpec(
            "get_exchange_rate",
            "Look up the current exchange rate between two currencies.",
            GET_RATE,
            strict=True,
            vendor=deferred,
        ),
        ToolSpec(
            "stock_lookup",
            "Look up stock price by ticker symbol.",
            {
                "type": "object",
                "properties": {"symbol": {"type": "string"}},
                "required": ["symbol"],
            },
            strict=True,
            vendor={"openai": {"defer_loading": False}, **deferred},  # openai-responses wins
        ),
    ]
    vendor = {
        "openai-responses": {
            "tools": [{"type": "tool_search"}],
            "include": ["reasoning.encrypted_content"],
        }
    }
    req = request("gpt-5.4", *tools, vendor=vendor, parallel_tool_calls=True, tool_choice="auto")
    req.messages = [Message("user", (TextBlock("What is the current USD to EUR exchange rate?"),))]
    with LoopbackServer([OK_RESPONSES]) as server:
        responses = provider(1, server)
        assert asyncio.run(responses.asend(responses.prepare(req))).text == "fine"
        asyncio.run(responses.aclose())
    body = server.requests[0].json()
    strict_rate = {**GET_RATE, "additionalProperties": False}
    assert body == {
        "model": "gpt-5.4",
        "input": [{"role": "user", "content": "What is the current USD to EUR exchange rate?"}],
        "include": ["reasoning.encrypted_content"],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "tools": [
            {"type": "tool_search"},
            {
                "type": "function",
                "name": "get_exchange_rate",
                "description": "Look up the current exchange rate between two currencies.",
                "parameters": strict_rate,
                "strict": True,
                "defer_loading": True,
            },
            {
                "type": "function",
                "name": "stock_lookup",
                "description": "Look up stock price by ticker symbol.",
                "parameters": {
                    "type": "object",
                    "properties": {"symbol": {"type": "string"}},
                    "required": ["symbol"],
                    "additionalProperties": False,
                },
                "strict": True,
                "defer_loading": True,
            },
        ],
    }


def test_chat_tool_vendor_fields_go_into_the_function_object() -> None:
    spec = ToolSpec(
        "lookup",
        "Look a word up.",
        {"type": "object", "properties": {"w": {"type": "string"}}},
        vendor={"openai": {"strict": True}, "openai-responses": {"defer_loading": True}},
    )
    with LoopbackServer([OK]) as server:
        chat = provider(0, server)
        chat.send(chat.prepare(request("gpt-4o-mini", spec)))
        chat.close()
    assert server.requests[0].json()["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "description": "Look a word up.",
                # Sent as given: vendor fields are not llmport's strict mode (Tool(strict=True)).
                "parameters": {"type": "object", "properties": {"w": {"type": "string"}}},
                "strict": True,
            },
        }
    ]
