"""The offline-testing example app (examples/offline_app) and the pytest plugin.

The app's own tests run in pytest sessions of their own, as a user runs them:
first recording against loopback servers standing in for OpenAI and
Anthropic, then offline with the servers stopped (``CI`` set, so the mode is
``none``), sync and async. Then a changed prompt fails with the JSON path,
``--llmport-record=new`` records only the new interaction, and
``-p no:llmport`` turns the plugin off.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pytest
from llmport.testing.loopback import LoopbackServer
from wire import AnthropicWire, OpenAIChatWire

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "offline_app"
GPT, CLAUDE = OpenAIChatWire(), AnthropicWire()
KEYS = {
    "OPENAI_API_KEY": "sk-proj-fake-exampleAppKey0123456789",
    "ANTHROPIC_API_KEY": "sk-ant-fake-exampleKey9876543210",
}


#: The options every run of the app's tests gets (no xdist: the app does not need it).
OPTIONS = ("-q", "-p", "no:cacheprovider", "-p", "no:xdist")
#: Variables a run sees only when it is given them.
UNSET = {"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "CI"}


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


@dataclass(frozen=True)
class AppRun:
    """What one pytest session printed and its exit code."""

    ret: int
    output: str

    def passed(self) -> int:
        counts = re.findall(r"(\d+) passed", self.output)
        return int(counts[-1]) if counts else 0


class AppTests(Protocol):
    def __call__(self, app: Path, *args: str, **env: str) -> AppRun: ...


def modules_of(folder: Path) -> list[str]:
    """The imported modules whose source is in ``folder`` (the app and its tests)."""
    inside = []
    for name, module in list(sys.modules.items()):
        source = getattr(module, "__file__", None)
        if source and Path(source).resolve().is_relative_to(folder.resolve()):
            inside.append(name)
    return inside


@pytest.fixture
def run_pytest(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AppTests:
    """Runs an app's own tests as ``cd APP; pytest ARGS`` with ``env`` set would.

    In this process, not a fresh one per run: the vendor SDKs are imported
    once, not once per run. Each run is a pytest session of its own (its own
    configuration, plugins and rootdir: the app's ``pytest.ini``); the app's
    modules are dropped after it, so the next run imports the app afresh
    (a changed prompt is seen), and the working directory and ``sys.path`` are
    put back. The keys, the base URLs and ``CI`` are exactly what ``env`` says
    (no other ``*_API_KEY`` either).
    """

    def run(app: Path, *args: str, **env: str) -> AppRun:
        output = io.StringIO()
        with monkeypatch.context() as scope:
            for name in [n for n in os.environ if n.endswith("_API_KEY") or n in UNSET]:
                scope.delenv(name)
            for name, value in env.items():
                scope.setenv(name, value)
            scope.chdir(app)
            scope.setattr(sys, "path", list(sys.path))
            basetemp = tempfile.mkdtemp(dir=tmp_path)
            try:
                with redirect_stdout(output), redirect_stderr(output):
                    ret = pytest.main([*OPTIONS, f"--basetemp={basetemp}", *args])
            finally:
                for name in modules_of(app):
                    del sys.modules[name]
        return AppRun(int(ret), output.getvalue())

    return run


def test_the_example_app_records_then_passes_offline_sync_and_async(
    tmp_path: Path, run_pytest: AppTests
) -> None:
    app = tmp_path / "offline_app"
    shutil.copytree(EXAMPLE, app, ignore=shutil.ignore_patterns("cassettes", "__pycache__"))
    with LoopbackServer(gpt_replies()) as gpt, LoopbackServer(claude_replies()) as claude:
        recorded = run_pytest(
            app, OPENAI_BASE_URL=gpt.url + "/v1", ANTHROPIC_BASE_URL=claude.url, **KEYS
        )
    assert recorded.ret == 0, recorded.output
    assert recorded.passed() == 6
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
    assert offline.ret == 0, offline.output
    assert offline.passed() == 6

    # A changed prompt fails replay with the JSON path that differs, not a network error.
    source = (app / "app.py").read_text()
    (app / "app.py").write_text(source.replace("A two-line story", "A three-line story"))
    changed = run_pytest(app, "-k", "story and sync", CI="1", ANTHROPIC_BASE_URL=claude.url)
    assert changed.ret == 1
    said = changed.output
    assert "CassetteMismatch" in said and "$.messages[0].content" in said
    assert "three-line" in said and "ConnectError" not in said

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
    assert again.ret == 0, again.output
    assert again.passed() == 4
    assert len(gpt.requests) == 0 and len(claude.requests) == 2
    for mode in ("sync", "async"):
        story = app / "cassettes" / "test_app" / f"test_story_streams_in_pieces-{mode}.yaml"
        assert story.read_text().count("- request:") == 2  # the old one kept, the new added

    # -p no:llmport: the plugin is off (the marker is unknown, so nothing records or replays).
    # A fresh process: pytest remembers the markers it has seen for the life of a process.
    plugin_off = ("-p", "no:llmport", "--strict-markers", "-k", "summary and sync")
    off = subprocess.run(
        [sys.executable, "-m", "pytest", *OPTIONS, *plugin_off],
        cwd=app,
        env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | {"CI": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert off.returncode != 0 and "llmport_cassette" in off.stdout + off.stderr


def test_the_example_runs_offline_in_place_without_the_repositorys_test_options(
    run_pytest: AppTests,
) -> None:
    # As the docs' five-minute path runs it from a clone: `cd examples/offline_app; CI=1 pytest`
    # with only llmport installed (no xdist: the repository's own addopts would need it).
    done = run_pytest(EXAMPLE, CI="1")
    assert done.ret == 0, done.output
    assert done.passed() == 6
