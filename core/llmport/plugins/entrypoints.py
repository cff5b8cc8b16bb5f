"""The installed entry points of a group, read without importing :mod:`importlib.metadata`.

Importing :mod:`importlib.metadata` (with :mod:`email`, :mod:`zipfile`,
:mod:`pathlib` and :mod:`socket` behind it) cost more than half of what a
process's first runtime paid to find its plugins. The distributions on
``sys.path`` are folders: :func:`installed` reads each ``*.dist-info`` /
``*.egg-info`` folder's ``entry_points.txt`` the way :mod:`importlib.metadata`
does (the first distribution of a name on ``sys.path`` wins, lines parsed as
its ``Sectioned`` reader parses them), and the name and version of those
that declare the group from the head of their ``METADATA``.

Where the environment holds what this reading does not cover (a zip or an
egg on ``sys.path``, a path entry that is not text, a meta-path finder of
its own that finds distributions), :func:`installed` asks
:func:`importlib.metadata.entry_points` instead, so the answer is the same.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from typing import Any

from ..patterns import pattern
from ..slotted import dataclass

__all__ = ["Distribution", "EntryPoint", "installed"]

_INFO = (".dist-info", ".egg-info")
#: An entry point's value: ``package.module:object.attr [extras]`` (importlib.metadata's).
_VALUE = pattern(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")
_SEPARATORS = pattern(r"[-_.]+")


@dataclass(slots=True, frozen=True)
class Distribution:
    """The installed distribution an entry point comes from: its name and version."""

    name: str | None
    version: str | None

    @property
    def metadata(self) -> dict[str, str | None]:
        """``{"Name": name}``, read as :attr:`importlib.metadata.Distribution.metadata` is."""
        return {"Name": self.name}


@dataclass(slots=True, frozen=True)
class EntryPoint:
    """One entry point: ``name = value`` in ``group``, as :mod:`importlib.metadata` has it."""

    name: str
    value: str
    group: str
    dist: Distribution | None = None

    def load(self) -> Any:
        """The module, or its object named after the colon (``package.module:attr``)."""
        match = _VALUE.match(self.value)
        if match is None:
            raise ValueError(f"entry point {self.name!r} has a malformed value: {self.value!r}")
        found: Any = import_module(match.group("module"))
        for attr in filter(None, (match.group("attr") or "").split(".")):
            found = getattr(found, attr)
        return found


def installed(group: str) -> tuple[EntryPoint, ...]:
    """Every installed entry point of ``group``, in :mod:`importlib.metadata`'s order."""
    if not _plain_environment():
        return _from_importlib(group)
    found: list[EntryPoint] = []
    seen: set[str] = set()
    for folder in sys.path:
        for info in _infos(folder):
            name = _normalized(os.path.basename(info).rpartition(".")[0].partition("-")[0])
            if name in seen:
                continue
            seen.add(name)
            found += _group_of(info, group)
    return tuple(found)


def _plain_environment() -> bool:
    """Whether every distribution importlib.metadata would find is a folder this module reads."""
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if finder is not PathFinder and hasattr(finder, "find_distributions"):
            return False  # a finder of its own: only importlib.metadata asks it
    for folder in sys.path:
        if not isinstance(folder, str) or folder.lower().endswith(".egg"):
            return False
        if os.path.isfile(folder):  # a zip: its distributions are read through zipfile
            return False
    return True


def _from_importlib(group: str) -> tuple[EntryPoint, ...]:
    from importlib.metadata import entry_points

    return tuple(
        EntryPoint(ep.name, ep.value, ep.group, _distribution_of(ep.dist))
        for ep in entry_points(group=group)
    )


def _distribution_of(dist: Any) -> Distribution | None:
    if dist is None:
        return None
    return Distribution(dist.metadata["Name"], dist.version)


def _infos(folder: str) -> list[str]:
    """The ``*.dist-info`` and ``*.egg-info`` paths in ``folder``, in its listing's order."""
    try:
        children = os.listdir(folder or ".")
    except OSError:
        return []
    return [os.path.join(folder, child) for child in children if child.lower().endswith(_INFO)]


def _normalized(name: str) -> str:
    """A distribution name as importlib.metadata compares them (PEP 503, ``_`` for ``-``)."""
    return _SEPARATORS.sub("-", name).lower().replace("-", "_")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError):
        return None


def _group_of(info: str, group: str) -> list[EntryPoint]:
    """The entry points of ``group`` in the distribution at ``info``."""
    text = _read(os.path.join(info, "entry_points.txt"))
    if not text:
        return []
    pairs: list[tuple[str, str]] = []
    section: str | None = None
    for line in (line.strip() for line in text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
        elif section == group:
            name, _, value = line.partition("=")
            pairs.append((name.strip(), value.strip()))
    if not pairs:
        return []
    dist = _metadata(info)
    return [EntryPoint(name, value, group, dist) for name, value in pairs]


def _metadata(info: str) -> Distribution:
    """Name and version from the head of the distribution's ``METADATA`` (or ``PKG-INFO``)."""
    text = _read(os.path.join(info, "METADATA")) or _read(os.path.join(info, "PKG-INFO")) or ""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line; the description follows
        key, colon, value = line.partition(":")
        if colon and key in ("Name", "Version") and key not in fields:
            fields[key] = value.strip()
    return Distribution(fields.get("Name"), fields.get("Version"))
