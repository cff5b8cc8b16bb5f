"""An example tool-source plugin for llmport.

It registers, through its ``llmport`` entry point and nothing else:

* the toolset ``"units"`` (length and temperature conversion), enabled with
  ``rt.exec(..., toolset="units")``;
* the tool source ``"clock"``, called at exec time with the call's
  :class:`~llmport.tools.policy.CallInfo`, enabled with
  ``rt.exec(..., tools_source="clock")``.

The entry point in pyproject.toml is all the wiring there is::

    [project.entry-points.llmport]
    example_tools = "llmport_example_tools"
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llmport import hookimpl

__all__ = ["llmport_tool_sources", "llmport_toolsets"]


def _units() -> Any:
    # Built on first use, so loading the plugin costs nothing.
    from .units import make_toolset

    return make_toolset()


def _clock(info: Any) -> Any:
    from .clock import tools_for

    return tools_for(info)


@hookimpl
def llmport_toolsets(register: Callable[..., None]) -> None:
    """Register the ``units`` toolset (as a factory)."""
    register("units", _units)


@hookimpl
def llmport_tool_sources(register: Callable[..., None]) -> None:
    """Register the ``clock`` tool source."""
    register("clock", _clock)
