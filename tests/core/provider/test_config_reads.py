"""Configuration files are parsed once while unchanged, and re-read when they change."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import pytest
from llmport import agentic_function
from llmport.provider.config import load_config
from llmport.sessions.agentic import current_session


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files ``tomllib`` parsed (spied on: the configuration reader calls ``tomllib.load``)."""
    seen: list[str] = []
    real = tomllib.load

    def spy(fh: Any, **kwargs: Any) -> dict[str, Any]:
        seen.append(os.path.basename(fh.name))
        return real(fh, **kwargs)

    monkeypatch.setattr(tomllib, "load", spy)
    return seen


def _write(path: Path, text: str) -> None:
    path.write_text(text)
    # A rewrite is told apart by its stat identity; make sure the clock moved.
    stamp = path.stat().st_mtime_ns + 1_000_000
    os.utime(path, ns=(stamp, stamp))


def test_top_level_agentic_calls_parse_pyproject_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    project = tmp_path / "pyproject.toml"
    _write(project, f'[tool.llmport.session]\npath = "{tmp_path / "a.sqlite"}"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LLMPORT_SESSION", raising=False)
    monkeypatch.delenv("LLMPORT_CONFIG", raising=False)

    @agentic_function
    def where() -> str | None:
        session = current_session()
        assert session is not None
        return session.path

    paths = [where() for _ in range(3)]
    assert paths == [str(tmp_path / "a.sqlite")] * 3
    assert parses == ["pyproject.toml"]

    _write(project, f'[tool.llmport.session]\npath = "{tmp_path / "bb.sqlite"}"\n')
    assert where() == str(tmp_path / "bb.sqlite")
    assert parses == ["pyproject.toml"] * 2


def test_a_broken_file_fails_on_every_read(tmp_path: Path, parses: list[str]) -> None:
    toml = tmp_path / "llmport.toml"
    _write(toml, "default_model = \n")
    for _ in range(2):
        with pytest.raises(Exception, match="invalid TOML"):
            load_config(tmp_path, env={})
    assert parses == ["llmport.toml"] * 2


def test_each_config_is_the_callers_to_change(tmp_path: Path) -> None:
    _write(
        tmp_path / "llmport.toml",
        '[providers.openai]\nbase_url = "http://a"\nheaders = {x = "1"}\n'
        '[mcp.servers.docs]\ncommand = ["python", "docs.py"]\n',
    )
    first = load_config(tmp_path, env={})
    first.providers["openai"]["headers"]["x"] = "changed"
    first.mcp["servers"]["docs"]["command"].append("--oops")
    again = load_config(tmp_path, env={})
    assert again.providers["openai"]["headers"] == {"x": "1"}
    assert again.mcp["servers"]["docs"]["command"] == ["python", "docs.py"]
