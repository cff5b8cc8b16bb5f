"""Which secrets a block of code used: the keys of the providers it called.

The redaction registry (:mod:`llmport.observe.redaction`) holds every secret
the process was ever configured with. Something that records a block of
code (a cassette) needs only the secrets *that block* used, so that a key
another test or runtime registered earlier cannot mask, or be found in, a
recording it never touched::

    with secrets_in_use() as used:
        rt.exec("hi")
    used                            # the keys of the providers the call crossed

Every call that crosses the vendor boundary notes its provider's secrets
(:func:`llmport.provider.translate.vendor_boundary`), and every secret
registered inside the block is noted too. Per block, in a context variable:
worker threads and tasks started inside the block note into the same set,
since llmport carries the context into them.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator
from contextvars import ContextVar

__all__ = ["UsedSecrets", "note_in_use", "noting", "secrets_in_use"]


class UsedSecrets:
    """The secrets noted inside one :func:`secrets_in_use` block (thread-safe)."""

    __slots__ = ("_lock", "_values")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: set[str] = set()

    def add(self, values: Iterable[str]) -> None:
        with self._lock:
            self._values.update(v for v in values if isinstance(v, str) and v)

    def snapshot(self) -> frozenset[str]:
        """The secrets noted so far."""
        with self._lock:
            return frozenset(self._values)


_used: ContextVar[UsedSecrets | None] = ContextVar("llmport_secrets_in_use", default=None)


@contextlib.contextmanager
def secrets_in_use() -> Iterator[UsedSecrets]:
    """Note, for the length of the block, every secret the code inside it uses."""
    used = UsedSecrets()
    token = _used.set(used)
    try:
        yield used
    finally:
        _used.reset(token)


def noting() -> bool:
    """Whether a :func:`secrets_in_use` block is open here (else noting is skipped)."""
    return _used.get() is not None


def note_in_use(values: Iterable[str]) -> None:
    """Note ``values`` in the open :func:`secrets_in_use` block, if any."""
    used = _used.get()
    if used is not None:
        used.add(values)
