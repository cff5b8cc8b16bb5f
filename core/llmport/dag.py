"""Session DAG (interface used by the runtime; implemented by the DAG work).

The runtime only needs :func:`current_frame` and the :class:`Frame` /
:class:`LlmRecord` methods below.
"""

from __future__ import annotations

import contextvars
from typing import Any, Protocol

from .types import Message, Usage


class LlmRecord(Protocol):
    node_id: str

    def finish(self, *, reply: str, usage: Usage, tool_calls: list[Any], stop_reason: str,
               output: Any, attempts: int) -> None: ...

    def fail(self, error: BaseException, *, attempts: int) -> None: ...


class Frame(Protocol):
    name: str
    node_id: str

    def context_messages(self) -> list[Message]: ...

    def begin_llm(self, *, model: str, messages: list[Message], system: str | None,
                  context_override: bool) -> LlmRecord: ...

    def record_tool(self, *, llm_node_id: str, call: Any, result: Any, duration: float,
                    error: str | None, iteration: int) -> str: ...


_current: contextvars.ContextVar[Frame | None] = contextvars.ContextVar("llmport_frame", default=None)


def current_frame() -> Frame | None:
    """The innermost running ``@agentic_function`` frame, or None."""
    return _current.get()
