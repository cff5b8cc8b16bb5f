"""Media where the vendor's API takes none: in a tool result, or in an assistant turn.

Chat Completions (and every Chat-compatible service), Gemini before 3 and
Bedrock models without tool-result media take only text in a tool result.
Real recorded traffic (wire-samples ``openai-chat/tool-result-image.json``,
``openai-compat-groq/``, ``mistral/tool-result-multiple-images.json``,
``gemini/tool-result-audio.json``) shows the form they do take: the tool
result says ``"See file <id>."`` and a following user turn carries
``"This is file <id>:"`` and the media. :func:`move_tool_media` rewrites a
neutral conversation into that form; each plugin calls it for the results
its model cannot hold and converts the outcome as it converts any turn.

Images a model answered with go back in history, and an assistant turn of
most APIs takes no image it did not itself make in that conversation: Chat
Completions and Responses messages (text only; Responses takes back only
its own ``image_generation_call``), Anthropic and Bedrock assistant turns.
A Gemini answer image continued on another vendor, or an OpenAI one on
Anthropic, would be refused. :func:`move_answer_media` moves such media the
same way: the assistant turn says ``"See file <id>."`` where the image was,
and the next user turn carries ``"This is file <id>:"`` and the image.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from ..messages.types import Block, FileRef, MediaBlock, Message, TextBlock, ToolResult

__all__ = ["FOLLOW_UP_KEY", "AnswerKeeps", "file_label", "move_answer_media", "move_tool_media"]

#: ``Message.extra`` key marking the user turn that carries a tool's media
#: (a plugin may keep it a separate turn, as the recordings send it).
FOLLOW_UP_KEY = "tool_media_follow_up"

#: Which of a result's blocks the vendor takes inside the result itself.
Keeps = Callable[[Block], bool]
#: Whether the vendor takes ``blocks[i]`` (a media block) where it is, in its assistant turn.
AnswerKeeps = Callable[[Sequence[Block], int], bool]


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


def _never(blocks: Sequence[Block], index: int) -> bool:
    return False


def move_answer_media(messages: Iterable[Message], keeps: AnswerKeeps = _never) -> list[Message]:
    """``messages`` with assistant turns' media the vendor cannot hold there moved to a user turn.

    A media block (or file reference) of an assistant turn that ``keeps``
    does not accept is replaced, in place, by ``"See file <id>."`` (so tool
    call positions among the blocks stay right); ``"This is file <id>:"``
    and the block go at the start of the next user turn, or in a user turn
    of their own (marked :data:`FOLLOW_UP_KEY`) before the next assistant
    turn or at the end, when no user turn comes first (an assistant turn
    with tool calls is answered by its results before any user turn).
    """
    out: list[Message] = []
    pending: list[Block] = []
    for message in messages:
        if pending and message.role == "user" and not message.tool_results:
            out.append(replace(message, blocks=(*pending, *message.blocks)))
            pending = []
            continue
        if pending and message.role == "assistant":
            out.append(Message("user", blocks=tuple(pending), extra={FOLLOW_UP_KEY: True}))
            pending = []
        is_answer = message.role == "assistant"
        out.append(_answer_split(message, keeps, pending) if is_answer else message)
    if pending:
        out.append(Message("user", blocks=tuple(pending), extra={FOLLOW_UP_KEY: True}))
    return out


def _answer_split(message: Message, keeps: AnswerKeeps, moved: list[Block]) -> Message:
    """``message`` with the media ``keeps`` refuses named in place (appended to ``moved``)."""
    blocks = message.blocks
    kept: list[Block] = []
    for i, block in enumerate(blocks):
        if isinstance(block, (MediaBlock, FileRef)) and not keeps(blocks, i):
            label = file_label(block)
            kept.append(TextBlock(f"See file {label}."))
            moved += [TextBlock(f"This is file {label}:"), block]
        else:
            kept.append(block)
    if all(a is b for a, b in zip(kept, blocks, strict=True)):
        return message
    return replace(message, blocks=tuple(kept))
