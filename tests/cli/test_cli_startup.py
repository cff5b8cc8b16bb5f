"""What a CLI call loads and builds before its answer: counts, never timings.

``llmport run``'s usage line is printed without rich when rich would print
the same bytes, a call builds its own command's parser only, and ``--no-log``
loads no sqlite3; ``benchmarks/bench_startup.py --host`` reports the times.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from llmport.cli.output import escape, print_dim
from llmport.testing import reply

#: ``llmport keys``' own commands.
KEYS = ["llmport keys set", "llmport keys list", "llmport keys path"]

#: A scripted ``llmport run`` in a fresh process: its stdout, then what it loaded.
_RUN = """
import json, sys
from llmport.plugins.host import add_global_plugin
from llmport.testing import Script, reply
add_global_plugin(Script([reply("ok")]))
from llmport.cli.main import main
status = main(["run", "-m", "scripted:test", "--no-log", "hello"])
print(json.dumps([status, sorted(sys.modules)]))
"""


def _environ(**changes: str) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    return {**environ, **changes}


def test_a_run_whose_stderr_is_no_terminal_prints_its_usage_line_without_rich() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", _RUN], capture_output=True, text=True, check=True, env=_environ()
    )
    answer, loaded_line = ran.stdout.splitlines()[-2:]
    status, loaded = json.loads(loaded_line)
    assert (status, answer) == (0, "ok")
    assert [m for m in loaded if m == "rich" or m.startswith("rich.")] == []
    assert ran.stderr.startswith("scripted:test · 2 in / 1 out · ")


def test_a_run_with_no_log_loads_no_sqlite() -> None:
    # The log book's database is opened only to log: --no-log never needs sqlite3.
    ran = subprocess.run(
        [sys.executable, "-c", _RUN], capture_output=True, text=True, check=True, env=_environ()
    )
    loaded = json.loads(ran.stdout.splitlines()[-1])[1]
    assert "llmport.cli.logbook" in loaded
    assert [m for m in loaded if m.split(".")[0] in ("sqlite3", "_sqlite3")] == []


def test_a_styled_stderr_still_gets_rich_s_dim_line() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", _RUN],
        capture_output=True,
        text=True,
        check=True,
        env=_environ(FORCE_COLOR="1"),
    )
    assert "rich.console" in json.loads(ran.stdout.splitlines()[-1])[1]
    assert ran.stderr.startswith("\x1b[2mscripted:test · 2 in / 1 out · ")


LINES = [
    "scripted:test · 2 in / 1 out · 0.00s",
    "openai:gpt-4o-mini · 12 in / 345 out · 1.25s",
    "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0 · 1 in / 1 out · 0.50s",  # :...: word
    "a:smile: · 1 in / 1 out · 0.10s",  # an emoji code to rich
    "m[bold]x · 1 in / 1 out · 0.10s",
    "m\\[x\\ · 1 in / 1 out · 0.10s",
    "模型 · 1 in / 1 out · 0.10s",  # two cells a character
    "tab\there · 1 in / 1 out · 0.10s",
    "x" * 120 + " · 1 in / 1 out · 0.10s",  # wider than the terminal: rich wraps it
]


@pytest.mark.parametrize("columns", ["80", "30", "0", "wide", None])
@pytest.mark.parametrize("line", LINES)
def test_the_dim_line_is_the_bytes_rich_prints(
    line: str,
    columns: str | None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rich.console import Console

    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    Console(stderr=True, highlight=False).print(f"[dim]{escape(line)}[/]")
    by_rich = capsys.readouterr().err
    print_dim(line)
    assert capsys.readouterr().err == by_rich


@pytest.mark.parametrize(
    ("argv", "built"),
    [
        (
            ["run", "-m", "scripted:test", "--no-log", "hi"],
            ["llmport", "llmport mcp", "llmport run"],
        ),
        (["-m", "scripted:test", "--no-log", "hi"], ["llmport", "llmport mcp", "llmport run"]),
        (["keys", "path"], ["llmport", "llmport mcp", "llmport keys", *KEYS]),
    ],
)
def test_a_call_builds_only_its_own_command_s_parser(
    argv: list[str],
    built: list[str],
    scripted: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Each parser costs its command module's import and gettext lookups for its
    # arguments: a call builds the top parser, its command's, and a plugin's stand-in
    # (no plugin is installed here: `llmport mcp` says what to install).
    from llmport.cli import main as cli

    scripted(reply("ok"))
    made: list[str] = []
    real_init = cli.CommandParser.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        made.append(self.prog)

    monkeypatch.setattr(cli.CommandParser, "__init__", counted)
    assert cli.main(argv) == 0
    assert made == built
    assert capsys.readouterr().out.startswith("ok\n" if "hi" in argv else "/")


def test_walking_the_commands_builds_every_parser() -> None:
    # What lists the whole tree (the tests that check every command's help) still sees it.
    from llmport.cli.main import CORE_COMMANDS, build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    parsers = dict(sub.choices.items())
    assert list(parsers) == [name for name, _, _ in CORE_COMMANDS] + ["mcp"]
    assert all(isinstance(p, argparse.ArgumentParser) for p in parsers.values())
    assert parsers["run"].prog == "llmport run" and sub.choices.get("run") is parsers["run"]
