"""The offline-testing example app (examples/offline_app) and the pytest plugin.

The app's own tests run in a fresh pytest process, as a user runs them:
first recording against loopback servers standing in for OpenAI and
Anthropic, then offline with the servers stopped (``CI`` set, so the mode is
``none``), sync and async. Then a changed prompt fails with the JSON path,
``--llmport-record=new`` records only the new interaction, and
``-p no:llmport`` turns the plugin off.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from llmport.testing.loopback import LoopbackServer
from wire import AnthropicWire, OpenAIChatWire

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "offline_app"
GPT, CLAUDE = OpenAIChatWire(), AnthropicWire()
KEYS = {
    "OPENAI_API_KEY": "sk-proj-fake-exampleAppKey0123456789",
    "ANTHROPIC_API_KEY": "sk-ant-fake-exampleKey9876543210",
}


def gpt_replies() -> list[object]:
    """What GPT answers, in the order the app's tests ask (each mode in turn)."""
    weather = [
        GPT.tool_call_reply("weather", {"city": "Paris"}, "call_1"),
        GPT.text_reply("It is sunny in Paris, 22°C."),
    ]
    verdict = GPT.structured_reply(json.dumps({"city": "Oslo", "needs_coat": True}))
    return [*weather, *weather, verdict, verdict]


def claude_replies() -> list[object]:
    story = CLAUDE.stream_text_reply(["Snow falls on Oslo.", "\nA coat ", "waits by the door."])
    return [story, story]


def run_pytest(app: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "CI"} | env
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            *args,
            str(app),
        ],
        cwd=app.parent,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_example_app_records_then_passes_offline_sync_and_async(tmp_path: Path) -> None:
    app = tmp_path / "offline_app"
    shutil.copytree(EXAMPLE, app, ignore=shutil.ignore_patterns("cassettes", "__pycache__"))
    with LoopbackServer(gpt_replies()) as gpt, LoopbackServer(claude_replies()) as claude:
        recorded = run_pytest(
            app, OPENAI_BASE_URL=gpt.url + "/v1", ANTHROPIC_BASE_URL=claude.url, **KEYS
        )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "6 passed" in recorded.stdout
    assert len(gpt.requests) == 6 and len(claude.requests) == 2
    files = sorted(p.name for p in (app / "cassettes" / "test_app").iterdir())
    assert files == sorted(
        f"test_{name}-{mode}.yaml"
        for name in (
            "weather_report_uses_the_tool",
            "story_streams_in_pieces",
            "summary_is_structured",
        )
        for mode in ("sync", "async")
    )
    written = "".join(p.read_text() for p in (app / "cassettes" / "test_app").iterdir())
    assert "events:" in written  # the story stream is stored event by event
    for key in KEYS.values():
        assert key not in written and key[-12:] not in written

    # Offline: the servers are stopped, CI is set (mode none), no key in the environment.
    offline = run_pytest(
        app, CI="1", OPENAI_BASE_URL=gpt.url + "/v1", ANTHROPIC_BASE_URL=claude.url
    )
    assert offline.returncode == 0, offline.stdout + offline.stderr
    assert "6 passed" in offline.stdout

    # A changed prompt fails replay with the JSON path that differs, not a network error.
    source = (app / "app.py").read_text()
    (app / "app.py").write_text(source.replace("A two-line story", "A three-line story"))
    changed = run_pytest(app, "-k", "story and sync", CI="1", ANTHROPIC_BASE_URL=claude.url)
    assert changed.returncode == 1
    assert "CassetteMismatch" in changed.stdout and "$.messages[0].content" in changed.stdout
    assert "three-line" in changed.stdout and "ConnectError" not in changed.stdout

    # --llmport-record=new records each changed request alone; the rest still replays.
    with LoopbackServer(gpt_replies()) as gpt, LoopbackServer(claude_replies()) as claude:
        again = run_pytest(
            app,
            "--llmport-record=new",
            "-k",
            "story or weather",
            OPENAI_BASE_URL=gpt.url + "/v1",
            ANTHROPIC_BASE_URL=claude.url,
        )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "4 passed" in again.stdout
    assert len(gpt.requests) == 0 and len(claude.requests) == 2
    for mode in ("sync", "async"):
        story = app / "cassettes" / "test_app" / f"test_story_streams_in_pieces-{mode}.yaml"
        assert story.read_text().count("- request:") == 2  # the old one kept, the new added

    # -p no:llmport: the plugin is off (the marker is unknown, so nothing records or replays).
    off = run_pytest(app, "-p", "no:llmport", "--strict-markers", "-k", "summary and sync", CI="1")
    assert off.returncode != 0 and "llmport_cassette" in off.stdout + off.stderr


def test_the_example_runs_offline_in_place_without_the_repositorys_test_options() -> None:
    # As the docs' five-minute path runs it from a clone: `cd examples/offline_app; CI=1 pytest`
    # with only llmport installed (no xdist: the repository's own addopts would need it).
    environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider"],
        cwd=EXAMPLE,
        env=environ | {"CI": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 passed" in done.stdout
