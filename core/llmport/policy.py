"""Data handed to policy hooks, and the rule that combines their answers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from .types import ToolCall

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
