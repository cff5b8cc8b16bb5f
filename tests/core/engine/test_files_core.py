"""Files by reference, the core side: FileRef as a neutral block, and its checks."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from llmport import FileRef, Runtime
from llmport.errors import ContentError, InputError, MessageError, UnsupportedFeatureError
from llmport.messages.check import check_file_refs
from llmport.messages.types import Message, TextBlock, ToolCall, ToolResult
from llmport.sessions.dag import block_to_stored, stored_to_block

REF = FileRef(
    "openai",
    "file-abc",
    "application/pdf",
    size=1234,
    expires_at=datetime(2026, 12, 1, 12, 0, tzinfo=UTC),
    filename="report.pdf",
)


def test_a_file_ref_round_trips_through_message_dicts() -> None:
    message = Message("user", (TextBlock("read it"), REF))
    data = message.to_dict()
    assert data["blocks"][1] == {
        "type": "file_ref",
        "provider": "openai",
        "id": "file-abc",
        "media_type": "application/pdf",
        "size": 1234,
        "expires_at": "2026-12-01T12:00:00+00:00",
        "filename": "report.pdf",
    }
    assert Message.from_dict(data) == message


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "file_ref", "provider": "openai", "media_type": "application/pdf"},
        {"type": "file_ref", "provider": "", "id": "x", "media_type": "application/pdf"},
        {"type": "file_ref", "provider": "a", "id": "x", "media_type": "t/x", "size": "9"},
        {"type": "file_ref", "provider": "a", "id": "x", "media_type": "t/x", "expires_at": 5},
    ],
)
def test_a_malformed_file_ref_dict_is_a_message_error(bad: dict[str, object]) -> None:
    with pytest.raises(MessageError):
        Message.from_dict({"role": "user", "blocks": [bad]})


def test_a_reference_to_another_vendor_is_refused_in_content_and_in_tool_results() -> None:
    check_file_refs([Message("user", (REF,))], "openai")  # its own vendor: fine
    with pytest.raises(MessageError, match="uploaded to 'openai'"):
        check_file_refs([Message("user", (REF,))], "anthropic", "claude-x")
    turns = [
        Message("assistant", tool_calls=(ToolCall("c1", "fetch", {}),)),
        Message("tool", tool_results=(ToolResult("c1", "fetch", "here", blocks=(REF,)),)),
    ]
    with pytest.raises(MessageError):
        check_file_refs(turns, "gemini")


def test_the_dag_keeps_the_reference_not_a_placeholder() -> None:
    assert stored_to_block(block_to_stored(REF)) == REF


def test_a_call_function_runtime_refuses_a_reference_and_has_no_files_api() -> None:
    calls: list[object] = []

    def fn(content: object, model: str, response_format: object) -> str:
        calls.append(content)
        return "ok"

    rt = Runtime(call=fn)
    with pytest.raises(InputError, match="uploaded to 'openai'"):
        rt.exec(["read it", REF])
    with pytest.raises(UnsupportedFeatureError):
        rt.upload({"type": "file", "data": b"a,b\n1,2\n", "media_type": "text/csv"})
    assert calls == []


def test_upload_refuses_what_is_not_a_file_before_any_request() -> None:
    rt = Runtime(call=lambda content, model, response_format: "ok")
    with pytest.raises(ContentError):
        rt.upload(123)
    with pytest.raises(ContentError):
        rt.upload("no/such/file.pdf")


def test_content_takes_a_reference_in_its_dict_form_too() -> None:
    from llmport.messages.content import normalize_content

    blocks = normalize_content(["read it", Message("user", (REF,)).to_dict()["blocks"][0]])
    assert blocks[1] == REF
    with pytest.raises(MessageError):
        normalize_content([{"type": "file_ref", "id": "file-abc"}])


def test_a_large_uploaded_file_is_not_estimated_by_its_bytes() -> None:
    """A 30 MB PDF sent by reference fits a 128k window: the vendor reads it, not the request."""
    from llmport.messages.estimate import FILE_REF_TOKENS, block_tokens, estimate_tokens
    from llmport.messages.types import Request

    big = FileRef("openai", "file-big", "application/pdf", size=30 * 1024 * 1024)
    assert block_tokens(big) == FILE_REF_TOKENS
    request = Request("gpt-4o-mini", [Message("user", (TextBlock("Summarize."), big))])
    assert estimate_tokens(request) < 2 * FILE_REF_TOKENS
