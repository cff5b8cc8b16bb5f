"""A durable run whose PostgreSQL stops answering: it waits, bounded, then a typed error.

DBOS checkpoints every step in its system database and retries an
operation whose connection it lost, but it takes a connection that cannot
be made at all (the server stopped: "connection is bad ... failed") for a
permanent error: the step's answer is not recorded, the run stays PENDING
and its caller gets a raw ``sqlalchemy.exc.OperationalError``.

:class:`WaitForDatabase` is a SQLAlchemy engine plugin that :func:`launch
<llmport_dbos.launch>` puts on DBOS's engine. Each new connection is
retried until the server answers or the database has been unreachable for
``llmport_database_wait`` seconds (measured from the first failure of the
outage, for the whole engine, so later operations do not wait again); then
it is a :class:`~llmport.SessionStoreUnavailable` naming the database. A
checkpoint that waits is written once the server is back: the step it
records (a model call already paid for) is not run again.

:func:`outage_typed` is the boundary the public entry points call through:
a lost database reaches the caller as ``SessionStoreUnavailable`` and
nothing else (no driver exception in its ``__cause__``/``__context__``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from llmport import SessionStoreUnavailable
from llmport.observe.redaction import redact

__all__ = [
    "DEFAULT_WAIT",
    "PLUGIN",
    "WAIT_OPTION",
    "WaitForDatabase",
    "aoutage_typed",
    "outage_typed",
]

T = TypeVar("T")

#: The engine plugin's entry-point name (``sqlalchemy.plugins``) and its option.
PLUGIN = "llmport_dbos_wait"
WAIT_OPTION = "llmport_database_wait"

#: Seconds a durable run waits for an unreachable database by default (then a typed error).
DEFAULT_WAIT = 5.0

#: Seconds between two connection attempts while the server is down.
_RETRY_EVERY = 0.2


def _reachability_error(exc: BaseException | None) -> bool:
    """A failure to reach the server (down, restarting), not one the server answered with.

    A server that answered (a bad password, no such database) fails the same
    way again: that is raised at once, as before.
    """
    import psycopg

    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate or ""
    return state == "" or state.startswith(("08", "57P"))


class WaitForDatabase:
    """SQLAlchemy ``CreateEnginePlugin``: connections retried through an outage, then typed."""

    def __init__(self, url: Any, kwargs: dict[str, Any]) -> None:
        self.wait = float(kwargs.pop(WAIT_OPTION, DEFAULT_WAIT))
        self.service = f"DBOS system database (PostgreSQL at {_display(url)})"
        self._lock = threading.Lock()
        #: When the engine's current outage began (time.monotonic()), None while reachable.
        self._down_since: float | None = None

    def handle_dialect_kwargs(self, dialect_cls: Any, dialect_args: dict[str, Any]) -> None:
        """Nothing to add to the dialect (part of SQLAlchemy's plugin protocol)."""

    def handle_pool_kwargs(self, pool_cls: Any, pool_args: dict[str, Any]) -> None:
        """Nothing to add to the pool (part of SQLAlchemy's plugin protocol)."""

    def update_url(self, url: Any) -> Any:
        """The URL as given (part of SQLAlchemy's plugin protocol)."""
        return url

    def engine_created(self, engine: Any) -> None:
        """Make every new connection of ``engine`` through :meth:`connect`."""
        from sqlalchemy import event

        event.listen(engine, "do_connect", self.connect)

    def connect(self, dialect: Any, record: Any, cargs: Any, cparams: Any) -> Any:
        """A new DBAPI connection, waited for while the outage is younger than the bound."""
        detail = ""
        while True:
            try:
                connection = dialect.connect(*cargs, **cparams)
            except Exception as exc:
                if not _reachability_error(exc):
                    raise
                detail = redact(f"{type(exc).__name__}: {exc}")
            else:
                with self._lock:
                    self._down_since = None
                return connection
            if self._outlasted():
                break
            time.sleep(_RETRY_EVERY)
        raise SessionStoreUnavailable(self.service, detail)  # outside the except: nothing chained

    def _outlasted(self) -> bool:
        """Whether the outage has lasted the bound (starting its clock on its first failure)."""
        now = time.monotonic()
        with self._lock:
            if self._down_since is None:
                self._down_since = now
            return now - self._down_since >= self.wait


def _display(url: Any) -> str:
    """Where the database is, without user info or query (a password may be in either)."""
    socket_dir = url.query.get("host")  # a Unix socket's folder (?host=/run/postgresql)
    host = url.host or (socket_dir if isinstance(socket_dir, str) else "") or "localhost"
    if url.port is not None:
        host = f"{host}:{url.port}"
    return f"postgresql://{host}/{url.database or ''}"


def _lost(exc: BaseException) -> SessionStoreUnavailable | None:
    """The typed outage ``exc`` stands for, if it is one (a raw driver error included)."""
    if isinstance(exc, SessionStoreUnavailable):
        return SessionStoreUnavailable(exc.service, exc.detail)
    from sqlalchemy.exc import DBAPIError

    if isinstance(exc, DBAPIError) and (
        exc.connection_invalidated or _reachability_error(exc.orig)
    ):
        detail = redact(f"{type(exc.orig).__name__}: {exc.orig}")
        return SessionStoreUnavailable("DBOS system database", detail)
    return None


def outage_typed(call: Callable[[], T]) -> T:
    """``call()``; a lost database is a fresh :class:`~llmport.SessionStoreUnavailable`."""
    try:
        return call()
    except Exception as exc:
        typed = _lost(exc)
        if typed is None:
            raise
    raise typed  # outside the except: no driver error in its context


async def aoutage_typed(call: Callable[[], Awaitable[T]]) -> T:
    """Async :func:`outage_typed`."""
    try:
        return await call()
    except Exception as exc:
        typed = _lost(exc)
        if typed is None:
            raise
    raise typed
