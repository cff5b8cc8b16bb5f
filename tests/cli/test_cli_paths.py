"""Where the CLI keeps its files: LLMPORT_HOME, else the XDG base directories, else ~."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from llmport.cli.main import main


def test_without_llmport_home_the_log_is_in_xdg_data_and_keys_in_xdg_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("LLMPORT_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(sys, "stdin", io.StringIO("sk-xdg-test-key-000111\n"))
    assert main(["keys", "set", "openai"]) == 0
    assert main(["keys", "path"]) == 0
    assert main(["logs", "--path"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:] == [
        str(tmp_path / "config" / "llmport" / "keys.json"),
        str(tmp_path / "data" / "llmport" / "logs.sqlite"),
    ]
    assert (tmp_path / "config" / "llmport" / "keys.json").stat().st_mode & 0o777 == 0o600


def test_a_relative_xdg_directory_is_ignored_as_the_spec_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("LLMPORT_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")
    assert main(["logs", "--path"]) == 0
    out = capsys.readouterr().out.strip()
    assert out == str(tmp_path / ".local" / "share" / "llmport" / "logs.sqlite")
