"""What the engine needs from its caller, and nothing more.

The engine never imports :class:`llmport.Runtime`: it works with the
narrow :class:`RunSettings` protocol below (the Runtime is one), so the
dependency points one way only, runtime -> engine. A call asks it once for
a :meth:`~RunSettings.snapshot` (:class:`~.snapshot.RunSnapshot`) and plans
from that alone; jobs, files and conversations use the other members.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..controls.budget import Ledger
from ..controls.limits import Gate  # limits
from ..controls.retry import Backoff
from ..controls.window import ContextPolicy
from ..messages.types import Usage
from ..sessions.kv import Store
from .targets import Resolved, Routed, RouteSource

if TYPE_CHECKING:
    from .snapshot import RunSnapshot

__all__ = ["RunSettings"]

class RunSettings(RouteSource, Protocol):
    """The caller's defaults and shared state a run is planned with."""

    @property
    def fallbacks(self) -> Sequence[str]:
        """Models tried in order when the default model fails."""

    @property
    def options(self) -> dict[str, Any]:
        """Default options of every call (a call's own win)."""

    @property
    def backoff(self) -> Backoff: ...

    @property
    def max_retries(self) -> int:
        """Total attempts per model request."""

    @property
    def input_token_budget(self) -> int | None: ...

    @property
    def max_block_bytes(self) -> int: ...

    @property
    def context_policy(self) -> ContextPolicy | None: ...

    @property
    def ledger(self) -> Ledger | None:
        """The cumulative budget shared by every run, if any."""

    @property
    def summaries(self) -> dict[str, str]:
        """Context summaries already written, reused by later runs."""

    def add_usage(self, usage: Usage) -> None:
        """Add one request's usage to the caller's total."""

    def gate(self, target: str) -> Gate | None:
        """The rate limits on ``target`` (``provider:model``), None if none match."""

    def store_for(self, session: Any) -> Store:
        """The key-value store a run's tools see (``RunContext.store``)."""

    def routed(self, model: str | None) -> bool:
        """Whether routing ``model`` is warm (done before by these settings: no plugin to load)."""

    def route(self, model: str | None) -> Routed:
        """Where ``model`` (None: the default) goes, a ``call=`` function included."""

    def resolve(self, model: str) -> Resolved:
        """Where ``model`` goes among the providers (never the ``call=`` function)."""

    def snapshot(self) -> RunSnapshot:
        """These settings as a call is planned with them, read once when it starts."""
