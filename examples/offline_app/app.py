"""A small trip app on two vendors: the code under test in the "Test your app offline" guide.

It asks GPT for the weather through a tool loop, has Claude stream a short
story, and asks GPT for a structured trip summary. The endpoints and keys
come from the usual environment variables (``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY``; ``OPENAI_BASE_URL`` and ``ANTHROPIC_BASE_URL`` to point
at a gateway or a stand-in server).
"""

from __future__ import annotations

import os
from typing import Any

from llmport import Runtime, tool
from llmport.messages.types import FinalEvent, TextDelta

GPT = "openai:gpt-4o-mini"
CLAUDE = "anthropic:claude-haiku-4-5"
SUMMARY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "needs_coat": {"type": "boolean"}},
    "required": ["city", "needs_coat"],
    "additionalProperties": False,
}


@tool
def weather(city: str) -> str:
    """The current weather in a city."""
    return {"Paris": "sunny, 22°C", "Oslo": "snow, -3°C"}.get(city, "unknown")


def make_runtime() -> Runtime:
    """A Runtime for both vendors, configured from the environment."""
    providers: dict[str, dict[str, Any]] = {"openai": {}, "anthropic": {}}
    for name, variable in (("openai", "OPENAI_BASE_URL"), ("anthropic", "ANTHROPIC_BASE_URL")):
        if os.environ.get(variable):
            providers[name]["base_url"] = os.environ[variable]
    return Runtime(model=GPT, providers=providers)


def weather_report(rt: Runtime, city: str) -> str:
    """GPT looks the weather up with the tool and answers in a sentence."""
    return str(rt.exec(f"What is the weather in {city}?", tools=[weather]))


async def aweather_report(rt: Runtime, city: str) -> str:
    return str(await rt.async_exec(f"What is the weather in {city}?", tools=[weather]))


def story(rt: Runtime, city: str) -> tuple[list[str], str]:
    """Claude streams a two-line story: the pieces as they came, and the whole text."""
    pieces, text = [], ""
    for event in rt.stream(f"A two-line story set in {city}.", model=CLAUDE, max_tokens=200):
        if isinstance(event, TextDelta):
            pieces.append(event.text)
        elif isinstance(event, FinalEvent):
            text = event.result.text
    return pieces, text


async def astory(rt: Runtime, city: str) -> tuple[list[str], str]:
    pieces, text = [], ""
    async for event in rt.astream(f"A two-line story set in {city}.", model=CLAUDE, max_tokens=200):
        if isinstance(event, TextDelta):
            pieces.append(event.text)
        elif isinstance(event, FinalEvent):
            text = event.result.text
    return pieces, text


def summary(rt: Runtime, city: str) -> dict[str, Any]:
    """GPT's structured verdict: does the traveller need a coat?"""
    result = rt.run(f"Summarise a trip to {city}.", response_format=SUMMARY)
    return dict(result.value)


async def asummary(rt: Runtime, city: str) -> dict[str, Any]:
    result = await rt.arun(f"Summarise a trip to {city}.", response_format=SUMMARY)
    return dict(result.value)
