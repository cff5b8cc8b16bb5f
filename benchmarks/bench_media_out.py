"""Memory of an image a model answers with: a 20 MB image read from the answer, per vendor.

The loopback server (its own process, ``loopback_proc``) answers one call
with a PNG of ``--mb`` MB: Gemini streamed (text, then the whole image in one
``inlineData`` chunk, as ``gemini-2.5-flash-image`` streams it) and whole;
OpenAI Responses whole (an ``image_generation_call`` item's base64
``result``). Measured inside the call only (after a warm-up call that
creates the client): the tracemalloc peak as a multiple of the image's size
(Python allocations of this process: the answer's JSON text, its decoding,
the ``MediaBlock``), and that the run's image is the PNG.

    uv run python benchmarks/bench_media_out.py [--mb 20]
"""

from __future__ import annotations

import argparse
import base64
import json
import tracemalloc
from typing import Any

from llmport import NativeTool, Runtime
from loopback_proc import ServerProcess


def png(size: int) -> bytes:
    """``size`` bytes that start as a PNG (the checks read the magic bytes)."""
    return b"\x89PNG\r\n\x1a\n" + bytes(size - 8)


def gemini_chunk(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "modelVersion": "gemini-2.5-flash-image",
        "responseId": "bench",
        "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 1290},
    }


def gemini_replies(image: bytes, stream: bool) -> list[dict[str, Any]]:
    data = base64.b64encode(image).decode()
    text = {"text": "Here it is."}
    picture = {"inlineData": {"mimeType": "image/png", "data": data}}
    if not stream:
        return [{"json": gemini_chunk([text, picture], "STOP")}]
    chunks = [gemini_chunk([text]), gemini_chunk([picture]), gemini_chunk([{"text": ""}], "STOP")]
    body = "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks)
    return [{"body": body, "content_type": "text/event-stream"}]


def responses_reply(image: bytes) -> list[dict[str, Any]]:
    item = {
        "id": "ig_bench",
        "type": "image_generation_call",
        "status": "completed",
        "output_format": "png",
        "result": base64.b64encode(image).decode(),
    }
    return [
        {
            "json": {
                "id": "resp_bench",
                "object": "response",
                "model": "gpt-5",
                "status": "completed",
                "output": [item],
                "usage": {"input_tokens": 10, "output_tokens": 1000},
            }
        }
    ]


def measure(name: str, replies: list[dict[str, Any]], image: bytes, stream: bool) -> str:
    with ServerProcess(replies * 2) as server:
        if name == "openai-responses":
            settings = {"api_key": "sk-fake-bench", "base_url": server.url + "/v1"}
            model, kwargs = "openai-responses:gpt-5", {"tools": [NativeTool("image_generation")]}
        else:
            settings = {"api_key": "fake-bench-key", "base_url": server.url}
            model, kwargs = "gemini:gemini-2.5-flash-image", {}
        with Runtime(model=model, providers={name: settings}, max_retries=1) as rt:

            def call() -> Any:
                if stream:
                    return list(rt.stream("Draw.", **kwargs))[-1].result
                return rt.run("Draw.", **kwargs)

            call()  # warm up: client creation and imports are not the image's cost
            tracemalloc.start()
            result = call()
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    (got,) = result.images
    assert got.data == image, "the run's image is not the answer's"
    how = "stream" if stream else "whole"
    return f"{name:17} {how:6} peak {peak / len(image):.2f}x of {len(image) >> 20} MB"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=20)
    args = parser.parse_args()
    image = png(args.mb << 20)
    print(measure("gemini", gemini_replies(image, stream=True), image, stream=True))
    print(measure("gemini", gemini_replies(image, stream=False), image, stream=False))
    print(measure("openai-responses", responses_reply(image), image, stream=False))


if __name__ == "__main__":
    main()
