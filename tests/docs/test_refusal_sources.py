"""Every ``# Source:`` comment in the core and the plugins has its row in the refusals table.

The table is ``REFUSALS`` in ``docs/gen_capabilities.py`` (printed as the "Refusals"
section of docs/capabilities.md). A comment and a row cite documents the same way:

    # Source: CITATION[; CITATION]...[: why | (note)]

where a CITATION is ``DOCUMENT[, "SECTION"]...`` (``Anthropic, "Building with extended
thinking", "Feature compatibility"``); notes in parentheses and the text after the
first colon are not part of it. A comment's citation matches a row's when they are the
same, or when the comment names a section inside the page the row cites.

Both ways are checked: each comment's citations all belong to one row, and each row that
rests on a vendor document has each of its citations named where a rule enforces it.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = re.compile(r"^\s*# Source: (.*)$")
CONTINUATION = re.compile(r"^\s*#\s+(\S.*)$")
OWN_RULE = "not a vendor rule"


@dataclass(frozen=True)
class Comment:
    where: str
    text: str


def refusals() -> list[tuple[str, str, str]]:
    spec = importlib.util.spec_from_file_location(
        "gen_capabilities", ROOT / "docs/gen_capabilities.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table: list[tuple[str, str, str]] = module.REFUSALS
    return table


def source_files() -> list[Path]:
    core = sorted((ROOT / "core/llmport").rglob("*.py"))
    plugins = sorted(p for p in (ROOT / "plugins").glob("*/llmport_*/**/*.py"))
    return core + plugins


def comments() -> list[Comment]:
    """Each ``# Source:`` comment with its continuation lines, and where it is."""
    found: list[Comment] = []
    for path in source_files():
        lines = path.read_text().splitlines()
        for index, line in enumerate(lines):
            match = SOURCE.match(line)
            if not match:
                continue
            text = match.group(1)
            for following in lines[index + 1 :]:
                more = CONTINUATION.match(following)
                if not more or SOURCE.match(following):
                    break
                text += " " + more.group(1)
            found.append(Comment(f"{path.relative_to(ROOT)}:{index + 1}", text))
    return found


def citations(text: str) -> list[str]:
    """The citations a source text names: up to its first colon, notes in parentheses left out.

    Quotes and parentheses are read as such, so a section name or a note may hold a colon.
    """
    parts: list[str] = []
    current: list[str] = []
    quoted, depth = False, 0
    for char in text:
        if char == '"' and depth == 0:
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
            continue
        elif not quoted and char == ")" and depth:
            depth -= 1
            continue
        if depth:
            continue
        if not quoted and char == ":":
            break
        if not quoted and char == ";":
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [" ".join(part.split()).rstrip(".").strip() for part in parts if part.strip()]


def cites(comment: str, row: str) -> bool:
    """The comment's citation is the row's, or a section inside the page the row cites."""
    return comment == row or comment.startswith(row + ', "')


def vendor_rows() -> list[tuple[str, list[str]]]:
    return [
        (rule, citations(source))
        for rule, _, source in refusals()
        if not source.startswith(OWN_RULE)
    ]


def test_the_parser_reads_a_citation_as_the_table_writes_it() -> None:
    text = 'Anthropic, "Effort" (levels): "xhigh" only; Bedrock, "Prompt caching"'
    assert citations(text) == ['Anthropic, "Effort"']
    two = 'Anthropic, "Prompt caching"; Bedrock Converse API reference, "CachePointBlock" (ttl)'
    assert citations(two) == [
        'Anthropic, "Prompt caching"',
        'Bedrock Converse API reference, "CachePointBlock"',
    ]
    assert citations('Gemini API, "A: b", "C"') == ['Gemini API, "A: b", "C"']
    assert cites('Gemini API, "Gemini thinking", "Set budgets"', 'Gemini API, "Gemini thinking"')
    assert not cites('Gemini API, "Gemini thinking levels"', 'Gemini API, "Gemini thinking"')


def test_comments_are_found_in_the_core_and_in_the_plugins() -> None:
    places = {c.where.split("/")[0] for c in comments()}
    assert places == {"core", "plugins"}


@pytest.mark.parametrize("comment", comments(), ids=lambda c: c.where)
def test_each_source_comment_has_its_row(comment: Comment) -> None:
    named = citations(comment.text)
    assert named, f"{comment.where}: no citation in {comment.text!r}"
    rows = [
        rule for rule, cited in vendor_rows() if all(any(cites(c, r) for r in cited) for c in named)
    ]
    assert rows, (
        f"{comment.where}: {named} is not the source of any row of REFUSALS "
        "(docs/gen_capabilities.py); cite a row's document as the row does, or add the row"
    )


def test_each_row_names_its_source_and_each_source_is_cited_in_code() -> None:
    named = [c for comment in comments() for c in citations(comment.text)]
    for rule, source in ((r, s) for r, _, s in refusals()):
        assert citations(source), f"row {rule!r} names no source"
    missing = [
        (rule, row)
        for rule, cited in vendor_rows()
        for row in cited
        if not any(cites(c, row) for c in named)
    ]
    assert not missing, f"cited by no '# Source:' comment where the rule is enforced: {missing}"
