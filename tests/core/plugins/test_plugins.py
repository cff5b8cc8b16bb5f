"""Entry-point discovery, LLMPORT_PLUGINS, broken plugins, cheap import."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from typing import Any

import pytest
from llmport import ProviderInfo, Runtime, UnknownModelError, hookimpl
from llmport.plugins import host as plugins_module
from llmport.plugins.host import PluginHost, discover
from llmport.provider.config import Config
from llmport.testing import Script
from llmport.tools.tool import Toolset
from support.core_helpers import Driver


class FakeDist:
    def __init__(self, name: str) -> None:
        self.metadata = {"Name": name}
        self.version = "1.2.3"


class FakeEntryPoint:
    """Stands in for an importlib.metadata.EntryPoint of the ``llmport`` group."""

    def __init__(self, name: str, plugin: Any = None, error: BaseException | None = None) -> None:
        self.name = name
        self.value = f"{name}_pkg.plugin"
        self.group = "llmport"
        self.dist = FakeDist(f"llmport-{name}")
        self.plugin = plugin
        self.error = error
        self.loads = 0

    def load(self) -> Any:
        self.loads += 1
        if self.error is not None:
            raise self.error
        return self.plugin


@pytest.fixture
def fake_entry_points(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Replace the installed entry points with the given fakes."""

    def install(*eps: FakeEntryPoint) -> None:
        def entry_points(group: str) -> list[FakeEntryPoint]:
            assert group == "llmport"
            return list(eps)

        monkeypatch.setattr(plugins_module, "entry_points", entry_points)
        monkeypatch.setattr(plugins_module, "_loaded", {})

    return install


def test_entry_point_plugins_are_discovered_and_used(
    drive: Driver, fake_entry_points: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LLMPORT_PLUGINS")
    alpha, beta = Script(["from alpha"], prefix="alpha"), Script(["from beta"], prefix="beta")
    fake_entry_points(FakeEntryPoint("alpha", alpha), FakeEntryPoint("beta", beta))
    rt = Runtime(model="alpha:m", config=Config())
    assert drive.exec(rt, "q") == "from alpha"
    assert drive.exec(rt, "q", model="beta:m") == "from beta"
    loads = rt.plugins.loads
    assert [(p.name, p.distribution, p.version, p.error) for p in loads] == [
        ("alpha", "llmport-alpha", "1.2.3", None),
        ("beta", "llmport-beta", "1.2.3", None),
    ]


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        ("alpha", ["alpha"]),
        ("beta, alpha", ["alpha", "beta"]),
        ("", []),
        ("nonexistent", []),
    ],
)
def test_llmport_plugins_limits_what_loads(
    fake_entry_points: Any, monkeypatch: pytest.MonkeyPatch, selection: str, expected: list[str]
) -> None:
    eps = [
        FakeEntryPoint("alpha", Script(prefix="alpha")),
        FakeEntryPoint("beta", Script(prefix="beta")),
    ]
    fake_entry_points(*eps)
    monkeypatch.setenv("LLMPORT_PLUGINS", selection)
    assert [p.name for p in discover()] == expected
    assert sorted(PluginHost().providers()) == expected
    # Entry points that were not selected are never imported.
    assert [ep.name for ep in eps if ep.loads] == expected


def test_unset_llmport_plugins_loads_all(
    fake_entry_points: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LLMPORT_PLUGINS")
    fake_entry_points(
        FakeEntryPoint("alpha", Script(prefix="alpha")),
        FakeEntryPoint("beta", Script(prefix="beta")),
    )
    assert [p.name for p in discover()] == ["alpha", "beta"]


def test_discovery_is_cached_per_selection(
    fake_entry_points: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ep = FakeEntryPoint("alpha", Script(prefix="alpha"))
    fake_entry_points(ep)
    monkeypatch.setenv("LLMPORT_PLUGINS", "alpha")
    first = discover()
    assert discover() is first and ep.loads == 1
    monkeypatch.setenv("LLMPORT_PLUGINS", "")
    assert discover() == ()
    monkeypatch.delenv("LLMPORT_PLUGINS")
    assert [p.name for p in discover()] == ["alpha"]


def test_a_broken_plugin_warns_once_and_the_rest_work(
    drive: Driver, fake_entry_points: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LLMPORT_PLUGINS")
    good = Script(["still working"], prefix="good")
    fake_entry_points(
        FakeEntryPoint("broken", error=ImportError("No module named 'vendor_sdk'")),
        FakeEntryPoint("good", good),
    )
    with pytest.warns(RuntimeWarning, match="'broken'.*failed to load.*vendor_sdk") as record:
        rt = Runtime(model="good:m", config=Config())
        rt.plugins  # noqa: B018  (discovery happens on first use)
    assert len([w for w in record if issubclass(w.category, RuntimeWarning)]) == 1

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second runtime must not warn again
        rt2 = Runtime(model="good:m", config=Config())
        assert drive.exec(rt2, "q") == "still working"
    broken = next(p for p in rt2.plugins.loads if p.name == "broken")
    assert broken.plugin is None
    assert (
        broken.error == "ImportError: No module named 'vendor_sdk'"
    )  # what `llmport plugins` shows


def test_a_plugin_raising_anything_on_import_is_contained(
    fake_entry_points: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LLMPORT_PLUGINS")
    fake_entry_points(FakeEntryPoint("bad", error=ZeroDivisionError("division by zero")))
    with pytest.warns(RuntimeWarning):
        loads = discover()
    assert loads[0].error == "ZeroDivisionError: division by zero"


def test_the_workspace_plugins_are_registered_entry_points() -> None:
    from importlib.metadata import entry_points

    names = {ep.name for ep in entry_points(group="llmport")}
    assert {"openai", "anthropic", "example_tools"} <= names


# --- hook families, per runtime ---------------------------------------------------------------


class ProviderPlugin:
    def __init__(self, script: Script) -> None:
        self.script = script

    @hookimpl
    def llmport_providers(self, register: Any) -> None:
        self.script.llmport_providers(register)


class ToolsetPlugin:
    @hookimpl
    def llmport_toolsets(self, register: Any) -> None:
        register("maths", Toolset("maths"))

    @hookimpl
    def llmport_tool_sources(self, register: Any) -> None:
        register("clock", lambda info: [])


def test_hooks_given_to_a_runtime_stay_with_it() -> None:
    script = Script(["ok"], prefix="private")
    rt = Runtime(
        model="private:m", hooks=[ProviderPlugin(script), ToolsetPlugin()], config=Config()
    )
    other = Runtime(model="private:m", config=Config())
    assert "private" in rt.plugins.providers()
    assert "maths" in rt.plugins.toolsets() and "clock" in rt.plugins.tool_sources()
    assert other.plugins.providers() == {}
    assert other.plugins.toolsets() == {}
    with pytest.raises(UnknownModelError):
        other.exec("q")


def test_provider_registration_carries_capabilities_and_plugin_name() -> None:
    from llmport import ModelCapabilities

    vision = ModelCapabilities(input_modalities=frozenset({"text", "image"}))

    class Plugin:
        @hookimpl
        def llmport_providers(self, register: Any) -> None:
            register(
                ProviderInfo(
                    prefix="acme",
                    factory=lambda **kw: None,  # type: ignore[arg-type,return-value]
                    aliases={"fast": "acme-mini"},
                    models={"acme-vision*": vision},
                )
            )

    info = PluginHost([Plugin()], load_entry_points=False).providers()["acme"]
    assert info.plugin  # filled in with the registering plugin's name
    assert info.capabilities_for("acme-vision-2") is vision
    assert info.capabilities_for("acme-mini") == ModelCapabilities()


def test_host_register_invalidates_registries() -> None:
    host = PluginHost(load_entry_points=False)
    assert host.providers() == {}
    host.register(Script(prefix="late"))
    assert list(host.providers()) == ["late"]


# --- import cost ----------------------------------------------------------------------------

HEAVY = [
    "openai",
    "anthropic",
    "google",
    "google.genai",
    "boto3",
    "botocore",
    "httpx",
    "httpx2",
    "aiohttp",
    "jsonschema",
    "rich",
    "sqlite3",
    "pydantic",
    "yaml",
    "vcr",
]


def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "LLMPORT_PLUGINS": "openai,anthropic,example_tools"},
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_llmport_imports_no_vendor_sdk_or_heavy_module() -> None:
    loaded = _modules_after("import llmport")
    assert "llmport" in loaded
    assert sorted(m for m in HEAVY if m in loaded) == []


def test_loading_every_plugin_imports_no_vendor_sdk() -> None:
    # Plugins import their SDK on first use, never when they are discovered.
    loaded = _modules_after(
        "import llmport.plugins.host as p\nassert all(l.error is None for l in p.discover())"
    )
    vendors = ["openai", "anthropic", "google.genai", "boto3", "botocore", "httpx", "httpx2"]
    assert sorted(m for m in vendors if m in loaded) == []


def test_import_llmport_defers_the_runtime_machinery() -> None:
    # asyncio, pluggy, importlib.metadata and tomllib load on first use, not on import.
    loaded = _modules_after("import llmport")
    assert (
        sorted(
            m
            for m in [
                "asyncio",
                "pluggy",
                "importlib.metadata",
                "tomllib",
                "concurrent.futures",
                "llmport.runtime",
            ]
            if m in loaded
        )
        == []
    )
    used = _modules_after("import llmport\nllmport.Runtime, llmport.hookimpl")
    assert {"llmport.runtime", "pluggy"} <= used


def test_importing_the_runtime_defers_the_engine() -> None:
    # The engine, pluggy and asyncio load on the first call, not with the Runtime class.
    engine = ["llmport.engine.plan", "llmport.engine.steps", "llmport.tools.tool"]
    loaded = _modules_after("from llmport import Runtime")
    assert sorted(m for m in ["asyncio", "pluggy", *engine] if m in loaded) == []
    call = "Runtime(call=lambda content, model, response_format: 'ok').exec('hi')"
    used = _modules_after(f"from llmport import Runtime\n{call}")
    assert {"llmport.engine.plan", "llmport.engine.steps", "pluggy"} <= used


def test_a_script_s_imports_load_no_event_loop_or_heavy_module() -> None:
    # What a CLI script imports first: asyncio (and ssl with it), the schema validator,
    # the console and the JSON parser load when a call needs them, not at start-up.
    heavy = ["asyncio", "ssl", "jsonschema", "rich", "jiter", "pluggy", "sqlite3"]
    loaded = _modules_after("from llmport import Runtime, tool, agentic_function")
    assert "llmport.tools.tool" in loaded
    assert sorted(m for m in heavy if m in loaded) == []
