"""Cheap local token estimates: 4 characters a token (a CJK character one), media by size.

Used where a count must cost nothing: a request's input-token budget
check (:func:`estimate_tokens`), the token-bounded reads of the session
DAG (:func:`text_tokens`, :func:`block_tokens`) and the embedding
splitter's limits (:func:`text_tokens`). Not a vendor count: an
estimate, and labelled as such wherever it is shown.

:func:`text_tokens` knows scripts: a Chinese, Japanese (kana) or Korean
(hangul) character is about one token in every vendor's tokenizer (often
more), not a quarter of one, so 4 characters a token would let CJK-dense
text past a vendor's token limit by up to 4x. ASCII text takes the fast path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..patterns import pattern

if TYPE_CHECKING:
    from .types import Block, Request

__all__ = ["CHARS_PER_TOKEN", "FILE_REF_TOKENS", "block_tokens", "estimate_tokens", "text_tokens"]

CHARS_PER_TOKEN = 4
#: What an image costs in the estimate, whatever its size.
IMAGE_TOKENS = 1000
#: What an uploaded file (a ``FileRef``) costs in the estimate, whatever its size: the
#: vendor reads it on its side, and its bytes (a compressed PDF, a spreadsheet) say
#: little of its tokens; a local estimate must not refuse a file the vendor reads.
FILE_REF_TOKENS = 1000


def _chars_tokens(chars: int) -> int:
    # Rounded up: any text is at least one token, so a budget of 0 refuses "hi".
    return -(-chars // CHARS_PER_TOKEN)


#: Characters counted as one token each: CJK ideographs (the unified blocks, extensions
#: and compatibility forms), kana, hangul (syllables and jamo) and CJK punctuation.
_ONE_TOKEN_EACH = pattern(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u30ff\u3130-\u318f\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff"
    "\uff00-\uffef\U00020000-\U0003134f]"
)


def text_tokens(text: str) -> int:
    """The estimate for a piece of text (at least 1 token unless it is empty).

    4 characters a token, but each CJK, kana or hangul character one token.
    """
    if text.isascii():
        return _chars_tokens(len(text))
    rest, dense = _ONE_TOKEN_EACH.subn("", text)  # a count, without a list of matches
    return dense + _chars_tokens(len(rest))


def _media_tokens(kind: str, size: int) -> int:
    return IMAGE_TOKENS if kind == "image" else max(1, size // CHARS_PER_TOKEN)


def block_tokens(block: Block) -> int:
    """The estimate for one content block (text by length, media by size)."""
    from .types import FileRef, MediaBlock, TextBlock, ThinkingBlock

    if isinstance(block, TextBlock):
        return text_tokens(block.text)
    if isinstance(block, MediaBlock):
        return _media_tokens(block.type, block.size)
    if isinstance(block, FileRef):
        return FILE_REF_TOKENS
    if isinstance(block, ThinkingBlock):
        return _chars_tokens(len(block.text) + len(block.redacted or ""))
    return _chars_tokens(len(str(block.raw or block)))  # a server-side tool block


def estimate_tokens(request: Request) -> int:
    """A cheap estimate of input tokens (4 characters a token; media by size)."""
    from .types import FileRef, MediaBlock, TextBlock, ThinkingBlock

    chars = len(request.system or "")
    media = 0
    for message in request.messages:
        for block in message.blocks:
            if isinstance(block, TextBlock):
                chars += len(block.text)
            elif isinstance(block, MediaBlock):
                media += _media_tokens(block.type, block.size)
            elif isinstance(block, FileRef):
                media += FILE_REF_TOKENS
            elif isinstance(block, ThinkingBlock):
                chars += len(block.text) + len(block.redacted or "")
            else:
                chars += len(str(block.raw or block))  # a server-side tool block
        for result in message.tool_results:
            chars += len(result.content)
        for call in message.tool_calls:
            chars += len(call.raw_arguments)
    for spec in request.tools:
        chars += len(spec.description) + len(str(spec.parameters))
    return _chars_tokens(chars) + media
