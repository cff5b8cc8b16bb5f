"""Budgets: limits on tokens, cost and requests, for a runtime's life or one run.

``Runtime(budget=Budget(...))`` is cumulative over everything the runtime
runs (concurrent runs included); ``exec(..., budget=Budget(...))`` limits one
run. Before each model request the input side is checked with the request's
estimated input tokens: a request that would cross ``input_tokens`` or
``requests`` (or any limit already reached) is not sent and raises
:class:`~llmport.errors.TokenLimitExceeded` /
:class:`~llmport.errors.BudgetExceeded`. The output side (``output_tokens``,
``total_tokens``, ``cost_usd``) is checked after each response. Neither is
ever retried; inside an ``@agentic_function`` the failure is recorded on the
llm node.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ..errors import BudgetExceeded, OptionError, TokenLimitExceeded
from ..messages.types import Usage
from ..slotted import dataclass

if TYPE_CHECKING:
    from decimal import Decimal

__all__ = ["Budget", "Ledger"]


@dataclass(slots=True, frozen=True)
class Budget:
    """Limits; ``None`` means no limit on that side."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost_usd: Decimal | float | str | None = None
    requests: int | None = None

    def __post_init__(self) -> None:
        for name in ("input_tokens", "output_tokens", "total_tokens", "requests"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise OptionError(f"Budget {name} must be an integer >= 0, got {value!r}")
        if self.cost_usd is not None:
            # Only a cost budget needs decimal: keeps the runtime's import light.
            from decimal import Decimal

            try:
                cost = Decimal(str(self.cost_usd))
            except ArithmeticError:
                raise OptionError(
                    f"Budget cost_usd must be a number, got {self.cost_usd!r}"
                ) from None
            if not cost.is_finite() or cost < 0:
                raise OptionError(f"Budget cost_usd must be >= 0, got {self.cost_usd!r}")
            object.__setattr__(self, "cost_usd", cost)


def as_budget(value: Any) -> Budget | None:
    if value is None or isinstance(value, Budget):
        return value
    if isinstance(value, dict):
        return Budget(**value)
    raise OptionError(f"budget must be a Budget(...) or a dict of its fields, got {value!r}")


class Ledger:
    """What a budget has used so far; shared by concurrent runs (thread-safe)."""

    __slots__ = ("budget", "lock", "scope", "used")

    def __init__(self, budget: Budget, scope: str) -> None:
        self.budget = budget
        self.scope = scope
        self.used = Usage()
        self.lock = threading.Lock()

    def admit(self, estimated_input: int) -> None:
        """Reserve one request of ``estimated_input`` tokens, or raise before it is sent."""
        b = self.budget
        with self.lock:
            used = self.used
            if b.input_tokens is not None and used.input_tokens + estimated_input > b.input_tokens:
                raise TokenLimitExceeded(
                    used.input_tokens + estimated_input, b.input_tokens, self.scope
                )
            if b.requests is not None and used.requests + 1 > b.requests:
                raise BudgetExceeded("requests", used.requests + 1, b.requests, self.scope)
            self._check_output(used)
            # Counted now so concurrent runs see it; corrected by charge().
            used.input_tokens += estimated_input
            used.requests += 1

    def charge(self, estimated_input: int, usage: Usage) -> None:
        """Replace a request's estimate with its real usage; raise if the output side is crossed."""
        with self.lock:
            used = self.used
            used.add(usage)
            # admit() already counted the request and its estimated input.
            used.input_tokens -= estimated_input
            used.requests -= usage.requests
            self._check_output(used)

    def release(self, estimated_input: int) -> None:
        """A reserved request was never answered (it failed): give its input back."""
        with self.lock:
            self.used.input_tokens -= estimated_input

    def _check_output(self, used: Usage) -> None:
        b = self.budget
        if b.output_tokens is not None and used.output_tokens > b.output_tokens:
            raise BudgetExceeded("output_tokens", used.output_tokens, b.output_tokens, self.scope)
        if b.total_tokens is not None and used.total_tokens > b.total_tokens:
            raise BudgetExceeded("total_tokens", used.total_tokens, b.total_tokens, self.scope)
        if b.cost_usd is not None:
            cost = used.cost
            if cost is not None and cost > b.cost_usd:  # type: ignore[operator]
                raise BudgetExceeded("cost_usd", cost, b.cost_usd, self.scope)
