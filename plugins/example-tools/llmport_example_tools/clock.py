"""The ``clock`` tool source: tools built at exec time for the caller.

A source is a function ``source(info) -> Iterable[tool]``; it runs when an
exec asks for it, so it can tailor the tools to the call (here: the
``@agentic_function`` name goes into a tool description).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from llmport import Tool, tool
from llmport.tools.policy import CallInfo


@tool
def days_between(start: dt.date, end: dt.date) -> int:
    """Number of days from ``start`` to ``end`` (negative if ``end`` is earlier).

    Args:
        start: First date (YYYY-MM-DD).
        end: Second date (YYYY-MM-DD).
    """
    return (end - start).days


def _now(utc_offset_hours: float = 0.0) -> str:
    """The current date and time (ISO 8601) at a UTC offset.

    Args:
        utc_offset_hours: Offset from UTC in hours, e.g. 1 or -5.5.
    """
    zone = dt.timezone(dt.timedelta(hours=utc_offset_hours))
    return dt.datetime.now(zone).isoformat(timespec="seconds")


def tools_for(info: CallInfo) -> Iterable[Any]:
    """The clock's tools for one call."""
    caller = f" (asked from {info.function}())" if info.function else ""
    now: Tool = tool(
        _now, name="now", description="The current date and time, ISO 8601" + caller + "."
    )
    return [now, days_between]
