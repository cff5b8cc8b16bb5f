"""What tracing plugins see, with no tracing library imported.

* :class:`Trace`: ``exec(..., trace={"workflow": ..., "group_id": ...,
  "metadata": {...}})`` (or ``Runtime(trace=...)`` for every call; the
  value is checked with the other options, by
  :func:`llmport.controls.options.trace_setting`). It
  reaches the observe hooks twice: ``info.metadata["trace"]`` on every
  event of the run and ``payload["trace"]`` on ``run_start`` / ``run_end``.
* Function observers: ``@agentic_function`` calls belong to no Runtime (and
  so to no plugin host), so a tracer that wants a span per agentic function
  registers a process-wide :class:`FunctionObserver` with
  :func:`add_function_observer` (``llmport_otel.instrument()`` does). With
  none registered an agentic call pays one tuple check.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Protocol

from ..slotted import dataclass, field
from .logs import logger

__all__ = [
    "FunctionObserver",
    "Trace",
    "add_function_observer",
    "function_observers",
    "remove_function_observer",
]


@dataclass(slots=True, frozen=True)
class Trace:
    """A run's place in a larger story: workflow name, group id, free metadata."""

    workflow: str | None = None
    group_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "workflow": self.workflow,
            "group_id": self.group_id,
            "metadata": dict(self.metadata),
        }


class FunctionObserver(Protocol):
    """Told when an ``@agentic_function`` call starts and ends (same thread or task).

    ``start`` returns a token handed back to ``end`` (e.g. a span and the
    context token it attached); ``error`` is the exception, if it raised.
    """

    def start(self, name: str, node_id: str | None, arguments: Mapping[str, Any]) -> Any: ...

    def end(self, token: Any, result: Any, error: BaseException | None) -> None: ...


_lock = threading.Lock()
_observers: list[tuple[FunctionObserver, ...]] = [()]


def function_observers() -> tuple[FunctionObserver, ...]:
    """The registered observers (a tuple: read without a lock)."""
    return _observers[0]


def add_function_observer(observer: FunctionObserver) -> None:
    """Register a process-wide observer of agentic function calls (idempotent)."""
    with _lock:
        if observer not in _observers[0]:
            _observers[0] = (*_observers[0], observer)


def remove_function_observer(observer: FunctionObserver) -> None:
    with _lock:
        _observers[0] = tuple(o for o in _observers[0] if o is not observer)


def functions_start(name: str, node_id: str | None, arguments: Mapping[str, Any]) -> list[Any]:
    """Tell every observer a call started; their tokens (an observer that raises is logged)."""
    tokens = []
    for observer in _observers[0]:
        try:
            tokens.append((observer, observer.start(name, node_id, arguments)))
        except Exception:
            logger().exception("function observer %r failed on start of %s()", observer, name)
    return tokens


def functions_end(tokens: list[Any], result: Any, error: BaseException | None) -> None:
    for observer, token in reversed(tokens):
        try:
            observer.end(token, result, error)
        except Exception:
            logger().exception("function observer %r failed on end", observer)
