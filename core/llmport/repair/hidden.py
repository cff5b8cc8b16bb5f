"""Characters that show one thing on a terminal and mean another to Python.

A carriage return inside a line is a line break to Python but moves a
terminal's cursor back over what was printed (``'open(MARK, "w").close()\\r
pass'`` shows only ``pass``); ANSI escapes recolour or erase text; bidi
controls reorder it; zero-width and other invisible characters hide in
identifiers and strings; form feed, vertical tab, NUL and the Unicode line
separators break lines where a reader sees none.

:func:`first_hidden` finds one in a proposed source (the proposal is then
refused: an approver cannot judge code they cannot see), and :func:`shown`
escapes them all in what an approver reads (``\\r``, ``\\x1b``,
``\\u202e``), so the diff shows every character it holds.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["first_hidden", "shown"]

#: Every character but newline and tab that a terminal does not show as itself: C0 and
#: C1 controls, DEL, bidi controls and marks, zero-width and invisible formatting
#: characters, the Unicode line and paragraph separators, the BOM.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)


def first_hidden(text: str) -> str | None:
    """A description of the first hidden character of ``text`` (None: there is none)."""
    found = _HIDDEN.search(text)
    if found is None:
        return None
    char = found.group()
    line = text.count("\n", 0, found.start()) + 1
    name = unicodedata.name(char, "control character")
    return f"U+{ord(char):04X} ({name}) on line {line}"


def shown(text: str) -> str:
    """``text`` with every hidden character written as its escape (``\\r``, ``\\u202e``)."""
    return _HIDDEN.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    if code <= 0xFF:  # as Python source spells it: \r, \x0c, \x1b
        return repr(found.group())[1:-1]
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
