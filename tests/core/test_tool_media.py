"""Media a tool returns: what the tool loop keeps, and the follow-up form."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from llmport.errors import MessageError
from llmport.messages.content import load_block
from llmport.messages.types import FileRef, MediaBlock, Message, TextBlock, ToolCall, ToolResult
from llmport.provider.tool_media import (
    FOLLOW_UP_KEY,
    file_label,
    move_answer_media,
    move_tool_media,
)
from llmport.tools.tool import result_for

PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)
SHOT = MediaBlock("image", "image/png", data=PNG)
URL = MediaBlock("image", "image/png", url="https://example.com/b.png")
REF = FileRef("openai", "file-abc", "application/pdf")
CALL = ToolCall("c1", "snap", {})


def test_a_tool_returning_a_media_block_alone_sends_it_as_the_results_media() -> None:
    result = result_for(CALL, SHOT)
    assert (result.content, result.blocks) == ("", (SHOT,))


def test_a_tool_returning_text_and_media_keeps_both_in_order() -> None:
    result = result_for(CALL, ["Taken.", SHOT, TextBlock("Also:"), REF])
    assert result.content == "Taken.\nAlso:"
    assert result.blocks == (SHOT, REF)


def test_a_list_of_strings_is_still_data() -> None:
    assert result_for(CALL, ["a", "b"]).content == '["a", "b"]'


def test_labels_are_the_content_hash() -> None:
    assert file_label(SHOT) == hashlib.sha1(PNG, usedforsecurity=False).hexdigest()[:6]
    assert file_label(URL) == hashlib.sha1(URL.url.encode(), usedforsecurity=False).hexdigest()[:6]  # type: ignore[union-attr]
    assert file_label(REF) != file_label(FileRef("gemini", "file-abc", "application/pdf"))


def turns(*blocks: object) -> list[Message]:
    result = ToolResult("c1", "snap", "done", blocks=blocks)  # type: ignore[arg-type]
    return [
        Message("assistant", tool_calls=(CALL,)),
        Message("tool", (TextBlock("And?"),), tool_results=(result,)),
    ]


def test_media_move_to_a_user_turn_after_the_results() -> None:
    moved = move_tool_media(turns(SHOT, URL))
    a, b = file_label(SHOT), file_label(URL)
    assert moved[1].tool_results[0].content == f"done\nSee file {a}.\nSee file {b}."
    assert moved[1].tool_results[0].blocks == () and moved[1].blocks == ()
    follow = moved[2]
    assert follow.role == "user" and follow.extra == {FOLLOW_UP_KEY: True}
    assert follow.blocks == (
        TextBlock(f"This is file {a}:"),
        SHOT,
        TextBlock(f"This is file {b}:"),
        URL,
        TextBlock("And?"),  # the turn's own content comes after the tool's media
    )


def test_what_the_vendor_holds_in_the_result_stays_there() -> None:
    history = turns(SHOT)
    assert move_tool_media(history, lambda block: True) == history


def test_acknowledge_puts_an_assistant_ok_between() -> None:
    roles = [m.role for m in move_tool_media(turns(SHOT), acknowledge=True)]
    assert roles == ["assistant", "tool", "assistant", "user"]


def test_a_read_blocks_label_survives_releasing_its_bytes(tmp_path: Path) -> None:
    # A block llmport read itself drops its bytes once their base64 is cached; naming it on
    # later turns must neither change the label nor decode the bytes again.
    (tmp_path / "shot.png").write_bytes(PNG)
    block = load_block({"type": "image", "path": str(tmp_path / "shot.png")}, 0)
    assert isinstance(block, MediaBlock)
    before = file_label(block)
    block.base64_bytes()
    assert file_label(replace(block, index=1)) == before == file_label(SHOT)


def test_save_writes_the_bytes_and_refuses_a_url(tmp_path: Path) -> None:
    assert SHOT.save(tmp_path / "shot.png").read_bytes() == PNG
    with pytest.raises(MessageError, match="URL reference"):
        URL.save(tmp_path / "b.png")


# --- an assistant turn's media (an earlier answer's image, on another vendor) -------------

LABEL = file_label(SHOT)


def test_an_answer_image_is_named_in_place_and_leads_the_next_user_turn() -> None:
    answer = Message("assistant", (TextBlock("Here:"), SHOT, TextBlock("Done.")))
    ask = Message("user", (TextBlock("Make it blue."),))
    out = move_answer_media([Message("user", (TextBlock("Draw."),)), answer, ask])
    assert [m.role for m in out] == ["user", "assistant", "user"]
    assert [b.text for b in out[1].blocks] == ["Here:", f"See file {LABEL}.", "Done."]  # type: ignore[union-attr]
    assert out[2].blocks == (TextBlock(f"This is file {LABEL}:"), SHOT, *ask.blocks)


def test_an_answer_with_tool_calls_gets_its_results_before_the_media() -> None:
    answer = Message("assistant", (SHOT,), (CALL,))
    results = Message("tool", tool_results=(ToolResult("c1", "snap", "ok"),))
    later = Message("assistant", (TextBlock("Seen."),))
    out = move_answer_media([answer, results, later])
    assert [m.role for m in out] == [
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    assert out[2].blocks == (TextBlock(f"This is file {LABEL}:"), SHOT)
    assert out[2].extra == {FOLLOW_UP_KEY: True}


def test_a_trailing_answer_image_gets_a_user_turn_of_its_own() -> None:
    out = move_answer_media([Message("user", (TextBlock("Draw."),)), Message("assistant", (SHOT,))])
    assert [m.role for m in out] == ["user", "assistant", "user"]
    assert out[-1].blocks[-1] is SHOT


def test_media_the_vendor_keeps_stay_and_nothing_else_changes() -> None:
    answer = Message("assistant", (TextBlock("a"), SHOT))
    conversation = [Message("user", (TextBlock("Draw."),)), answer]
    assert move_answer_media(conversation, lambda blocks, i: True) == conversation
    assert move_answer_media(conversation, lambda blocks, i: True)[1] is answer
