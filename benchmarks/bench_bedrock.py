"""llmport's Bedrock plugin vs raw boto3 ``converse``, on a loopback server.

    uv run python benchmarks/bench_bedrock.py [--calls 400] [--concurrency 500] [--workers 16]

1. sync: ``Runtime.exec`` vs ``client.converse`` (same server, same body,
   same botocore config), median of interleaved rounds; target ratio <= 1.10,
   absolute overhead printed in microseconds.
2. async: 500 concurrent ``async_exec`` vs ``asyncio.gather`` of raw
   ``client.converse`` run in a ``ThreadPoolExecutor`` of the same size
   (boto3 has no async client: a thread pool is how anyone awaits it);
   target ratio <= 1.20; peak RSS.

Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
from botocore.config import Config
from llmport import Runtime
from llmport.loopback import LoopbackServer, Reply

MODEL = "us.amazon.nova-micro-v1:0"
PROMPT = "What is the capital of France?"
CREDENTIALS = {
    "aws_access_key_id": "AKIDEXAMPLEFAKE",
    "aws_secret_access_key": "fake-secret-for-bench",
}
REGION = "us-east-1"
ANSWER = {
    "metrics": {"latencyMs": 120},
    "output": {
        "message": {"role": "assistant", "content": [{"text": "The capital of France is Paris."}]}
    },
    "stopReason": "end_turn",
    "usage": {"inputTokens": 7, "outputTokens": 8, "totalTokens": 15},
}
# Exactly the body llmport sends for Runtime.exec(PROMPT) on this model.
RAW_KWARGS: dict[str, Any] = {
    "modelId": MODEL,
    "messages": [{"role": "user", "content": [{"text": PROMPT}]}],
    "inferenceConfig": {},
}


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def runtime(url: str, workers: int) -> Runtime:
    settings = {**CREDENTIALS, "region": REGION, "endpoint_url": url, "max_workers": workers}
    return Runtime(model=f"bedrock:{MODEL}", providers={"bedrock": settings})


def raw_client(url: str, workers: int) -> Any:
    session = boto3.session.Session(region_name=REGION, **CREDENTIALS)
    config = Config(
        retries={"total_max_attempts": 1, "mode": "standard"},
        read_timeout=300,
        connect_timeout=10,
        max_pool_connections=workers,
    )
    return session.client("bedrock-runtime", endpoint_url=url, config=config)


def bench_sync(url: str, calls: int, workers: int, rounds: int = 5) -> dict[str, float]:
    rt = runtime(url, workers)
    raw = raw_client(url, workers)
    for _ in range(50):  # warm up both (connections, imports, caches)
        rt.exec(PROMPT)
        raw.converse(**RAW_KWARGS)
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds):  # interleave so drift hits both equally
        start = time.perf_counter()
        for _ in range(calls):
            raw.converse(**RAW_KWARGS)
        theirs.append((time.perf_counter() - start) / calls)
        start = time.perf_counter()
        for _ in range(calls):
            rt.exec(PROMPT)
        ours.append((time.perf_counter() - start) / calls)
    rt.close()
    raw.close()
    o, t = statistics.median(ours), statistics.median(theirs)
    return {"llmport_us": o * 1e6, "raw_us": t * 1e6, "overhead_us": (o - t) * 1e6, "ratio": o / t}


async def bench_async(
    url: str, concurrency: int, workers: int, rounds: int = 3
) -> dict[str, float]:
    rt = runtime(url, workers)
    raw = raw_client(url, workers)
    pool = ThreadPoolExecutor(workers)
    loop = asyncio.get_running_loop()

    def raw_call() -> Any:
        return loop.run_in_executor(pool, lambda: raw.converse(**RAW_KWARGS))

    await asyncio.gather(*(rt.async_exec(PROMPT) for _ in range(50)))
    await asyncio.gather(*(raw_call() for _ in range(50)))
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds):
        start = time.perf_counter()
        await asyncio.gather(*(raw_call() for _ in range(concurrency)))
        theirs.append(time.perf_counter() - start)
        start = time.perf_counter()
        await asyncio.gather(*(rt.async_exec(PROMPT) for _ in range(concurrency)))
        ours.append(time.perf_counter() - start)
    pool.shutdown()
    rt.close()
    raw.close()
    o, t = statistics.median(ours), statistics.median(theirs)
    return {"llmport_ms": o * 1e3, "raw_ms": t * 1e3, "ratio": o / t, "peak_rss_mb": rss_mb()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=500)
    parser.add_argument("--workers", type=int, default=16)
    args = parser.parse_args()
    with LoopbackServer([Reply(json=ANSWER)], repeat=True) as server:
        server._server.socket.listen(2048)  # more than socketserver's default backlog
        sync = bench_sync(server.url, args.calls, args.workers)
        conc = asyncio.run(bench_async(server.url, args.concurrency, args.workers))
    rows = [
        (
            "sync exec vs client.converse",
            f"{sync['llmport_us']:.0f} us",
            f"{sync['raw_us']:.0f} us",
            f"{sync['ratio']:.3f}",
            "<= 1.10",
            f"overhead {sync['overhead_us']:.0f} us/call",
        ),
        (
            f"{args.concurrency} x async_exec vs gather (pool of {args.workers})",
            f"{conc['llmport_ms']:.0f} ms",
            f"{conc['raw_ms']:.0f} ms",
            f"{conc['ratio']:.3f}",
            "<= 1.20",
            f"peak RSS {conc['peak_rss_mb']:.0f} MB",
        ),
    ]
    from rich.console import Console
    from rich.table import Table

    table = Table(title="llmport-bedrock vs raw boto3 (loopback)")
    for col in ("case", "llmport", "raw SDK", "ratio", "target", "note"):
        table.add_column(col)
    for row in rows:
        table.add_row(*row)
    Console().print(table)
    print(
        json.dumps(
            {
                "benchmark": "bedrock",
                "sync": {k: round(v, 3) for k, v in sync.items()},
                "async": {
                    "concurrency": args.concurrency,
                    "workers": args.workers,
                    **{k: round(v, 3) for k, v in conc.items()},
                },
                "targets_met": sync["ratio"] <= 1.10 and conc["ratio"] <= 1.20,
            }
        )
    )


if __name__ == "__main__":
    main()
