"""Targets side by side: llmport, the raw SDKs (httpx and aiohttp), LiteLLM, pydantic-ai.

Run from the separate benchmark environment (never the project's own):

    uvx nox -s bench    # or: uvx nox -s bench -- --vendors openai --concurrency 500

Per vendor, one loopback server in its own process (``loopback_proc``)
answers every request with the vendor's JSON. Every side is timed the same
way and **interleaved** (round 1 of every side, then round 2, ...), so a
neighbour's load hits all sides alike; each figure is the median of rounds:

* sync: µs per call (``rounds`` x ``calls`` sequential calls);
* async sequential: µs per awaited call;
* concurrent: wall ms for ``concurrency`` calls under ``asyncio.gather``.

Sides that cannot be built here (a peer not installed, a peer that cannot
reach a loopback endpoint for that vendor) print ``n/a`` with the reason.
Prints a table per vendor and one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import inspect
import json
import statistics
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from loopback_proc import ServerProcess

PROMPT = "What is the capital of France?"
AWS = {"aws_access_key_id": "AKIDEXAMPLEFAKE", "aws_secret_access_key": "fake-secret-for-bench"}
REGION = "us-east-1"

ANSWERS: dict[str, dict[str, Any]] = {
    "openai": {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1763715600,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "logprobs": None,
                "message": {
                    "role": "assistant",
                    "content": "Paris.",
                    "refusal": None,
                    "annotations": [],
                },
            }
        ],
        "usage": {"prompt_tokens": 14, "completion_tokens": 2, "total_tokens": 16},
        "service_tier": "default",
        "system_fingerprint": "fp_bench",
    },
    "anthropic": {
        "content": [{"type": "text", "text": "The capital of France is Paris."}],
        "id": "msg_bench",
        "model": "claude-haiku-4-5-20251001",
        "role": "assistant",
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "type": "message",
        "usage": {
            "input_tokens": 14,
            "output_tokens": 8,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    },
    "gemini": {
        "candidates": [
            {
                "content": {
                    "parts": [{"text": "The capital of France is Paris."}],
                    "role": "model",
                },
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "modelVersion": "gemini-2.5-flash",
        "responseId": "bench",
        "usageMetadata": {"candidatesTokenCount": 8, "promptTokenCount": 8, "totalTokenCount": 16},
    },
    "bedrock": {
        "metrics": {"latencyMs": 120},
        "output": {
            "message": {
                "role": "assistant",
                "content": [{"text": "The capital of France is Paris."}],
            }
        },
        "stopReason": "end_turn",
        "usage": {"inputTokens": 7, "outputTokens": 8, "totalTokens": 15},
    },
}


def _sse(events: list[tuple[str | None, Any]]) -> str:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out)


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1763715600,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


#: Streamed answers (time to first token): the same text in two deltas, then usage.
STREAMS: dict[str, dict[str, Any]] = {
    "openai": {
        "body": _sse(
            [
                (None, _chat_chunk({"role": "assistant", "content": ""})),
                (None, _chat_chunk({"content": "The capital of France"})),
                (None, _chat_chunk({"content": " is Paris."})),
                (None, _chat_chunk({}, "stop")),
                (
                    None,
                    {
                        **_chat_chunk({}),
                        "choices": [],
                        "usage": {"prompt_tokens": 14, "completion_tokens": 8, "total_tokens": 22},
                    },
                ),
                (None, "[DONE]"),
            ]
        )
    },
    "anthropic": {
        "body": _sse(
            [
                (
                    "message_start",
                    {
                        "type": "message_start",
                        "message": {
                            "id": "msg_bench",
                            "type": "message",
                            "role": "assistant",
                            "model": "claude-haiku-4-5-20251001",
                            "content": [],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": {"input_tokens": 14, "output_tokens": 1},
                        },
                    },
                ),
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": "The capital of France"},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": " is Paris."},
                    },
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                        "usage": {"output_tokens": 8},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
        )
    },
    "gemini": {
        "body": _sse(
            [
                (
                    None,
                    {
                        "candidates": [
                            {
                                "content": {
                                    "parts": [{"text": "The capital of France"}],
                                    "role": "model",
                                },
                                "index": 0,
                            }
                        ],
                        "modelVersion": "gemini-2.5-flash",
                    },
                ),
                (
                    None,
                    {
                        "candidates": [
                            {
                                "content": {"parts": [{"text": " is Paris."}], "role": "model"},
                                "finishReason": "STOP",
                                "index": 0,
                            }
                        ],
                        "usageMetadata": {
                            "candidatesTokenCount": 8,
                            "promptTokenCount": 8,
                            "totalTokenCount": 16,
                        },
                        "modelVersion": "gemini-2.5-flash",
                    },
                ),
            ]
        )
    },
}


def _bedrock_stream() -> dict[str, Any]:
    """Converse-stream frames (binary; the encoder ships with the Bedrock plugin)."""
    import base64

    from llmport_bedrock.eventstream import encode_stream

    events = [
        {"event_type": "messageStart", "data": {"role": "assistant"}},
        {
            "event_type": "contentBlockDelta",
            "data": {"contentBlockIndex": 0, "delta": {"text": "The capital of France"}},
        },
        {
            "event_type": "contentBlockDelta",
            "data": {"contentBlockIndex": 0, "delta": {"text": " is Paris."}},
        },
        {"event_type": "contentBlockStop", "data": {"contentBlockIndex": 0}},
        {"event_type": "messageStop", "data": {"stopReason": "end_turn"}},
        {
            "event_type": "metadata",
            "data": {
                "usage": {"inputTokens": 7, "outputTokens": 8, "totalTokens": 15},
                "metrics": {"latencyMs": 120},
            },
        },
    ]
    return {
        "body_b64": base64.b64encode(encode_stream(events)).decode("ascii"),
        "content_type": "application/vnd.amazon.eventstream",
    }


MODELS = {
    "openai": "gpt-4o-mini",
    "anthropic": "claude-haiku-4-5",
    "gemini": "gemini-2.5-flash",
    "bedrock": "us.amazon.nova-micro-v1:0",
}


class Side:
    """One way of making the call: a sync function and an async one (either may be None)."""

    def __init__(
        self,
        name: str,
        sync: Callable[[], Any] | None,
        aio: Callable[[], Awaitable[Any]] | None,
        close: Callable[[], Any] | None = None,
    ) -> None:
        self.name, self.sync, self.aio, self.close = name, sync, aio, close
        self.sync_us: list[float] = []
        self.seq_us: list[float] = []
        self.conc_ms: list[float] = []
        self.error = ""
        #: Rounds that raised (reported beside the medians of the rounds that completed).
        self.failures: list[str] = []


# -- llmport -------------------------------------------------------------------------


def _llmport_settings(vendor: str, url: str) -> dict[str, Any]:
    """The provider settings that point llmport's plugin for ``vendor`` at the server."""
    if vendor == "openai":
        return {"api_key": "sk-bench", "base_url": url + "/v1"}
    if vendor == "bedrock":
        return {**AWS, "region": REGION, "endpoint_url": url, "max_workers": 64}
    return {"api_key": "bench", "base_url": url}


def llmport_sides(vendor: str, url: str) -> list[Side]:
    from llmport import Runtime

    model = MODELS[vendor]
    base = _llmport_settings(vendor, url)
    sides = []
    variants: list[tuple[str, dict[str, Any]]] = [("llmport", {})]
    if vendor in ("openai", "anthropic"):
        variants.append(("llmport (httpx async)", {"async_transport": "httpx"}))
    for name, extra in variants:
        rt = Runtime(model=f"{vendor}:{model}", providers={vendor: {**base, **extra}})
        sides.append(Side(name, lambda rt=rt: rt.exec(PROMPT), lambda rt=rt: rt.async_exec(PROMPT)))
    return sides


# -- raw SDKs ------------------------------------------------------------------------


def sdk_sides(vendor: str, url: str) -> list[Side]:
    model = MODELS[vendor]
    messages = [{"role": "user", "content": PROMPT}]
    if vendor == "openai":
        import openai

        sync = openai.OpenAI(api_key="sk-bench", base_url=url + "/v1", max_retries=0)
        out = [
            Side(
                "raw SDK (httpx)",
                lambda: sync.chat.completions.create(model=model, messages=messages),
                None,
            )
        ]
        for name, http in (("raw SDK (httpx)", None), ("raw SDK (aiohttp)", "aio")):

            def make(http: Any = http) -> Any:
                kw: dict[str, Any] = {}
                if http:
                    kw["http_client"] = openai.DefaultAioHttpClient()
                return openai.AsyncOpenAI(
                    api_key="sk-bench", base_url=url + "/v1", max_retries=0, **kw
                )

            aio = _per_loop(make)
            call = lambda aio=aio: aio().chat.completions.create(model=model, messages=messages)  # noqa: E731
            if http:
                out.append(Side(name, None, call))
            else:
                out[0].aio = call
        return out
    if vendor == "anthropic":
        import anthropic

        sync = anthropic.Anthropic(api_key="bench", base_url=url, max_retries=0)
        kwargs = {"model": model, "max_tokens": 16384, "messages": messages}
        out = [Side("raw SDK (httpx)", lambda: sync.messages.create(**kwargs), None)]
        for http in (None, "aio"):

            def make(http: Any = http) -> Any:
                kw: dict[str, Any] = {}
                if http:
                    kw["http_client"] = anthropic.DefaultAioHttpClient()
                return anthropic.AsyncAnthropic(api_key="bench", base_url=url, max_retries=0, **kw)

            aio = _per_loop(make)
            call = lambda aio=aio: aio().messages.create(**kwargs)  # noqa: E731
            if http:
                out.append(Side("raw SDK (aiohttp)", None, call))
            else:
                out[0].aio = call
        return out
    if vendor == "gemini":
        client = functools.partial(_gemini_client, url)
        sync = client()
        aio = _per_loop(client)
        config = {"automatic_function_calling": {"disable": True}}
        contents = [{"role": "user", "parts": [{"text": PROMPT}]}]
        return [
            Side(
                "raw SDK (default: aiohttp async)",
                lambda: sync.models.generate_content(model=model, contents=contents, config=config),
                lambda: aio().aio.models.generate_content(
                    model=model, contents=contents, config=config
                ),
            )
        ]
    client = _bedrock_client(url)
    body = {
        "modelId": model,
        "messages": [{"role": "user", "content": [{"text": PROMPT}]}],
        "inferenceConfig": {},
    }
    return [
        Side(
            "raw SDK (boto3; async = threads)",
            lambda: client.converse(**body),
            lambda: asyncio.to_thread(client.converse, **body),
        )
    ]


def _gemini_client(url: str) -> Any:
    from google import genai
    from google.genai import types

    return genai.Client(
        api_key="bench",
        http_options=types.HttpOptions(
            base_url=url, retry_options=types.HttpRetryOptions(attempts=1)
        ),
    )


def _bedrock_client(url: str) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.session.Session(region_name=REGION, **AWS).client(
        "bedrock-runtime",
        endpoint_url=url,
        config=Config(
            retries={"total_max_attempts": 1, "mode": "standard"}, max_pool_connections=64
        ),
    )


def _per_loop(make: Callable[[], Any]) -> Callable[[], Any]:
    """One async client per event loop (each phase runs its own loop)."""
    clients: dict[int, Any] = {}

    def get() -> Any:
        loop = id(asyncio.get_running_loop())
        if loop not in clients:
            clients.clear()
            clients[loop] = make()
        return clients[loop]

    async def close() -> None:  # at the end of each phase, inside its loop
        for client in clients.values():
            target = client.aio if hasattr(client, "aio") else client  # google-genai
            aclose = getattr(target, "aclose", None) or getattr(target, "close", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()
        clients.clear()

    get.close = close  # type: ignore[attr-defined]
    _CLOSERS.append(close)
    return get


#: Closers of the raw SDKs' per-loop async clients, run before each phase's loop ends.
_CLOSERS: list[Callable[[], Awaitable[None]]] = []


async def _close_all() -> None:
    for close in _CLOSERS:
        await close()


# -- peers -------------------------------------------------------------------------


def litellm_side(vendor: str, url: str) -> Side:
    import litellm

    model = MODELS[vendor]
    messages = [{"role": "user", "content": PROMPT}]
    kw: dict[str, Any]
    if vendor == "openai":
        kw = {"model": f"openai/{model}", "api_base": url + "/v1", "api_key": "sk-bench"}
    elif vendor == "anthropic":
        kw = {"model": f"anthropic/{model}", "api_base": url, "api_key": "bench"}
    elif vendor == "gemini":
        kw = {"model": f"gemini/{model}", "api_base": url, "api_key": "bench"}
    else:
        kw = {
            "model": f"bedrock/converse/{model}",
            "aws_bedrock_runtime_endpoint": url,
            "aws_region_name": REGION,
            **AWS,
        }
    kw["num_retries"] = 0
    return Side(
        "LiteLLM",
        lambda: litellm.completion(messages=messages, **kw),
        lambda: litellm.acompletion(messages=messages, **kw),
    )


def pydantic_ai_side(vendor: str, url: str) -> Side:
    from pydantic_ai import Agent

    model = MODELS[vendor]
    if vendor == "openai":
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        m: Any = OpenAIChatModel(
            model, provider=OpenAIProvider(base_url=url + "/v1", api_key="sk-bench")
        )
    elif vendor == "anthropic":
        import anthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        client = anthropic.AsyncAnthropic(api_key="bench", base_url=url, max_retries=0)
        m = AnthropicModel(model, provider=AnthropicProvider(anthropic_client=client))
    elif vendor == "gemini":
        from google import genai
        from google.genai import types
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        client = genai.Client(api_key="bench", http_options=types.HttpOptions(base_url=url))
        m = GoogleModel(model, provider=GoogleProvider(client=client))
    else:
        import boto3
        from pydantic_ai.models.bedrock import BedrockConverseModel
        from pydantic_ai.providers.bedrock import BedrockProvider

        client = boto3.session.Session(region_name=REGION, **AWS).client(
            "bedrock-runtime", endpoint_url=url
        )
        m = BedrockConverseModel(model, provider=BedrockProvider(bedrock_client=client))
    agent = Agent(m)
    # Agent.run_sync runs its own loop per call; its async run is the one that matters.
    return Side("pydantic-ai", lambda: agent.run_sync(PROMPT), lambda: agent.run(PROMPT))


# -- streams: time to first token -----------------------------------------------------


class StreamSide:
    """One way of streaming: each opener returns an iterator (sync) or async iterator."""

    def __init__(
        self,
        name: str,
        sync: Callable[[], Any],
        aio: Callable[[], Any],
        is_token: Callable[[Any], bool],
    ) -> None:
        self.name, self.sync, self.aio, self.is_token = name, sync, aio, is_token
        self.sync_us: list[float] = []
        self.aio_us: list[float] = []


def _ttft(open_stream: Callable[[], Any], is_token: Callable[[Any], bool]) -> float:
    """Microseconds from the call to its first text token; the rest of the stream is drained."""
    start = time.perf_counter()
    first = 0.0
    stream = open_stream()
    for event in stream:
        if not first and is_token(event):
            first = time.perf_counter() - start
    close = getattr(stream, "close", None)
    if close is not None:
        close()
    return first * 1e6


async def _attft(open_stream: Callable[[], Any], is_token: Callable[[Any], bool]) -> float:
    start = time.perf_counter()
    first = 0.0
    stream = open_stream()
    if inspect.isawaitable(stream):
        stream = await stream
    async for event in stream:
        if not first and is_token(event):
            first = time.perf_counter() - start
    return first * 1e6


def stream_sides(vendor: str, url: str) -> list[StreamSide]:
    """llmport's ``stream`` / ``astream`` and the raw SDK's own streaming call."""
    from llmport import Runtime, TextDelta

    model = MODELS[vendor]
    base = _llmport_settings(vendor, url)
    rt = Runtime(model=f"{vendor}:{model}", providers={vendor: base})
    sides = [
        StreamSide(
            "llmport",
            lambda: rt.stream(PROMPT),
            lambda: rt.astream(PROMPT),
            lambda e: type(e) is TextDelta and bool(e.text),
        )
    ]
    messages = [{"role": "user", "content": PROMPT}]
    if vendor == "openai":
        import openai

        sync = openai.OpenAI(api_key="sk-bench", base_url=url + "/v1", max_retries=0)
        aio = _per_loop(
            lambda: openai.AsyncOpenAI(api_key="sk-bench", base_url=url + "/v1", max_retries=0)
        )
        kw: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        sides.append(
            StreamSide(
                "raw SDK (httpx)",
                lambda: sync.chat.completions.create(**kw),
                lambda: aio().chat.completions.create(**kw),
                lambda c: bool(c.choices and c.choices[0].delta.content),
            )
        )
    elif vendor == "anthropic":
        import anthropic

        sync = anthropic.Anthropic(api_key="bench", base_url=url, max_retries=0)
        aio = _per_loop(
            lambda: anthropic.AsyncAnthropic(api_key="bench", base_url=url, max_retries=0)
        )
        kw = {"model": model, "max_tokens": 16384, "messages": messages, "stream": True}
        sides.append(
            StreamSide(
                "raw SDK (httpx)",
                lambda: sync.messages.create(**kw),
                lambda: aio().messages.create(**kw),
                lambda e: e.type == "content_block_delta",
            )
        )
    elif vendor == "gemini":
        client = functools.partial(_gemini_client, url)
        gsync = client()
        gaio = _per_loop(client)
        config = {"automatic_function_calling": {"disable": True}}
        contents = [{"role": "user", "parts": [{"text": PROMPT}]}]
        sides.append(
            StreamSide(
                "raw SDK (default: aiohttp async)",
                lambda: gsync.models.generate_content_stream(
                    model=model, contents=contents, config=config
                ),
                lambda: gaio().aio.models.generate_content_stream(
                    model=model, contents=contents, config=config
                ),
                lambda c: bool(c.text),
            )
        )
    else:
        bclient = _bedrock_client(url)
        body = {"modelId": model, "messages": [{"role": "user", "content": [{"text": PROMPT}]}]}

        async def threaded() -> Any:  # boto3 has no async API: its stream read in a thread
            events = await asyncio.to_thread(
                lambda: list(bclient.converse_stream(**body)["stream"])
            )
            for event in events:
                yield event

        sides.append(
            StreamSide(
                "raw SDK (boto3; async = threads)",
                lambda: bclient.converse_stream(**body)["stream"],
                threaded,
                lambda e: "contentBlockDelta" in e,
            )
        )
    return sides


def run_streams(vendor: str, args: argparse.Namespace) -> list[StreamSide]:
    """Time to first token, every side interleaved round by round (median of rounds)."""
    reply = _bedrock_stream() if vendor == "bedrock" else STREAMS[vendor]
    with ServerProcess([reply]) as server:
        sides = stream_sides(vendor, server.url)
        calls = max(1, args.calls // 2)
        for rnd in range(args.rounds + 1):  # round 0 warms up (imports, pools)
            for s in sides:
                took = [_ttft(s.sync, s.is_token) for _ in range(calls)]

                async def aio(s: StreamSide = s) -> list[float]:
                    out = [await _attft(s.aio, s.is_token) for _ in range(calls)]
                    await _close_all()
                    return out

                atook = asyncio.run(aio())
                if rnd:
                    s.sync_us.append(statistics.median(took))
                    s.aio_us.append(statistics.median(atook))
    return sides


# -- timing ------------------------------------------------------------------------


def run_vendor(vendor: str, args: argparse.Namespace) -> list[Side]:
    with ServerProcess([{"json": ANSWERS[vendor]}]) as server:
        sides: list[Side] = []
        builders: list[tuple[str, Callable[[], list[Side]]]] = [
            ("llmport", lambda: llmport_sides(vendor, server.url)),
            ("raw SDK", lambda: sdk_sides(vendor, server.url)),
            ("LiteLLM", lambda: [litellm_side(vendor, server.url)]),
            ("pydantic-ai", lambda: [pydantic_ai_side(vendor, server.url)]),
        ]
        for name, build in builders:
            try:
                sides.extend(build())
            except Exception as exc:  # a peer missing or unable to reach a loopback endpoint
                s = Side(name, None, None)
                s.error = f"{type(exc).__name__}: {exc}"[:120]
                sides.append(s)
        # Warm up (imports, pools); a side that fails here is reported, not timed.
        for s in sides:
            if s.error:
                continue
            try:
                for _ in range(args.warmup):
                    if s.sync:
                        s.sync()

                async def warm(s: Side = s) -> None:
                    if s.aio:
                        await asyncio.gather(*(s.aio() for _ in range(args.warmup)))
                    await _close_all()

                asyncio.run(warm())
            except Exception as exc:
                s.error = f"{type(exc).__name__}: {exc}"[:120]
                if args.verbose:
                    traceback.print_exc()
        live = [s for s in sides if not s.error]
        for _ in range(args.rounds):
            for s in live:  # interleaved: every side's round r before any side's round r + 1
                if s.sync:
                    start = time.perf_counter()
                    for _ in range(args.calls):
                        s.sync()
                    s.sync_us.append((time.perf_counter() - start) / args.calls * 1e6)
            for s in live:
                if s.aio is None:
                    continue
                aio = s.aio

                async def seq(aio: Callable[[], Awaitable[Any]] = aio) -> float:
                    start = time.perf_counter()
                    for _ in range(args.calls):
                        await aio()
                    took = (time.perf_counter() - start) / args.calls * 1e6
                    await _close_all()
                    return took

                async def conc(aio: Callable[[], Awaitable[Any]] = aio) -> float:
                    await asyncio.gather(*(aio() for _ in range(20)))  # this loop's pool
                    start = time.perf_counter()
                    await asyncio.gather(*(aio() for _ in range(args.concurrency)))
                    took = (time.perf_counter() - start) * 1e3
                    await _close_all()
                    return took

                try:
                    s.seq_us.append(asyncio.run(seq()))
                    s.conc_ms.append(asyncio.run(conc()))
                except Exception as exc:  # e.g. a connect timeout under load: note, go on
                    s.failures.append(f"{type(exc).__name__}: {exc}"[:120])
    return sides


def _med(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _fmt(v: float | None, ref: float | None) -> str:
    if v is None:
        return "-"
    ratio = f" ({v / ref:.2f}x)" if ref else ""
    return f"{v:,.0f}{ratio}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vendors", default="openai,anthropic,gemini,bedrock")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--no-streams", action="store_true", help="skip time to first token")
    args = parser.parse_args()
    out: dict[str, Any] = {
        "bench": "peers",
        "calls": args.calls,
        "rounds": args.rounds,
        "concurrency": args.concurrency,
        "vendors": {},
    }
    for vendor in args.vendors.split(","):
        sides = run_vendor(vendor, args)
        ref = next((s for s in sides if s.name.startswith("raw SDK") and not s.error), None)
        rs, rq, rc = (
            (_med(ref.sync_us), _med(ref.seq_us), _med(ref.conc_ms)) if ref else (None,) * 3
        )
        print(
            f"\n{vendor}: median of {args.rounds} interleaved rounds; (x) = ratio to "
            f"{ref.name if ref else 'raw SDK'}"
        )
        print(
            f"{'side':34} {'sync us/call':>16} {'async seq us':>16} "
            f"{f'{args.concurrency} conc ms':>16}"
        )
        rows = {}
        for s in sides:
            if s.error:
                print(f"{s.name:34} n/a: {s.error}")
                rows[s.name] = {"error": s.error}
                continue
            a, b, c = _med(s.sync_us), _med(s.seq_us), _med(s.conc_ms)
            print(f"{s.name:34} {_fmt(a, rs):>16} {_fmt(b, rq):>16} {_fmt(c, rc):>16}")
            if s.failures:
                print(f"{'':34} {len(s.failures)} async round(s) failed: {s.failures[0]}")
            rows[s.name] = {
                "sync_us": a,
                "async_seq_us": b,
                "concurrent_ms": c,
                "failed_rounds": len(s.failures),
            }
        if not args.no_streams:
            streams = run_streams(vendor, args)
            sref = streams[-1]  # the raw SDK
            r1, r2 = _med(sref.sync_us), _med(sref.aio_us)
            print(f"{'stream: time to first token':34} {'sync us':>16} {'async us':>16}")
            for st in streams:
                a, b = _med(st.sync_us), _med(st.aio_us)
                print(f"{st.name:34} {_fmt(a, r1):>16} {_fmt(b, r2):>16}")
                rows.setdefault(st.name, {}).update(
                    {"stream_ttft_sync_us": a, "stream_ttft_async_us": b}
                )
        out["vendors"][vendor] = rows
    print(json.dumps(out))


if __name__ == "__main__":
    main()
