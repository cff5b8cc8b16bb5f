"""Cheap local token estimates, aware of scripts; media by size.

Used where a count must cost nothing: a request's input-token budget and
window checks (:func:`estimate_tokens`, and the input check of
:func:`llmport.messages.check.check_input_size`), the token-bounded reads of
the session DAG (:func:`text_tokens`, :func:`block_tokens`) and the embedding
splitter's limits (:func:`text_tokens`). Not a vendor count: an estimate, and
labelled as such wherever it is shown. Every text is counted by one rule,
:func:`~llmport.messages.scripts.text_quarters` (its own module, so the input
checks of :mod:`llmport.messages.check` count as this module does):

* 4 characters a token (Latin, Cyrillic, Greek, code...); ASCII takes the fast path;
* one token each for a Chinese, Japanese (kana) or Korean (hangul) character, and for a
  Thai one: byte-level BPE vocabularies hold few merges for these 3-byte UTF-8 scripts
  (Thai is written without spaces between words), so each character is about one token
  in every vendor's tokenizer (often more), not a quarter of one: 4 characters a token
  would let such text past a vendor's token limit by up to 4x;
* 2 characters a token for Arabic: a published 300-document benchmark measures 1.4
  Arabic characters a token in GPT-4's ``cl100k_base``, 3.1 in GPT-4o's ``o200k_base``
  and about 2.8 in Gemma's vocabulary, against 3-3.4 for English.

Sums of texts are added in quarter tokens and rounded up once, so splitting a text
in two never changes a request's estimate by more than a token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .scripts import CHARS_PER_TOKEN, text_quarters, tokens_of

if TYPE_CHECKING:
    from .types import Block, Request

__all__ = [
    "CHARS_PER_TOKEN",
    "FILE_REF_TOKENS",
    "block_tokens",
    "estimate_tokens",
    "text_quarters",
    "text_tokens",
    "tokens_of",
]

#: What an image costs in the estimate, whatever its size.
IMAGE_TOKENS = 1000
#: What an uploaded file (a ``FileRef``) costs in the estimate, whatever its size: the
#: vendor reads it on its side, and its bytes (a compressed PDF, a spreadsheet) say
#: little of its tokens; a local estimate must not refuse a file the vendor reads.
FILE_REF_TOKENS = 1000


def text_tokens(text: str) -> int:
    """The estimate for a piece of text (at least 1 token unless it is empty).

    4 characters a token, but each CJK, kana, hangul or Thai character one token and
    each Arabic character half of one (:func:`text_quarters`).
    """
    return tokens_of(text_quarters(text))


def _media_tokens(kind: str, size: int) -> int:
    return IMAGE_TOKENS if kind == "image" else max(1, size // CHARS_PER_TOKEN)


def _chars_tokens(chars: int) -> int:
    return tokens_of(chars)


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
        return tokens_of(text_quarters(block.text) + len(block.redacted or ""))
    return _chars_tokens(len(str(block.raw or block)))  # a server-side tool block


def estimate_tokens(request: Request) -> int:
    """A cheap estimate of input tokens: every text by :func:`text_quarters`, media by size."""
    from .types import FileRef, MediaBlock, TextBlock, ThinkingBlock

    quarters = text_quarters(request.system or "")
    media = 0
    for message in request.messages:
        for block in message.blocks:
            if isinstance(block, TextBlock):
                quarters += text_quarters(block.text)
            elif isinstance(block, MediaBlock):
                media += _media_tokens(block.type, block.size)
            elif isinstance(block, FileRef):
                media += FILE_REF_TOKENS
            elif isinstance(block, ThinkingBlock):
                quarters += text_quarters(block.text) + len(block.redacted or "")
            else:
                quarters += len(str(block.raw or block))  # a server-side tool block
        for result in message.tool_results:
            quarters += text_quarters(result.content)
        for call in message.tool_calls:
            quarters += text_quarters(call.raw_arguments)
    for spec in request.tools:
        quarters += text_quarters(spec.description) + len(str(spec.parameters))
    return tokens_of(quarters) + media
