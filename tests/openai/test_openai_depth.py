"""Vendor depth on both OpenAI APIs: cassette replays with exact bodies.

Every replay runs sync and async (``drive``); each feature has a streamed
scenario too. Bodies are compared whole, so the shapes of the real
recordings in ../shared/wire-samples are held exactly.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llmport.messages.types import (
    CitationEvent,
    FinalEvent,
    Message,
    ServerToolCall,
    ServerToolEvent,
    ServerToolResult,
    TextBlock,
    ThinkingBlock,
    ThinkingDelta,
)
from make_cassettes import count_request
from openai_depth_scenarios import (
    CACHE_PREFIX,
    CODE_OUTPUT,
    ENCRYPTED_1,
    PLAN_CALL,
    PLAN_SUMMARY,
    REASONING_PLAN,
    SEARCH_TEXT,
    STREET_OUTPUT,
    WEB_OUTPUT,
    WEB_TEXT,
)
from openai_helpers import request_json
from support.openai_scenarios import scenarios

SC = scenarios()


def replay(name: str, cassette: Any, drive: Any, runtime: Any) -> tuple[Any, Any]:
    sc = SC[name]
    rt = runtime(sc.model)
    with cassette(sc.cassette) as cass:
        if sc.stream:
            result = drive.stream(rt, model=sc.model, **sc.kwargs())
        else:
            result = drive.run(rt, model=sc.model, **sc.kwargs())
            if sc.then is not None:
                result = drive.run(rt, model=sc.model, **sc.then(result))
    return result, cass


def final(events: list[Any]) -> Any:
    assert isinstance(events[-1], FinalEvent)
    return events[-1].result


PLAN_SYSTEM = "You are a helpful assistant that uses planning. Use the update_plan tool."
PLAN_TOOL = {
    "type": "function",
    "name": "update_plan",
    "description": "",
    "parameters": {
        "type": "object",
        "properties": {"plan": {"type": "string"}},
        "required": ["plan"],
        "additionalProperties": False,
    },
    "strict": True,
}
PLAN_USER = {
    "role": "user",
    "content": 'Compose a 6-line poem whose odd lines spell "SAM" and even lines "DAW".',
}
#: The reasoning item exactly as the API returned it (reasoning-tool-loop.json's shape).
REASONING_ECHO = dict(REASONING_PLAN)
CALL_ECHO = {k: v for k, v in PLAN_CALL.items() if k != "status"}


# --- Responses: reasoning -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["responses_reasoning_loop", "responses_reasoning_loop_stream"])
def test_reasoning_tool_loop_echoes_the_reasoning_item_exactly(
    name: str, cassette: Any, drive: Any, runtime: Any
) -> None:
    result, cass = replay(name, cassette, drive, runtime)
    first, second = request_json(cass, 0), request_json(cass, 1)
    common = {
        "model": "gpt-5",
        "instructions": PLAN_SYSTEM,
        "reasoning": {"effort": "low", "summary": "detailed"},
        "include": ["reasoning.encrypted_content"],
        "tools": [PLAN_TOOL],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
    }
    if name.endswith("stream"):
        common["stream"] = True
    assert first == {**common, "input": [PLAN_USER]}
    assert second == {
        **common,
        "input": [
            PLAN_USER,
            REASONING_ECHO,  # encrypted_content, id and summary exactly as received
            CALL_ECHO,
            {
                "type": "function_call_output",
                "call_id": "call_gL7JE6GDeGGsFubqO2XGytyO",
                "output": "plan updated",
            },
        ],
    }
    run = final(result) if name.endswith("stream") else result
    summary = "\n\n".join(p["text"] for p in PLAN_SUMMARY)
    assert run.thinking == summary
    thinking = run.messages[1].blocks[0]
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.vendor == "openai-responses" and thinking.redacted == ENCRYPTED_1
    assert thinking.extra == {"id": REASONING_PLAN["id"], "summary": PLAN_SUMMARY}
    assert run.usage.reasoning_tokens == 1792 and run.usage.cache_read_tokens == 2048
    if name.endswith("stream"):
        deltas = [e for e in result if isinstance(e, ThinkingDelta)]
        assert "".join(d.text for d in deltas) == summary
        assert {d.vendor for d in deltas} == {"openai-responses"}


@pytest.mark.parametrize("name", ["responses_reasoning_text", "responses_reasoning_stream"])
def test_reasoning_summaries_become_thinking(
    name: str, cassette: Any, drive: Any, runtime: Any
) -> None:
    result, cass = replay(name, cassette, drive, runtime)
    body = request_json(cass, 0)
    expected = {
        "model": "o3-mini",
        "input": [{"role": "user", "content": "How do I cross the street?"}],
        "reasoning": {"effort": "high", "summary": "detailed"},
        "include": ["reasoning.encrypted_content"],
    }
    if name.endswith("stream"):
        expected["stream"] = True
    assert body == expected  # reasoning-stream.json's body
    run = final(result) if name.endswith("stream") else result
    item = STREET_OUTPUT[0]
    assert run.thinking == "\n\n".join(p["text"] for p in item["summary"])
    blocks = run.messages[-1].blocks
    assert [type(b) for b in blocks] == [ThinkingBlock, TextBlock]
    assert blocks[0].redacted == item["encrypted_content"]
    assert blocks[1].text == run.output
    assert run.messages[-1].extra == {"openai_message_ids": [STREET_OUTPUT[1]["id"]]}


# --- Responses: native tools and citations ------------------------------------------------


@pytest.mark.parametrize("name", ["responses_web_search", "responses_web_search_stream"])
def test_web_search_items_and_url_citations(
    name: str, cassette: Any, drive: Any, runtime: Any
) -> None:
    result, cass = replay(name, cassette, drive, runtime)
    body = request_json(cass, 0)
    body.pop("stream", None)
    assert body == {  # citations-web-search.json's body (less pydantic-ai's previous_response_id)
        "model": "gpt-5",
        "input": [{"role": "user", "content": "Give me the top 3 news in the world today"}],
        "include": ["reasoning.encrypted_content"],
        "tools": [{"type": "web_search"}],
        "tool_choice": "auto",
    }
    run = final(result) if name.endswith("stream") else result
    assert run.output == WEB_TEXT
    blocks = run.messages[-1].blocks
    assert [type(b) for b in blocks] == [ThinkingBlock, ServerToolCall, TextBlock]
    call = blocks[1]
    assert call.name == "web_search" and call.raw == WEB_OUTPUT[1]
    assert call.input == {"query": "top world news September 12, 2025 Reuters", "type": "search"}
    cites = blocks[2].citations
    assert [(c.kind, c.start, c.end) for c in cites] == [("url", 37, 85), ("url", 88, 135)]
    assert (
        cites[0].url.startswith("https://www.reuters.com/")
        and cites[0].vendor == "openai-responses"
    )
    assert WEB_TEXT[cites[1].start : cites[1].end].startswith("Nepal appoints")
    if name.endswith("stream"):
        assert len([e for e in result if isinstance(e, CitationEvent)]) == 2
        assert [e.block.name for e in result if isinstance(e, ServerToolEvent)] == ["web_search"]


def test_code_interpreter_round_trip_echoes_items_verbatim(
    cassette: Any, drive: Any, runtime: Any
) -> None:
    run, cass = replay("responses_code_interpreter", cassette, drive, runtime)
    first, second = request_json(cass, 0), request_json(cass, 1)
    common = {
        "model": "gpt-5",
        "reasoning": {"effort": "low", "summary": "detailed"},
        "include": ["reasoning.encrypted_content", "code_interpreter_call.outputs"],
        "tools": [{"type": "code_interpreter", "container": {"type": "auto"}}],
        "tool_choice": "auto",
    }
    question = {"role": "user", "content": "what is 65465-6544 * 65464-6+1.02255"}
    assert first == {**common, "input": [question]}
    message = CODE_OUTPUT[3]
    assert second == {
        **common,
        "input": [
            question,
            CODE_OUTPUT[0],
            CODE_OUTPUT[1],  # the code_interpreter_call item verbatim
            CODE_OUTPUT[2],
            {  # the message item that followed the reasoning, with its id
                "type": "message",
                "role": "assistant",
                "id": message["id"],
                "status": "completed",
                "content": [
                    {
                        "type": "output_text",
                        "text": message["content"][0]["text"],
                        "annotations": [],
                    }
                ],
            },
            {"role": "user", "content": "how about 2 to the power of 8?"},
        ],
    }
    assert run.output == "256"


def test_code_interpreter_stream_yields_server_tool_events(
    cassette: Any, drive: Any, runtime: Any
) -> None:
    events, cass = replay("responses_code_interpreter_stream", cassette, drive, runtime)
    assert request_json(cass, 0)["tools"] == [
        {"type": "code_interpreter", "container": {"type": "auto"}}
    ]
    servers = [e.block for e in events if isinstance(e, ServerToolEvent)]
    assert [type(b) for b in servers] == [ServerToolCall, ServerToolResult]
    assert servers[0].raw == CODE_OUTPUT[1] and servers[0].input["code"].startswith("# compute")
    assert servers[1].content == [{"logs": "-428330955.97745", "type": "logs"}]
    blocks = final(events).messages[-1].blocks
    kinds = [type(b).__name__ for b in blocks]
    assert kinds == [
        "ThinkingBlock",
        "ServerToolCall",
        "ServerToolResult",
        "ThinkingBlock",
        "TextBlock",
    ]


@pytest.mark.parametrize("name", ["responses_file_search", "responses_file_search_stream"])
def test_file_search_and_file_citations(name: str, cassette: Any, drive: Any, runtime: Any) -> None:
    result, cass = replay(name, cassette, drive, runtime)
    body = request_json(cass, 0)
    body.pop("stream", None)
    assert body == {  # native-file-search.json's body
        "model": "gpt-4o",
        "instructions": "You are a helpful assistant.",
        "input": [{"role": "user", "content": "Tell me about the Eiffel Tower."}],
        "tools": [
            {"type": "file_search", "vector_store_ids": ["vs_6931d72a43048191bbe7518b93c1d8ed"]}
        ],
        "tool_choice": "auto",
    }
    run = final(result) if name.endswith("stream") else result
    blocks = run.messages[-1].blocks
    assert [type(b) for b in blocks] == [ServerToolCall, TextBlock]
    assert blocks[0].name == "file_search" and blocks[0].input == {"queries": ["Eiffel Tower"]}
    (cite,) = blocks[1].citations
    assert (cite.kind, cite.file_id, cite.title, cite.start) == (
        "file",
        "file-U6Ke78qu8nkANsrCrjoYBr",
        "tmp2zuepgia.txt",
        69,
    )


def test_text_file_is_sent_as_an_input_file(cassette: Any, drive: Any, runtime: Any) -> None:
    run, cass = replay("responses_text_file", cassette, drive, runtime)
    assert request_json(cass, 0)["input"][0]["content"][1] == {
        "type": "input_file",
        "filename": "note.txt",
        "file_data": "data:text/plain;base64,QnV5IGtpd2lzLgo=",
    }
    assert run.output == "The note says: buy kiwis."


# --- Responses: token counting ------------------------------------------------------------


def test_count_tokens_through_the_input_tokens_endpoint(
    cassette: Any, drive: Any, runtime: Any
) -> None:
    sc = SC["responses_count_tokens"]
    rt = runtime(sc.model)
    provider = rt.route(sc.model)[0]
    assert provider.capabilities("gpt-4.1-mini").count_tokens is True
    with cassette(sc.cassette) as cass:
        if drive.is_async:

            async def count() -> int:
                try:
                    return await provider.acount_tokens(count_request(sc))
                finally:
                    await provider.aclose()

            tokens = asyncio.run(count())
        else:
            tokens = provider.count_tokens(count_request(sc))
    assert tokens == 51
    assert cass.requests[0].uri == "https://api.openai.com/v1/responses/input_tokens"
    assert request_json(cass, 0) == {  # count-tokens.json's body
        "model": "gpt-4.1-mini",
        "input": [{"role": "user", "content": "What is the weather in Paris?"}],
        "tool_choice": "required",
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "description": "Get the weather for a location",
                "parameters": {
                    "type": "object",
                    "properties": {"location": {"type": "string"}},
                    "additionalProperties": False,
                },
                "strict": False,
            }
        ],
    }


# --- Chat ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["chat_reasoning", "chat_reasoning_stream"])
def test_chat_reasoning_effort(name: str, cassette: Any, drive: Any, runtime: Any) -> None:
    result, cass = replay(name, cassette, drive, runtime)
    body = request_json(cass, 0)
    expected: dict[str, Any] = {
        "model": "o3-mini",
        "messages": [{"role": "user", "content": "How do I cross the river?"}],
        "reasoning_effort": "high",  # reasoning-effort.json
    }
    if name.endswith("stream"):
        expected.update(stream=True, stream_options={"include_usage": True})
    assert body == expected
    run = final(result) if name.endswith("stream") else result
    assert run.usage.reasoning_tokens == 1792 and run.thinking == ""
    assert run.messages[-1].blocks == (TextBlock(run.output),)  # plain text: no rich blocks


@pytest.mark.parametrize("name", ["chat_web_search", "chat_web_search_stream"])
def test_chat_web_search_options_and_citations(
    name: str, cassette: Any, drive: Any, runtime: Any
) -> None:
    result, cass = replay(name, cassette, drive, runtime)
    body = request_json(cass, 0)
    for key in ("stream", "stream_options"):
        body.pop(key, None)
    assert body == {  # native-web-search.json's body
        "model": "gpt-4o-search-preview",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "What is the current temperature?"},
        ],
        "web_search_options": {
            "search_context_size": "medium",
            "user_location": {
                "type": "approximate",
                "approximate": {"city": "Utrecht", "country": "NL"},
            },
        },
    }
    run = final(result) if name.endswith("stream") else result
    assert run.output == SEARCH_TEXT
    (block,) = run.messages[-1].blocks
    (cite,) = block.citations
    assert (cite.kind, cite.url, cite.start, cite.end, cite.vendor) == (
        "url",
        "https://www.weer.nl/utrecht",
        32,
        72,
        "openai",
    )


@pytest.mark.parametrize("name", ["chat_prompt_cache", "chat_prompt_cache_stream"])
def test_chat_explicit_cache_breakpoint_and_key(
    name: str, cassette: Any, drive: Any, runtime: Any
) -> None:
    result, cass = replay(name, cassette, drive, runtime)
    body = request_json(cass, 0)
    for key in ("stream", "stream_options"):
        body.pop(key, None)
    assert body == {  # prompt-cache.json's body
        "model": "gpt-5.6-sol",
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": CACHE_PREFIX,
                        "prompt_cache_breakpoint": {"mode": "explicit"},
                    },
                    {"type": "text", "text": "Reply with exactly: OK"},
                ],
            }
        ],
        "prompt_cache_key": "llmport-prompt-cache-e2e-chat",
        "prompt_cache_options": {"mode": "explicit", "ttl": "30m"},
    }
    run = final(result) if name.endswith("stream") else result
    assert run.usage.cache_write_tokens == 4012 and run.usage.cache_read_tokens == 0
    assert run.output == "OK"


def test_history_with_thinking_resumes_from_json(cassette: Any, drive: Any, runtime: Any) -> None:
    """A stored conversation (to_dict -> from_dict) echoes the same reasoning item."""
    sc = SC["responses_code_interpreter"]
    rt = runtime(sc.model)
    with cassette(sc.cassette):
        run = drive.run(rt, model=sc.model, **sc.kwargs())
        stored = [Message.from_dict(m.to_dict()) for m in run.messages]
        again = drive.run(rt, model=sc.model, **sc.then(type(run)(messages=stored)))
    assert again.output == "256"
