"""PostgreSQL session stores for llmport (``Session("postgresql://...")``).

Registered through the ``llmport_session_stores`` hook for the
``postgresql://`` and ``postgres://`` schemes. See :class:`PostgresStore`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llmport import hookimpl

from .store import PostgresKV, PostgresStore, close_pools

__all__ = [
    "PostgresKV",
    "PostgresStore",
    "close_pools",
    "llmport_kv_stores",
    "llmport_session_stores",
]


@hookimpl
def llmport_session_stores(register: Callable[[str, Callable[..., Any]], None]) -> None:
    register("postgresql", PostgresStore)
    register("postgres", PostgresStore)


@hookimpl
def llmport_kv_stores(register: Callable[[str, Callable[..., Any]], None]) -> None:
    register("postgresql", PostgresKV)
    register("postgres", PostgresKV)
