"""The Python examples of docs/production.md run as written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "production.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType(f"llmport_production_example_{index}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(BLOCKS[index], f"production.md[{index}]", "exec"), module.__dict__)


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 5
