"""llmport's Gemini plugin vs the raw ``google-genai`` SDK, on a loopback server.

    uv run python benchmarks/bench_gemini.py [--calls 400] [--concurrency 500] [--streams 200]

1. sync: ``Runtime.exec`` vs ``client.models.generate_content`` (same server,
   same request body), median of interleaved rounds; target ratio <= 1.00,
   absolute overhead printed in microseconds.
2. async: 500 concurrent ``async_exec`` vs ``asyncio.gather`` of raw
   ``client.aio.models.generate_content``, both on their default transport
   (aiohttp); target: faster than raw; peak RSS. The same again with llmport's
   ``async_transport="httpx"``, for the JSON line.
3. streams: time to the first text delta of ``Runtime.astream`` (aiohttp, then
   httpx) vs the first chunk of raw ``generate_content_stream``, sequential,
   interleaved, median; target ratio <= 1.02.
4. ``provider.send`` / ``asend`` of one prepared text prompt alone, and
   ``provider.send_stream`` of the same prompt streamed (four chunks): Python
   function calls per call (cProfile) and µs per call (``--send_only 1``
   runs just this part, e.g. against another checkout via ``PYTHONPATH``).

Prints a table, the time-to-first-token lines and one JSON line.
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from google import genai
from google.genai import types
from llmport import Runtime, TextDelta
from llmport.messages.types import Message, Request, TextBlock
from llmport.testing.loopback import LoopbackServer, Reply
from vendor_bench import arguments, compare_async, compare_sync, report

MODEL = "gemini-2.5-flash"
PROMPT = "What is the capital of France?"
ANSWER = {
    "candidates": [
        {
            "content": {"parts": [{"text": "The capital of France is Paris."}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
        }
    ],
    "modelVersion": MODEL,
    "responseId": "bench",
    "usageMetadata": {"candidatesTokenCount": 8, "promptTokenCount": 8, "totalTokenCount": 16},
}
# The same body llmport sends for Runtime.exec(PROMPT) on this model.
RAW_KWARGS: dict[str, Any] = {
    "model": MODEL,
    "contents": [{"role": "user", "parts": [{"text": PROMPT}]}],
    "config": {"automatic_function_calling": {"disable": True}},
}


STREAM = [
    {"data": {**ANSWER, "candidates": [{"content": {"parts": [{"text": t}], "role": "model"}}]}}
    for t in ("The capital ", "of France ", "is ")
] + [{"data": ANSWER}]


def raw_client(url: str) -> Any:
    http = types.HttpOptions(base_url=url, retry_options=types.HttpRetryOptions(attempts=1))
    return genai.Client(api_key="bench", http_options=http)


def runtime(url: str, **settings: Any) -> Runtime:
    return Runtime(
        model=f"gemini:{MODEL}",
        providers={"gemini": {"api_key": "bench", "base_url": url, **settings}},
    )


async def bench_async(url: str, concurrency: int, **settings: Any) -> dict[str, float]:
    rt = runtime(url, **settings)
    raw = raw_client(url).aio  # its default async transport: aiohttp
    try:
        return await compare_async(
            lambda: rt.async_exec(PROMPT),
            lambda: raw.models.generate_content(**RAW_KWARGS),
            concurrency,
        )
    finally:
        await rt.aclose()
        await raw.aclose()


async def bench_first_token(url: str, calls: int) -> dict[str, float]:
    """Median µs to the first text of a stream: llmport on each transport, the raw SDK."""
    aio_rt, httpx_rt = runtime(url), runtime(url, async_transport="httpx")
    raw = raw_client(url).aio

    def ours(rt: Runtime) -> Callable[[], Awaitable[float]]:
        async def first() -> float:
            start, took = time.perf_counter(), 0.0
            async for event in rt.astream(PROMPT):
                if not took and isinstance(event, TextDelta):
                    took = time.perf_counter() - start
            return took

        return first

    async def theirs() -> float:
        start, took = time.perf_counter(), 0.0
        async for chunk in await raw.models.generate_content_stream(**RAW_KWARGS):
            if not took and chunk.text:
                took = time.perf_counter() - start
        return took

    sides = {"llmport_us": ours(aio_rt), "llmport_httpx_us": ours(httpx_rt), "raw_us": theirs}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(20):  # warm-up: connections, imports
        for side in sides.values():
            await side()
    for _ in range(calls):  # interleaved, call by call
        for name, side in sides.items():
            times[name].append(await side())
    await aio_rt.aclose()
    await httpx_rt.aclose()
    await raw.aclose()
    out = {name: statistics.median(values) * 1e6 for name, values in times.items()}
    out["ratio"] = out["llmport_us"] / out["raw_us"]
    out["httpx_ratio"] = out["llmport_httpx_us"] / out["raw_us"]
    return out


def bench_send(url: str, calls: int) -> dict[str, float]:
    """``provider.send`` / ``asend`` of one prepared prompt: calls (cProfile) and µs per call."""
    from llmport_gemini.provider import GeminiProvider

    provider = GeminiProvider({"api_key": "bench", "base_url": url})
    request = Request(model=MODEL, messages=[Message("user", (TextBlock(PROMPT),))])
    prepared = provider.prepare(request)

    def measure(run: Callable[[], Any]) -> tuple[float, float]:
        run()  # warm-up
        profile = cProfile.Profile()
        profile.enable()
        run()
        profile.disable()
        start = time.perf_counter()
        run()
        took = time.perf_counter() - start
        return pstats.Stats(profile).total_calls / calls, took / calls * 1e6  # type: ignore[attr-defined]

    def sync() -> None:
        for _ in range(calls):
            provider.send(prepared)

    async def many() -> None:
        for _ in range(calls):
            await provider.asend(prepared)

    async def in_loop() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        profile = cProfile.Profile()
        await many()  # warm-up
        profile.enable()
        await many()
        profile.disable()
        start = loop.time()
        await many()
        took = loop.time() - start
        await provider.aclose()
        return pstats.Stats(profile).total_calls / calls, took / calls * 1e6  # type: ignore[attr-defined]

    sync_calls, sync_us = measure(sync)
    async_calls, async_us = asyncio.run(in_loop())
    provider.close()
    return {
        "sync_calls": sync_calls,
        "sync_us": sync_us,
        "async_calls": async_calls,
        "async_us": async_us,
    }


def bench_stream_calls(url: str, calls: int) -> dict[str, float]:
    """``provider.send_stream`` of one prepared streamed prompt: calls (cProfile), µs per stream."""
    from llmport_gemini.provider import GeminiProvider

    provider = GeminiProvider({"api_key": "bench", "base_url": url})
    request = Request(model=MODEL, messages=[Message("user", (TextBlock(PROMPT),))], stream=True)
    prepared = provider.prepare(request)

    def run() -> None:
        for _ in range(calls):
            for _event in provider.send_stream(prepared):
                pass

    run()  # warm-up
    profile = cProfile.Profile()
    profile.enable()
    run()
    profile.disable()
    start = time.perf_counter()
    run()
    took = time.perf_counter() - start
    provider.close()
    calls_per = pstats.Stats(profile).total_calls / calls  # type: ignore[attr-defined]
    return {"stream_calls": calls_per, "stream_us": took / calls * 1e6}


def print_send(send: dict[str, float]) -> None:
    print(
        f"provider.send: {send['sync_calls']:.0f} calls, {send['sync_us']:.0f} us; "
        f"provider.asend: {send['async_calls']:.0f} calls, {send['async_us']:.0f} us; "
        f"provider.send_stream: {send['stream_calls']:.0f} calls, {send['stream_us']:.0f} us"
    )


def main() -> None:
    args = arguments(__doc__, streams=200, send_only=0)
    if args.send_only:
        with LoopbackServer([Reply(json=ANSWER)], repeat=True) as server:
            send = bench_send(server.url, args.calls)
        with LoopbackServer([Reply(sse=STREAM)], repeat=True) as server:
            send.update(bench_stream_calls(server.url, args.calls))
        print_send(send)
        return
    with LoopbackServer([Reply(json=ANSWER)], repeat=True) as server:
        rt = runtime(server.url)
        raw = raw_client(server.url)
        sync = compare_sync(
            lambda: rt.exec(PROMPT), lambda: raw.models.generate_content(**RAW_KWARGS), args.calls
        )
        rt.close()
        conc = asyncio.run(bench_async(server.url, args.concurrency))
        conc_httpx = asyncio.run(bench_async(server.url, args.concurrency, async_transport="httpx"))
        send = bench_send(server.url, args.calls)
    with LoopbackServer([Reply(sse=STREAM)], repeat=True) as server:
        ttft = asyncio.run(bench_first_token(server.url, args.streams))
        send.update(bench_stream_calls(server.url, args.calls))
    print(
        f"time to first token: llmport aiohttp {ttft['llmport_us']:.0f} us "
        f"({ttft['ratio']:.3f}x), llmport httpx {ttft['llmport_httpx_us']:.0f} us "
        f"({ttft['httpx_ratio']:.3f}x), raw SDK {ttft['raw_us']:.0f} us; target <= 1.02"
    )
    print_send(send)
    report(
        "gemini",
        "llmport-gemini vs raw google-genai SDK, both on aiohttp async (loopback)",
        sync,
        conc,
        sync_case="sync exec vs generate_content",
        async_case=f"{args.concurrency} x async_exec vs gather",
        concurrency=args.concurrency,
        httpx_transport={k: round(v, 3) for k, v in conc_httpx.items()},
        first_token={k: round(v, 3) for k, v in ttft.items()},
        send={k: round(v, 1) for k, v in send.items()},
    )


if __name__ == "__main__":
    main()
