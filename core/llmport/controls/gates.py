"""A runtime's rate limits: its limits, the limiter made on first use, one gate per target.

The limits and limiter themselves are in :mod:`.limits`; this is the state
one :class:`~llmport.Runtime` keeps of them, closed with it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .limits import Gate, Limit, Limiter, check_limits, make_limiter, match_limits

__all__ = ["GateSource", "Gates"]


class LimiterSetting(Protocol):
    """The part of the configuration gates read: its ``limiter`` (the runtime's ``Config``)."""

    @property
    def limiter(self) -> Any: ...


class LimiterFactories(Protocol):
    """The part of the plugin host gates read: the limiter factories by URL scheme."""

    def limiters(self) -> Mapping[str, Callable[[str], Limiter]]: ...


class GateSource(Protocol):
    """Where the limits and the limiter come from (the runtime), read only when needed.

    Typed by what gates read, not by the configuration and plugin host
    classes, so the controls need neither the provider nor the plugin layer.
    """

    @property
    def config(self) -> LimiterSetting: ...

    @property
    def plugins(self) -> LimiterFactories: ...

    @property
    def limits(self) -> dict[str, Limit]: ...

    @property
    def limiter(self) -> Limiter: ...


class Gates:
    """``Runtime(limits=..., limiter=...)``: checked now, the limiter made on first use."""

    def __init__(self, limits: Mapping[str, Limit] | None, limiter: str | Limiter | None) -> None:
        self.limits_arg = check_limits(limits)
        self.limiter_arg = limiter
        #: The limiter in use: the caller's instance, else made on first use (None until then).
        self.made: Limiter | None = limiter if isinstance(limiter, Limiter) else None
        self._gates: dict[str, Gate | None] = {}
        self._lock = threading.Lock()

    def limits(self, configured: Mapping[str, Limit]) -> dict[str, Limit]:
        """``{glob: Limit}``: ``configured`` overridden key by key by ``limits=``."""
        return {**configured, **self.limits_arg}

    def limiter(self, source: GateSource) -> Limiter:
        """The limiter: ``limiter=``, else configuration's; the plugins' only for a URL."""
        if self.made is None:
            spec = self.limiter_arg or source.config.limiter
            url = isinstance(spec, str) and spec != "memory"
            made: Limiter | None = make_limiter(spec, source.plugins.limiters() if url else {})
            with self._lock:
                if self.made is None:
                    self.made = made
                    made = None
            if made is not None:  # another thread won the race
                made.close()
        assert self.made is not None
        return self.made

    def gate(self, target: str, source: GateSource) -> Gate | None:
        """The limits on ``target`` with the limiter; None if none match (remembered)."""
        try:
            return self._gates[target]
        except KeyError:
            pass
        matched = match_limits(source.limits, target)
        gate = Gate(source.limiter, matched, target) if matched else None
        self._gates[target] = gate
        return gate

    def close(self) -> None:
        """Close the limiter this runtime made (the caller's own stays open) and forget gates."""
        limiter, self.made, self._gates = self.made, None, {}
        if limiter is not None and limiter is not self.limiter_arg:
            limiter.close()
        elif limiter is not None:
            self.made = limiter  # the caller's: theirs to close
