"""What the engine needs from its caller, and nothing more.

The engine never imports :class:`llmport.Runtime`: it plans and runs with
the narrow :class:`RunSettings` protocol below (the Runtime is one), so the
dependency points one way only, runtime -> engine. Every member is read
when a run is planned, never cached, so a setting changed on the runtime
(``rt.max_retries = 5``) applies to the next call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..controls.budget import Ledger
from ..controls.limits import Gate  # limits
from ..controls.retry import Backoff
from ..controls.window import ContextPolicy
from ..messages.types import Usage
from ..plugins.host import PluginHost
from ..provider.config import Config
from ..provider.contract import Provider
from ..sessions.kv import Store

__all__ = ["Resolved", "RouteSource", "Routed", "RunSettings"]

#: (provider, model name, qualified name, options from configuration).
Resolved = tuple[Provider, str, str, dict[str, Any]]
#: :data:`Resolved` and whether the provider is a plain ``call=`` function.
Routed = tuple[Provider, str, str, dict[str, Any], bool]


class RouteSource(Protocol):
    """What routing a model string to a provider instance reads."""

    @property
    def model(self) -> str:
        """The default model (``"provider:model"``, an alias or a configuration name)."""

    @property
    def config(self) -> Config: ...

    @property
    def plugins(self) -> PluginHost: ...

    @property
    def provider_settings(self) -> dict[str, dict[str, Any]]:
        """``{"openai": {"base_url": ...}}``: settings for the provider instances."""


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

    def route(self, model: str | None) -> Routed:
        """Where ``model`` (None: the default) goes, a ``call=`` function included."""

    def resolve(self, model: str) -> Resolved:
        """Where ``model`` goes among the providers (never the ``call=`` function)."""
