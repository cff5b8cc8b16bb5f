"""Plugins add ``llmport`` subcommands through the ``llmport_register_commands`` hook."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
from llmport import hookimpl
from llmport.cli.main import UsageError, main
from llmport.errors import ConfigError
from llmport.plugins import host as plugins_module


class Greeter:
    """A plugin adding ``llmport greet NAME`` (and ``greet fail``, a user error)."""

    @hookimpl
    def llmport_register_commands(self, subparsers: argparse._SubParsersAction[Any]) -> None:
        greet = subparsers.add_parser("greet", help="say hello")
        nested = greet.add_subparsers(dest="greet_command", required=True)
        hello = nested.add_parser("hello")
        hello.add_argument("name")
        hello.set_defaults(func=self.hello)

    @staticmethod
    def hello(args: argparse.Namespace) -> int:
        if args.name == "fail":
            raise ConfigError("no greeting configured\nfor 'fail'")
        if args.name == "":
            raise UsageError("the name is empty")
        print(f"hello {args.name}")
        return 0


class Broken:
    @hookimpl
    def llmport_register_commands(self, subparsers: argparse._SubParsersAction[Any]) -> None:
        subparsers.add_parser("run")  # taken by the core: argparse refuses it


def _installed(monkeypatch: pytest.MonkeyPatch, *plugins: Any) -> None:
    loads = tuple(
        plugins_module.PluginLoad(type(p).__name__, "test", None, None, p) for p in plugins
    )
    monkeypatch.setattr(plugins_module, "_loaded", {"": loads})


def test_a_plugin_command_runs(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    _installed(monkeypatch, Greeter())
    assert main(["greet", "hello", "ada"]) == 0
    assert capsys.readouterr().out == "hello ada\n"


def test_a_plugin_command_error_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    _installed(monkeypatch, Greeter())
    assert main(["greet", "hello", "fail"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "ConfigError: no greeting configured; for 'fail'" in err


def test_a_plugin_command_gets_debug_and_its_own_usage(
    monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    _installed(monkeypatch, Greeter())
    with pytest.raises(ConfigError):
        main(["greet", "hello", "fail", "--debug"])
    with pytest.raises(SystemExit) as exit_:
        main(["greet", "hello", ""])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "usage: llmport greet hello" in err and "the name is empty" in err


def test_a_broken_plugin_hook_leaves_the_other_commands(
    monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    _installed(monkeypatch, Broken(), Greeter())
    with pytest.warns(RuntimeWarning, match="'Broken' added no commands"):
        assert main(["greet", "hello", "ada"]) == 0
    assert capsys.readouterr().out == "hello ada\n"


def test_help_names_the_plugin_a_missing_command_needs(
    monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one line per command
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "mcp MCP: serve a toolset to MCP clients (needs llmport-mcp)" in help_text
