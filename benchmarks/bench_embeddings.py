"""Embeddings side by side: llmport vs the OpenAI SDK's own ``embeddings.create`` loop.

    uv run python benchmarks/bench_embeddings.py [--texts 10000] [--batch 100]
        [--concurrency 8] [--dims 1536] [--rounds 3]

A loopback server in its own process (``loopback_proc``) speaks OpenAI's
wire: every request gets ``batch`` base64 float32 vectors of ``dims``
values. Every side does the same work: ``texts`` short texts in requests of
``batch`` inputs, ``concurrency`` requests in flight.

* ``llmport aembed`` / ``llmport embed``: one call (the core splits, sends
  the parts concurrently, joins into one float32 buffer);
* ``openai SDK async`` / ``openai SDK threads``: ``embeddings.create`` per
  batch under a semaphore (async) or a thread pool (sync), as a user of the
  SDK would write it, with the SDK's own decoding of the vectors;
* LiteLLM's ``aembedding`` and pydantic-ai's ``Embedder`` when installed
  (not dependencies of llmport: "n/a" otherwise).

Wall time is the median of ``rounds``, the sides interleaved round by round.
Peak RSS is measured per side in a fresh child process: its peak resident
memory during the call minus its resident memory just before it, next to the
vectors' own float32 size (``texts * dims * 4`` bytes).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from loopback_proc import ServerProcess

MODEL = "text-embedding-3-small"


def reply(batch: int, dims: int) -> dict[str, Any]:
    """OpenAI's answer to one request of ``batch`` inputs (base64 float32 vectors)."""
    vector = base64.b64encode(struct.pack(f"<{dims}f", *([0.125] * dims))).decode()
    data = [{"object": "embedding", "index": i, "embedding": vector} for i in range(batch)]
    usage = {"prompt_tokens": batch * 4, "total_tokens": batch * 4}
    return {"json": {"object": "list", "data": data, "model": MODEL, "usage": usage}}


def texts_of(n: int) -> list[str]:
    return [f"short text number {i}" for i in range(n)]


# -- the sides ------------------------------------------------------------------------------


def llmport_runtime(url: str, batch: int, concurrency: int) -> Any:
    """A runtime whose ``bench:`` service takes ``batch`` inputs per request (OpenAI's wire)."""
    from dataclasses import replace

    from llmport import Limit, Runtime, hookimpl
    from llmport_openai.plugin import profile_info
    from llmport_openai.profiles import EMBED, Profile

    caps = replace(EMBED, max_embed_inputs=batch, embedding_dimensions=None)
    profile = Profile(
        "bench",
        url,
        "BENCH_API_KEY",
        key_required=False,
        embed_models={"*": caps},
        embed_base64=True,
    )

    class Plugin:
        @hookimpl
        def llmport_providers(self, register: Callable[[Any], None]) -> None:
            register(profile_info(profile, plugin="bench"))

    limits = {"bench:*": Limit(concurrency=concurrency)}
    return Runtime(hooks=[Plugin()], limits=limits)


def llmport_async(url: str, texts: list[str], batch: int, concurrency: int) -> Callable[[], Any]:
    rt = llmport_runtime(url, batch, concurrency)
    return lambda: asyncio.run(rt.aembed(texts, model=f"bench:{MODEL}"))


def llmport_sync(url: str, texts: list[str], batch: int, concurrency: int) -> Callable[[], Any]:
    rt = llmport_runtime(url, batch, concurrency)
    return lambda: rt.embed(texts, model=f"bench:{MODEL}")


def sdk_async(url: str, texts: list[str], batch: int, concurrency: int) -> Callable[[], Any]:
    import openai

    def run() -> list[Any]:
        async def main() -> list[Any]:
            client = openai.AsyncOpenAI(base_url=url, api_key="unused", max_retries=0)
            slots = asyncio.Semaphore(concurrency)

            async def one(part: list[str]) -> Any:
                async with slots:
                    answer = await client.embeddings.create(input=part, model=MODEL)
                    return [item.embedding for item in answer.data]

            parts = [texts[i : i + batch] for i in range(0, len(texts), batch)]
            rows = await asyncio.gather(*(one(p) for p in parts))
            await client.close()
            return [row for part in rows for row in part]

        return asyncio.run(main())

    return run


def sdk_threads(url: str, texts: list[str], batch: int, concurrency: int) -> Callable[[], Any]:
    import openai

    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)

    def one(part: list[str]) -> Any:
        answer = client.embeddings.create(input=part, model=MODEL)
        return [item.embedding for item in answer.data]

    def run() -> list[Any]:
        parts = [texts[i : i + batch] for i in range(0, len(texts), batch)]
        with ThreadPoolExecutor(concurrency) as pool:
            return [row for rows in pool.map(one, parts) for row in rows]

    return run


def litellm_async(url: str, texts: list[str], batch: int, concurrency: int) -> Callable[[], Any]:
    import litellm  # optional: not a dependency

    def run() -> list[Any]:
        async def main() -> list[Any]:
            slots = asyncio.Semaphore(concurrency)

            async def one(part: list[str]) -> Any:
                async with slots:
                    answer = await litellm.aembedding(
                        model=f"openai/{MODEL}", input=part, api_base=url, api_key="unused"
                    )
                    return [item["embedding"] for item in answer.data]

            parts = [texts[i : i + batch] for i in range(0, len(texts), batch)]
            return [r for rows in await asyncio.gather(*(one(p) for p in parts)) for r in rows]

        return asyncio.run(main())

    return run


def pydantic_ai_async(
    url: str, texts: list[str], batch: int, concurrency: int
) -> Callable[[], Any]:
    # optional: not dependencies of llmport
    from pydantic_ai import Embedder  # type: ignore[import-not-found,unused-ignore]
    from pydantic_ai.embeddings.openai import (  # type: ignore[import-not-found,unused-ignore]
        OpenAIEmbeddingModel,
    )
    from pydantic_ai.providers.openai import (  # type: ignore[import-not-found,unused-ignore]
        OpenAIProvider,
    )

    def run() -> Any:
        async def main() -> Any:
            # Made inside the round's event loop: its AsyncOpenAI client cannot outlive it.
            provider = OpenAIProvider(base_url=url, api_key="unused")
            embedder = Embedder(OpenAIEmbeddingModel(MODEL, provider=provider))
            slots = asyncio.Semaphore(concurrency)

            async def one(part: list[str]) -> Any:
                async with slots:
                    return await embedder.embed_documents(part)

            parts = [texts[i : i + batch] for i in range(0, len(texts), batch)]
            return await asyncio.gather(*(one(p) for p in parts))

        return asyncio.run(main())

    return run


SIDES: dict[str, Callable[[str, list[str], int, int], Callable[[], Any]]] = {
    "llmport aembed": llmport_async,
    "llmport embed (threads)": llmport_sync,
    "openai SDK async loop": sdk_async,
    "openai SDK threads loop": sdk_threads,
    "LiteLLM aembedding": litellm_async,
    "pydantic-ai Embedder": pydantic_ai_async,
}


# -- measuring ------------------------------------------------------------------------------


def _status(field: str) -> int:
    """A ``/proc/self/status`` memory field (``VmRSS``, ``VmHWM``) in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def child_rss(side: str, url: str, texts: int, batch: int, concurrency: int) -> None:
    """In a fresh process: warm the side up, then its peak RSS during one run, as JSON."""
    run = SIDES[side](url, texts_of(texts), batch, concurrency)
    small = SIDES[side](url, texts_of(batch), batch, concurrency)
    small()  # imports, clients, first connection: not the vectors' cost
    with open("/proc/self/clear_refs", "w") as refs:  # restart the peak (VmHWM) here
        refs.write("5")
    before = _status("VmRSS")
    result = run()
    peak = _status("VmHWM")
    assert len(result) == texts or side == "pydantic-ai Embedder"
    print(json.dumps({"peak_delta": peak - before}))


def rss_of(side: str, url: str, args: argparse.Namespace) -> int | str:
    command = [
        sys.executable,
        __file__,
        "--child",
        side,
        "--url",
        url,
        "--texts",
        str(args.texts),
        "--batch",
        str(args.batch),
        "--concurrency",
        str(args.concurrency),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        return "n/a: " + (done.stderr.strip().splitlines() or ["failed"])[-1][:60]
    return int(json.loads(done.stdout.strip().splitlines()[-1])["peak_delta"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--dims", type=int, default=1536)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child")
    parser.add_argument("--url")
    args = parser.parse_args()
    if args.child:
        child_rss(args.child, args.url, args.texts, args.batch, args.concurrency)
        return
    os.environ.setdefault("LLMPORT_PLUGINS", "openai")
    texts = texts_of(args.texts)
    with ServerProcess([reply(args.batch, args.dims)]) as server:
        url = server.url
        runs: dict[str, Callable[[], Any] | str] = {}
        for side, make in SIDES.items():
            try:
                runs[side] = make(url, texts, args.batch, args.concurrency)
            except ImportError as exc:
                runs[side] = f"n/a ({exc.name} not installed)"
        times: dict[str, list[float]] = {side: [] for side in runs}
        for _ in range(args.rounds):
            for side, run in runs.items():
                if isinstance(run, str):
                    continue
                started = time.perf_counter()
                run()
                times[side].append(time.perf_counter() - started)
        size = args.texts * args.dims * 4
        print(
            f"{args.texts} texts, {args.batch} per request, {args.concurrency} in flight, "
            f"{args.dims}-d vectors ({size / 1e6:.1f} MB as float32); median of {args.rounds}"
        )
        print(f"{'side':28} {'wall s':>8} {'peak RSS MB':>12} {'x float32':>10}")
        report: dict[str, Any] = {}
        for side, run in runs.items():
            if isinstance(run, str):
                print(f"{side:28} {run}")
                report[side] = run
                continue
            wall = statistics.median(times[side])
            rss = rss_of(side, url, args)
            ratio = f"{rss / size:.2f}" if isinstance(rss, int) else "-"
            shown = f"{rss / 1e6:.1f}" if isinstance(rss, int) else rss
            print(f"{side:28} {wall:8.3f} {shown:>12} {ratio:>10}")
            report[side] = {"wall_s": round(wall, 4), "peak_rss_bytes": rss}
        print(json.dumps(report))


if __name__ == "__main__":
    main()
