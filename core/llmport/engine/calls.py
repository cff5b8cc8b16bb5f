"""One call, from the caller's keywords to a step machine ready to drive.

:func:`begin` is what ``exec``, ``run`` and ``stream`` (sync and async)
share before the first effect: split the keywords, plan, and wire the
connected toolsets and manual tool runs back to the caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..controls.options import split_call
from ..tools.tool import toolset_owner
from .plan import start
from .result import Caller, Continuation, RunResult
from .settings import RunSettings
from .steps import Steps, machine

__all__ = ["Owner", "begin"]


class Owner(RunSettings, Caller, Protocol):
    """The caller of a run: its settings, its ways to call again, and who closes resources."""

    def adopt(self, resource: Any) -> None:
        """Close ``resource`` (a connected toolset) with the caller."""


def begin(
    owner: Owner, content: Any, kwargs: Mapping[str, Any], *, stream: bool
) -> tuple[RunResult[Any], Steps]:
    """Plan the call and return its result (filled as it runs) and its step machine."""
    params, options = split_call(kwargs)
    params["content"] = content
    if params["tools"] is None and params["toolset"] is None:
        plan, run = start(owner, params, options, stream=stream)  # no toolset to adopt
        return run, machine(plan, run)
    token = toolset_owner.set(owner.adopt)  # connected toolsets close with the caller
    try:
        plan, run = start(owner, params, options, stream=stream)
    finally:
        toolset_owner.reset(token)
    if plan.manual_tools:  # result.continue_with() calls again with the same parameters
        run.continuation = Continuation(owner, dict(kwargs))
    return run, machine(plan, run)
