"""The documentation site builds strictly, with its API reference generated from docstrings.

``mkdocs build --strict`` fails on a broken link, a page missing from the
nav or an object mkdocstrings cannot find; the built pages are then read to
check the reference really documents the public API and cites no internal
spec (docstrings reach users through these pages).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def nav_pages(items: list[object]) -> set[str]:
    found: set[str] = set()
    for item in items:
        for value in item.values() if isinstance(item, dict) else [item]:
            found |= nav_pages(value) if isinstance(value, list) else {str(value)}
    return found


def test_every_page_is_in_the_nav() -> None:
    nav = nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"])
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert pages == nav


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    mkdocs = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)]
    done = subprocess.run(mkdocs, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize(
    ("page", "objects"),
    [
        ("llmport", ["Runtime", "Session", "agentic_function", "tool", "Backoff", "RunResult"]),
        ("testing", ["Script", "reply", "call_tools", "fail", "respond"]),
        ("plugin_api", ["Provider", "ProviderInfo", "Response", "Usage", "StopEvent", "Prepared"]),
        ("errors", ["LlmportError", "ProviderError", "RateLimitError", "UnsupportedFeatureError"]),
        ("types", ["Request", "Response", "Message", "ToolCall", "Usage"]),
    ],
)
def test_the_api_reference_documents_the_public_api(
    site: Path, page: str, objects: list[str]
) -> None:
    html = (site / "api" / page / "index.html").read_text()
    module = {"llmport": "llmport", "types": "llmport.messages.types"}.get(page, f"llmport.{page}")
    documented = set(re.findall(rf'id="{re.escape(module)}\.(\w+)"', html))
    assert set(objects) <= documented
    assert not {name for name in documented if name.startswith("_")}


def test_the_built_site_cites_no_internal_spec(site: Path) -> None:
    cited = [
        str(page.relative_to(site))
        for page in site.rglob("*.html")
        if "SPEC" in page.read_text() or "§" in page.read_text()
    ]
    assert cited == []


def test_every_name_llmport_exports_is_in_the_api_reference(site: Path) -> None:
    import llmport

    html = (site / "api" / "llmport" / "index.html").read_text()
    documented = set(re.findall(r'id="llmport\.(\w+)"', html))
    assert sorted(set(llmport.__all__) - documented) == []


def test_every_public_member_of_the_runtime_is_in_the_api_reference(site: Path) -> None:
    from llmport import Runtime

    html = (site / "api" / "llmport" / "index.html").read_text()
    documented = set(re.findall(r'id="llmport\.Runtime\.(\w+)"', html))
    public = {name for name in dir(Runtime) if not name.startswith("_")}
    assert sorted(public - documented) == []


def test_async_twins_are_named_a_plus_the_blocking_name() -> None:
    # The rule the API reference states: the one exception is async_exec (exec's twin).
    import inspect

    from llmport import Runtime

    for name in dir(Runtime):
        member = getattr(Runtime, name)
        is_async = inspect.iscoroutinefunction(member) or inspect.isasyncgenfunction(member)
        if name.startswith("_") or not is_async or name == "async_exec":
            continue
        assert name.startswith("a") and callable(getattr(Runtime, name[1:], None)), name
