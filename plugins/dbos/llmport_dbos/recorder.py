"""The step recorder of one durable run: each model request and tool call a DBOS step."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from llmport.engine.durable import Retrace, StepKind

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

        value = DBOS.run_step({"name": f"llmport.{kind}:{name}"}, body)
        self._count(bool(ran))
        return value

    async def astep(self, kind: StepKind, name: str, work: Callable[[], Awaitable[T]]) -> T:
        from dbos import DBOS

        ran: list[bool] = []

        async def body() -> T:
            ran.append(True)
            return await work()

        value = await DBOS.run_step_async({"name": f"llmport.{kind}:{name}"}, body)
        self._count(bool(ran))
        return value

    def adopt(self, kind: str, name: str, parent: Any) -> Any:
        return self.retrace.adopt(kind, name, parent)

    def _count(self, ran: bool) -> None:
        if ran:
            self.ran += 1
        else:
            self.replayed += 1
