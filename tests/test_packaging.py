"""What a user gets from PyPI: license, metadata, READMEs, typing markers, version bounds.

The core and every plugin ship the Apache-2.0 ``LICENSE`` their metadata
names, a README as their PyPI page (absolute links only, since PyPI has no
repository to resolve relative ones), ``py.typed``, and plugins depend on a
compatible ``llmport`` range. Two wheels are built offline with uv's own
build backend and opened to check that the files are really inside.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = sorted(p.parent for p in ROOT.glob("plugins/*/pyproject.toml"))
PROJECTS = [ROOT, *PLUGINS]
REPO = "https://github.com/llmport/llmport"
QUICKSTART = [
    "pip install uv && uv run llmport demo",
    "pip install uv && uv run pytest",
]
#: A markdown link or image target: ``[text](target)``.
LINK = re.compile(r"\]\(([^)\s]+)\)")


def pyproject(project: Path) -> dict[str, Any]:
    return tomllib.loads((project / "pyproject.toml").read_text())


def package_dir(project: Path) -> Path:
    backend = pyproject(project)["tool"]["uv"]["build-backend"]
    return project / backend.get("module-root", "src") / backend["module-name"]


def ids(projects: list[Path]) -> list[str]:
    return [p.name if p != ROOT else "core" for p in projects]


def test_the_plugins_are_all_found() -> None:
    names = {p.name for p in PLUGINS}
    assert names >= {"openai", "anthropic", "gemini", "bedrock", "example-tools"}


# --- license -----------------------------------------------------------------------


def test_license_is_the_apache_2_text() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    for marker in [
        "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION",
        "9. Accepting Warranty or Additional Liability.",
        "END OF TERMS AND CONDITIONS",
        "http://www.apache.org/licenses/LICENSE-2.0",
    ]:
        assert marker in text


@pytest.mark.parametrize("project", PROJECTS, ids=ids(PROJECTS))
def test_every_distribution_ships_the_license(project: Path) -> None:
    meta = pyproject(project)["project"]
    assert meta["license"] == "Apache-2.0"
    assert meta["license-files"] == ["LICENSE"]
    # PEP 639 paths cannot leave the project directory: each plugin has a copy.
    assert (project / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()


# --- PyPI pages --------------------------------------------------------------------


@pytest.mark.parametrize("project", PROJECTS, ids=ids(PROJECTS))
def test_every_readme_is_a_pypi_page_with_absolute_links(project: Path) -> None:
    meta = pyproject(project)["project"]
    assert meta["readme"] == "README.md"
    text = (project / "README.md").read_text()
    assert text.startswith(f"# {meta['name']}\n")
    for target in LINK.findall(text):
        assert target.startswith("https://"), f"{project.name}/README.md: relative link {target}"
        if target.startswith(f"{REPO}/blob/main/") or target.startswith(f"{REPO}/tree/main/"):
            path = target.split("/main/", 1)[1].split("#")[0]
            assert (ROOT / path).exists(), f"{project.name}/README.md links to a missing {path}"


@pytest.mark.parametrize("project", PLUGINS, ids=ids(PLUGINS))
def test_every_plugin_readme_says_how_to_install_and_links_its_docs(project: Path) -> None:
    name = pyproject(project)["project"]["name"]
    text = (project / "README.md").read_text()
    assert re.search(rf"^pip install llmport .*\b{name}\b", text, re.MULTILINE)
    assert f"{REPO}/blob/main/docs/" in text
    assert "from llmport import Runtime" in text


@pytest.mark.parametrize(
    ("plugin", "prefixes"),
    [
        ("openai", ["openai", "openai-responses"]),
        ("anthropic", ["anthropic"]),
        ("gemini", ["gemini"]),
        ("bedrock", ["bedrock"]),
    ],
)
def test_vendor_readmes_name_their_prefixes_aliases_and_page(
    plugin: str, prefixes: list[str]
) -> None:
    text = (ROOT / "plugins" / plugin / "README.md").read_text()
    assert f"{REPO}/blob/main/docs/providers/{plugin}.md" in text
    for prefix in prefixes:
        assert f"`{prefix}:" in text
    models = __import__(f"llmport_{plugin}.models", fromlist=["ALIASES"])
    flat = " ".join(text.split())
    for alias, target in models.ALIASES.items():
        assert f"`{alias}` → `{target}`" in flat, alias
    # the usage snippet's model is one the plugin knows by name (an alias target)
    snippet = re.search(r'Runtime\(model="([^"]+)"', text)
    assert snippet is not None and snippet.group(1) in models.ALIASES.values()


def test_the_core_readme_keeps_the_quickstart_and_cites_no_spec() -> None:
    text = (ROOT / "README.md").read_text()
    for command in QUICKSTART:
        assert command in text
    assert "SPEC" not in text and "§" not in text


def published_texts() -> list[Path]:
    """What users read: the docs site's sources, every README (PyPI pages), the changelog."""
    docs = [p for p in sorted((ROOT / "docs").rglob("*")) if p.is_file()]
    readmes = [project / "README.md" for project in PROJECTS]
    return [*docs, *readmes, ROOT / "CHANGELOG.md", ROOT / "mkdocs.yml"]


def test_the_published_texts_include_every_page_and_readme() -> None:
    texts = set(published_texts())
    assert ROOT / "docs" / "api" / "index.md" in texts
    assert ROOT / "plugins" / "otel" / "README.md" in texts
    assert len([p for p in texts if p.name == "README.md"]) == len(PROJECTS)


@pytest.mark.parametrize("path", published_texts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_docs_and_readmes_cite_no_internal_spec(path: Path) -> None:
    # Users have no SPEC file: a page or README must not send them to one.
    text = path.read_text()
    assert "SPEC" not in text and "§" not in text


def test_the_core_readme_uses_the_registered_model_names() -> None:
    from llmport_anthropic.models import ALIASES as ANTHROPIC
    from llmport_openai.models import ALIASES as OPENAI

    text = (ROOT / "README.md").read_text()
    quoted = set(re.findall(r'"((?:openai|anthropic):[^"]+)"', text))
    assert quoted, "the README names no model"
    assert quoted <= set(ANTHROPIC.values()) | set(OPENAI.values())
    for alias in re.findall(r'model="([a-z0-9.-]+)"', text):
        assert alias in ANTHROPIC or alias in OPENAI, alias


def install_table_prefixes(readme: str) -> dict[str, set[str]]:
    """Package -> the prefixes the README's install table lists for it (rows may repeat one)."""
    table = readme.split("| package | prefixes | aliases |", 1)[1].split("\n\n", 1)[0]
    found: dict[str, set[str]] = {}
    for row in table.splitlines()[2:]:
        cells = row.split(" | ")
        package = re.search(r"`(llmport-[a-z-]+)`", cells[0])
        assert package is not None, row
        prefixes = set(re.findall(r"`([a-z0-9-]+):`", cells[1]))
        found.setdefault(package.group(1), set()).update(prefixes)
    return found


def registered_prefixes() -> dict[str, set[str]]:
    """Package -> the provider prefixes its installed plugin registers, read from the hooks."""
    from llmport.plugins.host import PluginHost

    found: dict[str, set[str]] = {}
    for prefix, info in PluginHost().providers().items():
        package = info.factory.__module__.split(".")[0].replace("_", "-")
        found.setdefault(package, set()).add(prefix)
    return found


def test_the_install_table_shows_every_built_in_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLMPORT_PLUGINS", raising=False)  # every installed plugin
    registered = registered_prefixes()
    assert len(registered["llmport-openai"]) == 15  # openai, openai-responses, 13 profiles
    assert install_table_prefixes((ROOT / "README.md").read_text()) == registered


def test_the_install_table_check_sees_a_missing_prefix() -> None:
    readme = (ROOT / "README.md").read_text().replace("`gemini-vertex:`", "Vertex AI", 1)
    assert "gemini-vertex" not in install_table_prefixes(readme)["llmport-gemini"]


def test_the_changelog_has_the_released_version_and_unreleased() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    version = pyproject(ROOT)["project"]["version"]
    assert "## [Unreleased]" in text
    assert f"## [{version}] - " in text


# --- dependencies and typing ------------------------------------------------------------


@pytest.mark.parametrize("project", PLUGINS, ids=ids(PLUGINS))
def test_plugins_depend_on_a_compatible_core(project: Path) -> None:
    core = Version(pyproject(ROOT)["project"]["version"])
    reqs = [Requirement(r) for r in pyproject(project)["project"]["dependencies"]]
    (req,) = [r for r in reqs if r.name == "llmport"]
    assert req.specifier.contains(core)
    assert not req.specifier.contains(Version(f"{core.major}.{core.minor + 1}.0"))
    assert not req.specifier.contains(Version(f"{core.major}.{core.minor}.0a1"), prereleases=True)


@pytest.mark.parametrize("project", PROJECTS, ids=ids(PROJECTS))
def test_every_package_is_marked_typed(project: Path) -> None:
    assert (package_dir(project) / "py.typed").is_file()


# --- built wheels ---------------------------------------------------------------


def uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")
    assert found, "uv is needed to build the wheels (the test suite runs under `uv run`)"
    return found


@pytest.mark.parametrize(
    ("package", "core_range"),
    [
        ("llmport", None),
        ("llmport-example-tools", ">=0.1,<0.2"),
        ("llmport-mcp", ">=0.1,<0.2"),
    ],
)
def test_built_wheels_contain_license_and_py_typed(
    tmp_path: Path, package: str, core_range: str | None
) -> None:
    subprocess.run(
        [uv(), "build", "--offline", "--quiet", "--wheel", "--package", package, "-o", tmp_path],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("*.whl")
    module = package.replace("-", "_")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        dist_info = f"{module}-{wheel.name.split('-')[1]}.dist-info"
        assert f"{dist_info}/licenses/LICENSE" in names
        assert zf.read(f"{dist_info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        assert f"{module}/py.typed" in names
        metadata = Parser().parsestr(zf.read(f"{dist_info}/METADATA").decode())
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["License-File"] == "LICENSE"
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload().startswith(f"# {package}\n")
    requires = [Requirement(r) for r in metadata.get_all("Requires-Dist") or []]
    on_core = [str(r.specifier) for r in requires if r.name == "llmport"]
    assert on_core == ([str(Requirement(f"llmport{core_range}").specifier)] if core_range else [])


# --- `llmport demo` from installed wheels -------------------------------------------------


def fresh_venv(root: Path, name: str, wheels: list[Path], extras: list[str]) -> Path:
    """A new virtualenv holding ``wheels`` and, from uv.lock, their third-party dependencies.

    Offline: the dependencies come from the uv cache that ``uv sync`` filled, pinned by
    the lockfile (``--no-install-workspace`` leaves the workspace's own packages out,
    so llmport and its plugins are only the built wheels); ``uv pip check`` then
    proves the wheels' declared requirements are met by what was installed.
    """
    venv = root / name
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    def run(*args: str | Path, **extra_env: str) -> None:
        subprocess.run(args, cwd=ROOT, check=True, capture_output=True, env={**env, **extra_env})

    run(uv(), "venv", "--quiet", "--python", sys.executable, venv)
    extra = [f"--extra={name}" for name in extras]
    sync = ["sync", "--frozen", "--offline", "--no-dev", "--no-install-workspace", *extra]
    run(uv(), *sync, UV_PROJECT_ENVIRONMENT=str(venv))
    python = venv / "bin" / "python"
    run(uv(), "pip", "install", "--offline", "--no-deps", "--python", python, *wheels)
    run(uv(), "pip", "check", "--python", python)
    return venv


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two venvs outside the repo: the core wheel alone, and ``llmport[demo]`` from wheels."""
    root = tmp_path_factory.mktemp("installed")
    for package in ("llmport", "llmport-openai", "llmport-anthropic"):
        build = [uv(), "build", "--offline", "--quiet", "--wheel", "--package", package]
        subprocess.run([*build, "-o", root / "wheels"], cwd=ROOT, check=True, capture_output=True)
    wheels = sorted((root / "wheels").glob("*.whl"))
    (core,) = [w for w in wheels if w.name.startswith("llmport-")]
    return {
        "core": fresh_venv(root, "core-only", [core], []),
        "demo": fresh_venv(root, "with-demo-extra", wheels, ["demo"]),
    }


def run_installed(venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # Run from an empty folder with a clean environment: nothing of the checkout can leak in.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLMPORT_", "VIRTUAL_ENV"))}
    env.pop("PYTHONPATH", None)
    env["COLUMNS"] = "80"
    return subprocess.run(
        [venv / "bin" / "llmport", *args],
        cwd=venv.parent,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )


def test_the_core_wheel_ships_the_demo_cassette(installed: dict[str, Path]) -> None:
    check = "import llmport.cli.demo as d; print(d.DEMO_CASSETTE); print(d.DEMO_CASSETTE.is_file())"
    out = subprocess.run(
        [installed["core"] / "bin" / "python", "-c", check],
        cwd=installed["core"].parent, capture_output=True, text=True, check=True,
    ).stdout.split()
    assert out[1] == "True"
    assert Path(out[0]).is_relative_to(installed["core"]) and "site-packages" in out[0]


def test_installed_demo_extra_replays_the_cassette_through_the_real_plugins(
    installed: dict[str, Path],
) -> None:
    report = json.loads(run_installed(installed["demo"], "demo", "--json").stdout.splitlines()[-1])
    assert report["mode"] == "cassettes" and report["missing"] == []
    assert report["result"]["summary"] == {
        "warmest_city": "Paris",
        "coldest_city": "Oslo",
        "needs_coat": True,
    }
    assert report["result"]["packed"].startswith("coat packed")
    # the cassette's own answers (the scripted fallback words them differently)
    assert report["result"]["scene"] == "A small, plain green square."
    assert max(c["attempts"] for c in report["calls"]) == 2  # the recorded 529, retried
    assert report["usage"]["requests"] == 8 and report["usage"]["input_tokens"] > 0
    assert report["result"]["booked"].startswith("Booked a warm room")  # the handoff
    # (one run only: importing the vendor SDKs in a new venv takes seconds)


def test_core_only_demo_names_exactly_what_to_install(installed: dict[str, Path]) -> None:
    text = run_installed(installed["core"], "demo").stdout
    hint = [line for line in text.splitlines() if "pip install" in line]
    assert hint == [
        "vendor answers: scripted (scripted providers; to replay the cassette: "
        "pip install llmport-openai llmport-anthropic vcrpy)"
    ]
    assert "dev tools" not in text
    report = json.loads(run_installed(installed["core"], "demo", "--json").stdout.splitlines()[-1])
    assert report["mode"] == "scripted"
    assert report["missing"] == ["llmport-openai", "llmport-anthropic", "vcrpy"]
    assert report["result"]["summary"]["coldest_city"] == "Oslo"
