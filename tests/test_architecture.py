"""The layout keeps its promises: no import cycles; vendor SDKs only inside their plugin.

Imports are read from the source (function-local ones included, so a cycle
cannot hide behind a late import); only ``if TYPE_CHECKING:`` blocks are
left out, since they never run.
"""

from __future__ import annotations

import ast
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


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(sub) for sub in ast.walk(node))
    return [node for node in ast.walk(tree) if id(node) not in skipped]


def import_graph(package: Path) -> dict[str, set[str]]:
    modules = {}
    for file in package.rglob("*.py"):
        parts = file.relative_to(package.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = file
    graph: dict[str, set[str]] = {}
    for name, file in modules.items():
        here = name if file.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps: set[str] = set()
        for node in _runtime_nodes(ast.parse(file.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                deps.update(t for t in [target] if t in modules)
                deps.update(
                    f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules
                )
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in modules)
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
        for w in graph[v]:
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

    for v in graph:
        if v not in index:
            visit(v)
    return found


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycles(package: str) -> None:
    assert cycles(import_graph(PACKAGES[package])) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_vendor_sdks_are_imported_only_inside_their_plugin() -> None:
    offenders = []
    for file in sorted([*ROOT.glob("core/**/*.py"), *ROOT.glob("plugins/*/llmport_*/**/*.py")]):
        parts = file.relative_to(ROOT).parts
        owner = "core" if parts[0] == "core" else parts[1]
        for node in ast.walk(ast.parse(file.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            for name in names:
                sdk_owner = SDKS.get(name.split(".")[0])
                if sdk_owner is not None and sdk_owner != owner:
                    offenders.append(f"{file.relative_to(ROOT)} imports {name}")
    assert offenders == []
