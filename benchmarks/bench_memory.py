"""Performance target: a 20 MB image block: peak memory <= 3x the file size; encoded once per exec.

Two measurements, both with tracemalloc (Python allocations, from just
before exec to its end):

* llmport's own share: a 3-turn tool loop on the scripted provider, which
  asks the block for its base64 form on every turn (as plugins do);
* end to end: one exec through the real OpenAI plugin and SDK against a
  loopback Chat Completions server, which adds the SDK's JSON request body.

    uv run python benchmarks/bench_memory.py [--mb 20]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

from llmport import Runtime
from llmport.messages.types import MediaBlock, Request, Response, ToolCall
from llmport.testing import Script, respond
from llmport.testing.loopback import LoopbackServer, Reply


def make_image(path: Path, size: int) -> None:
    # A PNG signature followed by noise: the media type is sniffed, the bytes do not compress.
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(size - 8))


def peak_during(fn: Any) -> tuple[int, Any]:
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, result


def scripted_loop(path: Path) -> tuple[int, int]:
    encodes = 0
    original = MediaBlock.base64

    def counting(self: MediaBlock) -> str:
        nonlocal encodes
        if not self._b64:
            encodes += 1
        return original(self)

    turns = 0

    def touch(request: Request) -> Response:
        # Like a plugin: every turn's request carries the image and asks for its base64.
        nonlocal turns
        turns += 1
        for message in request.messages:
            for block in message.blocks:
                if isinstance(block, MediaBlock):
                    block.base64()
        if turns < 3:
            return Response(
                tool_calls=[ToolCall(f"call_{turns}", "noop", {}, "{}")], stop_reason="tool_use"
            )
        return Response(text="done")

    script = Script([respond(touch)] * 3)

    def noop() -> str:
        """Do nothing."""
        return "ok"

    rt = script.runtime()
    MediaBlock.base64 = counting  # type: ignore[method-assign]
    try:
        peak, _ = peak_during(
            lambda: rt.exec(
                [{"type": "text", "text": "look"}, {"type": "image", "path": str(path)}],
                tools=[noop],
            )
        )
    finally:
        MediaBlock.base64 = original  # type: ignore[method-assign]
    return peak, encodes


def openai_end_to_end(path: Path) -> int:
    completion = {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "a picture"},
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    with LoopbackServer([Reply(json=completion)], repeat=True) as server:
        rt = Runtime(
            model="openai:gpt-4o-mini",
            providers={"openai": {"api_key": "sk-bench-fake", "base_url": server.url + "/v1"}},
        )
        rt.exec("warm up")  # client creation and imports are not the block's cost
        peak, _ = peak_during(
            lambda: rt.exec(
                [{"type": "text", "text": "look"}, {"type": "image", "path": str(path)}]
            )
        )
    return peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=20)
    args = parser.parse_args()
    size = args.mb * 1024 * 1024
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.png"
        make_image(path, size)
        own_peak, encodes = scripted_loop(path)
        e2e_peak = openai_end_to_end(path)
    rows = [
        ("llmport, 3-turn tool loop (scripted provider)", own_peak, "target <= 3.0x"),
        ("end to end, openai plugin + SDK JSON body", e2e_peak, "includes the SDK's request body"),
    ]
    print(f"image block: {args.mb} MB; base64 encodes in one 3-turn exec: {encodes} (target 1)")
    print(f"{'what':48} {'peak MB':>8} {'x file':>7}  note")
    for what, peak, note in rows:
        print(f"{what:48} {peak / 1e6:8.1f} {peak / size:7.2f}  {note}")
    print(
        json.dumps(
            {
                "bench": "memory",
                "file_mb": args.mb,
                "encodes_per_exec": encodes,
                "llmport_peak_ratio": round(own_peak / size, 2),
                "end_to_end_peak_ratio": round(e2e_peak / size, 2),
                "target_met": own_peak <= 3 * size and encodes == 1,
            }
        )
    )


if __name__ == "__main__":
    main()
