"""llmport's Gemini plugin vs the raw ``google-genai`` SDK, on a loopback server.

    uv run python benchmarks/bench_gemini.py [--calls 400] [--concurrency 500] [--streams 200]

1. sync: ``Runtime.exec`` vs ``client.models.generate_content`` (same server,
   same request body), median of interleaved rounds; target ratio <= 1.10,
   absolute overhead printed in microseconds.
2. async: 500 concurrent ``async_exec`` vs ``asyncio.gather`` of raw
   ``client.aio.models.generate_content``, both on their default transport
   (aiohttp); target ratio <= 1.20; peak RSS. The same again with llmport's
   ``async_transport="httpx"``, for the JSON line.
3. streams: time to the first text delta of ``Runtime.astream`` (aiohttp, then
   httpx) vs the first chunk of raw ``generate_content_stream``, sequential,
   interleaved, median; target ratio <= 1.02.

Prints a table, the time-to-first-token lines and one JSON line.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from google import genai
from google.genai import types
from llmport import Runtime, TextDelta
from llmport.loopback import LoopbackServer, Reply
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


def main() -> None:
    args = arguments(__doc__, streams=200)
    with LoopbackServer([Reply(json=ANSWER)], repeat=True) as server:
        rt = runtime(server.url)
        raw = raw_client(server.url)
        sync = compare_sync(
            lambda: rt.exec(PROMPT), lambda: raw.models.generate_content(**RAW_KWARGS), args.calls
        )
        rt.close()
        conc = asyncio.run(bench_async(server.url, args.concurrency))
        conc_httpx = asyncio.run(bench_async(server.url, args.concurrency, async_transport="httpx"))
    with LoopbackServer([Reply(sse=STREAM)], repeat=True) as server:
        ttft = asyncio.run(bench_first_token(server.url, args.streams))
    print(
        f"time to first token: llmport aiohttp {ttft['llmport_us']:.0f} us "
        f"({ttft['ratio']:.3f}x), llmport httpx {ttft['llmport_httpx_us']:.0f} us "
        f"({ttft['httpx_ratio']:.3f}x), raw SDK {ttft['raw_us']:.0f} us; target <= 1.02"
    )
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
    )


if __name__ == "__main__":
    main()
