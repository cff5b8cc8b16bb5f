"""Embedding many texts: llmport vs the vendor SDK itself, on Gemini and Bedrock (loopback).

    uv run python benchmarks/bench_embed_vendors.py [--texts 10000] [--rounds 3]

One loopback server per case, in its own process (``loopback_proc``), answers
every request with the same vectors. Both sides send the same requests, in
the same batches and with the same concurrency (llmport's default: 8 parts in
flight, ``engine.embed.PARTS_IN_FLIGHT``):

* Gemini Developer API, ``batchEmbedContents``, 100 texts per request, 768
  dimensions: ``rt.aembed(texts)`` vs google-genai's
  ``client.aio.models.embed_content`` on batches of 100, 8 at a time;
* Bedrock Cohere Embed v4, 96 texts per InvokeModel call, 512 dimensions:
  ``rt.aembed`` vs boto3 ``invoke_model`` on batches of 96 in 8 threads;
* Bedrock Titan v2, one text per call (``--titan`` texts): the concurrency
  is what counts.

Prints wall time (median of ``--rounds``), the ratio, and how much the peak
how much resident memory one llmport call adds while its result is held,
against the size of the float32 vectors, then one JSON line. ``--texts`` must be a multiple of 100
and of 96 (each loopback answer holds one full batch).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from loopback_proc import ServerProcess
from vendor_bench import rss_mb

IN_FLIGHT = 8
CREDENTIALS = {"aws_access_key_id": "AKIAFAKEFAKEFAKEFAKE", "aws_secret_access_key": "fake"}
REGION = "us-east-1"


def rows(count: int, size: int) -> list[list[float]]:
    return [[((i + j) % 13) / 16 for j in range(size)] for i in range(count)]


def timed(fn: Any, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def gather_limited(jobs: list[Any]) -> list[Any]:
    slots = asyncio.Semaphore(IN_FLIGHT)

    async def one(job: Any) -> Any:
        async with slots:
            return await job()

    return await asyncio.gather(*(one(job) for job in jobs))


def gemini_case(texts: list[str], rounds: int) -> dict[str, float]:
    from google import genai
    from google.genai import types
    from llmport import Runtime

    answer = {"embeddings": [{"values": row} for row in rows(100, 768)]}
    with ServerProcess([{"json": answer}]) as server:
        rt = Runtime(providers={"gemini": {"api_key": "bench", "base_url": server.url}})
        client = genai.Client(
            api_key="bench",
            http_options=types.HttpOptions(
                base_url=server.url, retry_options=types.HttpRetryOptions(attempts=1)
            ),
        )
        config = types.EmbedContentConfig(output_dimensionality=768)
        batches = [texts[i : i + 100] for i in range(0, len(texts), 100)]

        def ours() -> None:
            asyncio.run(rt.aembed(texts, model="gemini:gemini-embedding-001", dimensions=768))

        def raw() -> None:
            async def run() -> None:
                jobs = [
                    (
                        lambda b=b: client.aio.models.embed_content(
                            model="gemini-embedding-001", contents=b, config=config
                        )
                    )
                    for b in batches
                ]
                await gather_limited(jobs)

            asyncio.run(run())

        ours(), raw()  # warm-up
        return {"llmport_s": timed(ours, rounds), "sdk_s": timed(raw, rounds)}


def bedrock_case(texts: list[str], rounds: int, model: str, per_call: int) -> dict[str, float]:
    import boto3
    from botocore.config import Config
    from llmport import Runtime

    if per_call == 1:
        answer: dict[str, Any] = {"embedding": rows(1, 512)[0], "inputTextTokenCount": 3}
    else:
        answer = {
            "embeddings": {"float": rows(per_call, 512)},
            "response_type": "embeddings_by_type",
        }
    with ServerProcess([{"json": answer}]) as server:
        settings = {**CREDENTIALS, "region": REGION, "endpoint_url": server.url}
        rt = Runtime(providers={"bedrock": settings})
        session = boto3.session.Session(region_name=REGION, **CREDENTIALS)
        config = Config(retries={"total_max_attempts": 1}, max_pool_connections=IN_FLIGHT)
        client = session.client("bedrock-runtime", endpoint_url=server.url, config=config)
        batches = [texts[i : i + per_call] for i in range(0, len(texts), per_call)]

        def body(batch: list[str]) -> bytes:
            if per_call == 1:
                return json.dumps(
                    {"inputText": batch[0], "dimensions": 512, "normalize": True}
                ).encode()
            return json.dumps(
                {
                    "texts": batch,
                    "input_type": "search_document",
                    "output_dimension": 512,
                    "truncate": "NONE",
                }
            ).encode()

        def invoke(batch: list[str]) -> Any:
            out = client.invoke_model(
                modelId=model,
                body=body(batch),
                contentType="application/json",
                accept="application/json",
            )
            return json.loads(out["body"].read())

        def ours() -> None:
            asyncio.run(rt.aembed(texts, model=f"bedrock:{model}", dimensions=512))

        def raw() -> None:
            with ThreadPoolExecutor(IN_FLIGHT) as pool:
                list(pool.map(invoke, batches))

        ours(), raw()
        return {"llmport_s": timed(ours, rounds), "sdk_s": timed(raw, rounds)}


def current_rss_mb() -> float:
    """Resident memory of this process now, in MB (Linux ``/proc``; else the peak so far)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return rss_mb()


def memory_case(texts: list[str]) -> dict[str, float]:
    """Resident memory one llmport call adds while its ``len(texts)`` x 768 vectors are held."""
    from llmport import Runtime

    answer = {"embeddings": [{"values": row} for row in rows(100, 768)]}
    with ServerProcess([{"json": answer}]) as server:
        rt = Runtime(providers={"gemini": {"api_key": "bench", "base_url": server.url}})
        asyncio.run(rt.aembed(texts[:100], model="gemini:gemini-embedding-001", dimensions=768))
        before = current_rss_mb()
        result = asyncio.run(rt.aembed(texts, model="gemini:gemini-embedding-001", dimensions=768))
        grown = current_rss_mb() - before
    return {"vectors_mb": len(result.data) / 2**20, "rss_growth_mb": grown}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--texts", type=int, default=9600)
    parser.add_argument("--titan", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    texts = [f"short text number {i}" for i in range(args.texts)]
    memory = memory_case(texts)
    results = {
        "gemini_batch": gemini_case(texts, args.rounds),
        "bedrock_cohere_v4": bedrock_case(texts, args.rounds, "cohere.embed-v4:0", 96),
        "bedrock_titan_v2": bedrock_case(
            texts[: args.titan], args.rounds, "amazon.titan-embed-text-v2:0", 1
        ),
    }
    print(f"{'case':<20} {'llmport s':>10} {'SDK s':>10} {'ratio':>7}")
    for name, r in results.items():
        print(
            f"{name:<20} {r['llmport_s']:>10.3f} {r['sdk_s']:>10.3f} "
            f"{r['llmport_s'] / r['sdk_s']:>7.2f}"
        )
    print(
        f"memory: {memory['vectors_mb']:.1f} MB of float32 vectors held, "
        f"resident memory grew {memory['rss_growth_mb']:.1f} MB"
    )
    print(json.dumps({"texts": args.texts, "titan": args.titan, **results, "memory": memory}))


if __name__ == "__main__":
    main()
