"""Checks of a proposed function source, made on its syntax tree only (nothing runs).

:func:`check_proposal` returns the reason a proposal is refused, or None.
The rules: it holds no hidden character (:mod:`.hidden`: what an approver
cannot see, they cannot approve); it parses; its only top-level statement
is the function (imports aside, and none when the function is written back
inside a class or another function, where it would land); same name, same
kind (sync or async) and the same signature (parameters, defaults,
annotations, return annotation) as the original; still decorated with
``@agentic_function``; it imports nothing the original did not import
unless ``allow_imports`` names it; and it uses no dynamic evaluation or
escape hatch the original does not use itself (:func:`escape_hatches`:
``eval``, ``exec``, ``compile``, ``__import__``, ``globals()``, ``open``,
a dunder name or attribute such as ``__builtins__`` or ``().__class__``,
``getattr`` with a computed or dunder name).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from .hidden import first_hidden

__all__ = ["check_proposal", "escape_hatches", "function_node", "imported_modules"]

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


#: Builtins that evaluate code, reach a namespace or the file system, or import.
_ESCAPE_NAMES = frozenset(
    {
        "eval",
        "exec",
        "compile",
        "__import__",
        "globals",
        "locals",
        "vars",
        "breakpoint",
        "open",
        "importlib",
        "builtins",
    }
)
#: Builtins that take an attribute name: a dunder or computed one escapes the checks.
_ATTRIBUTE_CALLS = frozenset({"getattr", "setattr", "delattr"})
_DUNDER = re.compile(r"__\w+__")
#: Dunder names that only label things (``type(e).__name__``): no way out through them.
_LABELS = frozenset({"__name__", "__qualname__", "__doc__", "__module__"})


def escape_hatches(tree: ast.AST) -> set[str]:
    """The dynamic evaluation and dunder access ``tree`` uses, each as shown to the model.

    ``eval()`` and its kin, a dunder name (``__builtins__``) or attribute
    (``.__class__``, ``.__subclasses__``), a string that is a dunder name
    (``attrgetter("__globals__")``), ``getattr``/``setattr``/``delattr``
    with a computed or dunder name.
    """
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in _ESCAPE_NAMES:
                found.add(f"{node.id}()" if node.id not in ("importlib", "builtins") else node.id)
            elif _dunder(node.id):
                found.add(node.id)
        elif isinstance(node, ast.Attribute) and _dunder(node.attr):
            found.add(f".{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _dunder(node.value):
                found.add(repr(node.value))
        elif isinstance(node, ast.Call):
            computed = _attribute_call(node)
            if computed is not None:
                found.add(computed)
    return found


def _dunder(name: str) -> bool:
    """A dunder name that reaches past the code (``__class__``), not a label (``__name__``)."""
    return bool(_DUNDER.fullmatch(name)) and name not in _LABELS


def _attribute_call(node: ast.Call) -> str | None:
    """``getattr(x, <computed>)`` and the like, as shown; None for a plain name."""
    func = node.func
    if not (isinstance(func, ast.Name) and func.id in _ATTRIBUTE_CALLS):
        return None
    name = node.args[1] if len(node.args) > 1 else None
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
        return None  # a dunder constant is reported as a dunder string
    return f"{func.id}() with a computed name"


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
    original: str, proposed: str, *, allow_imports: Iterable[str] = (), nested: bool = False
) -> str | None:
    """Why ``proposed`` may not replace ``original`` (both dedented sources), or None.

    ``original`` is trusted (it is the running function's source); the
    first rule ``proposed`` breaks is reported, in the order of the module
    docstring. ``nested``: the proposal is written back indented (a method,
    a nested function), so a top-level import would land in the class body.
    """
    before = ast.parse(original)
    old = function_node(before)
    assert old is not None, "the original source defines no function"
    hidden = first_hidden(proposed)
    if hidden is not None:
        return (
            f"it holds a hidden character, {hidden}: a terminal does not show it as "
            "itself, so an approver could not see the code"
        )
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
    if nested and len(tree.body) > 1:
        return (
            "a top-level import, but the function is written back inside a class or "
            "function, where it would land: import inside the function instead"
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
    hatches = sorted(escape_hatches(tree) - escape_hatches(before))
    if hatches:
        return (
            f"it uses {', '.join(hatches)}, not allowed: no dynamic evaluation, namespace "
            "or file access, or dunder attributes beyond what the original uses"
        )
    return None
