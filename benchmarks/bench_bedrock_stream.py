"""A long Bedrock stream, sync: llmport's ``Runtime.stream`` vs boto3's own loop.

    uv run python benchmarks/bench_bedrock_stream.py [--deltas 200] [--rounds 15] [--calls 20]

One answer of ``--deltas`` text deltas (AWS event-stream frames) from a loopback
server in its own process (``loopback_proc.py``); each side drains the whole
stream: ``Runtime.stream(prompt)`` (every event through the core's stream
path, then the assembled answer), the plugin's ``send_stream`` of one prepared
request (the wire and event decoding alone) and ``client.converse_stream``'s
event loop in boto3 (same server, same body, same botocore config). Rounds are
interleaved; each figure is the median over rounds of the mean per stream in ms.
Target: ``Runtime.stream`` <= boto3. Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import time
from collections.abc import Callable

from bench_bedrock import CREDENTIALS, MODEL, PROMPT, RAW_KWARGS, REGION, raw_client
from llmport import Runtime
from llmport.messages.types import Message, Request, TextBlock
from llmport_bedrock.eventstream import encode_stream
from llmport_bedrock.provider import BedrockProvider
from loopback_proc import ServerProcess


def events(deltas: int) -> list[dict[str, object]]:
    """A Bedrock answer streamed as ``deltas`` text deltas of a few words each."""
    usage = {"inputTokens": 7, "outputTokens": deltas, "totalTokens": 7 + deltas}
    return [
        {"event_type": "messageStart", "data": {"role": "assistant"}},
        *(
            {
                "event_type": "contentBlockDelta",
                "data": {"contentBlockIndex": 0, "delta": {"text": f"word {i} "}},
            }
            for i in range(deltas)
        ),
        {"event_type": "contentBlockStop", "data": {"contentBlockIndex": 0}},
        {"event_type": "messageStop", "data": {"stopReason": "end_turn"}},
        {"event_type": "metadata", "data": {"metrics": {"latencyMs": 120}, "usage": usage}},
    ]


def mean_ms(drain: Callable[[], None], calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        drain()
    return (time.perf_counter() - started) / calls * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deltas", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    body = encode_stream(events(args.deltas))
    reply = {
        "body_b64": base64.b64encode(body).decode(),
        "content_type": "application/vnd.amazon.eventstream",
    }
    with ServerProcess([reply]) as server:
        settings = {**CREDENTIALS, "region": REGION, "endpoint_url": server.url}
        rt = Runtime(model=f"bedrock:{MODEL}", providers={"bedrock": settings})
        raw = raw_client(server.url, 16)
        provider = BedrockProvider(settings)
        prepared = provider.prepare(Request(MODEL, [Message("user", (TextBlock(PROMPT),))]))

        def llmport_stream() -> None:
            for _ in rt.stream(PROMPT):
                pass

        def plugin_stream() -> None:
            for _ in provider.send_stream(prepared):
                pass

        def boto3_stream() -> None:
            for _ in raw.converse_stream(**RAW_KWARGS)["stream"]:
                pass

        sides = {
            "llmport Runtime.stream": llmport_stream,
            "plugin send_stream": plugin_stream,
            "boto3 converse_stream": boto3_stream,
        }
        text = "".join(getattr(event, "text", "") for event in rt.stream(PROMPT))
        assert text.count("word") == args.deltas, text[:80]  # every delta read
        for drain in sides.values():  # warm: connections, first-use imports, caches
            for _ in range(5):
                drain()
        figures: dict[str, list[float]] = {name: [] for name in sides}
        for _ in range(args.rounds):
            for name, drain in sides.items():
                figures[name].append(mean_ms(drain, args.calls))
        rt.close()
        raw.close()
    medians = {name: statistics.median(values) for name, values in figures.items()}
    base = medians["boto3 converse_stream"]
    load = os.getloadavg()[0]
    print(f"{args.deltas}-delta Bedrock stream, sync, ms per stream (load {load:.1f})")
    for name, value in medians.items():
        print(f"  {name:24s} {value:7.2f} ms  x{value / base:.2f}")
    print(
        json.dumps(
            {
                "bench": "bedrock_stream",
                "deltas": args.deltas,
                "ms": {name: round(value, 3) for name, value in medians.items()},
                "ratio_runtime_to_boto3": round(medians["llmport Runtime.stream"] / base, 3),
                "load": round(load, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
