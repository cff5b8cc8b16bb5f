"""Routing a model string to a provider instance, created once per runtime."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from ..errors import NoModelError, OptionError
from ..provider.setting_checks import SETTING_KINDS

if TYPE_CHECKING:  # the runtime imports this module; routing loads on the first resolve
    from ..plugins.host import PluginHost
    from ..provider.config import Config
    from ..provider.contract import Provider

__all__ = [
    "Resolved",
    "RouteSource",
    "Routed",
    "Targets",
    "check_model",
    "route",
    "with_runtime_timeout",
]


#: (provider, model name, qualified name, options from configuration).
Resolved: TypeAlias = "tuple[Provider, str, str, dict[str, Any]]"
#: :data:`Resolved` and whether the provider is a plain ``call=`` function.
Routed: TypeAlias = "tuple[Provider, str, str, dict[str, Any], bool]"


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

    @property
    def options(self) -> dict[str, Any]:
        """The runtime's call defaults (its ``timeout=`` bounds every instance's requests)."""


def check_model(model: Any, what: str = "a non-empty 'provider:model' string") -> None:
    """Raise :class:`OptionError` unless ``model`` is None or a non-blank string."""
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise OptionError(f"model must be {what}, got {model!r}")


class Targets:
    """What one runtime closes: the provider instances it created on first use, and
    the resources its runs adopted (toolsets holding connections, such as MCP servers)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._instances: dict[str, Provider] = {}
        self._resources: list[Any] = []
        # model string -> (the provider table it was resolved against, the answer):
        # aliases and configurations are resolved once per model, not on every call.
        self._routes: dict[str, tuple[Any, Resolved]] = {}
        # (the plugins' table, it with the named instances added: llmport.provider.instances)
        self._tables: tuple[Any, dict[str, Any]] | None = None

    def routed(self, name: str) -> bool:
        """Whether ``name`` was resolved before (routing it again is a dictionary lookup)."""
        return name in self._routes

    def resolve(self, source: RouteSource, model: str | None) -> Resolved:
        """(provider, model name, qualified name, options from configuration)."""
        if model is not None:
            check_model(model)
        name = model or source.model
        table = source.plugins.providers()
        known = self._routes.get(name)
        if known is not None and known[0] is table:
            return known[1]
        answer = self._resolve(source, name, self.table(source, table))
        self._routes[name] = (table, answer)
        return answer

    def table(self, source: RouteSource, plugins: Any) -> dict[str, Any]:
        """The plugins' providers plus the named instances the settings declare (once)."""
        made = self._tables
        if made is None or made[0] is not plugins:
            from ..provider.instances import with_instances

            made = self._tables = (
                plugins,
                with_instances(plugins, source.config.providers, source.provider_settings),
            )
        return made[1]

    def _resolve(self, source: RouteSource, name: str, table: Any) -> Resolved:
        if name == "default":
            name = source.config.default_model or ""
            if not name:
                raise NoModelError(
                    "no model to call: give one as 'provider:model' (Runtime(model=...) or "
                    "exec(model=...)), set default_model / LLMPORT_MODEL, or pass call="
                )
        from ..provider.routing import resolve

        route = resolve(name, source.config, table)
        provider = self._instances.get(route.prefix)
        if provider is None:
            with self._lock:
                provider = self._instances.get(route.prefix)
                if provider is None:
                    from ..provider.instances import instance_settings

                    settings = with_runtime_timeout(
                        instance_settings(
                            route.prefix, source.config.providers, source.provider_settings
                        ),
                        source.options.get("timeout"),
                    )
                    provider = self._instances[route.prefix] = route.info.create(settings)
        return provider, route.model, route.qualified, route.options

    def providers(self) -> list[Provider]:
        """The provider instances created so far."""
        with self._lock:
            return list(self._instances.values())

    def close(self) -> list[Provider]:
        """Forget every instance; return them for closing."""
        with self._lock:
            providers = list(self._instances.values())
            self._instances.clear()
            self._routes.clear()
        return providers

    def adopt(self, resource: Any) -> None:
        """Close ``resource`` with the providers (adopting twice is harmless)."""
        with self._lock:
            if not any(r is resource for r in self._resources):
                self._resources.append(resource)

    def _take_resources(self) -> list[Any]:
        with self._lock:
            taken, self._resources = self._resources, []
        return taken

    def close_all(self) -> None:
        """Close every provider instance (its sync and every loop's async clients), then
        every adopted resource."""
        for provider in self.close():
            provider.close()
        for resource in self._take_resources():
            resource.close()

    async def aclose_all(self) -> None:
        """:meth:`close_all` from async code (the running loop's clients first, in it)."""
        for provider in self.close():
            await provider.aclose()
            provider.close()
        for resource in self._take_resources():
            aclose = getattr(resource, "aclose", None)
            if aclose is not None:
                await aclose()
            else:
                resource.close()


def with_runtime_timeout(settings: dict[str, Any], timeout: Any) -> dict[str, Any]:
    """``settings`` with the runtime's ``timeout=`` as the instance's ``timeout`` setting.

    A run's requests carry the timeout as an option; the provider's other
    calls (files, batches, background runs, token counts) take no options,
    so they are bounded by the client the setting makes. The provider's own
    ``timeout`` setting, when it has one, is more specific and stays.
    """
    if timeout is None or settings.get("timeout") is not None:
        return settings
    wrong = SETTING_KINDS["timeout"](timeout)
    if wrong is not None:
        raise OptionError(f"Runtime(timeout=...) {wrong}")
    return {**settings, "timeout": timeout}


def route(
    source: RouteSource, targets: Targets, call: Provider | None, model: str | None
) -> Routed:
    """(provider, model, qualified, config options, plain callable?): ``call`` first."""
    if call is not None:
        if model is not None:
            check_model(model, "a non-empty string")
        name = model or source.model
        return call, name, name, {}, True
    provider, name, qualified, options = targets.resolve(source, model)
    return provider, name, qualified, options, False
