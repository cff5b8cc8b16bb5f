"""How many tokens a text is, by script: the one rule of every local token estimate.

:func:`text_quarters` counts a text in quarter tokens (exact, so sums are
added before rounding once with :func:`tokens_of`); why each script counts
as it does is told in :mod:`llmport.messages.estimate`, which builds the
request and block estimates on it. This module imports nothing of llmport but
:func:`llmport.patterns.pattern` (compiled on first use): the input checks
(:mod:`llmport.messages.check`) count with it too.
"""

from __future__ import annotations

from ..patterns import pattern

__all__ = ["CHARS_PER_TOKEN", "text_quarters", "tokens_of"]

#: Characters a token in scripts of letters with spaces (Latin, Cyrillic, Greek, code).
CHARS_PER_TOKEN = 4


#: Characters counted as one token each: CJK ideographs (the unified blocks, extensions
#: and compatibility forms), kana, hangul (syllables and jamo), CJK punctuation, and Thai.
_ONE_TOKEN_EACH = pattern(
    "[\u0e00-\u0e7f\u1100-\u11ff\u2e80-\u2fdf\u3000-\u30ff\u3130-\u318f\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff"
    "\uff00-\uffef\U00020000-\U0003134f]"
)
#: Characters counted as half a token each: Arabic (the base block, its supplement and
#: extended-A, and the presentation forms).
_HALF_TOKEN_EACH = pattern("[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff]")


def text_quarters(text: str) -> int:
    """The estimate of ``text`` in quarter tokens (exact sums; round up with :func:`tokens_of`).

    A character is one quarter, a CJK, kana, hangul or Thai character four, an
    Arabic one two (why: :mod:`llmport.messages.estimate`).
    """
    if text.isascii():
        return len(text)
    rest, dense = _ONE_TOKEN_EACH.subn("", text)  # counts, without a list of matches
    if not rest.isascii():
        rest, half = _HALF_TOKEN_EACH.subn("", rest)
        return 4 * dense + 2 * half + len(rest)
    return 4 * dense + len(rest)


def tokens_of(quarters: int) -> int:
    """Quarter tokens as whole tokens, rounded up: any text is at least one token, so a
    budget of 0 refuses "hi"."""
    return -(-quarters // CHARS_PER_TOKEN)
