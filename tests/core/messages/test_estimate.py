"""The local token estimate: 4 characters a token, each CJK, kana, hangul or Thai character one,
an Arabic one half; the chat request estimate and the window check use the same rule."""

from __future__ import annotations

import pytest
from llmport.errors import ContextWindowExceeded
from llmport.messages.check import check_input_size
from llmport.messages.estimate import block_tokens, estimate_tokens, text_tokens
from llmport.messages.types import Message, Request, TextBlock, ToolSpec


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
        ("ภาษาไทย" * 10, 70),  # Thai: one token a character
        ("العربية" * 8, 28),  # Arabic: 56 characters, two a token
        ("مرحبا hello", 4),  # 5 Arabic characters (2.5 tokens) and " hello" (1.5)
    ],
)
def test_text_tokens_counts_dense_scripts_one_token_a_character(text: str, tokens: int) -> None:
    assert text_tokens(text) == tokens


def test_a_text_block_is_estimated_as_its_text() -> None:
    assert block_tokens(TextBlock("日本語" * 10)) == text_tokens("日本語" * 10) == 30


DENSE = ["漢字" * 500, "ภาษาไทย" * 150, "العربية" * 200]  # ~1,000, 1,050 and 700 tokens


@pytest.mark.parametrize("text", DENSE)
def test_a_chat_request_is_estimated_by_the_same_rule_as_its_texts(text: str) -> None:
    request = Request(
        model="m",
        messages=[Message("user", [TextBlock(text)]), Message("assistant", [TextBlock("ok")])],
        system="Be brief.",
    )
    assert estimate_tokens(request) == text_tokens(text + "ok" + "Be brief.")
    assert estimate_tokens(request) > len(text) // 2  # 4 characters a token said a quarter


def test_a_tool_description_in_a_dense_script_counts_as_such() -> None:
    spec = ToolSpec("lookup", "ค้นหาข้อมูลลูกค้า" * 20, {"type": "object"})
    bare = Request(model="m", messages=[Message("user", [TextBlock("hi")])])
    with_tool = Request(model="m", messages=bare.messages, tools=[spec])
    assert estimate_tokens(with_tool) - estimate_tokens(bare) >= text_tokens(spec.description)


@pytest.mark.parametrize("text", DENSE)
def test_the_window_check_counts_dense_scripts(text: str) -> None:
    turn = Message("user", [TextBlock(text)])
    window = text_tokens(text) - 1  # 4 characters a token would fit it 2-4 times over
    with pytest.raises(ContextWindowExceeded):
        check_input_size([], turn, window, "m")
    check_input_size([], turn, text_tokens(text), "m")


def test_ascii_text_is_still_4_characters_a_token_summed_before_rounding() -> None:
    request = Request(model="m", messages=[Message("user", [TextBlock("ab"), TextBlock("cd")])])
    assert estimate_tokens(request) == 1  # "abcd", not 1 + 1
