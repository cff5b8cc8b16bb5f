"""`llmport demo` replays its cassette through the real plugins, and the cassette matches them."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from llmport.demo import (
    CITIES,
    DEMO_ANTHROPIC,
    DEMO_CASSETTE,
    DEMO_OPENAI,
    build_agent,
    tiny_png,
)
from llmport.retry import Backoff
from llmport.runtime import Runtime
from llmport.session import Session


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
    assert models.count(DEMO_OPENAI) == 3 and models.count(DEMO_ANTHROPIC) == 3
    assert max(c["attempts"] for c in report["calls"]) == 2  # the 529 was retried
    assert report["usage"]["requests"] == 6


def test_demo_cassette_matches_what_the_plugins_send(cassette: Any) -> None:
    # Strict replay: every request body must equal the recorded one, so a change in
    # the plugins or the DAG rendering shows here (re-record: cassettes/demo/record_demo.py).
    fake = {"api_key": "sk-demo-not-a-real-key"}
    rt = Runtime(
        model=DEMO_OPENAI, providers={"openai": fake, "anthropic": fake}, backoff=Backoff.none()
    )
    with cassette(str(DEMO_CASSETTE)) as cass, Session() as session:
        result = build_agent(rt, DEMO_OPENAI, DEMO_ANTHROPIC)(tiny_png(), list(CITIES))
    assert cass.play_count == 7
    assert result["summary"]["coldest_city"] == "Oslo"
    kinds = [n.kind for n in session.nodes()]
    assert kinds.count("function") == 4 and kinds.count("tool") == 2


def test_demo_names_exactly_the_distributions_the_replay_lacks(monkeypatch: Any) -> None:
    import importlib.util

    from llmport import demo

    real = importlib.util.find_spec
    absent = {"llmport_anthropic", "vcr"}
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in absent else real(name, *a)
    )
    assert demo.missing_for_replay() == ["llmport-anthropic", "vcrpy"]
    absent.clear()
    assert demo.missing_for_replay() == []
