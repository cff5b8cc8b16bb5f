"""The run context injected into tools and chosen callables.

A tool that declares a parameter ``ctx: RunContext[AppDeps]`` gets one; the
parameter never appears in the tool's JSON schema (:mod:`llmport.schema`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["RunContext"]

T = TypeVar("T")


@dataclass(slots=True, frozen=True)
class RunContext(Generic[T]):
    """Immutable context injected into tools that declare ``ctx: RunContext[...]``.

    ``deps`` is whatever was passed as ``exec(..., deps=...)``; the rest says
    where the call happens: the model, the ``llm`` DAG node of the exec
    (``None`` outside ``@agentic_function``), the tool-loop iteration
    (1-based), the vendor's tool call id and the tool's name.
    """

    deps: T
    model: str
    node_id: str | None = None
    iteration: int = 0
    tool_call_id: str = ""
    tool_name: str = ""
    function: str | None = None
