"""What a run returns: :class:`RunResult` and its :class:`ToolCallRecord` entries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ..errors import AttemptFailure
from ..types import Message, ToolCall, ToolResult, Usage

__all__ = ["RunResult", "ToolCallRecord"]

T = TypeVar("T")


@dataclass(slots=True, frozen=True)
class ToolCallRecord:
    """One tool call made during a run, with its outcome and duration."""

    call: ToolCall
    result: ToolResult
    duration: float
    iteration: int
    error: str | None = None
    node_id: str | None = None
    #: ok | error | timeout | invalid_arguments | unknown_tool | denied | not_approved | repeated
    status: str = "ok"


@dataclass(slots=True)
class RunResult(Generic[T]):
    """Everything about one ``exec``: what it returned and how it got there.

    ``value`` is typed by the call: ``rt.run(..., response_format=City).value``
    is a ``City``.
    """

    output: Any = None
    text: str = ""
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    iterations: int = 0
    stop_reason: str = ""
    attempts: int = 0
    failures: list[AttemptFailure] = field(default_factory=list)
    latency: float = 0.0
    node_id: str | None = None
    messages: list[Message] = field(default_factory=list)
    choice: str | None = None
    #: The parsed result: with response_format the JSON value (an instance for a
    #: pydantic model / dataclass format), with choices the decision, else the text.
    value: T = None  # type: ignore[assignment]
