"""The streamed answers of benchmarks/bench_peers.py are real streams for every side.

A time-to-first-token figure means something only if each side actually
reads a text token from the benchmark's stream: these tests run every side
once against the benchmark's own loopback process and check the text and
that a first token was seen (no timing is asserted).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import bench_peers  # noqa: E402
from llmport import TextDelta  # noqa: E402
from loopback_proc import ServerProcess  # noqa: E402


@pytest.mark.parametrize("vendor", ["openai", "anthropic", "gemini", "bedrock"])
def test_every_side_reads_a_first_token(vendor: str) -> None:
    reply = bench_peers._bedrock_stream() if vendor == "bedrock" else bench_peers.STREAMS[vendor]
    with ServerProcess([reply]) as server:
        sides = bench_peers.stream_sides(vendor, server.url)
        assert sides[0].name == "llmport" and len(sides) == 2
        for side in sides:
            assert bench_peers._ttft(side.sync, side.is_token) > 0, side.name

            async def first(side: bench_peers.StreamSide = side) -> float:
                took = await bench_peers._attft(side.aio, side.is_token)
                await bench_peers._close_all()
                return took

            assert asyncio.run(first()) > 0, side.name
        text = "".join(e.text for e in sides[0].sync() if type(e) is TextDelta)
        assert text == "The capital of France is Paris."
