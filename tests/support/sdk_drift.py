"""Helpers of the SDK drift tests (``tests/<vendor>/test_<vendor>_sdk_internals.py``).

Each plugin lists the private SDK names it uses in ``sdk_internals.USED``;
the drift tests resolve every one and pin the shape the plugin relies on, so
an SDK release that moves or reshapes one fails a test named after it.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable
from typing import Any


def resolve(module: str, path: str) -> Any:
    """``module``'s attribute at the dotted ``path`` (``Class.attr``), or AttributeError."""
    value: Any = importlib.import_module(module)
    for name in path.split("."):
        value = getattr(value, name)
    return value


def parameters(function: Any) -> list[str]:
    """The parameter names of ``function`` in order (``self`` of a plain method included)."""
    return list(inspect.signature(function).parameters)


def has_parameters(function: Any, names: Iterable[str]) -> bool:
    """Whether ``function`` accepts every one of ``names`` by keyword."""
    params = inspect.signature(function).parameters
    keyword = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return all(name in params and params[name].kind in keyword for name in names)
