"""Streams read from their JSON give exactly the events google-genai's stream objects give.

``send_stream`` / ``asend_stream`` post the prepared JSON body to
``:streamGenerateContent?alt=sse`` and read each chunk's JSON
(``StreamState.feed_json``); chunks the JSON reader does not cover are built
as google-genai's objects, and a continuation token hands the stream over to
google-genai's own continuation. Each script here runs on both paths (the
JSON one and ``generate_content_stream`` with the same request as the SDK's
objects), on every transport, against a loopback server: same events, or the
same error, and the same requests.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from gemini_helpers import isolated  # noqa: F401  (autouse)
from llmport.messages.types import MediaBlock, Message, Request, TextBlock, ToolSpec, block_to_dict
from llmport.provider.contract import Prepared
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_gemini import convert_out
from llmport_gemini.provider import GeminiProvider
from support.gemini_scenarios import answer, error, text_stream, usage

MODEL = "gemini-2.5-flash"
SIG = base64.b64encode(b"\xfb\xff\xfe signature").decode()
TRANSPORTS = ["sync", "aiohttp", "httpx"]
TOOL = ToolSpec("get_weather", "Weather.", {"type": "object", "properties": {}})


def chunk(parts: list[dict[str, Any]], finish: str | None = None, **top: Any) -> dict[str, Any]:
    data = answer("r1", parts, top.pop("use", None) or {"promptTokenCount": 3}, finish=finish)
    data.update(top)
    return {"data": data}


GROUNDING = {
    "groundingChunks": [{"web": {"uri": "https://example.com", "title": "Example"}}],
    "groundingSupports": [
        {  # UTF-8 byte offsets of "Zürich" in "Gruß: Zürich"; no segment text
            "segment": {"startIndex": 7, "endIndex": 14},
            "groundingChunkIndices": [0],
        }
    ],
    "webSearchQueries": ["where"],
}

SCRIPTS: dict[str, list[Reply]] = {
    "text": [Reply(sse=text_stream("r1", ["The capital ", "is Paris."], 5, 3))],
    "thoughts_signatures_calls": [
        Reply(
            sse=[
                chunk([{"text": "hmm", "thought": True, "thoughtSignature": SIG}]),
                chunk([{"text": "more", "thought": True}]),
                chunk([{"text": "Calling.", "thoughtSignature": SIG}]),
                chunk(
                    [
                        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
                        {
                            "functionCall": {"name": "get_weather", "args": {}, "id": "c2"},
                            "thoughtSignature": SIG,
                        },
                    ],
                    "STOP",
                    use=usage(5, 7, thoughts=4),
                ),
            ]
        )
    ],
    "grounding_bytes_to_characters": [
        Reply(
            sse=[
                chunk([{"text": "Gruß: Zürich"}]),
                {
                    "data": {
                        "candidates": [
                            {
                                "content": {"parts": [{"text": " ist schön."}], "role": "model"},
                                "finishReason": "STOP",
                                "groundingMetadata": GROUNDING,
                            }
                        ],
                        "usageMetadata": usage(4, 6),
                        "modelVersion": MODEL,
                    }
                },
            ]
        )
    ],
    "code_execution_then_an_unread_part_after_a_call": [
        Reply(
            sse=[
                chunk([{"executableCode": {"language": "PYTHON", "code": "1+1"}}]),
                chunk([{"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "2"}}]),
                chunk(
                    [
                        {"functionCall": {"name": "get_weather", "args": {}}},
                        {"inlineData": {"mimeType": "image/png", "data": "iVBORw=="}},
                    ]
                ),
                chunk([{"text": "done"}], "STOP", use=usage(3, 2)),
            ]
        )
    ],
    "usage_only_and_empty_chunks": [
        Reply(
            sse=[
                chunk([{"text": "a"}]),
                {"data": {}},
                {"data": {"usageMetadata": usage(2, 1), "modelVersion": MODEL}},
                chunk([], "MAX_TOKENS"),
            ]
        )
    ],
    "unknown_finish_reason_and_prompt_feedback": [
        Reply(
            sse=[
                chunk([{"text": "a"}], "SOMETHING_NEW"),
                {"data": {"promptFeedback": {"blockReason": "SAFETY"}}},
            ]
        )
    ],
    "no_finish_reason": [Reply(sse=[chunk([{"text": "cut "}]), chunk([{"text": "short"}])])],
    "error_event_mid_stream": [
        Reply(
            sse=[
                chunk([{"text": "partial"}]),
                {"data": error(500, "INTERNAL", "boom")},
                chunk([{"text": "never"}], "STOP"),
            ]
        )
    ],
    "error_status": [Reply(status=400, json=error(400, "INVALID_ARGUMENT", "bad"))],
    "not_json": [Reply(sse=[chunk([{"text": "a"}]), "{not json"])],
    "continuation": [
        Reply(
            sse=[
                chunk([{"text": "first "}]),
                {
                    "data": {
                        "candidates": [
                            {
                                "content": {"parts": [{"text": "half"}], "role": "model"},
                                "finishReason": "CONTINUATION",
                                "continuationToken": base64.b64encode(b"tok").decode(),
                            }
                        ],
                        "usageMetadata": usage(3, 2),
                    }
                },
            ]
        ),
        Reply(sse=[chunk([{"text": " and the rest"}], "STOP", use=usage(3, 4))]),
    ],
}


async def events_of(provider: GeminiProvider, prepared: Prepared, transport: str) -> Any:
    out: list[Any] = []
    try:
        if transport == "sync":
            out.extend(provider.send_stream(prepared))
        else:
            async for event in provider.asend_stream(prepared):
                out.append(event)
    except Exception as exc:  # the translated error: compared by class and text
        out.append((type(exc).__name__, str(exc), getattr(exc, "status", None)))
    # An answered image (a MediaBlock event) compares by identity: compared by its content.
    return [block_to_dict(e) if isinstance(e, MediaBlock) else e for e in out]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("name", sorted(SCRIPTS))
async def test_the_json_stream_gives_the_sdk_streams_events(transport: str, name: str) -> None:
    replies = SCRIPTS[name]
    settings: dict[str, Any] = {"api_key": "k"}
    if transport != "sync":
        settings["async_transport"] = transport
    request = Request(
        model=MODEL,
        messages=[Message("user", (TextBlock("Wie heißt es?"),))],
        tools=[TOOL],
        stream=True,
    )
    results, sent = [], []
    for side in ("json", "sdk"):
        with LoopbackServer(list(replies)) as server:
            provider = GeminiProvider({**settings, "base_url": server.url})
            prepared = provider.prepare(request)
            assert "body" in prepared.payload  # the JSON path is the default for streams
            if side == "sdk":
                prepared = Prepared(request, provider._stream_args(prepared))
            results.append(await events_of(provider, prepared, transport))
            if transport == "sync":
                provider.close()
            else:
                await provider.aclose()
        sent.append([(r.method, r.path, r.body) for r in server.requests])
    assert results[0] == results[1]
    assert sent[0] == sent[1]
    assert results[0]  # every script gives events or an error


def test_a_chunk_not_read_from_json_leaves_the_turn_as_it_was() -> None:
    state = convert_out.StreamState(MODEL)
    data = chunk(
        [
            {"text": "t", "thought": True},
            {"functionCall": {"name": "f", "args": {}}},
            {"executableCode": {"code": "1"}},
        ],
        responseId="r9",
    )["data"]
    assert convert_out._chunk_json(state.turn, data) is None
    turn = state.turn
    assert (turn.calls, turn.keys, turn.in_thought, turn.id, turn.model) == ([], 0, False, None, "")
