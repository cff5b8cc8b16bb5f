"""``llmport.patterns.pattern``: an ``re.Pattern`` compiled on first use, used as one."""

from __future__ import annotations

import re

import pytest
from llmport.patterns import pattern


def test_nothing_is_compiled_until_first_use() -> None:
    re.purge()
    word = pattern(r"(?i)\bq[a-z]+x\b")
    assert re._cache == {}  # type: ignore[attr-defined]  # the compiled-pattern cache
    assert word.search("the QUUX here") is not None
    assert len(re._cache) == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("source", "flags", "text"),
    [
        (r"(\d+(?:\.\d+)?)(ms|h|m|s)", 0, "1.5s then 20ms"),
        (r"(?i)(auth|key)", 0, "X-Api-KEY, Authorization"),
        (r"^[a-z]+$", re.MULTILINE, "one\ntwo\n3"),
        ("[\u3400-\u4dbf\u4e00-\u9fff]", 0, "abc 漢字 def"),
    ],
)
def test_it_answers_as_the_compiled_pattern(source: str, flags: int, text: str) -> None:
    lazy, compiled = pattern(source, flags), re.compile(source, flags)
    assert lazy.findall(text) == compiled.findall(text)
    assert lazy.sub("*", text) == compiled.sub("*", text)
    assert lazy.subn("", text) == compiled.subn("", text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    facts = (lazy.pattern, lazy.flags, lazy.groups)
    assert facts == (compiled.pattern, compiled.flags, compiled.groups)
    assert repr(lazy) == repr(compiled)


def test_bytes_patterns_too() -> None:
    lazy = pattern(rb"[eE]\+?0*[1-9][0-9]{2}")
    assert lazy.search(b"1e308") is not None
    assert lazy.search(b"1e30") is None


def test_a_bad_pattern_fails_on_first_use_with_re_error() -> None:
    broken = pattern("(unclosed")
    with pytest.raises(re.error):
        broken.match("x")


def test_a_missing_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        pattern("x").no_such_method  # type: ignore[attr-defined]  # noqa: B018
