"""What a run returns: :class:`RunResult` and its :class:`ToolCallRecord` entries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ..errors import AttemptFailure
from ..types import Message, ToolCall, ToolResult, Usage

__all__ = ["Dropped", "RunResult", "ToolCallRecord"]

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


@dataclass(slots=True, frozen=True)
class Dropped:
    """Part of a conversation that could not be sent to this run's vendor, and why.

    ``message`` is the index of the message it was in (in the conversation
    the run was given), ``block`` the block's type (``"thinking"``,
    ``"server_tool_call"``, ``"server_tool_result"``), ``vendor`` the vendor
    that produced it.
    """

    message: int
    block: str
    vendor: str
    reason: str


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
    #: The readable thinking of every model turn of this run, concatenated.
    thinking: str = ""
    #: What the given conversation held that this vendor cannot take (never silently lost).
    dropped: list[Dropped] = field(default_factory=list)
