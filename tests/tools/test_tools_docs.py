"""The Python examples in the tools docs run as written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = [
    "tools.md",
    "structured-output.md",
    "decisions.md",
    "policies.md",
    "writing-a-tool-source.md",
    "writing-a-plugin.md",
    "errors.md",
    "conversations.md",
    "features/reasoning.md",
    "features/caching.md",
    "features/citations.md",
    "features/native-tools.md",
    "features/files-and-vendor-fields.md",
    "features/files.md",
    "features/streamed-output.md",
    "features/deferred-tools.md",
    "features/context-editing.md",
    "mcp.md",
    "agents.md",
]
SKIP_MARK = "# my_tools/__init__.py"  # a sketch of a package, not a runnable example


def examples() -> list[tuple[str, int, str]]:
    found = []
    for page in PAGES:
        text = (DOCS / page).read_text()
        for i, block in enumerate(re.findall(r"```python\n(.*?)```", text, re.S)):
            if not block.startswith(SKIP_MARK):
                found.append((page, i, block))
    return found


@pytest.mark.parametrize("page, index, code", examples(), ids=lambda v: str(v)[:30])
def test_doc_example_runs(
    page: str, index: int, code: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LLMPORT_PLUGINS", raising=False)
    module = types.ModuleType(f"llmport_doc_example_{index}")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses look their module up
    exec(compile(code, f"{page}[{index}]", "exec"), module.__dict__)


def test_every_page_has_examples() -> None:
    assert {page for page, _, _ in examples()} == set(PAGES)
