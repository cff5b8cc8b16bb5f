"""What a run is planned with: the caller's settings, read once when the call starts.

The runtime hands the engine one :class:`RunSnapshot` per call
(:meth:`llmport.Runtime.snapshot`), and planning reads only it: routing,
fallbacks, rate-limit gates, the key-value store and the usage total are
reached through the snapshot, never by calling back into the runtime. Its
values are read when the call starts, so a setting changed on the runtime
(``rt.max_retries = 5``) applies to the next call.

What the runtime shares between its calls is made on first use by the small
holders below, which the runtime keeps and each snapshot carries: the
configuration and the plugin host (:class:`Slot`, :class:`HostSlot`), the
key-value stores (:class:`Stores`) and the usage total (:class:`UsageTotal`);
provider instances and gates have theirs in :mod:`.targets` and
:mod:`llmport.controls.gates`. This module imports nothing heavy: the
runtime builds its holders without loading the engine.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..messages.types import Usage
from ..slotted import dataclass
from .targets import Resolved, Routed, Targets, route

if TYPE_CHECKING:
    from ..controls.budget import Ledger
    from ..controls.gates import Gates
    from ..controls.limits import Gate, Limit, Limiter  # limits
    from ..controls.retry import Backoff
    from ..controls.window import ContextPolicy
    from ..plugins.host import PluginHost
    from ..provider.config import Config
    from ..provider.contract import Provider
    from ..sessions.kv import Store

__all__ = ["HostSlot", "RunSnapshot", "Slot", "Stores", "UsageTotal", "max_retries_of"]

T = TypeVar("T")


class Slot(Generic[T]):
    """A value given, else made by ``make`` on first use, then kept (thread-safe)."""

    __slots__ = ("_lock", "_make", "value")

    def __init__(self, make: Callable[[], T], value: T | None = None) -> None:
        self._make = make
        self._lock = threading.Lock()
        self.value = value

    def get(self) -> T:
        value = self.value
        if value is None:
            with self._lock:
                if self.value is None:
                    self.value = self._make()
                value = self.value
        return value


class HostSlot:
    """The plugin host: ``plugins=`` (else one made on first use) with ``hooks`` registered."""

    __slots__ = ("_hooks", "_lock", "_ready", "host")

    def __init__(self, host: PluginHost | None, hooks: Sequence[Any]) -> None:
        self.host = host
        self._hooks = tuple(hooks)
        self._lock = threading.Lock()
        self._ready = False

    def get(self) -> PluginHost:
        host = self.host
        if host is not None and self._ready:
            return host  # the hot path: no lock, no pluggy lookups
        from ..plugins.host import PluginHost

        with self._lock:
            if self.host is None:
                self.host = PluginHost(extra=self._hooks)
            elif self._hooks and not any(self.host.pm.is_registered(p) for p in self._hooks):
                for p in self._hooks:  # a PluginHost given by the caller
                    self.host.register(p)
            self._ready = True
            return self.host


class Stores:
    """The key-value stores runs see: ``store=``, else a stored session's, else one in memory."""

    __slots__ = ("_given", "_lock", "_memory")

    def __init__(self, given: Store | None) -> None:
        self._given = given
        self._memory: Store | None = given
        self._lock = threading.Lock()

    @property
    def default(self) -> Store:
        """``store=`` if given, else a store in memory (made once)."""
        if self._memory is None:
            from ..sessions.kv import MemoryStore

            with self._lock:
                if self._memory is None:
                    self._memory = MemoryStore()
        return self._memory

    def for_session(self, session: Any) -> Store:
        """The store a run uses: ``store=``, else the stored session's, else :attr:`default`."""
        if self._given is None and getattr(session, "path", None) is not None:  # stored
            from ..sessions.kv import LazyStore

            return LazyStore(lambda: session.kv)
        return self.default


class UsageTotal:
    """Tokens used by every call of one runtime (thread-safe)."""

    __slots__ = ("_lock", "_usage")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage = Usage()

    def add(self, usage: Usage) -> None:
        with self._lock:
            self._usage.add(usage)

    def copy(self) -> Usage:
        with self._lock:
            return self._usage.copy()


def max_retries_of(given: int | None, config: Slot[Config]) -> int:
    """Total attempts per model request: the argument, else configuration, else 2."""
    if given is not None:
        return given
    return config.get().max_retries or 2


@dataclass(slots=True)
class RunSnapshot:
    """The caller's settings as one call is planned with them (see the module docstring).

    It is the :class:`~.settings.RunSettings` a plan reads, answered from
    its own fields and the runtime's holders. Nothing assigns to it; it is
    not a frozen dataclass only because one is built on every call, and a
    frozen dataclass of this size takes about ten times longer to build.
    """

    model: str
    fallbacks: tuple[str, ...]
    options: dict[str, Any]
    backoff: Backoff
    retries: int | None
    input_token_budget: int | None
    max_block_bytes: int
    context_policy: ContextPolicy | None
    ledger: Ledger | None
    summaries: dict[str, str]
    provider_settings: dict[str, dict[str, Any]]
    targets: Targets
    call: Provider | None
    gates: Gates
    stores: Stores
    usage: UsageTotal
    config_slot: Slot[Config]
    host: HostSlot

    @property
    def config(self) -> Config:
        return self.config_slot.get()

    @property
    def plugins(self) -> PluginHost:
        return self.host.get()

    @property
    def max_retries(self) -> int:
        return max_retries_of(self.retries, self.config_slot)

    @property
    def limits(self) -> dict[str, Limit]:
        return self.gates.limits(self.config.limits)

    @property
    def limiter(self) -> Limiter:
        return self.gates.limiter(self)

    def add_usage(self, usage: Usage) -> None:
        """Add one request's usage to the runtime's total."""
        self.usage.add(usage)

    def gate(self, target: str) -> Gate | None:
        """The rate limits on ``target`` (``provider:model``), None if none match."""
        return self.gates.gate(target, self)

    def store_for(self, session: Any) -> Store:
        """The key-value store a run's tools see (``RunContext.store``)."""
        return self.stores.for_session(session)

    def routed(self, model: str | None) -> bool:
        """Whether routing ``model`` is warm (resolved before, or ``call=``: no plugin to load)."""
        return self.call is not None or self.targets.routed(model or self.model)

    def route(self, model: str | None) -> Routed:
        """Where ``model`` (None: the default) goes, a ``call=`` function included."""
        return route(self, self.targets, self.call, model)

    def resolve(self, model: str) -> Resolved:
        """Where ``model`` goes among the providers (never the ``call=`` function)."""
        return self.targets.resolve(self, model)
