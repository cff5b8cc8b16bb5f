"""One error tree: every LlmportError subclass is defined in llmport.errors and drawn there.

A plugin's own errors live in the plugin (they name its service) but are drawn
in the same docstring, each under the class it derives from.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import llmport
import llmport.errors
from llmport.errors import LlmportError

ROOT = Path(__file__).resolve().parents[3]
PLUGIN_PACKAGES = sorted(p.name for p in ROOT.glob("plugins/*/llmport_*"))
#: A tree line: 4 spaces of literal block, the branches, then the class name.
TREE_LINE = re.compile(r"^    ((?:[│ ]   )*(?:[├└]── )?)([A-Za-z_][\w.]*)")


def import_everything() -> None:
    """Import every module of the core and of each plugin (not ``__main__``, which runs)."""
    for name in ["llmport", *PLUGIN_PACKAGES]:
        package = importlib.import_module(name)
        for info in pkgutil.walk_packages(package.__path__, f"{name}."):
            if not info.name.endswith("__main__"):
                importlib.import_module(info.name)


def subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *subclasses(sub)}
    return found


def drawn_tree(doc: str) -> dict[str, str | None]:
    """Class name -> the name it is drawn under (None for a root), from the literal blocks."""
    parents: dict[str, str | None] = {}
    path: list[str] = []
    for line in doc.splitlines():
        match = TREE_LINE.match(line)
        if match is None:
            continue
        depth = len(match.group(1)) // 4
        name = match.group(2).rpartition(".")[2]
        path[depth:] = [name]
        parents[name] = path[depth - 1] if depth else None
    return parents


def package_classes() -> set[type]:
    import_everything()
    return {
        c
        for c in subclasses(LlmportError)
        if c.__module__.split(".")[0] in {"llmport", *PLUGIN_PACKAGES}
    }


def test_every_core_error_is_defined_in_llmport_errors() -> None:
    misplaced = {
        f"{c.__module__}.{c.__qualname__}"
        for c in package_classes()
        if c.__module__.startswith("llmport.") and c.__module__ != "llmport.errors"
    }
    assert misplaced == set()


def test_every_error_is_drawn_under_its_base() -> None:
    tree = drawn_tree(llmport.errors.__doc__ or "")
    classes = {c.__name__: c for c in package_classes()} | {"LlmportError": LlmportError}
    # The one warning is drawn beside the tree, as a root of its own (a UserWarning).
    classes["UnknownModelWarning"] = llmport.errors.UnknownModelWarning
    assert set(classes) - set(tree) == set(), "not drawn in the llmport.errors docstring"
    assert set(tree) - set(classes) == set(), "drawn but no such class"
    wrong = {}
    for name, parent in tree.items():
        bases = {b.__name__ for b in classes[name].__bases__}
        roots = {"LlmportError": "Exception", "UnknownModelWarning": "UserWarning"}
        expected = parent or roots.get(name, "LlmportError")
        if expected not in bases:
            wrong[name] = (parent, sorted(bases))
    assert wrong == {}


def test_the_tree_reader_finds_depth_and_roots() -> None:
    doc = """x::

    Root
    ├── A                 text (also Y)
    │   └── B
    └── C
        └── D

    pkg.Other             a plugin root
    └── E
"""
    assert drawn_tree(doc) == {
        "Root": None,
        "A": "Root",
        "B": "A",
        "C": "Root",
        "D": "C",
        "Other": None,
        "E": "Other",
    }


def test_the_moved_errors_keep_their_old_import_paths() -> None:
    from llmport.controls.limits import LimitWaitTimeout
    from llmport.engine.jobs.batch import BatchError, BatchTimeout
    from llmport.sessions.stores import (
        MissingSessionStoreError,
        SessionError,
        SessionFileNotFoundError,
        UnknownSessionError,
    )

    moved = [
        LimitWaitTimeout,
        BatchError,
        BatchTimeout,
        SessionError,
        SessionFileNotFoundError,
        UnknownSessionError,
        MissingSessionStoreError,
    ]
    assert all(getattr(llmport.errors, c.__name__) is c for c in moved)
    assert llmport.BatchTimeout is BatchTimeout and str(UnknownSessionError("no 'x'")) == "no 'x'"
