"""A vendor SDK's private names are reached only from its plugin's ``sdk_internals`` module.

SPEC: every use of an SDK's private internals is listed in one place per
plugin and pinned by a drift test (``tests/<vendor>/test_<vendor>_sdk_internals.py``).
This reads every other module of the vendor plugins and fails on a private
SDK module imported (``from openai._utils import ...``, ``from google.genai
import _common``) or a private attribute read off anything but ``self`` /
``cls`` (``client._api_client``, ``getattr(session, "_verify")``). The
``planted`` test runs the same check on a tiny module with one offence of
each kind, so a check that stopped finding anything would fail there.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENDORS = ("openai", "anthropic", "gemini", "bedrock")
#: Top-level modules of the vendor SDKs (and their HTTP stacks, private all the same).
SDK_ROOTS = frozenset({"openai", "anthropic", "google", "boto3", "botocore", "httpx2", "aiohttp"})
OWN = frozenset({"self", "cls"})


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def is_own(node: ast.expr) -> bool:
    """Whether ``node`` is ``self`` or ``cls``: an object reading its own private state."""
    return isinstance(node, ast.Name) and node.id in OWN


def private_import(node: ast.AST) -> str | None:
    """``module.name`` of an import of a private SDK module or name, else ``None``."""
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        parts = node.module.split(".")
        if parts[0] in SDK_ROOTS:
            names = [a.name for a in node.names]
            if any(map(is_private, parts)) or any(map(is_private, names)):
                return f"{node.module}.{','.join(names)}"
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = alias.name.split(".")
            if parts[0] in SDK_ROOTS and any(map(is_private, parts)):
                return alias.name
    return None


def private_read(node: ast.AST) -> str | None:
    """The private attribute an expression reads off something not its own, else ``None``."""
    if isinstance(node, ast.Attribute) and is_private(node.attr) and not is_own(node.value):
        return node.attr
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"getattr", "hasattr", "setattr"}
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
        and is_private(node.args[1].value)
        and not is_own(node.args[0])
    ):
        return node.args[1].value
    return None


def offences(source: str, where: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        what = private_import(node) or private_read(node)
        if what is not None:
            found.append(f"{where}:{getattr(node, 'lineno', 0)}: {what}")
    return found


def plugin_modules() -> list[Path]:
    return [
        path
        for vendor in VENDORS
        for path in sorted((ROOT / "plugins" / vendor).glob("llmport_*/*.py"))
        if path.name != "sdk_internals.py"
    ]


def test_the_vendor_plugins_have_modules_to_check() -> None:
    assert {p.parent.name for p in plugin_modules()} == {f"llmport_{v}" for v in VENDORS}


@pytest.mark.parametrize("path", plugin_modules(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_private_sdk_names_only_in_sdk_internals(path: Path) -> None:
    assert offences(path.read_text(), path.name) == []


def test_planted_offences_are_found() -> None:
    source = """
from openai._base_client import make_request_options
from google.genai import _common, types
import anthropic._constants
from anthropic import DEFAULT_TIMEOUT
def f(client, self):
    self._fine = getattr(self, "_fine", None)
    client._api_client.request
    getattr(client._endpoint, "_verify", True)
    return client.__class__
"""
    assert sorted(o.split(": ", 1)[1] for o in offences(source, "m.py")) == [
        "_api_client",
        "_endpoint",
        "_verify",
        "anthropic._constants",
        "google.genai._common,types",
        "openai._base_client.make_request_options",
    ]


def private_parts(source: str) -> set[str]:
    """Every private segment a module imports or reads (``_common``, ``_api_client``...)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if private_read(node) is not None:
            found.add(str(private_read(node)))
        elif private_import(node) is not None:
            names = [a.name for a in getattr(node, "names", [])]
            dotted = [getattr(node, "module", None) or "", *names]
            found |= {p for d in dotted for p in d.split(".") if is_private(p)}
    return found


@pytest.mark.parametrize("vendor", VENDORS)
def test_sdk_internals_lists_exactly_the_private_names_it_uses(vendor: str) -> None:
    """``USED`` / ``ON_INSTANCES`` (what the drift tests pin) match the module's code."""
    module = importlib.import_module(f"llmport_{vendor}.sdk_internals")
    rows = [*module.USED, *getattr(module, "ON_INSTANCES", ())]
    listed = {p for row in rows for d in row for p in d.split(".") if is_private(p)}
    path = ROOT / "plugins" / vendor / f"llmport_{vendor}" / "sdk_internals.py"
    assert private_parts(path.read_text()) == listed
