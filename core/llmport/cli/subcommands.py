"""Subcommands listed up front and built when used: ``llmport run`` builds two parsers, not 24.

argparse lists a subcommand from its name and help line alone (the usage's
``{models,plugins,run,...}``, ``llmport --help``'s list); only the command
the line names needs its parser, and that parser needs its module. Building
every parser cost each call the command modules' imports and ~110
``add_argument`` calls, each asking gettext for its translations.

:class:`LazySubcommands` is the subparsers action of ``llmport``'s parser:
:meth:`~LazySubcommands.add_later` lists a name and help line and names the
function that adds its parser, run when the parser is first read (by the
parse, or by a caller walking ``choices``). ``add_parser`` works as on any
subparsers action (plugins add their commands with it).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_values

__all__ = ["LazySubcommands", "add_lazy_subcommands"]

#: Adds one subcommand's parser: ``builder(subparsers)`` calls ``add_parser(name, ...)``.
Builder = Callable[["argparse._SubParsersAction[Any]"], object]


class _ParsersByName(dict[str, Any]):
    """A subcommand's parser by name, in the order listed; a listed one is built when read."""

    def __init__(self) -> None:
        super().__init__()
        self._builders: dict[str, Callable[[], object]] = {}
        self._building: set[str] = set()

    def add_later(self, name: str, build: Callable[[], object]) -> None:
        super().__setitem__(name, None)  # listed now, in order; built when read
        self._builders[name] = build

    def __contains__(self, name: object) -> bool:
        # While its builder runs, the name is free for the add_parser it calls.
        return name not in self._building and super().__contains__(name)

    def __getitem__(self, name: str) -> Any:
        build = self._builders.pop(name, None)
        if build is not None:
            self._building.add(name)
            try:
                build()
            finally:
                self._building.discard(name)
        return super().__getitem__(name)

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if super().__contains__(name) else default

    def values(self) -> dict_values[str, Any]:
        self._build_all()
        return super().values()

    def items(self) -> dict_items[str, Any]:
        self._build_all()
        return super().items()

    def _build_all(self) -> None:
        for name in list(self._builders):
            self[name]


class LazySubcommands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Subparsers whose parsers are built when first used (``add_subparsers(action=...)``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._parsers = _ParsersByName()
        self._name_parser_map = self.choices = self._parsers

    def add_later(self, name: str, help_line: str, builder: str) -> None:
        """List ``name`` with ``help_line``; ``builder`` adds its parser when it is read.

        ``builder`` is ``"module:function"`` in :mod:`llmport.cli`, imported then:
        ``function(self)`` calls ``self.add_parser(name, ...)`` (without ``help``:
        the help line is listed here, where the other commands' are).
        """
        self._choices_actions.append(self._ChoicesPseudoAction(name, (), help_line))
        self._parsers.add_later(name, lambda: _function(builder)(self))


def add_lazy_subcommands(parser: argparse.ArgumentParser, **kwargs: Any) -> LazySubcommands:
    """``parser.add_subparsers(**kwargs)``, its parsers built when used."""
    return cast(LazySubcommands, parser.add_subparsers(action=LazySubcommands, **kwargs))


def _function(builder: str) -> Builder:
    """``"module:function"`` of :mod:`llmport.cli`, imported."""
    module, _, function = builder.partition(":")
    found: Builder = getattr(import_module(f"llmport.cli.{module}"), function)
    return found
