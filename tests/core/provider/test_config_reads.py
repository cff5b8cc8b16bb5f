"""Configuration files are parsed once while unchanged, and re-read when they change; a
top-level agentic call reads the session path only."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from llmport import agentic_function
from llmport.errors import ConfigError
from llmport.provider.config import configured_session_path, load_config
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


class _CountedEnvironment(dict[str, str]):
    """The environment, counting the walks over every variable's name."""

    def __init__(self, variables: Mapping[str, str]) -> None:
        super().__init__(variables)
        self.walks = 0

    def __iter__(self) -> Iterator[str]:
        self.walks += 1
        return super().__iter__()


def test_top_level_agentic_calls_do_not_walk_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The session path is one look-up; the aliases (a walk over every name) are not needed.
    env = _CountedEnvironment(os.environ)
    env["LLMPORT_SESSION"] = str(tmp_path / "a.sqlite")
    env["LLMPORT_ALIAS_FAST"] = "openai:gpt-4o-mini"
    monkeypatch.setattr(os, "environ", env)
    monkeypatch.chdir(tmp_path)

    @agentic_function
    def where() -> str | None:
        session = current_session()
        assert session is not None
        return session.path

    assert where() == str(tmp_path / "a.sqlite")
    assert env.walks == 0

    # A change between calls is seen: the variables are read on every call.
    env["LLMPORT_SESSION"] = str(tmp_path / "b.sqlite")
    assert where() == str(tmp_path / "b.sqlite")
    del env["LLMPORT_SESSION"]
    assert where() is None
    # The aliases are still read where they are used, changes included.
    assert load_config(tmp_path).aliases["fast"] == "openai:gpt-4o-mini"
    env["LLMPORT_ALIAS_FAST"] = "anthropic:claude-haiku-4-5"
    assert load_config(tmp_path).aliases["fast"] == "anthropic:claude-haiku-4-5"


def test_the_session_path_reader_fails_as_load_config_does(tmp_path: Path) -> None:
    env = {"LLMPORT_MAX_RETRIES": "many", "LLMPORT_SESSION": "s.sqlite"}
    for read in (load_config, configured_session_path):
        with pytest.raises(ConfigError, match="LLMPORT_MAX_RETRIES"):
            read(tmp_path, env=env)
    _write(tmp_path / "llmport.toml", '[session]\npath = "from-file.sqlite"\n')
    assert configured_session_path(tmp_path, env={}) == "from-file.sqlite"
    assert configured_session_path(tmp_path, env={"LLMPORT_SESSION": "env.sqlite"}) == "env.sqlite"
