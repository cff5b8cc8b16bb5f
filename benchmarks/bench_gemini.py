"""llmport's Gemini plugin vs the raw ``google-genai`` SDK, on a loopback server.

    uv run python benchmarks/bench_gemini.py [--calls 400] [--concurrency 500]

1. sync: ``Runtime.exec`` vs ``client.models.generate_content`` (same server,
   same request body), median of interleaved rounds; target ratio <= 1.10,
   absolute overhead printed in microseconds.
2. async: 500 concurrent ``async_exec`` vs ``asyncio.gather`` of raw
   ``client.aio.models.generate_content``; target ratio <= 1.20; peak RSS.

Prints a table and one JSON line.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
from google import genai
from google.genai import types
from llmport import Runtime
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


def raw_client(url: str, *, transport: Any = None) -> Any:
    http: dict[str, Any] = {"base_url": url, "retry_options": {"attempts": 1}}
    if transport is not None:
        http["httpx_async_client"] = transport
    return genai.Client(api_key="bench", http_options=types.HttpOptions(**http))


def runtime(url: str) -> Runtime:
    return Runtime(
        model=f"gemini:{MODEL}", providers={"gemini": {"api_key": "bench", "base_url": url}}
    )


async def bench_async(url: str, concurrency: int) -> dict[str, float]:
    rt = runtime(url)
    raw = raw_client(url, transport=httpx2.AsyncClient(timeout=None)).aio
    return await compare_async(
        lambda: rt.async_exec(PROMPT),
        lambda: raw.models.generate_content(**RAW_KWARGS),
        concurrency,
    )


def main() -> None:
    args = arguments(__doc__)
    with LoopbackServer([Reply(json=ANSWER)], repeat=True) as server:
        rt = runtime(server.url)
        raw = raw_client(server.url)
        sync = compare_sync(
            lambda: rt.exec(PROMPT), lambda: raw.models.generate_content(**RAW_KWARGS), args.calls
        )
        rt.close()
        conc = asyncio.run(bench_async(server.url, args.concurrency))
    report(
        "gemini",
        "llmport-gemini vs raw google-genai SDK (loopback)",
        sync,
        conc,
        sync_case="sync exec vs generate_content",
        async_case=f"{args.concurrency} x async_exec vs gather",
        concurrency=args.concurrency,
    )


if __name__ == "__main__":
    main()
