"""PostgreSQL session stores for llmport (``Session("postgresql://...")``).

Registered through the ``llmport_session_stores`` hook for the
``postgresql://`` and ``postgres://`` schemes. See :class:`PostgresStore`.

The package is the plugin's ``llmport`` entry point, which every runtime's
plugin host imports: :mod:`.store` (psycopg, its pools and watchdog) is
imported when a hook is called (a session opened by URL) or one of its
names is first asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from llmport import hookimpl

if TYPE_CHECKING:
    from .store import PostgresKV, PostgresStore, close_pools

__all__ = [
    "PostgresKV",
    "PostgresStore",
    "close_pools",
    "llmport_kv_stores",
    "llmport_session_stores",
]

_FROM_STORE = frozenset({"PostgresKV", "PostgresStore", "close_pools"})


@hookimpl
def llmport_session_stores(register: Callable[[str, Callable[..., Any]], None]) -> None:
    from .store import PostgresStore

    register("postgresql", PostgresStore)
    register("postgres", PostgresStore)


@hookimpl
def llmport_kv_stores(register: Callable[[str, Callable[..., Any]], None]) -> None:
    from .store import PostgresKV

    register("postgresql", PostgresKV)
    register("postgres", PostgresKV)


# No module __dir__ listing the store's names: a plugin host looks at every
# name dir() lists, and a look that reached this function would import them.
def __getattr__(name: str) -> Any:
    """Import :mod:`.store` the first time one of its names is asked for."""
    if name not in _FROM_STORE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.store"), name)
    globals()[name] = value  # later lookups are ordinary attribute reads
    return value
