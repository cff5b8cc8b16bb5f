"""The store's connections: each keeps one cursor for the store's statements.

``psycopg``'s ``Connection.execute`` makes a new cursor for every statement
(its adapters copied, its state set up): about a fifth of the driver's CPU
time in one of the store's node writes. A pooled connection runs one
statement at a time (the pool lends it to one caller at a time), so one
cursor per connection serves them all, and goes with its connection.
Imported when the store makes its pool, with the driver.
"""

from __future__ import annotations

from typing import Any

import psycopg

__all__ = ["StoreConnection"]


class StoreConnection(psycopg.Connection[Any]):
    """A ``psycopg`` connection whose :meth:`rows` reuses one cursor."""

    _statements: psycopg.Cursor[Any] | None = None

    def rows(self, sql: str, params: Any = ()) -> list[Any]:
        """The rows of ``sql`` (a statement that returns rows) run with ``params``."""
        cursor = self._statements
        if cursor is None or cursor.closed:
            cursor = self._statements = self.cursor()
        return cursor.execute(sql, params).fetchall()
