"""``llmport demo``: an offline showcase that does real work.

A small trip-packing agent built from nested ``@agentic_function`` calls runs
through the real OpenAI and Anthropic plugins, switching vendor per call:
an image described by Claude, a streamed parallel tool loop on GPT whose
tool reports progress through ``RunContext.stream_writer``, structured
output on GPT, a decision by Claude whose first request is answered with a
529 (overloaded) and retried, and a handoff from GPT to a booking
specialist on Claude. The vendors' answers come from the cassettes in
``llmport/cli/_demo/trip.yaml``, shipped inside the ``llmport`` wheel and replayed
with vcrpy (no keys, no network); afterwards the demo prints the session DAG
and the token usage. ``pip install "llmport[demo]"`` installs what the replay
needs: the two plugins and vcrpy.

Without them (a plain ``pip install llmport``) the same agent runs on two
scripted providers instead, and the demo names exactly what is missing.
"""

from __future__ import annotations

import json
import struct
import time
import zlib
from pathlib import Path
from typing import Any

from ..plugins.hookspecs import hookimpl

DEMO_OPENAI = "openai:gpt-4o-mini"
DEMO_ANTHROPIC = "anthropic:claude-haiku-4-5"
CITIES = ("Paris", "Oslo")
WEATHER = {"Paris": "sunny, 22°C", "Oslo": "snow, -3°C"}
SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "warmest_city": {"type": "string"},
        "coldest_city": {"type": "string"},
        "needs_coat": {"type": "boolean"},
    },
    "required": ["warmest_city", "coldest_city", "needs_coat"],
    "additionalProperties": False,
}


def tiny_png(width: int = 8, height: int = 8, rgb: tuple[int, int, int] = (40, 160, 90)) -> bytes:
    """A real PNG image, made here so the demo needs no asset files."""
    row = b"\x00" + bytes(rgb) * width
    raw = row * height

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


#: The vendor traffic the demo replays: package data of the core wheel.
DEMO_CASSETTE = Path(__file__).resolve().parent / "_demo" / "trip.yaml"
#: What the replay imports, and the distribution that provides it.
REPLAY_NEEDS = {
    "llmport_openai": "llmport-openai",
    "llmport_anthropic": "llmport-anthropic",
    "vcr": "vcrpy",
}


def missing_for_replay() -> list[str]:
    """The distributions to install before the demo can replay its cassette (none: replay)."""
    from importlib.util import find_spec

    return [dist for module, dist in REPLAY_NEEDS.items() if find_spec(module) is None]


def pack_coat(reason: str) -> str:
    """Pack a warm coat."""
    return f"coat packed ({reason})"


def pack_sunglasses(reason: str) -> str:
    """Pack sunglasses."""
    return f"sunglasses packed ({reason})"


def _weather_tool() -> Any:
    """A slow weather lookup that reports its progress through ``RunContext.stream_writer``."""
    from ..tools.tool import RunContext, tool

    @tool
    def weather(city: str, ctx: RunContext[None]) -> str:
        """Current weather for a city."""
        ctx.stream_writer(f"looking up the weather in {city}")
        time.sleep(0.2)  # a slow API: both calls of one turn run at the same time
        return WEATHER.get(city, "unknown")

    return weather


def _claude_steps(rt: Any, anthropic_model: str) -> tuple[Any, Any]:
    """The agent's steps on Claude: describing the photo, and the hotel booking specialist."""
    from ..messages.types import Message
    from ..sessions.agentic import agentic_function

    @agentic_function
    def describe_photo(photo: bytes) -> str:
        """Describe the traveller's photo."""
        return str(
            rt.exec(
                [
                    {"type": "text", "text": "Describe this photo in one short sentence."},
                    {"type": "image", "data": photo, "media_type": "image/png"},
                ],
                model=anthropic_model,
                max_tokens=200,
            )
        )

    @agentic_function
    def book_hotel(conversation: list[Message]) -> str:
        """A booking specialist: books a hotel in the coldest city."""
        return str(
            rt.exec(
                [*conversation, "Book a warm hotel in the coldest city; answer in one sentence."],
                model=anthropic_model,
                max_tokens=200,
            )
        )

    return describe_photo, book_hotel


def _gpt_steps(rt: Any, openai_model: str, progress: Any) -> tuple[Any, Any]:
    """The agent's steps on GPT: the streamed weather tool loop, and the JSON summary."""
    from ..messages.types import CustomEvent, FinalEvent
    from ..sessions.agentic import agentic_function

    weather = _weather_tool()

    @agentic_function
    def check_weather(cities: list[str]) -> str:
        """Check the weather in each city (streamed: the tool's progress shows as it runs)."""
        reply = ""
        for event in rt.stream(
            f"What is the weather in {' and '.join(cities)}?", tools=[weather], model=openai_model
        ):
            if isinstance(event, CustomEvent) and progress is not None:
                progress(str(event.payload))
            elif isinstance(event, FinalEvent):
                reply = event.result.text
        return reply

    @agentic_function(expose="io")
    def summarise() -> dict[str, Any]:
        """Summarise the conditions as JSON."""
        text = rt.exec(
            "Summarise the weather you found.", response_format=SUMMARY_SCHEMA, model=openai_model
        )
        value: dict[str, Any] = json.loads(text)
        return value

    return check_weather, summarise


def build_agent(rt: Any, openai_model: str, anthropic_model: str, progress: Any = None) -> Any:
    """The demo's agent: nested agentic functions over one runtime.

    ``progress(text)`` receives the weather tool's progress lines as they are
    streamed (``RunContext.stream_writer``).
    """
    from ..sessions.agentic import agentic_function
    from ..tools.tool import handoff

    describe_photo, book_hotel = _claude_steps(rt, anthropic_model)
    check_weather, summarise = _gpt_steps(rt, openai_model, progress)

    @agentic_function
    def plan_trip(photo: bytes, cities: list[str]) -> dict[str, Any]:
        """Plan what to pack for a trip."""
        scene = describe_photo(photo)
        forecast = check_weather(cities)
        summary = summarise()
        packed = rt.exec(
            "Decide what to pack for the coldest city.",
            model=anthropic_model,
            max_tokens=300,
            choices={"pack_coat": pack_coat, "pack_sunglasses": pack_sunglasses},
        )
        booked = rt.exec(
            "Anything else to arrange for the trip?",
            tools=[handoff(book_hotel, description="Hand over to the hotel booking specialist.")],
            model=openai_model,
        )
        return {
            "scene": scene,
            "forecast": forecast,
            "summary": summary,
            "packed": packed,
            "booked": booked,
        }

    return plan_trip


def _replay_runtime(path: Path, hooks: list[Any]) -> tuple[Any, Any]:
    """A runtime on the real plugins; vendor traffic replayed from the demo cassette."""
    import vcr  # type: ignore[import-untyped]

    from ..controls.retry import Backoff
    from ..runtime import Runtime

    recorder = vcr.VCR(
        record_mode="none", match_on=["method", "host", "path"], decode_compressed_response=True
    )
    cassette = recorder.use_cassette(str(path), allow_playback_repeats=False)
    fake = {"api_key": "sk-demo-not-a-real-key"}  # cassettes never check keys
    rt = Runtime(
        model=DEMO_OPENAI,
        providers={"openai": fake, "anthropic": fake},
        hooks=hooks,
        backoff=Backoff(initial=0.05, maximum=0.2),
    )
    return rt, cassette


def _scripted_runtime(hooks: list[Any]) -> Any:
    from ..controls.retry import Backoff
    from ..errors import OverloadedError
    from ..runtime import Runtime
    from ..testing import Script, call_tools, fail, reply

    gpt = Script(
        prefix="openai",
        steps=[
            call_tools(("weather", {"city": "Paris"}), ("weather", {"city": "Oslo"})),
            reply("Paris is sunny (22°C); Oslo has snow (-3°C)."),
            reply('{"warmest_city": "Paris", "coldest_city": "Oslo", "needs_coat": true}'),
            call_tools(("transfer_to_book_hotel", {})),
        ],
    )
    claude = Script(
        prefix="anthropic",
        steps=[
            reply("A plain green square."),
            fail(OverloadedError("529 Overloaded", provider="anthropic")),
            reply("Oslo is snowy, so warmth matters most."),
            call_tools(("pack_coat", {"reason": "snow in Oslo"})),
            reply("Booked a warm room at a hotel in central Oslo."),
        ],
    )
    return Runtime(
        model=DEMO_OPENAI, hooks=[gpt, claude, *hooks], backoff=Backoff(initial=0.05, maximum=0.2)
    )


class _Observer:
    """Collects every model call (a tracing policy hook) for the report."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    @hookimpl
    def llmport_observe(self, event: str, payload: dict[str, Any], info: Any) -> None:
        if event == "model_end":
            self.calls.append(
                {
                    "model": info.model,
                    "function": info.function,
                    "attempts": payload.get("attempts", 1),
                }
            )


def _demo_runtime(missing: list[str], hooks: list[Any]) -> tuple[Any, Any, str]:
    """The runtime, its cassette (None when scripted) and the mode's name."""
    if not missing:
        rt, cassette = _replay_runtime(DEMO_CASSETTE, hooks)
        return rt, cassette, "cassettes"
    return _scripted_runtime(hooks), None, "scripted"


def _run_agent(plan_trip: Any, session: Any, cassette: Any) -> dict[str, Any]:
    """Plan the trip inside ``session``; under the cassette, every recorded answer must be used."""
    if cassette is None:
        with session:
            result: dict[str, Any] = plan_trip(tiny_png(), list(CITIES))
        return result
    with cassette as cass, session:
        result = plan_trip(tiny_png(), list(CITIES))
    if not cass.all_played:
        raise RuntimeError(
            "demo cassette has unplayed interactions: the demo and its cassette drifted"
        )
    return result


def _print_report(
    console: Any, result: dict[str, Any], observer: _Observer, session: Any, rt: Any, elapsed: float
) -> None:
    """The result, the observed model calls, the session DAG and the usage, for a person."""
    from rich.table import Table

    from .session import tree

    for key, value in result.items():
        console.print(f"[bold cyan]{key}[/]: ", end="")
        console.print(str(value), markup=False)
    table = Table(
        title="model calls (observed through the llmport_observe hook)", title_justify="left"
    )
    for col in ("#", "model", "inside", "attempts"):
        table.add_column(col)
    for i, call in enumerate(observer.calls, 1):
        table.add_row(str(i), call["model"], str(call["function"]), str(call["attempts"]))
    console.print(table)
    console.print(tree(session))
    usage = rt.usage
    console.print(
        f"usage: {usage.requests} requests, {usage.input_tokens} input tokens, "
        f"{usage.output_tokens} output tokens · {elapsed:.2f}s"
    )


def run_demo(as_json: bool = False) -> int:
    """Run the showcase; print a report (rich) or one JSON document."""
    from rich.console import Console

    from ..sessions.session import Session

    console = Console(highlight=False, quiet=as_json)
    missing = missing_for_replay()
    observer = _Observer()
    rt, cassette, mode = _demo_runtime(missing, [observer])

    console.rule("[bold]llmport demo[/] (offline)")
    if mode == "cassettes":
        why = f"({DEMO_CASSETTE} through the real openai and anthropic plugins)"
    else:
        why = f"(scripted providers; to replay the cassette: pip install {' '.join(missing)})"
    console.print(f"vendor answers: [bold]{mode}[/] {why}", soft_wrap=True)
    session = Session()
    started = time.perf_counter()
    plan_trip = build_agent(
        rt,
        DEMO_OPENAI,
        DEMO_ANTHROPIC,
        progress=lambda text: console.print(f"[dim]progress:[/] {text}", markup=True),
    )
    result = _run_agent(plan_trip, session, cassette)
    elapsed = time.perf_counter() - started
    _print_report(console, result, observer, session, rt, elapsed)
    if as_json:
        print(
            json.dumps(
                {
                    "mode": mode,
                    "missing": missing,
                    "result": result,
                    "calls": observer.calls,
                    "usage": rt.usage.to_dict(),
                    "seconds": round(elapsed, 3),
                },
                default=str,
            )
        )
    return 0
