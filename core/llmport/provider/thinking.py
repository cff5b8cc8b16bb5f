"""What vendors with a thinking-token budget share (Anthropic, and Claude on Bedrock).

One neutral effort maps to one budget whichever vendor runs the model, so a
conversation moved from ``anthropic:`` to ``bedrock:`` thinks as much; each
plugin only caps it to its model's output limit. The sampling rule of
budgeted ("extended") thinking is checked here once too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import UnsupportedFeatureError

__all__ = ["EFFORT_BUDGETS", "MIN_BUDGET", "check_thinking_sampling"]

#: Thinking-token budget per reasoning effort, for vendors that take only a budget.
EFFORT_BUDGETS: Mapping[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 24576,
    "max": 32768,
}
#: The smallest budget those vendors accept.
MIN_BUDGET = 1024


def check_thinking_sampling(vendor: str, model: str, options: Mapping[str, Any]) -> None:
    """Budgeted thinking takes temperature 1, no top_k and top_p >= 0.95: refuse the rest."""
    # Source: Anthropic, "Building with extended thinking", "Feature compatibility" (Claude on the
    #   Messages API and on Bedrock).
    temperature = options.get("temperature")
    top_p = options.get("top_p")
    if (
        (temperature is not None and temperature != 1)
        or options.get("top_k") is not None
        or (top_p is not None and top_p < 0.95)
    ):
        raise UnsupportedFeatureError(
            vendor,
            model,
            "sampling options with thinking",
            "extended thinking needs temperature 1, no top_k, and top_p >= 0.95",
        )
