"""llmport's Bedrock plugin vs raw boto3 ``converse``, on a loopback server.

    uv run python benchmarks/bench_bedrock.py [--calls 400] [--concurrency 500] [--workers 16]

1. sync: ``Runtime.exec`` vs ``client.converse`` (same server, same body,
   same botocore config), median of interleaved rounds; target ratio <= 1.00,
   absolute overhead printed in microseconds.
2. async: 500 concurrent ``async_exec`` vs ``asyncio.gather`` of raw
   ``client.converse`` run in a ``ThreadPoolExecutor`` of the same size
   (boto3 has no async client: a thread pool is how anyone awaits it);
   target: faster than raw; peak RSS.
3. send: the provider's ``send`` / ``asend`` alone (one prepared request:
   the HTTP call and the answer's conversion) beside raw ``client.converse``,
   per-call µs and the cProfile function-call count per call (deterministic,
   unlike the time).
4. stream: the provider's ``send_stream`` / ``asend_stream`` of one prepared
   request, drained, beside raw ``client.converse_stream`` drained, with the
   same figures per stream (six events: two text deltas).

Prints a table and one JSON line.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
from botocore.config import Config
from llmport import Runtime
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_bedrock.eventstream import encode_stream
from vendor_bench import aper_call, arguments, compare_async, compare_sync, per_call, report

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


async def bench_async(url: str, concurrency: int, workers: int) -> dict[str, float]:
    # boto3 has no async client: the raw side runs in a pool as large as llmport's.
    rt = runtime(url, workers)
    raw = raw_client(url, workers)
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(workers) as pool:
        result = await compare_async(
            lambda: rt.async_exec(PROMPT),
            lambda: loop.run_in_executor(pool, lambda: raw.converse(**RAW_KWARGS)),
            concurrency,
        )
    rt.close()
    raw.close()
    return result


def bench_send(url: str, calls: int) -> dict[str, float]:
    """``provider.send`` / ``asend`` of one prepared request vs raw ``client.converse``."""
    from llmport.messages.types import Message, Request, TextBlock
    from llmport_bedrock.provider import BedrockProvider

    provider = BedrockProvider({**CREDENTIALS, "region": REGION, "endpoint_url": url})
    prepared = provider.prepare(Request(MODEL, [Message("user", (TextBlock(PROMPT),))]))
    assert prepared.payload == RAW_KWARGS
    raw = raw_client(url, 16)
    for _ in range(50):
        provider.send(prepared)
        raw.converse(**RAW_KWARGS)
    send_us, send_calls = per_call(lambda: provider.send(prepared), calls)
    raw_us, raw_calls = per_call(lambda: raw.converse(**RAW_KWARGS), calls)

    async def asend() -> tuple[float, float]:
        try:
            return await aper_call(lambda: provider.asend(prepared), calls)
        finally:
            await provider.aclose()

    asend_us, asend_calls = asyncio.run(asend())
    provider.close()
    raw.close()
    return {
        "send_us": send_us,
        "send_calls": send_calls,
        "asend_us": asend_us,
        "asend_calls": asend_calls,
        "raw_converse_us": raw_us,
        "raw_converse_calls": raw_calls,
    }


STREAM_EVENTS = [
    {"event_type": "messageStart", "data": {"role": "assistant"}},
    {
        "event_type": "contentBlockDelta",
        "data": {"contentBlockIndex": 0, "delta": {"text": "The capital "}},
    },
    {
        "event_type": "contentBlockDelta",
        "data": {"contentBlockIndex": 0, "delta": {"text": "is Paris."}},
    },
    {"event_type": "contentBlockStop", "data": {"contentBlockIndex": 0}},
    {"event_type": "messageStop", "data": {"stopReason": "end_turn"}},
    {"event_type": "metadata", "data": {"metrics": {"latencyMs": 120}, "usage": ANSWER["usage"]}},
]


def bench_stream(url: str, calls: int) -> dict[str, float]:
    """``provider.send_stream`` / ``asend_stream`` drained vs raw ``converse_stream`` drained."""
    from llmport.messages.types import Message, Request, TextBlock
    from llmport_bedrock.provider import BedrockProvider

    provider = BedrockProvider({**CREDENTIALS, "region": REGION, "endpoint_url": url})
    prepared = provider.prepare(Request(MODEL, [Message("user", (TextBlock(PROMPT),))]))
    raw = raw_client(url, 16)

    def stream() -> None:
        for _ in provider.send_stream(prepared):
            pass

    def raw_stream() -> None:
        for _ in raw.converse_stream(**RAW_KWARGS)["stream"]:
            pass

    for _ in range(50):
        stream()
        raw_stream()
    stream_us, stream_calls = per_call(stream, calls)
    raw_us, raw_calls = per_call(raw_stream, calls)

    async def astream() -> tuple[float, float]:
        async def one() -> None:
            async for _ in provider.asend_stream(prepared):
                pass

        try:
            return await aper_call(one, calls)
        finally:
            await provider.aclose()

    astream_us, astream_calls = asyncio.run(astream())
    provider.close()
    raw.close()
    return {
        "stream_us": stream_us,
        "stream_calls": stream_calls,
        "astream_us": astream_us,
        "astream_calls": astream_calls,
        "raw_stream_us": raw_us,
        "raw_stream_calls": raw_calls,
    }


def main() -> None:
    args = arguments(__doc__, workers=16)
    with LoopbackServer([Reply(json=ANSWER)], repeat=True) as server:
        rt = runtime(server.url, args.workers)
        raw = raw_client(server.url, args.workers)
        sync = compare_sync(lambda: rt.exec(PROMPT), lambda: raw.converse(**RAW_KWARGS), args.calls)
        rt.close()
        raw.close()
        send = bench_send(server.url, args.calls)
        conc = asyncio.run(bench_async(server.url, args.concurrency, args.workers))
    stream_reply = Reply(
        body=encode_stream(STREAM_EVENTS),
        headers={"content-type": "application/vnd.amazon.eventstream"},
    )
    with LoopbackServer([stream_reply], repeat=True) as server:
        streams = bench_stream(server.url, args.calls)
    print(
        f"provider.send, per call: {send['send_us']:.0f} us, {send['send_calls']:.0f} function "
        f"calls; asend {send['asend_us']:.0f} us, {send['asend_calls']:.0f} calls; raw "
        f"client.converse {send['raw_converse_us']:.0f} us, {send['raw_converse_calls']:.0f} calls"
    )
    print(
        f"provider.send_stream, per stream: {streams['stream_us']:.0f} us, "
        f"{streams['stream_calls']:.0f} function calls; asend_stream {streams['astream_us']:.0f} "
        f"us, {streams['astream_calls']:.0f} calls; raw client.converse_stream "
        f"{streams['raw_stream_us']:.0f} us, {streams['raw_stream_calls']:.0f} calls"
    )
    report(
        "bedrock",
        "llmport-bedrock vs raw boto3 (loopback)",
        sync,
        conc,
        sync_case="sync exec vs client.converse",
        async_case=f"{args.concurrency} x async_exec vs gather (pool of {args.workers})",
        concurrency=args.concurrency,
        workers=args.workers,
        send=send,
        stream=streams,
    )


if __name__ == "__main__":
    main()
