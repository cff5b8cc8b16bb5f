"""The trip app's tests: recorded once against the vendors, replayed offline ever after.

``pytest --llmport-record=once`` (the default outside CI) records each test's
traffic into ``cassettes/test_app/<test>.yaml`` the first time; afterwards,
and always in CI, the tests replay those files: no key, no network.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import app
import pytest


@pytest.fixture
def rt(monkeypatch: pytest.MonkeyPatch) -> Iterator[app.Runtime]:
    # Replaying needs no key; recording uses yours (never written to a cassette).
    monkeypatch.setenv("OPENAI_API_KEY", os.environ.get("OPENAI_API_KEY", "sk-replay-only"))
    monkeypatch.setenv(
        "ANTHROPIC_API_KEY", os.environ.get("ANTHROPIC_API_KEY", "sk-ant-replay-only")
    )
    runtime = app.make_runtime()
    yield runtime
    runtime.close()


@pytest.mark.llmport_cassette
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_weather_report_uses_the_tool(rt: app.Runtime, mode: str) -> None:
    if mode == "sync":
        answer = app.weather_report(rt, "Paris")
    else:
        answer = asyncio.run(app.aweather_report(rt, "Paris"))
    assert "22" in answer


@pytest.mark.llmport_cassette
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_story_streams_in_pieces(rt: app.Runtime, mode: str) -> None:
    pieces, text = app.story(rt, "Oslo") if mode == "sync" else asyncio.run(app.astory(rt, "Oslo"))
    assert len(pieces) > 1 and "".join(pieces) == text
    assert "Oslo" in text


@pytest.mark.llmport_cassette
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_summary_is_structured(rt: app.Runtime, mode: str) -> None:
    verdict = app.summary(rt, "Oslo") if mode == "sync" else asyncio.run(app.asummary(rt, "Oslo"))
    assert verdict == {"city": "Oslo", "needs_coat": True}
