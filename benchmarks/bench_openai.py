"""llmport-openai overhead against the raw ``openai`` SDK, on a loopback server.

    uv run python benchmarks/bench_openai.py [--iterations 2000] [--concurrency 500]

1. sync: ``Runtime.exec`` vs ``client.chat.completions.create`` on the same
   server, interleaved rounds; ratio (target <= 1.00) and overhead in µs.
2. async: ``concurrency`` concurrent ``async_exec`` vs raw ``AsyncOpenAI``
   under ``asyncio.gather``; ratio (target: below 1.00) and peak RSS. Each async
   side runs in its own process so its peak RSS is its own.
3. send: the provider's ``send`` alone (one prepared request: the HTTP call
   and the answer's conversion), Chat and Responses, per-call µs and the
   cProfile function-call count per send (deterministic, unlike the time).

Prints a table and one JSON line (last line of output).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from vendor_bench import per_call

MODEL = "gpt-4o-mini"
PROMPT = "What is the capital of France?"
KEY = "sk-bench"
REPLY = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1763715600,
        "model": MODEL,
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
        "usage": {
            "prompt_tokens": 14,
            "completion_tokens": 2,
            "total_tokens": 16,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": "default",
        "system_fingerprint": "fp_bench",
    }
).encode()


class FastServer:
    """A keep-alive HTTP/1.1 server on 127.0.0.1 that answers every request with REPLY.

    llmport.testing.loopback.LoopbackServer is built for scripted faults, not speed: it
    writes headers and body in two sends without TCP_NODELAY (a ~40 ms
    delayed-ACK stall per request) and listens with a backlog of 5. This one
    answers from an asyncio loop in one write, so the numbers measure the
    clients, identically for both sides.
    """

    RESPONSE = (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        b"content-length: " + str(len(REPLY)).encode() + b"\r\n\r\n" + REPLY
    )

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.port = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                await reader.readexactly(length)
                writer.write(self.RESPONSE)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            writer.close()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        srv = self.loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=2048)
        )
        self.port = srv.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FastServer:
        self.thread.start()
        self.ready.wait()
        return self

    async def _shutdown(self) -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop).result(timeout=5)
        self.loop.call_soon_threadsafe(self.loop.stop)


def server() -> FastServer:
    return FastServer()


def runtime(base_url: str) -> Any:
    import llmport_openai.plugin
    from llmport import Runtime
    from llmport.plugins.host import PluginHost

    host = PluginHost(extra=[llmport_openai.plugin], load_entry_points=False)
    return Runtime(
        model=f"openai:{MODEL}",
        plugins=host,
        providers={"openai": {"base_url": base_url, "api_key": KEY}},
    )


# --- 1. sync ------------------------------------------------------------------------------


def bench_sync(iterations: int, rounds: int = 5) -> dict[str, Any]:
    import openai

    with server() as srv:
        base_url = srv.url + "/v1"
        raw = openai.OpenAI(api_key=KEY, base_url=base_url, max_retries=0)
        rt = runtime(base_url)

        def raw_call() -> str:
            completion = raw.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": PROMPT}]
            )
            return completion.choices[0].message.content or ""

        def llmport_call() -> str:
            return rt.exec(PROMPT)  # type: ignore[no-any-return]

        assert raw_call() == llmport_call() == "Paris."
        for _ in range(200):  # warm both paths
            raw_call()
            llmport_call()
        raw_times, ours = [], []
        for _ in range(rounds):  # interleaved, so drift hits both sides alike
            for fn, sink in ((raw_call, raw_times), (llmport_call, ours)):
                start = time.perf_counter()
                for _ in range(iterations):
                    fn()
                sink.append((time.perf_counter() - start) / iterations)
        rt.close()
        raw.close()
    raw_us, our_us = statistics.median(raw_times) * 1e6, statistics.median(ours) * 1e6
    return {
        "raw_us": round(raw_us, 1),
        "llmport_us": round(our_us, 1),
        "overhead_us": round(our_us - raw_us, 1),
        "ratio": round(our_us / raw_us, 3),
    }


# --- 3. send + convert alone ----------------------------------------------------------------

RESPONSES_REPLY = json.dumps(
    {
        "id": "resp_bench",
        "object": "response",
        "created_at": 1763715600,
        "status": "completed",
        "model": MODEL,
        "error": None,
        "incomplete_details": None,
        "output": [
            {
                "type": "message",
                "id": "msg_bench",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Paris.", "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 14,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 2,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 16,
        },
    }
).encode()


def bench_send(calls: int, rounds: int = 5) -> dict[str, Any]:
    """``provider.send(prepared)`` per call, Chat and Responses: µs and function calls."""
    from llmport.messages.types import Message, Request, TextBlock
    from llmport_openai.provider import OpenAIChatProvider, OpenAIResponsesProvider

    out: dict[str, Any] = {}
    for name, cls, reply in (
        ("chat", OpenAIChatProvider, REPLY),
        ("responses", OpenAIResponsesProvider, RESPONSES_REPLY),
    ):

        class Server(FastServer):
            RESPONSE = (
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"content-length: " + str(len(reply)).encode() + b"\r\n\r\n" + reply
            )

        with Server() as srv:
            provider = cls({"api_key": KEY, "base_url": srv.url + "/v1"})
            prepared = provider.prepare(Request(MODEL, [Message("user", (TextBlock(PROMPT),))]))
            assert provider.send(prepared).text == "Paris."
            send_us, calls_per_send = per_call(
                functools.partial(provider.send, prepared), calls, rounds, warmup=200
            )
            provider.close()
        out[name] = {"send_us": round(send_us, 1), "calls_per_send": int(calls_per_send)}
    return out


# --- 2. async (each side in its own process) --------------------------------------------------


async def _raw_gather(base_url: str, n: int) -> float:
    import openai

    client = openai.AsyncOpenAI(api_key=KEY, base_url=base_url, max_retries=0)

    async def one() -> str:
        c = await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": PROMPT}]
        )
        return c.choices[0].message.content or ""

    await asyncio.gather(*(one() for _ in range(20)))  # warm-up
    start = time.perf_counter()
    results = await asyncio.gather(*(one() for _ in range(n)))
    elapsed = time.perf_counter() - start
    assert results.count("Paris.") == n
    await client.close()
    return elapsed


async def _llmport_gather(base_url: str, n: int) -> float:
    rt = runtime(base_url)
    await asyncio.gather(*(rt.async_exec(PROMPT) for _ in range(20)))
    start = time.perf_counter()
    results = await asyncio.gather(*(rt.async_exec(PROMPT) for _ in range(n)))
    elapsed = time.perf_counter() - start
    assert results.count("Paris.") == n
    return elapsed


def async_side(side: str, base_url: str, n: int, repeats: int) -> dict[str, Any]:
    fn = _raw_gather if side == "raw" else _llmport_gather
    times = [asyncio.run(fn(base_url, n)) for _ in range(repeats)]
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"seconds": statistics.median(times), "peak_rss_mb": round(rss_kb / 1024, 1)}


def bench_async(n: int, repeats: int = 3) -> dict[str, Any]:
    with server() as srv:
        out = {}
        for side in ("raw", "llmport"):
            proc = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--async-side",
                    side,
                    "--base-url",
                    srv.url + "/v1",
                    "--concurrency",
                    str(n),
                    "--repeats",
                    str(repeats),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            out[side] = json.loads(proc.stdout.strip().splitlines()[-1])
    raw_s, our_s = out["raw"]["seconds"], out["llmport"]["seconds"]
    return {
        "concurrency": n,
        "raw_ms": round(raw_s * 1e3, 1),
        "llmport_ms": round(our_s * 1e3, 1),
        "ratio": round(our_s / raw_s, 3),
        "raw_peak_rss_mb": out["raw"]["peak_rss_mb"],
        "llmport_peak_rss_mb": out["llmport"]["peak_rss_mb"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--async-side", choices=["raw", "llmport"])
    parser.add_argument("--base-url")
    args = parser.parse_args()
    if args.async_side:
        print(
            json.dumps(async_side(args.async_side, args.base_url, args.concurrency, args.repeats))
        )
        return

    sync = bench_sync(args.iterations)
    send = bench_send(min(args.iterations, 1000))
    concurrent = bench_async(args.concurrency, args.repeats)
    rows = [
        (
            "sync exec, per call",
            f"{sync['raw_us']} µs",
            f"{sync['llmport_us']} µs",
            f"{sync['ratio']} (target <= 1.00)",
            f"+{sync['overhead_us']} µs",
        ),
        (
            f"{args.concurrency} x async_exec, gather",
            f"{concurrent['raw_ms']} ms",
            f"{concurrent['llmport_ms']} ms",
            f"{concurrent['ratio']} (target < 1.00)",
            f"peak RSS {concurrent['raw_peak_rss_mb']} / {concurrent['llmport_peak_rss_mb']} MB",
        ),
    ]
    rows += [
        (
            f"{api} provider.send, per call",
            "",
            f"{figures['send_us']} µs",
            "",
            f"{figures['calls_per_send']} function calls",
        )
        for api, figures in send.items()
    ]
    header = ("benchmark", "raw openai SDK", "llmport", "ratio", "note")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("  ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True)))
    print(
        json.dumps(
            {
                "benchmark": "openai",
                "sync": sync,
                "async": concurrent,
                "send": send,
                "targets_met": sync["ratio"] <= 1.00 and concurrent["ratio"] < 1.00,
            }
        )
    )


if __name__ == "__main__":
    main()
