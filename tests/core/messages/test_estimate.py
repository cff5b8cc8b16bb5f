"""The local token estimate: 4 characters a token, each CJK, kana or hangul character one."""

from __future__ import annotations

import pytest
from llmport.messages.estimate import block_tokens, text_tokens
from llmport.messages.types import TextBlock


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("hi", 1),
        ("a" * 400, 100),
        ("Ünïcödé façade", 4),  # Latin with accents: still 4 characters a token
        ("漢" * 400, 400),  # Chinese: one token a character
        ("ひらがなとカタカナ", 9),  # kana
        ("한국어 텍스트", 7),  # 6 hangul syllables and a space
        ("中文abc", 3),  # 2 ideographs, then "abc" rounded up to one token
        ("東京、大阪。", 6),  # CJK punctuation counts as the characters around it
        ("𠀀𠀁", 2),  # an ideograph outside the basic plane
    ],
)
def test_text_tokens_counts_dense_scripts_one_token_a_character(text: str, tokens: int) -> None:
    assert text_tokens(text) == tokens


def test_a_text_block_is_estimated_as_its_text() -> None:
    assert block_tokens(TextBlock("日本語" * 10)) == text_tokens("日本語" * 10) == 30
