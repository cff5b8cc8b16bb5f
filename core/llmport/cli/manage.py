"""``llmport keys``, ``llmport aliases`` and ``llmport models default``: the user's settings.

Keys are read without echo (or from piped stdin) and never printed; see
:mod:`llmport.cli.keys`. Aliases and the default model live in
:mod:`llmport.cli.settings`.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from ..errors import ConfigError
from .keys import check_key_name, keys_path, load_keys, save_key
from .output import UsageError
from .settings import load_settings, save_settings, settings_path

__all__ = ["add_aliases_parser", "add_keys_parser", "add_models_default"]


def add_keys_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """``keys set/list/path``."""
    keys = sub.add_parser("keys", epilog="example: llmport keys set openai")
    ksub = keys.add_subparsers(dest="keys_command", required=True)
    p = ksub.add_parser(
        "set",
        help="save a key (typed without echo, or piped)",
        epilog="example: llmport keys set openai",
    )
    p.add_argument("name", help="the provider, e.g. openai")
    p.set_defaults(func=cmd_keys_set)
    p = ksub.add_parser(
        "list", help="the names of the saved keys", epilog="example: llmport keys list"
    )
    p.set_defaults(func=cmd_keys_list)
    p = _command(ksub, "path", "the keys file", "llmport keys path")
    p.set_defaults(func=lambda args: _print(keys_path()))


def add_aliases_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """``aliases set/list/remove``."""
    aliases = sub.add_parser(
        "aliases", epilog="example: llmport aliases set fast openai:gpt-4o-mini"
    )
    asub = aliases.add_subparsers(dest="aliases_command", required=True)
    p = asub.add_parser(
        "set", help="name a model", epilog="example: llmport aliases set fast openai:gpt-4o-mini"
    )
    p.add_argument("alias")
    p.add_argument("model", help="provider:model")
    p.set_defaults(func=cmd_aliases_set)
    p = _command(asub, "list", "your aliases", "llmport aliases list")
    p.set_defaults(func=cmd_aliases_list)
    p = asub.add_parser(
        "remove", help="forget an alias", epilog="example: llmport aliases remove fast"
    )
    p.add_argument("alias")
    p.set_defaults(func=cmd_aliases_remove)


def _command(
    sub: argparse._SubParsersAction[Any], name: str, help_line: str, example: str
) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` ends with an example."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help_line, epilog=f"example: {example}"
    )
    return parser


def add_models_default(models: argparse.ArgumentParser) -> None:
    """``llmport models default [NAME]`` under ``llmport models`` (which still lists alone)."""
    msub = models.add_subparsers(dest="models_command", required=False)
    p = msub.add_parser(
        "default",
        help="show or set the default model",
        epilog="example: llmport models default openai:gpt-4o-mini",
    )
    p.add_argument("name", nargs="?", help="the new default (provider:model or an alias)")
    p.set_defaults(func=cmd_models_default)


def _print(value: object) -> int:
    print(value)
    return 0


def cmd_keys_set(args: argparse.Namespace) -> int:
    check_key_name(args.name)  # before asking for the key
    if sys.stdin is not None and sys.stdin.isatty():
        value = getpass.getpass(f"Key for {args.name}: ")
    else:
        value = sys.stdin.readline() if sys.stdin is not None else ""
    path = save_key(args.name, value)
    print(f"saved the key {args.name} in {path}")
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    for name in sorted(load_keys()):
        print(name)
    return 0


def _check_name(kind: str, value: str) -> str:
    value = value.strip()
    if not value or any(c.isspace() for c in value):
        raise UsageError(f"bad {kind} {value!r}: one word, no spaces")
    return value


def cmd_aliases_set(args: argparse.Namespace) -> int:
    alias = _check_name("alias", args.alias)
    model = _check_name("model", args.model)
    if ":" not in model:
        raise ConfigError(f"alias target {model!r} must be provider:model")
    settings = load_settings()
    settings["aliases"][alias] = model
    save_settings(settings)
    return 0


def cmd_aliases_list(args: argparse.Namespace) -> int:
    for alias, model in sorted(load_settings()["aliases"].items()):
        print(f"{alias}: {model}")
    return 0


def cmd_aliases_remove(args: argparse.Namespace) -> int:
    settings = load_settings()
    if settings["aliases"].pop(args.alias, None) is None:
        raise ConfigError(f"no alias {args.alias!r} in {settings_path()}")
    save_settings(settings)
    return 0


def cmd_models_default(args: argparse.Namespace) -> int:
    settings = load_settings()
    if args.name is None:
        print(settings["default_model"] or "no default model set")
        return 0
    settings["default_model"] = _check_name("model", args.name)
    save_settings(settings)
    return 0
