"""The plugin host's pluggy manager: the same hooks as pluggy finds, found with fewer looks."""

from __future__ import annotations

import importlib
from typing import Any

import pluggy
import pytest
from llmport import hookimpl
from llmport.plugins import hookspecs
from llmport.plugins.host import GROUP, PluginHost
from llmport.plugins.manager import Manager

#: The entry-point modules of the workspace plugins (each registered as a module).
PLUGIN_MODULES = (
    "llmport_openai.plugin",
    "llmport_anthropic.plugin",
    "llmport_gemini.plugin",
    "llmport_bedrock.plugin",
    "llmport_cohere.plugin",
    "llmport_voyage.plugin",
    "llmport_mcp.plugin",
    "llmport_redis.plugin",
    "llmport_example_tools",
    "llmport_postgres",
    "llmport_dbos",
)


def _every_hook(pm: pluggy.PluginManager) -> set[tuple[str, str, str]]:
    """(hook, plugin name, function name) of every implementation registered."""
    return {
        (name, impl.plugin_name, impl.function.__name__)
        for name, caller in vars(pm.hook).items()
        if isinstance(caller, pluggy.HookCaller)
        for impl in caller.get_hookimpls()
    }


class _Base:
    @hookimpl
    def llmport_toolsets(self, register: Any) -> None:
        register("base", None)


class Policies(_Base):
    """An instance plugin with what pluggy must tell apart: inherited, renamed, static hooks."""

    __slots__ = ("slot",)

    limit = 3

    def helper(self) -> None:
        raise AssertionError("not a hook: never called")

    @property
    def observed(self) -> Any:
        raise AssertionError("a property is never evaluated")

    @hookimpl(specname="llmport_tool_policy")
    def deny_nothing(self, check: Any) -> None:
        return None

    @staticmethod
    @hookimpl
    def llmport_limiters(register: Any) -> None:
        register("memo", None)


class WithOwnHook:
    """An instance whose hook is its own attribute (pluggy reads the instance first)."""

    def __init__(self) -> None:
        @hookimpl
        def llmport_kv_stores(register: Any) -> None:
            register("own", None)

        self.llmport_kv_stores = llmport_kv_stores


def _registered(manager: type[pluggy.PluginManager], plugins: list[Any]) -> set[Any]:
    pm = manager(GROUP)
    pm.add_hookspecs(hookspecs)
    for i, plugin in enumerate(plugins):
        pm.register(plugin, name=f"p{i}")
    return _every_hook(pm)


def test_the_manager_finds_the_hooks_pluggy_finds() -> None:
    plugins = [importlib.import_module(m) for m in PLUGIN_MODULES]
    plugins += [Policies(), WithOwnHook()]
    found = _registered(Manager, plugins)
    assert found == _registered(pluggy.PluginManager, plugins)
    assert ("llmport_tool_policy", f"p{len(PLUGIN_MODULES)}", "deny_nothing") in found
    assert ("llmport_kv_stores", f"p{len(PLUGIN_MODULES) + 1}", "llmport_kv_stores") in found


@pytest.mark.parametrize("module", PLUGIN_MODULES)
def test_a_plugin_module_s_other_names_are_not_looked_at_by_pluggy(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pluggy's own look (inspect.getattr_static per name) was most of what each
    # new runtime's plugin host cost: a plugin module lists hundreds of names.
    plugin = importlib.import_module(module)
    looked: list[str] = []
    parse = pluggy.PluginManager.parse_hookimpl_opts

    def counting(self: pluggy.PluginManager, plugin: Any, name: str) -> Any:
        looked.append(name)
        return parse(self, plugin, name)

    monkeypatch.setattr(pluggy.PluginManager, "parse_hookimpl_opts", counting)
    host = PluginHost([plugin], load_entry_points=False)
    hooks = {name for name, _, _ in _every_hook(host.pm)}
    assert set(looked) <= hooks, sorted(set(looked) - hooks)  # llmport_dbos has no hook
