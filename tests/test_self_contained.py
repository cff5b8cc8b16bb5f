"""The code and the docs say their rules themselves, never by a section number.

The product specification is not part of the repository, so a "SPEC §20"
in a docstring, a comment or a docs page points a reader (and the published
API reference) at nothing. Each place states the rule in a few words instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Where a reader of the code or the published docs would meet a reference.
SEARCHED = [
    ROOT / "core",
    ROOT / "plugins",
    ROOT / "docs",
    ROOT / "benchmarks",
    ROOT / "README.md",
    ROOT / "noxfile.py",
    ROOT / "tests",
    ROOT / "examples",
]
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".txt", ".cfg"}
REFERENCE = "SPEC §"


def text_files(roots: Iterable[Path]) -> Iterable[Path]:
    for root in roots:
        candidates = [root] if root.is_file() else sorted(root.rglob("*"))
        for path in candidates:
            if (
                path.is_file()
                and path.suffix in TEXT_SUFFIXES
                and "cache" not in str(path)
                and path != Path(__file__).resolve()  # this file names what it looks for
            ):
                yield path


def spec_references(roots: Iterable[Path]) -> list[str]:
    """``file:line`` of every line that cites the specification by section."""
    return [
        f"{path}:{number}"
        for path in text_files(roots)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if REFERENCE in line
    ]


def test_no_spec_section_is_cited_in_code_tests_or_docs() -> None:
    assert spec_references(SEARCHED) == []


def test_a_planted_spec_reference_is_found(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text('"""Checked here (SPEC §20 I2)."""\n')
    (tmp_path / "pkg" / "b.py").write_text('"""Checked here, before any request."""\n')
    (tmp_path / "page.md").write_text("# Title\n\nAs SPEC §21 says.\n")
    assert spec_references([tmp_path / "pkg", tmp_path / "page.md"]) == [
        f"{tmp_path / 'pkg' / 'a.py'}:1",
        f"{tmp_path / 'page.md'}:3",
    ]
