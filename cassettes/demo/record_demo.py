"""Make core/llmport/_demo/trip.yaml: the traffic `llmport demo` replays.

The cassette is package data of the core wheel, so `llmport demo` replays it
from an installed ``llmport[demo]`` as well as from a clone.

The request side is real: the demo's agent runs through the real
llmport-openai and llmport-anthropic plugins and the real vendor SDKs,
captured by vcrpy. The answers are written here by hand in each vendor's
documented wire format (checked against ../shared/wire-samples/openai-chat/
and anthropic/) and served from a loopback server; the recorded URIs are
rewritten to the vendors' hosts. Run again after changing the demo:

    uv run python cassettes/demo/record_demo.py
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import vcr
from llmport.cli.demo import (
    CITIES,
    DEMO_ANTHROPIC,
    DEMO_CASSETTE,
    DEMO_OPENAI,
    build_agent,
    tiny_png,
)
from llmport.testing.loopback import LoopbackServer, Reply
from llmport.controls.retry import Backoff
from llmport.runtime import Runtime
from llmport.sessions.session import Session

HOSTS: dict[int, str] = {}


def openai_completion(
    n: int, message: dict[str, Any], finish: str, usage: tuple[int, int]
) -> Reply:
    return Reply(
        json={
            "id": f"chatcmpl-demo{n}",
            "object": "chat.completion",
            "created": 1763700000 + n,
            "model": "gpt-4o-mini-2024-07-18",
            "system_fingerprint": "fp_demo",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "refusal": None, "annotations": [], **message},
                    "logprobs": None,
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": usage[0],
                "completion_tokens": usage[1],
                "total_tokens": sum(usage),
                "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": 0,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            },
            "service_tier": "default",
        }
    )


def anthropic_message(
    n: int, content: list[dict[str, Any]], stop: str, usage: tuple[int, int]
) -> Reply:
    return Reply(
        json={
            "id": f"msg_demo{n}",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5-20251001",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage[0],
                "output_tokens": usage[1],
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "service_tier": "standard",
            },
        }
    )


def chunk(
    n: int, delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None
) -> Any:
    """One Chat Completions stream chunk (as in wire-samples/openai-chat/stream-text.json)."""
    choices = (
        []
        if delta is None
        else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    )
    return {
        "data": {
            "id": f"chatcmpl-demo{n}",
            "object": "chat.completion.chunk",
            "created": 1763700000 + n,
            "model": "gpt-4o-mini-2024-07-18",
            "service_tier": "default",
            "system_fingerprint": "fp_demo",
            "choices": choices,
            "usage": usage,
        }
    }


def stream_usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def streamed_weather_calls() -> Reply:
    events: list[Any] = [chunk(1, {"role": "assistant", "content": None, "refusal": None})]
    for index, city in enumerate(CITIES):
        events.append(
            chunk(
                1,
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": f"call_demo{city}",
                            "type": "function",
                            "function": {"name": "weather", "arguments": ""},
                        }
                    ]
                },
            )
        )
        for piece in ['{"ci', 'ty": "', city, '"}']:
            events.append(
                chunk(1, {"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    events += [chunk(1, {}, "tool_calls"), chunk(1, None, usage=stream_usage(118, 46)), "[DONE]"]
    return Reply(sse=events)


def streamed_forecast() -> Reply:
    words = ["Paris is sunny ", "at 22°C, while ", "Oslo has snow ", "at -3°C."]
    events: list[Any] = [chunk(2, {"role": "assistant", "content": "", "refusal": None})]
    events += [chunk(2, {"content": w}) for w in words]
    events += [chunk(2, {}, "stop"), chunk(2, None, usage=stream_usage(196, 19)), "[DONE]"]
    return Reply(sse=events)


OPENAI_REPLIES = [
    streamed_weather_calls(),
    streamed_forecast(),
    openai_completion(
        3,
        {
            "content": json.dumps(
                {"warmest_city": "Paris", "coldest_city": "Oslo", "needs_coat": True}
            )
        },
        "stop",
        (231, 17),
    ),
    openai_completion(
        4,
        {
            "content": None,
            "tool_calls": [
                {
                    "id": "call_demoHandoff",
                    "type": "function",
                    "function": {"name": "transfer_to_book_hotel", "arguments": "{}"},
                }
            ],
        },
        "tool_calls",
        (288, 14),
    ),
]

ANTHROPIC_REPLIES = [
    anthropic_message(
        1, [{"type": "text", "text": "A small, plain green square."}], "end_turn", (27, 10)
    ),
    Reply(
        status=529,
        json={
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
            "request_id": "req_demo529",
        },
    ),
    anthropic_message(
        2,
        [
            {
                "type": "text",
                "text": "Oslo is the coldest stop, with snow at -3°C, so warmth matters most.",
            }
        ],
        "end_turn",
        (402, 24),
    ),
    anthropic_message(
        3,
        [
            {
                "type": "tool_use",
                "id": "toolu_demo1",
                "name": "pack_coat",
                "input": {"reason": "snow and -3°C in Oslo"},
            }
        ],
        "tool_use",
        (655, 48),
    ),
    anthropic_message(
        4,
        [{"type": "text", "text": "Booked a warm room at the Hotel Bristol in central Oslo."}],
        "end_turn",
        (731, 19),
    ),
]


def to_vendor_host(request: Any) -> Any:
    parts = urlsplit(request.uri)
    host = HOSTS.get(parts.port or 0)
    if host:
        request.uri = urlunsplit(("https", host, parts.path, parts.query, ""))
    return request


def main() -> None:
    target = DEMO_CASSETTE
    target.unlink(missing_ok=True)
    recorder = vcr.VCR(
        record_mode="all",
        filter_headers=[
            "authorization",
            "x-api-key",
            "cookie",
            "set-cookie",
            "openai-organization",
        ],
        before_record_request=to_vendor_host,
        decode_compressed_response=True,
    )
    with LoopbackServer(OPENAI_REPLIES) as gpt, LoopbackServer(ANTHROPIC_REPLIES) as claude:
        HOSTS[urlsplit(gpt.url).port or 0] = "api.openai.com"
        HOSTS[urlsplit(claude.url).port or 0] = "api.anthropic.com"
        fake = "sk-demo-not-a-real-key"
        rt = Runtime(
            model=DEMO_OPENAI,
            backoff=Backoff(initial=0.01, maximum=0.02),
            providers={
                "openai": {"api_key": fake, "base_url": gpt.url + "/v1"},
                "anthropic": {"api_key": fake, "base_url": claude.url},
            },
        )
        plan_trip = build_agent(rt, DEMO_OPENAI, DEMO_ANTHROPIC)
        with recorder.use_cassette(str(target)), Session():
            result = plan_trip(tiny_png(), list(CITIES))
        assert gpt.unplayed == 0 and claude.unplayed == 0, (
            "the demo made fewer requests than scripted"
        )
    print(json.dumps(result, indent=2))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
