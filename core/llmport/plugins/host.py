"""Plugin discovery: the ``llmport`` entry-point group, loaded with pluggy.

``LLMPORT_PLUGINS=a,b`` limits which entry points load (by entry-point
name); ``LLMPORT_PLUGINS=""`` loads none. A plugin that fails to import is
reported once (a warning, and ``llmport plugins`` shows the error); the rest
keep working.

Each :class:`~llmport.Runtime` gets its own :class:`PluginHost` (a fresh
``pluggy.PluginManager`` over the already-imported plugin modules plus the
runtime's own policy objects), so runtimes share no mutable state.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import Any, TypeVar

import pluggy

from ..errors import UnknownToolError
from ..slotted import dataclass
from . import hookspecs
from .manager import Manager

T = TypeVar("T")

GROUP = "llmport"


@dataclass(slots=True, frozen=True)
class PluginLoad:
    """The outcome of loading one entry point."""

    name: str
    value: str
    distribution: str | None
    version: str | None
    plugin: Any = None
    error: str | None = None


_load_lock = threading.Lock()
_loaded: dict[str | None, tuple[PluginLoad, ...]] = {}
#: Plugin objects every PluginHost made from now on registers (``llmport_otel.instrument()``).
_global_plugins: list[tuple[Any, ...]] = [()]


def add_global_plugin(plugin: Any) -> None:
    """Register ``plugin`` in every PluginHost (so every Runtime) created from now on.

    For process-wide instrumentation set up once at startup (tracing); a
    Runtime already created keeps the hooks it had.
    """
    with _load_lock:
        if plugin not in _global_plugins[0]:
            _global_plugins[0] = (*_global_plugins[0], plugin)


def remove_global_plugin(plugin: Any) -> None:
    with _load_lock:
        _global_plugins[0] = tuple(p for p in _global_plugins[0] if p is not plugin)


def entry_points(group: str) -> Iterable[Any]:
    """The installed entry points of ``group`` (:func:`.entrypoints.installed`).

    Read on first discovery, without importing ``importlib.metadata``: that
    import cost more than the rest of a first runtime's plugin discovery.
    """
    from .entrypoints import installed

    return installed(group)


def _selected() -> set[str] | None:
    raw = os.environ.get("LLMPORT_PLUGINS")
    if raw is None:
        return None
    return {p.strip() for p in raw.split(",") if p.strip()}


def discover() -> tuple[PluginLoad, ...]:
    """Import the entry-point plugins (once per process and LLMPORT_PLUGINS value).

    Importing a module is itself process-wide, so this cache adds no new
    shared state: it only remembers which imports failed, to warn once.
    """
    key = os.environ.get("LLMPORT_PLUGINS")
    with _load_lock:
        if key in _loaded:
            return _loaded[key]
        selected = _selected()
        loads: list[PluginLoad] = []
        for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
            if selected is not None and ep.name not in selected:
                continue
            dist = getattr(ep, "dist", None)
            dname = dist.metadata["Name"] if dist is not None else None
            version = dist.version if dist is not None else None
            try:
                plugin = ep.load()
            except Exception as exc:  # a broken plugin never breaks the core
                error = f"{type(exc).__name__}: {exc}"
                warnings.warn(
                    f"llmport plugin {ep.name!r} ({ep.value}) failed to load: {error}",
                    RuntimeWarning,
                    stacklevel=2,
                )
                loads.append(PluginLoad(ep.name, ep.value, dname, version, None, error))
            else:
                loads.append(PluginLoad(ep.name, ep.value, dname, version, plugin))
        _loaded[key] = tuple(loads)
        return _loaded[key]


class PluginHost:
    """A pluggy manager for one runtime, with registries built from the hooks."""

    def __init__(self, extra: Sequence[Any] = (), *, load_entry_points: bool = True) -> None:
        self.pm: pluggy.PluginManager = Manager(GROUP)
        self.pm.add_hookspecs(hookspecs)
        self.loads: tuple[PluginLoad, ...] = discover() if load_entry_points else ()
        for load in self.loads:
            if load.plugin is not None and not self.pm.is_registered(load.plugin):
                self.pm.register(load.plugin, name=load.name)
        for obj in (*_global_plugins[0], *extra):
            if not self.pm.is_registered(obj):
                self.pm.register(obj)
        self._providers: dict[str, Any] | None = None
        self._toolsets: dict[str, Any] | None = None
        self._sources: dict[str, Any] | None = None
        self._limiters: dict[str, Any] | None = None
        self._memo: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def hook(self) -> Any:
        return self.pm.hook

    def register(self, plugin: Any, name: str | None = None) -> None:
        """Register one more plugin object (before first use is best)."""
        self.pm.register(plugin, name=name)
        self._providers = self._toolsets = self._sources = self._limiters = None
        self._memo = {}

    def memo(self, name: str, make: Callable[[PluginHost], T]) -> T:
        """``make(self)``, built once and kept until another plugin is registered.

        The engine keeps what it looks up in the hooks per run (the hook
        implementations of a run) here instead of asking pluggy on every call.
        """
        found = self._memo.get(name)
        if found is None:
            found = self._memo[name] = make(self)
        return found

    def providers(self) -> dict[str, Any]:
        """prefix -> ProviderInfo, from every provider hook."""
        with self._lock:
            if self._providers is None:
                found: dict[str, Any] = {}

                def register(info: Any) -> None:
                    found[info.prefix] = info

                for impl in self.pm.hook.llmport_providers.get_hookimpls():
                    before = set(found)
                    impl.function(register=register)
                    for prefix in set(found) - before:
                        found[prefix].plugin = found[prefix].plugin or impl.plugin_name
                self._providers = found
            return self._providers

    def toolsets(self) -> dict[str, Any]:
        with self._lock:
            if self._toolsets is None:
                self._toolsets = self._collect(self.pm.hook.llmport_toolsets)
            return self._toolsets

    def tool_sources(self) -> dict[str, Any]:
        with self._lock:
            if self._sources is None:
                self._sources = self._collect(self.pm.hook.llmport_tool_sources)
            return self._sources

    def limiters(self) -> dict[str, Any]:
        """URL scheme -> limiter factory ``factory(url) -> Limiter``, from ``llmport_limiters``."""
        with self._lock:
            if self._limiters is None:
                self._limiters = self._collect(self.pm.hook.llmport_limiters)
            return self._limiters

    @staticmethod
    def _collect(hook: Any) -> dict[str, Any]:
        found: dict[str, Any] = {}

        def register(name: str, obj: Any) -> None:
            found[name] = obj

        hook(register=register)
        return found

    def toolset(self, name: str) -> Any:
        sets = self.toolsets()
        if name not in sets:
            raise UnknownToolError(
                f"unknown toolset {name!r}; registered: {', '.join(sorted(sets)) or 'none'}"
            )
        return sets[name]

    def tool_source(self, name: str) -> Any:
        sources = self.tool_sources()
        if name not in sources:
            raise UnknownToolError(
                f"unknown tool source {name!r}; registered: {', '.join(sorted(sources)) or 'none'}"
            )
        return sources[name]

    def has_policy_hooks(self) -> bool:
        h = self.pm.hook
        return bool(
            h.llmport_tool_policy.get_hookimpls()
            or h.llmport_before_request.get_hookimpls()
            or h.llmport_after_response.get_hookimpls()
            or h.llmport_observe.get_hookimpls()
        )

    def plugin_modules(self) -> Iterable[ModuleType | Any]:
        return [p for _, p in self.pm.list_name_plugin()]


_schemes_lock = threading.Lock()
_schemes: dict[tuple[str, str | None], dict[str, Any]] = {}


def url_schemes(hook_name: str) -> dict[str, Any]:
    """URL scheme (lower case) -> factory, from every ``hook_name(register)`` implementation.

    For what is opened by URL outside any runtime (session stores, key-value
    stores): the plugins are asked once per process and per plugin selection
    (``LLMPORT_PLUGINS``), and later calls get the same table.
    """
    key = (hook_name, os.environ.get("LLMPORT_PLUGINS"))
    with _schemes_lock:
        found = _schemes.get(key)
        if found is None:
            found = _schemes[key] = _registered_schemes(hook_name)
        return found


def _registered_schemes(hook_name: str) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def register(scheme: str, factory: Any) -> None:
        found[scheme.lower()] = factory

    getattr(PluginHost().hook, hook_name)(register=register)
    return found
