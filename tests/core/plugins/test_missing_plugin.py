"""A first-party prefix whose plugin is not installed names the package to install.

With a core-only install (``LLMPORT_PLUGINS=""``: no entry-point plugin is
loaded), ``"openai:gpt-4o"`` is a typed :class:`UnknownModelError` raised
before any request, and its message says ``pip install llmport-openai``.
"""

from __future__ import annotations

from importlib.metadata import distribution

import pytest
from llmport import Runtime
from llmport.cli.main import main
from llmport.errors import UnknownModelError
from llmport.plugins import host as plugins_module
from llmport.plugins.host import PluginHost
from llmport.provider.routing import KNOWN_PLUGINS
from llmport.testing import Script
from llmport_openai.profiles import PROFILES
from support.core_helpers import Driver, scripted

PREFIXES = [
    ("openai", "llmport-openai", "gpt-4o-mini"),
    ("openai-responses", "llmport-openai", "gpt-4o"),
    ("anthropic", "llmport-anthropic", "claude-sonnet-4-6"),
    ("anthropic-vertex", "llmport-anthropic", "claude-sonnet-4-5@20250929"),
    ("gemini", "llmport-gemini", "gemini-2.5-flash"),
    ("gemini-vertex", "llmport-gemini", "gemini-2.5-flash"),
    ("bedrock", "llmport-bedrock", "us.amazon.nova-pro-v1:0"),
    ("cohere", "llmport-cohere", "embed-v4.0"),
    ("voyage", "llmport-voyage", "voyage-3.5"),
    # The OpenAI-compatible profiles the openai plugin registers.
    *((prefix, "llmport-openai", "some-model") for prefix in PROFILES),
]


def test_the_table_covers_exactly_the_first_party_prefixes() -> None:
    assert {prefix: package for prefix, package, _ in PREFIXES} == KNOWN_PLUGINS


@pytest.mark.parametrize(("prefix", "package", "model"), PREFIXES)
def test_core_only_install_names_the_package(
    drive: Driver, prefix: str, package: str, model: str
) -> None:
    rt = Runtime()  # LLMPORT_PLUGINS="" (conftest): no plugin at all
    assert rt.plugins.providers() == {}
    with pytest.raises(UnknownModelError) as err:
        drive.exec(rt, "hi", model=f"{prefix}:{model}")
    message = str(err.value)
    assert err.value.model == f"{prefix}:{model}"
    assert (
        f"no provider plugin for prefix {prefix!r} is installed: pip install {package}" in message
    )


@pytest.mark.parametrize(("prefix", "package", "model"), PREFIXES)
def test_no_request_is_sent(drive: Driver, prefix: str, package: str, model: str) -> None:
    # Another provider is installed and would answer: the missing prefix never reaches it.
    script = Script(["never sent"])
    rt = scripted(script)
    with pytest.raises(UnknownModelError, match=f"pip install {package}") as err:
        drive.exec(rt, "hi", model=f"{prefix}:{model}")
    assert script.requests == []
    assert "scripted:<model>" in err.value.available


def test_an_unknown_prefix_names_no_package(drive: Driver) -> None:
    with pytest.raises(UnknownModelError) as err:
        drive.exec(Runtime(), "hi", model="acme:large")
    assert "no provider plugin for prefix 'acme'" in str(err.value)
    assert "pip install" not in str(err.value)


def test_the_cli_prints_the_install_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "-m", "openai:gpt-4o", "--no-stream", "hi"])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert "Traceback" not in err
    assert err.startswith("error: UnknownModelError: ")
    assert "pip install llmport-openai" in err


@pytest.mark.parametrize("package", sorted(set(KNOWN_PLUGINS.values())))
def test_each_named_package_registers_its_prefixes(
    monkeypatch: pytest.MonkeyPatch, package: str
) -> None:
    # Load only that distribution's entry points, as if it alone were installed.
    names = [ep.name for ep in distribution(package).entry_points if ep.group == "llmport"]
    assert names, f"{package} declares no llmport entry point"
    monkeypatch.setenv("LLMPORT_PLUGINS", ",".join(names))
    monkeypatch.setattr(plugins_module, "_loaded", {})
    registered = set(PluginHost().providers())
    expected = {prefix for prefix, pkg in KNOWN_PLUGINS.items() if pkg == package}
    assert registered == expected
