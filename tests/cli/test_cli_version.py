"""``llmport --version``: the version, printed before any parser, plugin or console is made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import llmport
import pytest
from llmport.cli.main import build_parser, main


@pytest.mark.parametrize("argv", [["--version"], ["--debug", "--version"]])
def test_version_prints_the_version(argv: list[str], capsys: Any) -> None:
    assert main(argv) == 0
    assert capsys.readouterr().out == f"llmport {llmport.__version__}\n"


def test_help_lists_version() -> None:
    assert "--version" in build_parser().format_help()


def test_version_after_a_command_is_no_version_flag(capsys: Any) -> None:
    with pytest.raises(SystemExit) as exited:  # `models` has no --version: argparse says so
        main(["models", "--version"])
    assert exited.value.code == 2
    assert "unrecognized arguments: --version" in capsys.readouterr().err


#: The console script's import and call, then what it loaded.
_PROBE = """
import json, sys
from llmport.cli.main import main
status = main(["--version"])
print(json.dumps([status, sorted(sys.modules)]))
"""


def test_version_loads_no_command_console_or_plugin() -> None:
    # What a version check costs is the import of llmport and of the CLI's entry
    # module: each command's module, rich and the plugins are loaded by others.
    environ = {k: v for k, v in os.environ.items() if k != "LLMPORT_PLUGINS"}  # every plugin
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], check=True, capture_output=True, text=True, env=environ
    ).stdout
    status, loaded = json.loads(out.splitlines()[-1])
    assert status == 0
    heavy = ("rich", "logging", "llmport.plugins.host", "llmport.cli.chat", "llmport.cli.prompt")
    assert [m for m in heavy if m in loaded] == []
    assert not [m for m in loaded if m.startswith("llmport_")]  # no plugin module
