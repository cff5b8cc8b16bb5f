"""`llmport demo` replays its cassette through the real plugins, and the cassette matches them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from llmport.cli.demo import (
    CITIES,
    DEMO_ANTHROPIC,
    DEMO_CASSETTE,
    DEMO_OPENAI,
    build_agent,
    tiny_png,
)
from llmport.controls.retry import Backoff
from llmport.runtime import Runtime
from llmport.sessions.session import Session


def test_demo_command_replays_both_vendors() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "llmport.cli", "demo", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["mode"] == "cassettes"
    assert report["result"]["summary"] == {
        "warmest_city": "Paris",
        "coldest_city": "Oslo",
        "needs_coat": True,
    }
    assert report["result"]["packed"].startswith("coat packed")
    models = [c["model"] for c in report["calls"]]
    assert models.count(DEMO_OPENAI) == 4 and models.count(DEMO_ANTHROPIC) == 4
    assert max(c["attempts"] for c in report["calls"]) == 2  # the 529 was retried
    assert report["usage"]["requests"] == 8
    # the handoff: the last call runs inside the booking specialist, on the other vendor
    assert report["calls"][-1] == {
        "model": DEMO_ANTHROPIC,
        "function": "book_hotel",
        "attempts": 1,
    }
    assert report["result"]["booked"].startswith("Booked a warm room")


def test_the_demo_shows_the_weather_tools_progress_and_the_handoff() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "llmport.cli", "demo"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "120"},
    ).stdout
    assert "progress: looking up the weather in Paris" in out
    assert "progress: looking up the weather in Oslo" in out
    assert "handoff transfer_to_book_hotel" in out  # the DAG tree draws the handoff node


def test_demo_cassette_matches_what_the_plugins_send(cassette: Any) -> None:
    # Strict replay: every request body must equal the recorded one, so a change in
    # the plugins or the DAG rendering shows here (re-record: cassettes/demo/record_demo.py).
    fake = {"api_key": "sk-demo-not-a-real-key"}
    rt = Runtime(
        model=DEMO_OPENAI, providers={"openai": fake, "anthropic": fake}, backoff=Backoff.none()
    )
    with cassette(str(DEMO_CASSETTE)) as cass, Session() as session:
        result = build_agent(rt, DEMO_OPENAI, DEMO_ANTHROPIC)(tiny_png(), list(CITIES))
    assert cass.play_count == 9
    assert result["summary"]["coldest_city"] == "Oslo"
    kinds = [n.kind for n in session.nodes()]
    assert kinds.count("function") == 5 and kinds.count("tool") == 2
    assert kinds.count("handoff") == 1


def test_demo_names_exactly_the_distributions_the_replay_lacks(monkeypatch: Any) -> None:
    import importlib.util

    from llmport.cli import demo
    real = importlib.util.find_spec
    absent = {"llmport_anthropic", "vcr"}
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in absent else real(name, *a)
    )
    assert demo.missing_for_replay() == ["llmport-anthropic", "vcrpy"]
    absent.clear()
    assert demo.missing_for_replay() == []
