"""docs/capabilities.md says what the installed plugins really declare."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_capability_page_matches_the_plugins(monkeypatch) -> None:
    monkeypatch.delenv("LLMPORT_PLUGINS", raising=False)
    spec = importlib.util.spec_from_file_location(
        "gen_capabilities", ROOT / "docs/gen_capabilities.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = module.render()
    page = (ROOT / "docs/capabilities.md").read_text()
    assert page == expected, "run: uv run python docs/gen_capabilities.py > docs/capabilities.md"
    for prefix in ("openai", "anthropic"):
        assert f"## `{prefix}:`" in page


def test_media_page_table_matches_the_plugins(monkeypatch) -> None:
    monkeypatch.delenv("LLMPORT_PLUGINS", raising=False)
    spec = importlib.util.spec_from_file_location(
        "gen_capabilities", ROOT / "docs/gen_capabilities.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = (ROOT / "docs/media.md").read_text()
    table = page.split("<!-- media-table:start -->\n", 1)[1].split("<!-- media-table:end -->")[0]
    assert table == module.media_table(), "regenerate the table with gen_capabilities.media_table()"
    assert "images (`output_modalities=`)" in table  # Gemini's image models
    assert 'images (`NativeTool("image_generation")`)' in table  # OpenAI Responses
