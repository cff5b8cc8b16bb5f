"""Media a tool returned, for vendors that take none inside a tool result.

Chat Completions (and every Chat-compatible service), Gemini before 3 and
Bedrock models without tool-result media take only text in a tool result.
Real recorded traffic (wire-samples ``openai-chat/tool-result-image.json``,
``openai-compat-groq/``, ``mistral/tool-result-multiple-images.json``,
``gemini/tool-result-audio.json``) shows the form they do take: the tool
result says ``"See file <id>."`` and a following user turn carries
``"This is file <id>:"`` and the media. :func:`move_tool_media` rewrites a
neutral conversation into that form; each plugin calls it for the results
its model cannot hold and converts the outcome as it converts any turn.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import replace

from ..messages.types import Block, FileRef, MediaBlock, Message, TextBlock, ToolResult

__all__ = ["FOLLOW_UP_KEY", "file_label", "move_tool_media"]

#: ``Message.extra`` key marking the user turn that carries a tool's media
#: (a plugin may keep it a separate turn, as the recordings send it).
FOLLOW_UP_KEY = "tool_media_follow_up"

#: Which of a result's blocks the vendor takes inside the result itself.
Keeps = Callable[[Block], bool]


def file_label(block: MediaBlock | FileRef) -> str:
    """A short, stable name for ``block``: the first 6 hex digits of its content's SHA-1.

    The same bytes (or URL, or uploaded file) always get the same label, so
    a replayed conversation sends the same text.
    """
    if isinstance(block, FileRef):
        source = f"{block.provider}:{block.id}".encode()
        return hashlib.sha1(source, usedforsecurity=False).hexdigest()[:6]
    return block.sha1()[:6]  # cached: later turns neither hash nor decode the bytes again


def move_tool_media(
    messages: Iterable[Message], keeps: Keeps = lambda block: False, *, acknowledge: bool = False
) -> list[Message]:
    """``messages`` with tool results' media the vendor cannot hold moved to a following user turn.

    A block ``keeps`` accepts stays in its result; text blocks join the
    result's text; every other media block or file reference is named in the
    result (``"See file <id>."``) and sent, after ``"This is file <id>:"``, in
    a user turn right after the results (before that turn's own blocks).
    ``acknowledge``: an assistant ``"OK"`` goes between the two, for services
    that refuse a user turn straight after a tool turn (Mistral, as recorded).
    """
    out: list[Message] = []
    for message in messages:
        moved: list[Block] = []
        results = tuple(_split(r, keeps, moved) for r in message.tool_results)
        if not moved:
            out.append(message)
            continue
        out.append(replace(message, tool_results=results, blocks=()))
        if acknowledge:
            out.append(Message("assistant", blocks=(TextBlock("OK"),)))
        out.append(Message("user", blocks=(*moved, *message.blocks), extra={FOLLOW_UP_KEY: True}))
    return out


def _split(result: ToolResult, keeps: Keeps, moved: list[Block]) -> ToolResult:
    """``result`` keeping what it can hold; the rest appended to ``moved``, named in its text."""
    kept: list[Block] = []
    lines = [result.content] if result.content else []
    for block in result.blocks:
        if keeps(block):
            kept.append(block)
        elif isinstance(block, TextBlock):
            lines.append(block.text)
        elif isinstance(block, (MediaBlock, FileRef)):
            label = file_label(block)
            lines.append(f"See file {label}.")
            moved += [TextBlock(f"This is file {label}:"), block]
        else:
            kept.append(block)  # not media: the plugin refuses it as before
    if len(kept) == len(result.blocks):
        return result
    return replace(result, content="\n".join(lines), blocks=tuple(kept))
