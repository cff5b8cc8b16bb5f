"""The step recorder of one durable run: each model request and tool call a DBOS step."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from llmport.sessions.durable import Retrace, StepKind

from .outage import aoutage_typed, outage_typed

if TYPE_CHECKING:
    from dbos import StepOptions

__all__ = ["DbosRecorder"]

T = TypeVar("T")


class DbosRecorder:
    """One attempt of a durable run, checkpointed in DBOS (a ``StepRecorder`` of the core).

    A step whose answer DBOS recorded in an earlier attempt is not run again:
    DBOS hands back that answer (a model call is not paid twice, a tool with
    side effects does not run twice). ``retrace`` holds the DAG nodes the
    run's earlier attempts wrote: the attempt reuses them while it retraces
    their path, so the DAG keeps its ids.
    """

    def __init__(self, workflow_id: str, retrace: Retrace | None = None) -> None:
        self.workflow_id = workflow_id
        self.retrace = retrace if retrace is not None else Retrace()
        #: Steps of this attempt that ran, and those answered from the record.
        self.ran = 0
        self.replayed = 0

    def step(self, kind: StepKind, name: str, work: Callable[[], T]) -> T:
        from dbos import DBOS

        ran: list[bool] = []

        def body() -> T:
            ran.append(True)
            return work()

        options: StepOptions = {"name": f"llmport.{kind}:{name}"}

        def run() -> T:  # an unreachable database: typed (see .outage)
            return outage_typed(lambda: DBOS.run_step(options, body))

        # a sync call inside async code: DBOS takes sync steps off the loop
        value = _off_the_loop(run) if _loop_running() else run()
        self._count(bool(ran))
        return value

    async def astep(self, kind: StepKind, name: str, work: Callable[[], Awaitable[T]]) -> T:
        from dbos import DBOS

        ran: list[bool] = []

        async def body() -> T:
            ran.append(True)
            return await work()

        options: StepOptions = {"name": f"llmport.{kind}:{name}"}
        value = await aoutage_typed(lambda: DBOS.run_step_async(options, body))
        self._count(bool(ran))
        return value

    def adopt(self, kind: str, name: str, parent: Any) -> Any:
        return self.retrace.adopt(kind, name, parent)

    def _count(self, ran: bool) -> None:
        if ran:
            self.ran += 1
        else:
            self.replayed += 1


def _loop_running() -> bool:
    import asyncio  # here: the package is the plugin's entry point, imported by every runtime

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _off_the_loop(call: Callable[[], T]) -> T:
    """``call()`` in a thread of its own, in this context (the DBOS workflow's), waited for.

    DBOS refuses a sync step in a thread whose event loop runs (a sync
    ``exec`` inside async code); the calling thread blocks here either way.
    """
    outcome: list[Any] = []
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome.append((True, context.run(call)))
        except BaseException as exc:  # handed back to the caller's thread
            outcome.append((False, exc))

    worker = threading.Thread(target=work, name="llmport-dbos-step", daemon=True)
    worker.start()
    worker.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]
