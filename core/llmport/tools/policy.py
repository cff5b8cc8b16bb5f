"""Data handed to policy hooks, and the rule that combines their answers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from typing import Any, Literal

from ..messages.types import ToolCall
from ..slotted import dataclass

Verdict = Literal["allow", "deny", "approve"]
_RANK = {"allow": 0, "approve": 1, "deny": 2}


@dataclass(slots=True, frozen=True)
class CallInfo:
    """Who is calling: handed to policy hooks and tool sources.

    ``function`` is the enclosing ``@agentic_function`` (if any), ``node_id``
    its DAG node, ``iteration`` the tool-loop turn.
    """

    model: str
    provider: str
    function: str | None = None
    node_id: str | None = None
    iteration: int = 0
    deps: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class ToolCheck:
    """A question to the policy hooks: may this tool be offered / run?"""

    tool_name: str
    stage: Literal["offer", "run"]
    info: CallInfo
    call: ToolCall | None = None
    description: str = ""


def combine_verdicts(answers: Iterable[str | None]) -> Verdict:
    """Deny wins over approve, approve over allow; no opinion means allow."""
    verdict: Verdict = "allow"
    for answer in answers:
        if answer is None:
            continue
        if answer not in _RANK:
            raise ValueError(f"tool policy returned {answer!r}; expected allow, deny or approve")
        if _RANK[answer] > _RANK[verdict]:
            verdict = answer  # type: ignore[assignment]
    return verdict


# --- approval ---------------------------------------------------------------------
# A policy answering "approve" needs an approver: ``exec(..., approver=fn)`` or
# ``Runtime(..., approver=fn)``. ``fn(check: ToolCheck) -> bool`` (sync or async)
# is asked once per call, at the run stage, before the tool runs.


def _verdict_of(answer: Any, check: ToolCheck) -> bool:
    if not isinstance(answer, bool):
        raise TypeError(
            f"approver returned {type(answer).__name__} for tool {check.tool_name!r}; expected bool"
        )
    return answer


def ask_approval(approver: Any, check: ToolCheck) -> bool:
    """Ask a sync or async approver from sync code."""
    import inspect

    answer = approver(check)
    if inspect.isawaitable(answer):
        from .tool import run_coroutine_blocking

        answer = run_coroutine_blocking(answer)
    return _verdict_of(answer, check)


async def aask_approval(approver: Any, check: ToolCheck) -> bool:
    """Ask an approver from async code (a sync one runs in a thread: it may block on a human)."""
    import asyncio
    import contextvars
    import inspect

    if inspect.iscoroutinefunction(approver):
        return _verdict_of(await approver(check), check)
    answer = await asyncio.to_thread(contextvars.copy_context().run, approver, check)
    if inspect.isawaitable(answer):
        answer = await answer
    return _verdict_of(answer, check)
