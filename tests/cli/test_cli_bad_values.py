"""Every flag of every subcommand, given a bad value, is one line on stderr and never a traceback.

The flags are read from the parser itself, so a flag added later is covered
without touching this file.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest
from llmport.cli.main import build_parser, main

#: JSON that Python's reader takes but no strict reader may: nesting past the interpreter's
#: recursion limit, a non-finite number.
DEEP_JSON = "[" * 5000 + "]" * 5000
NAN_JSON = '{"type": "object", "x": NaN}'
BAD_VALUES = ["", "0", "-1", "nan", "{not json", "/no/such/file", "x" * 3000, DEEP_JSON, NAN_JSON]
#: A value for each positional argument, so the flag under test is what is wrong.
POSITIONALS = {"prompt": "hi", "target": "no-such-session", "toolset": "no-such-toolset"}


def subcommands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (command path, parser) pair below ``parser``, leaves and inner commands alike."""
    for action in parser._actions:  # argparse has no public walk of its subparsers
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield (*path, name), child
                yield from subcommands(child, (*path, name))


def flag_cases() -> list[tuple[list[str], str]]:
    cases = []
    for path, parser in subcommands(build_parser()):
        positionals = [
            POSITIONALS.get(a.dest, "x")
            for a in parser._actions
            if not a.option_strings and not isinstance(a, argparse._SubParsersAction)
        ]
        if any(isinstance(a, argparse._SubParsersAction) and a.required for a in parser._actions):
            continue  # an inner command: its leaves are cases of their own
        for action in parser._actions:
            if not action.option_strings or action.nargs == 0:
                continue  # switches take no value
            for value in BAD_VALUES:
                cases.append(([*path, *positionals, action.option_strings[-1], value], path[0]))
    return cases


CASES = flag_cases()


def test_every_value_taking_flag_is_covered() -> None:
    flags = {argv[-2] for argv, _ in CASES}
    assert {"--model", "--attach", "--system", "--schema", "--option", "--retries"} <= flags
    assert {"--cid", "--tool", "--toolset", "--functions", "--count", "--query"} <= flags
    assert "--provider" in flags  # `llmport models` lists, and also has `models default`


@pytest.mark.parametrize(("argv", "command"), CASES, ids=lambda v: repr(v)[:60])
def test_a_bad_flag_value_is_one_line_and_no_traceback(
    argv: list[str], command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        status = main(argv)
    except SystemExit as exit_:  # argparse: usage, then one error line
        status = exit_.code if isinstance(exit_.code, int) else 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert status != 0 and len(errors) == 1, (status, err)


@pytest.mark.parametrize("content", [DEEP_JSON, NAN_JSON, '{"a": 1e400}', "\ufeff{"])
@pytest.mark.parametrize(
    ("name", "argv"), [("keys.json", ["keys", "list"]), ("settings.json", ["aliases", "list"])]
)
def test_a_damaged_file_of_the_user_is_one_line_and_no_traceback(
    name: str,
    argv: list[str],
    content: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("LLMPORT_HOME", str(tmp_path))
    (tmp_path / name).write_text(content, encoding="utf-8")
    status = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert status != 0 and len(errors) == 1 and name in errors[0], (status, err)


def test_every_subcommand_help_shows_an_example(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command's --help ends with an example: the core's, and the installed plugins'."""
    from llmport.plugins import host

    monkeypatch.delenv("LLMPORT_PLUGINS")  # the installed plugins' commands too
    monkeypatch.setattr(host, "_loaded", {})
    helps = {path: parser.format_help() for path, parser in subcommands(build_parser())}
    assert ("mcp", "serve") in helps and ("logs",) in helps
    missing = [" ".join(p) for p, text in helps.items() if "example: " not in text]
    assert missing == []
