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

import argparse
import asyncio
import json
import resource
import statistics
import time
from typing import Any

import httpx2
from google import genai
from google.genai import types
from llmport import Runtime
from llmport.loopback import LoopbackServer, Reply

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


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_sync(url: str, calls: int, rounds: int = 5) -> dict[str, float]:
    rt = Runtime(
        model=f"gemini:{MODEL}", providers={"gemini": {"api_key": "bench", "base_url": url}}
    )
    raw = raw_client(url)
    for _ in range(50):  # warm up both (connections, imports, caches)
        rt.exec(PROMPT)
        raw.models.generate_content(**RAW_KWARGS)
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds):  # interleave so drift hits both equally
        start = time.perf_counter()
        for _ in range(calls):
            raw.models.generate_content(**RAW_KWARGS)
        theirs.append((time.perf_counter() - start) / calls)
        start = time.perf_counter()
        for _ in range(calls):
            rt.exec(PROMPT)
        ours.append((time.perf_counter() - start) / calls)
    rt.close()
    o, t = statistics.median(ours), statistics.median(theirs)
    return {"llmport_us": o * 1e6, "raw_us": t * 1e6, "overhead_us": (o - t) * 1e6, "ratio": o / t}


async def bench_async(url: str, concurrency: int, rounds: int = 3) -> dict[str, float]:
    rt = Runtime(
        model=f"gemini:{MODEL}", providers={"gemini": {"api_key": "bench", "base_url": url}}
    )
    raw = raw_client(url, transport=httpx2.AsyncClient(timeout=None)).aio
    await asyncio.gather(*(rt.async_exec(PROMPT) for _ in range(50)))
    await asyncio.gather(*(raw.models.generate_content(**RAW_KWARGS) for _ in range(50)))
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds):
        start = time.perf_counter()
        await asyncio.gather(
            *(raw.models.generate_content(**RAW_KWARGS) for _ in range(concurrency))
        )
        theirs.append(time.perf_counter() - start)
        start = time.perf_counter()
        await asyncio.gather(*(rt.async_exec(PROMPT) for _ in range(concurrency)))
        ours.append(time.perf_counter() - start)
    o, t = statistics.median(ours), statistics.median(theirs)
    return {"llmport_ms": o * 1e3, "raw_ms": t * 1e3, "ratio": o / t, "peak_rss_mb": rss_mb()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=500)
    args = parser.parse_args()
    with LoopbackServer([Reply(json=ANSWER)], repeat=True) as server:
        # socketserver listens with a backlog of 5; 500 simultaneous connects need more.
        server._server.socket.listen(2048)
        sync = bench_sync(server.url, args.calls)
        conc = asyncio.run(bench_async(server.url, args.concurrency))
    rows = [
        (
            "sync exec vs generate_content",
            f"{sync['llmport_us']:.0f} us",
            f"{sync['raw_us']:.0f} us",
            f"{sync['ratio']:.3f}",
            "<= 1.10",
            f"overhead {sync['overhead_us']:.0f} us/call",
        ),
        (
            f"{args.concurrency} x async_exec vs gather",
            f"{conc['llmport_ms']:.0f} ms",
            f"{conc['raw_ms']:.0f} ms",
            f"{conc['ratio']:.3f}",
            "<= 1.20",
            f"peak RSS {conc['peak_rss_mb']:.0f} MB",
        ),
    ]
    try:
        from rich.console import Console
        from rich.table import Table

        table = Table(title="llmport-gemini vs raw google-genai SDK (loopback)")
        for col in ("case", "llmport", "raw SDK", "ratio", "target", "note"):
            table.add_column(col)
        for row in rows:
            table.add_row(*row)
        Console().print(table)
    except ImportError:  # rich is a core dependency; plain text just in case
        for row in rows:
            print(" | ".join(row))
    print(
        json.dumps(
            {
                "benchmark": "gemini",
                "sync": {k: round(v, 3) for k, v in sync.items()},
                "async": {
                    "concurrency": args.concurrency,
                    **{k: round(v, 3) for k, v in conc.items()},
                },
                "targets_met": sync["ratio"] <= 1.10 and conc["ratio"] <= 1.20,
            }
        )
    )


if __name__ == "__main__":
    main()
