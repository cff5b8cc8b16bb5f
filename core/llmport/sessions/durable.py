"""The seam a durable-execution plugin wraps around each model request, tool call and approval.

The engine's drivers (:mod:`llmport.engine.drive`) perform every model
request (``Send``, ``Stream``), every tool call (one per call of a
``RunTools`` turn), every approver's decision (``Approve``) and every wait
for rate-limit capacity (``Acquire``: a resumed run takes none again) through
:func:`step` / :func:`astep`. With no recorder installed these call the
work directly. A durable-execution plugin (``llmport-dbos``) installs a
:class:`StepRecorder` for the length of a durable run (:func:`recording`):
it checkpoints each step's answer, so a run resumed by another worker gets
the answers of completed steps back from its record instead of paying for
them again.

The session DAG asks the same recorder (:func:`adopt`) whether a node it is
about to write was already written by an earlier attempt of the same run:
a resumed run reuses those nodes (same ids) rather than duplicating them,
so what later execs read from the DAG is what the first attempt read.

The core never imports a plugin: the plugin imports this module.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any, Literal, Protocol, TypeVar

__all__ = [
    "Retrace",
    "StepKind",
    "StepRecorder",
    "adopt",
    "astep",
    "current_recorder",
    "node_marks",
    "recording",
    "step",
]

T = TypeVar("T")

#: What a step is: a model request, a tool call, an approver's decision on one, or the
#: wait for rate-limit capacity before a request.
StepKind = Literal["model", "tool", "approval", "limit"]


class StepRecorder(Protocol):
    """Checkpoints the steps of one durable run (implemented by a durable-execution plugin)."""

    #: The id of the durable run (a DBOS workflow id); written on its DAG nodes.
    workflow_id: str

    def step(self, kind: StepKind, name: str, work: Callable[[], T]) -> T:
        """``work()``'s answer, run now or, if this step completed before, as recorded."""

    async def astep(self, kind: StepKind, name: str, work: Callable[[], Awaitable[T]]) -> T:
        """Async :meth:`step`."""

    def adopt(self, kind: str, name: str, parent: Any) -> Any:
        """The node an earlier attempt wrote at this point (a ``Node``), else None."""


class Retrace:
    """The DAG nodes an earlier attempt of a durable run wrote, for the next attempt to reuse.

    A durable run is deterministic up to its steps' answers, so an attempt
    writes the same nodes in the same order as the one before it until it
    passes the point where that one stopped. While it retraces them,
    :meth:`adopt` hands back the earlier node (same id); from the first
    write that differs on, it returns None and the attempt writes new nodes.
    A recorder's ``adopt`` delegates here.
    """

    __slots__ = ("_earlier", "_known")

    def __init__(self, earlier: Iterable[Any] = ()) -> None:
        self._earlier: deque[Any] = deque(earlier)
        #: The earlier nodes and their parents (by identity): the DAG being retraced.
        self._known = {id(n) for n in self._earlier} | {id(n.parent) for n in self._earlier}

    @classmethod
    def of(cls, nodes: Iterable[Any], workflow_id: str) -> Retrace:
        """The nodes (of a session, in order) the run ``workflow_id`` wrote."""
        return cls(n for n in nodes if (n.data or {}).get("workflow_id") == workflow_id)

    def adopt(self, kind: str, name: str, parent: Any) -> Any:
        """The next earlier node if this write retraces it, else None (and none after).

        A write under a node outside the retraced DAG (another session, a node
        this attempt added) neither adopts nor ends the retrace.
        """
        if not self._earlier or id(parent) not in self._known:
            return None
        node = self._earlier[0]
        if node.kind == kind and node.name == name and node.parent is parent:
            return self._earlier.popleft()
        self._earlier.clear()
        return None


_recorder: contextvars.ContextVar[StepRecorder | None] = contextvars.ContextVar(
    "llmport_step_recorder", default=None
)


def current_recorder() -> StepRecorder | None:
    """The recorder of the durable run this code runs in, if any."""
    return _recorder.get()


@contextlib.contextmanager
def recording(recorder: StepRecorder) -> Iterator[StepRecorder]:
    """Make every model request and tool call inside the block a step of ``recorder``."""
    token = _recorder.set(recorder)
    try:
        yield recorder
    finally:
        _recorder.reset(token)


def step(kind: StepKind, name: str, work: Callable[[], T]) -> T:
    """``work()``, as a step of the current durable run when there is one."""
    recorder = _recorder.get()
    return work() if recorder is None else recorder.step(kind, name, work)


async def astep(kind: StepKind, name: str, work: Callable[[], Awaitable[T]]) -> T:
    """Async :func:`step`."""
    recorder = _recorder.get()
    if recorder is None:
        return await work()
    return await recorder.astep(kind, name, work)


def adopt(kind: str, name: str, parent: Any) -> Any:
    """The node an earlier attempt of the current durable run wrote here, else None."""
    recorder = _recorder.get()
    return None if recorder is None else recorder.adopt(kind, name, parent)


def node_marks() -> dict[str, Any]:
    """What a new DAG node written inside a durable run carries: its workflow id."""
    recorder = _recorder.get()
    return {} if recorder is None else {"workflow_id": recorder.workflow_id}
