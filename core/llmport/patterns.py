"""Regular expressions compiled on first use: llmport's module-level patterns.

``re.compile`` at module level runs the regex compiler each time the module
is imported, used or not: llmport's patterns (redaction, schema names,
option checks, token estimates) cost several milliseconds of every
script's start-up that way, a wide Unicode class alone ~4 ms. A module
writes ``NAME = pattern(r"...")`` instead, and uses it as an ``re.Pattern``;
the regex is compiled when a method of it is first read.

After that first read the method is stored on the object, so a later
``NAME.match(text)`` is an attribute lookup and the compiled pattern's own
method: no extra Python call per use.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, cast

__all__ = ["pattern"]


class _OnFirstUse:
    """An ``re.Pattern`` stand-in that compiles on the first attribute read."""

    def __init__(self, source: str | bytes, flags: int) -> None:
        self.__source = source
        self.__flags = flags

    def __getattr__(self, name: str) -> Any:
        # Only reached for a name not yet stored: the pattern's methods and attributes.
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(re.compile(self.__source, self.__flags), name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return repr(re.compile(self.__source, self.__flags))


def pattern(source: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(source, flags)``, compiled when the pattern is first used."""
    return cast("re.Pattern[AnyStr]", _OnFirstUse(source, flags))
