"""Session stores: where a :class:`~llmport.Session` keeps its nodes, chosen by URL.

Stores are a hook family. A plugin implements
:func:`llmport.plugins.hookspecs.llmport_session_stores` and registers a factory per
URL scheme::

    @hookimpl
    def llmport_session_stores(register):
        register("postgresql", PostgresStore)   # factory(url, *, readonly, durable)

``Session(target)`` then picks the store by the target's scheme:

* a plain path, or ``sqlite:///relative.db`` / ``sqlite:////abs/path.db``
  (SQLAlchemy's spelling): the embedded SQLite store of the core;
* ``postgresql://...`` (or ``postgres://...``): ``llmport-postgres``;
* any other ``scheme://``: whichever installed plugin registered it, else
  :class:`MissingSessionStoreError` naming the package to install.

A store holds the rows of one database; the session serialises its calls
(one session object calls one store from one thread at a time). Rows are
append-only: a node is inserted when it starts and completed once.
Everything a store writes goes through :func:`dump` (JSON, every string
redacted by :func:`llmport.errors.redact`), so API keys never reach it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..errors import (
    ConfigError,
    MissingSessionStoreError,
    SessionError,
    SessionFileNotFoundError,
    UnknownSessionError,
)
from ..observe.redaction import redact_data
from ..patterns import pattern

if TYPE_CHECKING:
    from .dag import Node

__all__ = [
    "MissingSessionStoreError",
    "NodeRow",
    "SessionError",
    "SessionFileNotFoundError",
    "SessionStore",
    "StoreFactory",
    "UnknownSessionError",
    "dump",
    "parent_seq",
    "redacted",
    "session_stores",
    "split_target",
    "storable",
]


class NodeRow(NamedTuple):
    """One stored node as :meth:`SessionStore.load` returns it (or a plain tuple in this order).

    ``start_data``/``end_data`` are JSON text or already-decoded dicts.
    """

    seq: int
    kind: str
    name: str
    parent: int | None
    expose: str | None
    start_clock: int
    started_at: float
    start_data: str | dict[str, Any]
    status: str
    end_clock: int | None
    duration: float | None
    end_data: str | dict[str, Any] | None


class SessionStore(Protocol):
    """The rows of one session database (SQLite file, PostgreSQL database, ...).

    A database that does not answer within the store's bound (default at
    most 5 s) raises :class:`~llmport.errors.SessionStoreUnavailable` naming
    it, never a driver exception.
    """

    #: What to show for this store (a path, or a URL without its password).
    display: str

    def attach(self, session_id: str | None, *, latest: bool = False) -> str:
        """Return the id of the session to use, creating it unless read-only.

        ``session_id`` None: a new session, or with ``latest`` the newest one
        (a new one if there is none). Read-only stores raise
        :class:`~llmport.sessions.session.UnknownSessionError` for an unknown id.
        """
        ...

    def load(self, session_id: str) -> Sequence[NodeRow | tuple[Any, ...]]:
        """Every node of the session, in sequence order."""
        ...

    def insert(self, session_id: str, node: Node) -> int:
        """Append ``node``'s row; return the sequence number it was stored under.

        ``node.seq`` is the number the caller expects next; a store that
        shares the session with other writers returns the number its
        database allocated instead.
        """
        ...

    def complete(
        self,
        session_id: str,
        seq: int,
        status: str,
        end: int,
        duration: float,
        result: dict[str, Any],
    ) -> None:
        """Record the end of a running node (once)."""
        ...

    def sessions(self) -> list[tuple[str, float, int]]:
        """``(id, created, node count)`` of every session, oldest first."""
        ...

    def close(self) -> None:
        """Release connections (the store reopens them on the next call)."""
        ...


StoreFactory = Callable[..., SessionStore]
"""``factory(url, *, readonly: bool, durable: bool) -> SessionStore``."""

#: Packages that provide a store, by scheme, for the "not installed" message.
KNOWN_PACKAGES = {
    "postgresql": "llmport-postgres",
    "postgres": "llmport-postgres",
}

_URL = pattern(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")


def split_target(target: str) -> tuple[str, str]:
    """``(scheme, rest)``: ``"sqlite"`` and a file path for plain paths and ``sqlite:`` URLs."""
    match = _URL.match(target)
    if match is None:
        return "sqlite", target
    scheme = match.group(1).lower()
    if scheme == "sqlite":
        rest = target[match.end() :]
        if not rest.startswith("/") or rest == "/":
            raise ConfigError(f"{target!r}: write sqlite:///relative.db or sqlite:////abs/path.db")
        return "sqlite", rest[1:]
    return scheme, target


def session_stores() -> dict[str, StoreFactory]:
    """scheme -> factory, from every ``llmport_session_stores`` hook (cached per process)."""
    from ..plugins.host import url_schemes

    return url_schemes("llmport_session_stores")


# --- helpers for stores ---------------------------------------------------------------------


def redacted(value: Any) -> Any:
    """``value`` with every string passed through :func:`llmport.errors.redact`."""
    return redact_data(value)


def dump(data: dict[str, Any] | None) -> str | None:
    """The JSON text a store writes for a node's data or result (redacted, :func:`storable`)."""
    if data is None:
        return None
    import json  # here, not at import: json costs ~2 ms of a script's start-up

    return storable(
        json.dumps(redacted(data), ensure_ascii=False, separators=(",", ":"), default=repr)
    )


#: A UTF-16 surrogate on its own: a Python ``str`` may hold one, UTF-8 cannot encode it.
_SURROGATE = pattern("[\ud800-\udfff]")


def storable(json_text: str) -> str:
    """``json_text`` with each lone surrogate written as its ``\\uXXXX`` escape.

    A model's answer may hold one (``"a\\ud800b"``); unescaped, every store's
    driver fails to encode the text as UTF-8 (a raw ``UnicodeEncodeError``).
    In JSON text such a character can only be inside a string, where the escape
    reads back as the same character: nothing is lost or changed.
    """
    if not _SURROGATE.search(json_text):
        return json_text
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", json_text)


def parent_seq(node: Node) -> int | None:
    """The stored parent of ``node``: its parent's seq, None for top-level calls."""
    owner = node.parent
    return owner.seq if owner is not None and owner.kind != "session" else None
