"""The layout keeps its promises, read from the source of the core and every plugin.

* no import cycles, counting every import: function-local ones (a cycle cannot
  hide behind a late import) and ``if TYPE_CHECKING:`` ones (the type checker
  and a reader follow them, and such a cycle is one edit away from a real one);
* no loops between folders either: each subpackage (and each module at the
  package root) is one node, and the imports among those nodes form a DAG, so
  every folder has a layer and a reader can take them bottom-up;
* no private name (a leading underscore, not a dunder) imported from another
  module or read as ``module._name`` off an imported module;
* the core never imports a plugin package (``llmport_*``);
* vendor SDKs are imported only inside their plugin.

Each rule is a function over a package directory; the ``planted`` tests run the
same functions on a tiny package with one offence per rule, so a rule that
stopped finding anything would fail there.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "core": ROOT / "core" / "llmport",
    **{p.parent.name: p for p in sorted(ROOT.glob("plugins/*/llmport_*"))},
}
#: Top-level modules of each vendor SDK, and the one plugin allowed to import them.
SDKS = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "gemini",
    "boto3": "bedrock",
    "botocore": "bedrock",
    "mcp": "mcp",
    "mcp_types": "mcp",
}
#: Prefix of every plugin package's name; the core imports none of them.
PLUGIN_PREFIX = "llmport_"

#: The offences found when these rules were added, removed as the engine and
#: plugin work lands. The list can only shrink: a listed offence that no longer
#: exists fails ``test_known_violations_still_exist`` until it is deleted here.
#: Offences allowed for now (none left: the engine and plugin work removed them).
KNOWN_VIOLATIONS: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Imported:
    """One name an import statement binds: ``from module import name`` or ``import module``."""

    importer: str
    module: str
    name: str | None
    alias: str


def modules_of(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of ``package``."""
    modules = {}
    for file in sorted(package.rglob("*.py")):
        parts = file.relative_to(package.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = file
    return modules


def imports_of(name: str, file: Path) -> Iterator[Imported]:
    """Every import in ``file`` (module ``name``), at any depth, relative ones resolved."""
    here = name if file.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield Imported(name, a.name, None, a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for a in node.names:
                yield Imported(name, module, a.name, a.asname or a.name)


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports (a submodule import counts both)."""
    modules = modules_of(package)
    graph: dict[str, set[str]] = {}
    for name, file in modules.items():
        deps: set[str] = set()
        for imp in imports_of(name, file):
            submodule = f"{imp.module}.{imp.name}"
            if submodule in modules:
                deps.add(submodule)
                # Importing a submodule runs its package first, but an ancestor of
                # the importer is already running: no edge (and no false cycle) then.
                if name.startswith(f"{imp.module}."):
                    continue
            if imp.module in modules:
                deps.add(imp.module)
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def cycle_offences(package: Path) -> set[str]:
    return {"cycle: " + " <-> ".join(c) for c in cycles(import_graph(package))}


def folder_of(module: str) -> str:
    """The subpackage (or root module) ``module`` belongs to: ``pkg.a.b`` -> ``pkg.a``."""
    return ".".join(module.split(".")[:2])


def folder_graph(package: Path) -> dict[str, set[str]]:
    """Folder -> the folders it imports from, collapsed from the module graph."""
    graph: dict[str, set[str]] = {}
    for module, deps in import_graph(package).items():
        here = folder_of(module)
        graph.setdefault(here, set()).update(folder_of(d) for d in deps)
    for here, deps in graph.items():
        deps.discard(here)
    return graph


def folder_loop_offences(package: Path) -> set[str]:
    return {"folder loop: " + " <-> ".join(c) for c in cycles(folder_graph(package))}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def private_offences(package: Path, known_modules: set[str]) -> set[str]:
    """Private names of another module taken by ``from m import _x`` or read as ``m._x``.

    ``known_modules`` are the modules whose private names are guarded (every
    package's); a private *module* of the importer's own package is not a name
    taken from another module, so ``from . import _impl`` is allowed.
    """
    found: set[str] = set()
    for name, file in modules_of(package).items():
        bound: dict[str, str] = {}  # local name (or dotted chain) -> the module it is
        for imp in imports_of(name, file):
            if imp.name is None:  # ``import a.b`` binds ``a``; ``import a.b as z`` binds ``z``
                top = imp.module.split(".")[0]
                bound[imp.alias] = top if imp.alias == top else imp.module
                continue
            full = f"{imp.module}.{imp.name}"
            if full in known_modules:
                bound[imp.alias] = full
            elif imp.module in known_modules and imp.module != name and _is_private(imp.name):
                found.add(f"private: {name} imports {imp.module}.{imp.name}")
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Attribute) and _is_private(node.attr)):
                continue
            chain = _dotted(node.value)
            head, _, rest = (chain or "").partition(".")
            module = bound.get(head)
            if module is not None:
                module = f"{module}.{rest}" if rest else module
            if module in known_modules and module != name:
                found.add(f"private: {name} reads {module}.{node.attr}")
    return found


def plugin_import_offences(package: Path) -> set[str]:
    """Imports of a plugin package (``llmport_*``) from ``package``."""
    return {
        f"core imports plugin: {imp.importer} imports {imp.module}"
        + (f".{imp.name}" if imp.name else "")
        for name, file in modules_of(package).items()
        for imp in imports_of(name, file)
        if imp.module.startswith(PLUGIN_PREFIX)
        or (imp.name is None and imp.module.split(".")[0].startswith(PLUGIN_PREFIX))
    }


def sdk_offences(package: Path, owner: str) -> set[str]:
    """Imports of a vendor SDK from ``package`` (plugin ``owner``, or "core") not its own."""
    return {
        f"sdk: {imp.importer} imports {imp.module}"
        for name, file in modules_of(package).items()
        for imp in imports_of(name, file)
        if SDKS.get(imp.module.split(".")[0], owner) != owner
    }


def all_modules() -> set[str]:
    return {m for package in PACKAGES.values() for m in modules_of(package)}


@functools.cache  # the source does not change during a run: each rule reads it once
def offences(rule: str) -> frozenset[str]:
    """Every current offence against ``rule`` in the core and the plugins."""
    everything = all_modules()
    found: set[str] = set()
    for owner, package in PACKAGES.items():
        if rule == "cycle":
            found |= cycle_offences(package)
        elif rule == "folder loop":
            found |= folder_loop_offences(package)
        elif rule == "private":
            found |= private_offences(package, everything)
        elif rule == "core imports plugin" and owner == "core":
            found |= plugin_import_offences(package)
        elif rule == "sdk":
            found |= sdk_offences(package, owner)
    return frozenset(found)


RULES = ["cycle", "folder loop", "private", "core imports plugin", "sdk"]


@pytest.mark.parametrize("rule", RULES)
def test_no_new_offences(rule: str) -> None:
    assert offences(rule) - KNOWN_VIOLATIONS == set()


def test_known_violations_still_exist() -> None:
    """The list only shrinks: delete an entry here once its offence is gone."""
    current = set().union(*(offences(rule) for rule in RULES))
    assert KNOWN_VIOLATIONS - current == set()


# --- the rules find planted offences ---------------------------------------------


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _plant(root: Path, files: dict[str, str]) -> Path:
    """The package ``pkg`` (an empty ``__init__``) with ``files`` in it, under ``root``."""
    for relative, text in {"pkg/__init__.py": "", **files}.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_a_cycle_through_type_checking_and_a_late_import_is_found(tmp_path: Path) -> None:
    package = _plant(
        tmp_path,
        {
            "pkg/a.py": "import typing\nif typing.TYPE_CHECKING:\n    from .b import B\n",
            "pkg/b.py": "def f():\n    from pkg import a\n    return a\n",
            "pkg/c.py": "from . import a\n",
        },
    )
    assert cycle_offences(package) == {"cycle: pkg.a <-> pkg.b"}


def test_a_loop_between_folders_without_a_module_cycle_is_found(tmp_path: Path) -> None:
    package = _plant(
        tmp_path,
        {
            "pkg/low/__init__.py": "",
            "pkg/low/a.py": "def f():\n    from pkg.high import c\n    return c\n",
            "pkg/low/b.py": "",
            "pkg/high/__init__.py": "",
            "pkg/high/c.py": "",
            "pkg/high/d.py": "from ..low import b\n",
            "pkg/top.py": "from .high import d\n",
        },
    )
    assert cycle_offences(package) == set()
    assert folder_loop_offences(package) == {"folder loop: pkg.high <-> pkg.low"}


def test_a_private_name_taken_from_another_module_is_found(tmp_path: Path) -> None:
    package = _plant(
        tmp_path,
        {
            "pkg/a.py": "_secret = 1\n_other = 2\n__all__ = []\n",
            "pkg/b.py": "from .a import _secret, __all__\n",
            "pkg/c.py": "from pkg import a\nx = a._other\ny = a.__all__\n",
            "pkg/d.py": "import pkg.a\nx = pkg.a._other\n",
            "pkg/e.py": "import pkg.a as alias\nx = alias._secret\n",
            "pkg/f.py": "_mine = 1\nclass K:\n    _x = 1\nprint(K._x, _mine)\n",
        },
    )
    assert private_offences(package, set(modules_of(package))) == {
        "private: pkg.b imports pkg.a._secret",
        "private: pkg.c reads pkg.a._other",
        "private: pkg.d reads pkg.a._other",
        "private: pkg.e reads pkg.a._secret",
    }


def test_a_core_module_importing_a_plugin_is_found(tmp_path: Path) -> None:
    package = _plant(
        tmp_path,
        {
            "pkg/a.py": "def f():\n    import llmport_fake.serve as s\n    return s\n",
            "pkg/b.py": "from llmport_fake import thing\nimport llmport\n",
        },
    )
    assert plugin_import_offences(package) == {
        "core imports plugin: pkg.a imports llmport_fake.serve",
        "core imports plugin: pkg.b imports llmport_fake.thing",
    }


def test_a_vendor_sdk_outside_its_plugin_is_found(tmp_path: Path) -> None:
    package = _plant(
        tmp_path,
        {
            "pkg/a.py": "import openai\nfrom google.genai import types\nimport mcp\n",
        },
    )
    assert sdk_offences(package, "mcp") == {
        "sdk: pkg.a imports openai",
        "sdk: pkg.a imports google.genai",
    }
