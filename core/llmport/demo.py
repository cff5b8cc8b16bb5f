"""``llmport demo``: an offline showcase that does real work.

Runs several model calls through the real runtime: per-call model switching
between two providers, a multimodal block, a parallel tool loop, structured
output, a decision, and a transient failure that is retried. No keys, no
network.
"""

from __future__ import annotations

import json
import struct
import time
import zlib
from typing import Any


def tiny_png(width: int = 8, height: int = 8, rgb: tuple[int, int, int] = (40, 160, 90)) -> bytes:
    """A real PNG image, made here so the demo needs no asset files."""
    row = b"\x00" + bytes(rgb) * width
    raw = row * height

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def run_demo(as_json: bool = False) -> int:
    """Run the showcase; print a report (rich) or one JSON document."""
    from rich.console import Console
    from rich.table import Table

    from .errors import RateLimitError
    from .retry import Backoff
    from .runtime import Runtime
    from .testing import Script, call_tools, fail, reply
    from .tools import tool

    console = Console(highlight=False, quiet=as_json)

    @tool
    def weather(city: str) -> str:
        """Current weather for a city."""
        time.sleep(0.2)  # a slow API: the two calls of one turn run in parallel
        return {"Paris": "sunny, 22°C", "Oslo": "snow, -3°C"}.get(city, "unknown")

    # Two scripted "vendors" stand in until the vendor plugins' cassettes land.
    fast = Script(
        prefix="fast",
        steps=[
            reply("The screenshot shows a green square."),
            call_tools(("weather", {"city": "Paris"}), ("weather", {"city": "Oslo"})),
            reply("Paris is sunny (22°C); Oslo has snow (-3°C)."),
        ],
    )
    strong = Script(
        prefix="strong",
        steps=[
            fail(RateLimitError("429 Too Many Requests", provider="strong", retry_after=0.05)),
            reply('{"city": "Paris", "temperature_c": 22, "pack_umbrella": false}'),
            reply("Oslo needs warmer clothes."),
            call_tools(("pack_coat", {"city": "Oslo"})),
        ],
    )
    rt = Runtime(
        model="fast:mini", hooks=[fast, strong], backoff=Backoff(initial=0.05, maximum=0.2)
    )

    steps: list[dict[str, Any]] = []

    def step(title: str, model: str, started: float, result: Any) -> None:
        steps.append(
            {
                "step": title,
                "model": model,
                "seconds": round(time.perf_counter() - started, 3),
                "result": result,
            }
        )
        console.print(
            f"[bold cyan]{title}[/] [dim]({model}, {time.perf_counter() - started:.2f}s)[/]"
        )
        console.print(f"  → {result}", markup=False)

    console.rule("[bold]llmport demo[/] (offline)")
    t = time.perf_counter()
    r = rt.run(
        [
            {"type": "text", "text": "What is on this screenshot?"},
            {"type": "image", "data": tiny_png(), "media_type": "image/png"},
        ]
    )
    step("1. image input", r.model, t, r.output)

    t = time.perf_counter()
    r = rt.run("Weather in Paris and Oslo?", tools=[weather])
    calls = ", ".join(
        f"{c.call.name}({c.call.arguments['city']}) {c.duration:.2f}s" for c in r.tool_calls
    )
    step("2. parallel tool loop", r.model, t, f"{r.output}  [tools: {calls}]")

    t = time.perf_counter()
    schema = {
        "type": "object",
        "required": ["city", "temperature_c", "pack_umbrella"],
        "properties": {
            "city": {"type": "string"},
            "temperature_c": {"type": "number"},
            "pack_umbrella": {"type": "boolean"},
        },
    }
    r = rt.run("Summarise Paris as JSON.", response_format=schema, model="strong:large")
    step(
        "3. structured output after a retried 429",
        r.model,
        t,
        f"{json.loads(r.output)} (attempts: {r.attempts}, "
        f"first failure: {type(r.failures[0].error).__name__})",
    )

    def pack_coat(city: str) -> str:
        return f"coat packed for {city}"

    t = time.perf_counter()
    r = rt.run(
        "Should I pack a coat or sunglasses for Oslo?",
        model="strong:large",
        choices={"pack_coat": pack_coat, "pack_sunglasses": "sunglasses"},
    )
    step("4. decision", r.model, t, f"{r.output} (picked {r.choice})")

    usage = rt.usage
    table = Table(title="usage", title_justify="left")
    for col in ("requests", "input tokens", "output tokens"):
        table.add_column(col)
    table.add_row(str(usage.requests), str(usage.input_tokens), str(usage.output_tokens))
    console.print(table)
    if as_json:
        print(json.dumps({"steps": steps, "usage": usage.to_dict()}, default=str))
    return 0
