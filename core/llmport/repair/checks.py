"""Checks of a proposed function source, made on its syntax tree only (nothing runs).

:func:`check_proposal` returns the reason a proposal is refused, or None.
The rules: it parses; its only top-level statement is the
function (imports aside); same name, same kind (sync or async) and the
same signature (parameters, defaults, annotations, return annotation) as
the original; still decorated with ``@agentic_function``; and it imports
nothing the original did not import unless ``allow_imports`` names it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

__all__ = ["check_proposal", "function_node", "imported_modules"]

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def function_node(tree: ast.Module) -> FunctionNode | None:
    """The function a module of one function defines (the last definition), else None."""
    found = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return found[-1] if found else None


def imported_modules(tree: ast.AST) -> set[str]:
    """Every module ``tree`` imports, anywhere in it, by full dotted name.

    ``import a.b`` counts ``a.b``; ``from a import b`` counts ``a`` and
    ``a.b`` (``b`` may be a submodule); ``__import__("x")`` and
    ``importlib.import_module("x")`` count ``x`` (any other argument: ``?``).
    """
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            found.add(base)
            found.update(f"{base}.{alias.name}".replace("..", ".") for alias in node.names)
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func):
            first = node.args[0] if node.args else None
            is_name = isinstance(first, ast.Constant) and isinstance(first.value, str)
            found.add(first.value if is_name else "?")  # type: ignore[union-attr]
    return found


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id == "__import__"
    return isinstance(func, ast.Attribute) and func.attr in ("import_module", "__import__")


def _allowed(module: str, allowed: Iterable[str]) -> bool:
    """``module`` is one of ``allowed`` or inside one of them (``os.path`` under ``os``)."""
    return any(module == a or module.startswith(a + ".") for a in allowed)


def _is_agentic(decorator: ast.expr) -> bool:
    """``@agentic_function``, ``@agentic_function(...)`` or ``@llmport.agentic_function...``."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Name):
        return target.id == "agentic_function"
    return isinstance(target, ast.Attribute) and target.attr == "agentic_function"


def _signature(node: FunctionNode) -> str:
    returns = ast.dump(node.returns) if node.returns is not None else ""
    return f"{type(node).__name__} {ast.dump(node.args)} -> {returns}"


def _shown_signature(node: FunctionNode) -> str:
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"{prefix} {node.name}({ast.unparse(node.args)}){returns}"


def check_proposal(
    original: str, proposed: str, *, allow_imports: Iterable[str] = ()
) -> str | None:
    """Why ``proposed`` may not replace ``original`` (both dedented sources), or None.

    ``original`` is trusted (it is the running function's source); the
    first rule ``proposed`` breaks is reported, in the order of the module
    docstring.
    """
    before = ast.parse(original)
    old = function_node(before)
    assert old is not None, "the original source defines no function"
    try:
        tree = ast.parse(proposed)
    except SyntaxError as exc:
        return f"it does not parse: {exc.msg} (line {exc.lineno})"
    new = function_node(tree)
    if new is None:
        return "it defines no function"
    others = [
        s for s in tree.body if s is not new and not isinstance(s, (ast.Import, ast.ImportFrom))
    ]
    if others:
        first = others[0]
        return (
            f"a top-level statement besides the function (line {first.lineno}: "
            f"{type(first).__name__}); only the function may be defined"
        )
    if new.name != old.name:
        return f"the function is named {new.name!r}, not {old.name!r}"
    if _signature(new) != _signature(old):
        return f"the signature changed: {_shown_signature(new)} instead of {_shown_signature(old)}"
    if not any(_is_agentic(d) for d in new.decorator_list):
        return "it is no longer decorated with @agentic_function"
    allowed = {*imported_modules(before), *allow_imports}
    new_imports = sorted(m for m in imported_modules(tree) if not _allowed(m, allowed))
    if new_imports:
        return (
            f"it imports {', '.join(new_imports)}, not allowed "
            "(pass allow_imports=[...] to fix() to allow a module)"
        )
    return None
