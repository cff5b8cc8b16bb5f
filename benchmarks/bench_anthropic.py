"""llmport's Anthropic plugin vs the raw ``anthropic`` SDK, on a loopback server.

    uv run python benchmarks/bench_anthropic.py [--calls 400] [--concurrency 500]

1. sync: ``Runtime.exec`` vs ``Anthropic().messages.create`` (same server,
   same request body), median of interleaved rounds; target ratio <= 1.00,
   absolute overhead printed in microseconds.
2. async: 500 concurrent ``async_exec`` vs ``asyncio.gather`` of raw
   ``AsyncAnthropic().messages.create``; target: faster than raw; peak RSS.
3. send: the provider's ``send`` alone (one prepared request: the HTTP call
   and the answer's conversion), per-call µs and the cProfile function-call
   count per send (deterministic, unlike the time).

Prints a table and one JSON line.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
from llmport import Runtime
from llmport.testing.loopback import LoopbackServer, Reply
from vendor_bench import arguments, compare_async, compare_sync, per_call, report

MODEL = "claude-haiku-4-5"
PROMPT = "What is the capital of France?"
ANSWER = {
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
}
# Exactly the body llmport sends for Runtime.exec(PROMPT) on this model.
RAW_KWARGS: dict[str, Any] = {
    "model": MODEL,
    "max_tokens": 16384,
    "stream": False,
    "messages": [{"role": "user", "content": [{"type": "text", "text": PROMPT}]}],
}


def runtime(url: str) -> Runtime:
    return Runtime(
        model=f"anthropic:{MODEL}", providers={"anthropic": {"api_key": "bench", "base_url": url}}
    )


async def bench_async(url: str, concurrency: int) -> dict[str, float]:
    rt = runtime(url)
    raw = anthropic.AsyncAnthropic(api_key="bench", base_url=url, max_retries=0)
    result = await compare_async(
        lambda: rt.async_exec(PROMPT), lambda: raw.messages.create(**RAW_KWARGS), concurrency
    )
    await raw.close()
    return result


def bench_send(url: str, calls: int, rounds: int = 5) -> dict[str, float]:
    """``provider.send(prepared)`` per call: µs and function calls."""
    from llmport.messages.types import Message, Request, TextBlock
    from llmport_anthropic.provider import AnthropicProvider

    provider = AnthropicProvider({"api_key": "bench", "base_url": url})
    prepared = provider.prepare(Request(MODEL, [Message("user", (TextBlock(PROMPT),))]))
    send_us, calls_per_send = per_call(lambda: provider.send(prepared), calls, rounds)
    provider.close()
    return {"send_us": send_us, "calls_per_send": calls_per_send}


def main() -> None:
    args = arguments(__doc__)
    with LoopbackServer([Reply(json=ANSWER)], repeat=True) as server:
        rt = runtime(server.url)
        raw = anthropic.Anthropic(api_key="bench", base_url=server.url, max_retries=0)
        sync = compare_sync(
            lambda: rt.exec(PROMPT), lambda: raw.messages.create(**RAW_KWARGS), args.calls
        )
        rt.close()
        raw.close()
        send = bench_send(server.url, args.calls)
        conc = asyncio.run(bench_async(server.url, args.concurrency))
    print(
        f"provider.send, per call: {send['send_us']:.0f} us, "
        f"{send['calls_per_send']:.0f} function calls"
    )
    report(
        "anthropic",
        "llmport-anthropic vs raw anthropic SDK (loopback)",
        sync,
        conc,
        sync_case="sync exec vs messages.create",
        async_case=f"{args.concurrency} x async_exec vs gather",
        concurrency=args.concurrency,
    )


if __name__ == "__main__":
    main()
