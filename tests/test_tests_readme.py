"""tests/README.md, the map from behaviour to test, names only files and folders that exist."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def named_paths(text: str) -> list[str]:
    """Every `path.py` or `folder/` the map names (vendor placeholders like <vendor> left out)."""
    return [
        p for p in re.findall(r"`([\w./<>-]+(?:\.py|/))`", text) if "<" not in p and " " not in p
    ]


def test_every_path_the_map_names_exists() -> None:
    paths = named_paths((TESTS / "README.md").read_text())
    assert len(paths) > 50
    assert [p for p in paths if not (TESTS / p).exists()] == []


def test_the_map_lists_every_folder_of_tests() -> None:
    text = (TESTS / "README.md").read_text()
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert {f for f in folders if f"`{f}/`" not in text and f"`{f}/<" not in text} == set()
