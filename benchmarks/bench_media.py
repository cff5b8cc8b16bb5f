"""Performance target: a 20 MB image over a whole 3-turn tool loop, per vendor.

For each vendor plugin, one ``Runtime.exec`` with a text part, a 20 MB PNG
and a tool: the loopback server (its own process, ``loopback_proc``) asks
for the tool twice, then answers. Measured inside ``exec`` only (after a
warm-up exec that creates the client):

* tracemalloc peak, as a multiple of the file size (Python allocations of
  this process: llmport, the SDK, its JSON body; the server is elsewhere);
* base64 encodes of the image: calls of ``binascii.b2a_base64`` on >= 1 MB
  (``base64.b64encode``, ``urlsafe_b64encode`` and botocore all go through
  it), however many turns;
* data-URL builds: distinct ``MediaBlock.data_url()`` strings returned (the
  OpenAI and Anthropic plugins build none: their bodies splice the base64
  bytes in, ``llmport.provider.wire``);
* base64 bytes forms: distinct ``MediaBlock.base64_bytes()`` (or, for
  Gemini, ``urlsafe_base64_bytes()``) objects returned (what those bodies
  splice in; one per exec when the encoding is shared).

With ``--from-tool`` the image is not in the prompt: the tool returns it
(read from the file, as a ``{"type": "image", "path": ...}`` part is) on its
first call and ``"ok"`` on its second, so it travels inside the tool result
or, where the API holds no media there (Chat Completions, Gemini 2.5), in the
user turn after it, on turns 2 and 3.

    uv run python benchmarks/bench_media.py [--mb 20] [--vendors openai,openai-responses,...]
    uv run python benchmarks/bench_media.py --from-tool
"""

from __future__ import annotations

import argparse
import binascii
import json
import os
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from llmport import Runtime
from llmport.messages.content import load_block
from llmport.messages.types import MediaBlock
from loopback_proc import ServerProcess

AWS = {"aws_access_key_id": "AKIDEXAMPLEFAKE", "aws_secret_access_key": "fake-secret"}


def _openai(final: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "a picture" if final else None}
    if not final:
        message["tool_calls"] = [
            {"id": "call_1", "type": "function", "function": {"name": "noop", "arguments": "{}"}}
        ]
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [
            {"index": 0, "message": message, "finish_reason": "stop" if final else "tool_calls"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _responses(final: bool) -> dict[str, Any]:
    item: dict[str, Any] = (
        {
            "type": "message",
            "id": "msg_1",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "a picture", "annotations": []}],
        }
        if final
        else {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "noop",
            "arguments": "{}",
            "status": "completed",
        }
    )
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": "gpt-5-mini",
        "output": [item],
        "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
    }


def _anthropic(final: bool) -> dict[str, Any]:
    content: list[dict[str, Any]] = (
        [{"type": "text", "text": "a picture"}]
        if final
        else [{"type": "tool_use", "id": "toolu_1", "name": "noop", "input": {}}]
    )
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": "end_turn" if final else "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _gemini(final: bool) -> dict[str, Any]:
    part = {"text": "a picture"} if final else {"functionCall": {"name": "noop", "args": {}}}
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": "gemini-2.5-flash",
    }


def _bedrock(final: bool) -> dict[str, Any]:
    content = (
        [{"text": "a picture"}]
        if final
        else [{"toolUse": {"toolUseId": "t1", "name": "noop", "input": {}}}]
    )
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "end_turn" if final else "tool_use",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        "metrics": {"latencyMs": 1},
    }


VENDORS: dict[str, tuple[Any, str, Any]] = {
    # name: (reply maker, model, provider settings from the server url)
    "openai": (
        _openai,
        "openai:gpt-4o-mini",
        lambda url: {"api_key": "sk-bench", "base_url": url + "/v1"},
    ),
    "openai-responses": (
        _responses,
        "openai-responses:gpt-5-mini",
        lambda url: {"api_key": "sk-bench", "base_url": url + "/v1"},
    ),
    "anthropic": (
        _anthropic,
        "anthropic:claude-sonnet-4-5",
        lambda url: {"api_key": "bench", "base_url": url},
    ),
    "gemini": (
        _gemini,
        "gemini:gemini-2.5-flash",
        lambda url: {"api_key": "bench", "base_url": url},
    ),
    "bedrock": (
        _bedrock,
        "bedrock:us.amazon.nova-pro-v1:0",
        lambda url: {**AWS, "region": "us-east-1", "endpoint_url": url},
    ),
}


LIMITS = {"anthropic": 5 * 1024 * 1024, "bedrock": 3_750_000, "gemini": 15 * 1024 * 1024}


def noop() -> str:
    """Do nothing."""
    return "ok"


def returns_the_image(path: Path) -> Any:
    """A tool returning the image file on its first call of an exec, then ``"ok"``."""
    calls = [0]

    def noop() -> Any:  # the name the server's replies call
        """Take a screenshot."""
        calls[0] += 1
        if calls[0] % 2 == 1:
            return load_block({"type": "image", "path": str(path)}, 0)
        return "ok"

    return noop


def measure(vendor: str, path: Path, size: int, from_tool: bool = False) -> dict[str, Any]:
    make, model, settings = VENDORS[vendor]
    replies = [{"json": make(False)}, {"json": make(False)}, {"json": make(True)}]
    encodes = 0
    urls: list[str] = []
    forms: list[bytes] = []
    real_b2a = binascii.b2a_base64
    real_url = MediaBlock.data_url
    real_bytes = MediaBlock.base64_bytes
    real_urlsafe = MediaBlock.urlsafe_base64_bytes

    def counting_b2a(data: Any, *args: Any, **kw: Any) -> bytes:
        nonlocal encodes
        if len(data) >= 1 << 20:
            encodes += 1
        return real_b2a(data, *args, **kw)

    def counting_url(self: MediaBlock) -> str:
        url = real_url(self)
        if not any(u is url for u in urls):
            urls.append(url)
        return url

    def counting_bytes(self: MediaBlock) -> bytes:
        form = real_bytes(self)
        if not any(f is form for f in forms):
            forms.append(form)
        return form

    def counting_urlsafe(self: MediaBlock) -> bytes:
        form = real_urlsafe(self)
        if not any(f is form for f in forms):
            forms.append(form)
        return form

    content: Any = [{"type": "text", "text": "look"}, {"type": "image", "path": str(path)}]
    tool: Any = noop
    if from_tool:
        content, tool = "look", returns_the_image(path)
    with ServerProcess(replies * 2) as server:
        provider = model.split(":", 1)[0]
        rt = Runtime(model=model, providers={provider: settings(server.url)})
        rt.exec("warm up", tools=[noop])  # client creation and imports are not the block's cost
        # 1. the peak, with nothing instrumented
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            result = rt.exec(content, tools=[tool])
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        # 2. the counts (every data URL kept alive, so each distinct build is its own object)
        binascii.b2a_base64 = counting_b2a
        MediaBlock.data_url = counting_url  # type: ignore[method-assign]
        MediaBlock.base64_bytes = counting_bytes  # type: ignore[method-assign]
        MediaBlock.urlsafe_base64_bytes = counting_urlsafe  # type: ignore[method-assign]
        try:
            rt.exec(content, tools=[tool])
        finally:
            binascii.b2a_base64 = real_b2a
            MediaBlock.data_url = real_url  # type: ignore[method-assign]
            MediaBlock.base64_bytes = real_bytes  # type: ignore[method-assign]
            MediaBlock.urlsafe_base64_bytes = real_urlsafe  # type: ignore[method-assign]
        rt.close()
    return {
        "vendor": vendor,
        "file_mb": round(size / 1024 / 1024, 2),
        "turns": 3,
        "text": str(result),
        "peak_x_file": round(peak / size, 2),
        "peak_mb": round(peak / 1e6, 1),
        "encodes": encodes,
        "data_urls": len(urls),
        "base64_bytes_forms": len(forms),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--vendors", default="openai,openai-responses,anthropic,gemini,bedrock")
    parser.add_argument("--from-tool", action="store_true", help="the tool returns the image")
    args = parser.parse_args()
    size = args.mb * 1024 * 1024
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.png"
        path.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(size - 8))
        for vendor in args.vendors.split(","):
            # Anthropic, Bedrock, Gemini (inline) cap images at 5 / 3.75 / ~15 MB.
            cap = LIMITS.get(vendor)
            if cap is not None and cap < size:
                small = Path(tmp) / f"{vendor}.png"
                small.write_bytes(path.read_bytes()[:cap])
                rows.append(measure(vendor, small, cap, args.from_tool))
            else:
                rows.append(measure(vendor, path, size, args.from_tool))
    where = "returned by the tool" if args.from_tool else "in the prompt"
    print(f"{args.mb} MB PNG {where}, one exec = 3-turn tool loop (target: peak <= 3x, 1 encode)")
    print(
        f"{'vendor':12} {'file MB':>8} {'peak x file':>11} {'peak MB':>8}"
        f" {'encodes':>8} {'data URLs':>10} {'b64 bytes':>10}"
    )
    for r in rows:
        print(
            f"{r['vendor']:12} {r['file_mb']:8.2f} {r['peak_x_file']:11.2f} {r['peak_mb']:8.1f} "
            f"{r['encodes']:8d} {r['data_urls']:10d} {r['base64_bytes_forms']:10d}"
        )
    bench = "media-from-tool" if args.from_tool else "media"
    print(json.dumps({"bench": bench, "file_mb": args.mb, "rows": rows}))


if __name__ == "__main__":
    main()
