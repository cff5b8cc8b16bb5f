"""Files by reference on every vendor with a files API, at a loopback vendor.

The vendor's answers are the recorded ones (``../shared/wire-samples/``:
``openai-responses/files-upload-code-interpreter.json``,
``anthropic/files-upload-code-execution.json``; Gemini's upload answers
follow google-genai's resumable protocol, its ``fileData`` part
``gemini/file-uri-document.json``); cassettes/README.md says how each was
taken. Each test counts what reached the server: a reference is sent, the
bytes only once (by the upload), and a refusal sends nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llmport import FileRef, NativeTool, Runtime
from llmport.cli.demo import tiny_png
from llmport.errors import InputError, MalformedResponseError, UnsupportedFeatureError
from llmport.messages.types import FinalEvent, Message
from llmport.testing import cassette
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from wire import TARGETS, Wire, make_runtime

# What the recordings sent (cassettes/README.md, "files"): the request parts llmport must match.
#: openai-responses/files-upload-code-interpreter.json, the code_interpreter tool's container.
RECORDED_CONTAINER = {"file_ids": ["file-MDLqXZjNjNeLwwaRACNDNf"], "type": "auto"}
#: anthropic/files-upload-code-execution.json, the user turn of the Messages request.
RECORDED_TEXT = (
    "Use the code execution tool to read the uploaded CSV file and report the sum of the "
    "`value` column."
)
RECORDED_MESSAGES = [
    {
        "content": [
            {"text": RECORDED_TEXT, "type": "text"},
            {"file_id": "file_011CcQH3nbP5brKi4DsVcj7j", "type": "container_upload"},
        ],
        "role": "user",
    }
]
#: gemini/file-uri-document.json, the part that references the uploaded PDF.
RECORDED_PART = {
    "fileData": {
        "fileUri": "https://generativelanguage.googleapis.com/v1beta/files/k8plo4aq1e1w",
        "mimeType": "application/pdf",
    }
}
#: A small PDF whose bytes carry a marker no request but the upload may hold.
MARKER = b"LLMPORT-FILE-MARKER-7f3a"
PDF = b"%PDF-1.4\n%" + MARKER + b"\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
FILES_VENDORS = ("openai-chat", "openai-responses", "anthropic", "gemini")

OPENAI_FILE = {
    "bytes": len(PDF),
    "created_at": 1782404523,
    "expires_at": None,
    "filename": "report.pdf",
    "id": "file-MDLqXZjNjNeLwwaRACNDNf",
    "object": "file",
    "purpose": "user_data",
    "status": "processed",
    "status_details": None,
}
ANTHROPIC_FILE = {
    "created_at": "2026-06-25T16:16:09.340000Z",
    "downloadable": False,
    "filename": "report.pdf",
    "id": "file_011CcQH3nbP5brKi4DsVcj7j",
    "mime_type": "application/pdf",
    "size_bytes": len(PDF),
    "type": "file",
}
GEMINI_URI = "https://generativelanguage.googleapis.com/v1beta/files/k8plo4aq1e1w"
GEMINI_FILE = {
    "name": "files/k8plo4aq1e1w",
    "displayName": "report.pdf",
    "mimeType": "application/pdf",
    "sizeBytes": str(len(PDF)),
    "expirationTime": "2026-11-28T12:00:00Z",
    "uri": GEMINI_URI,
    "state": "ACTIVE",
}


def by_id(wire_id: str) -> Wire:
    return next(w for w in TARGETS if w.id == wire_id)


class Vendor:
    """A loopback vendor: its files API answered from the recordings, model calls by ``wire``."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.server = LoopbackServer([Reply(handler=self.answer)], repeat=True)

    def answer(self, request: RecordedRequest) -> Reply:
        method, path = request.method, request.path.split("?", 1)[0]
        if "files" in path or "upload" in path:
            return self.files_reply(method, path, request)
        if "stream" in request.path.lower() or b'"stream":true' in request.body.replace(b" ", b""):
            return self.wire.stream_text_reply(["The ", "report."])
        return self.wire.text_reply("The report.")

    def files_reply(self, method: str, path: str, request: RecordedRequest) -> Reply:
        wire = self.wire.id
        if wire.startswith("openai"):
            if method == "POST":
                return Reply(json=OPENAI_FILE)
            if method == "DELETE":
                return Reply(json={"deleted": True, "id": OPENAI_FILE["id"], "object": "file"})
            return Reply(json={"object": "list", "data": [OPENAI_FILE], "has_more": False})
        if wire == "anthropic":
            if method == "POST":
                return Reply(json=ANTHROPIC_FILE)
            if method == "DELETE":
                return Reply(json={"id": ANTHROPIC_FILE["id"], "type": "file_deleted"})
            return Reply(json={"data": [ANTHROPIC_FILE], "has_more": False, "last_id": None})
        return self.gemini_reply(method, path, request)

    def gemini_reply(self, method: str, path: str, request: RecordedRequest) -> Reply:
        if method == "POST" and path == "/upload/v1beta/files":  # start the resumable upload
            return Reply(json={}, headers={"x-goog-upload-url": self.server.url + "/upload/s/1"})
        if method == "POST":  # the bytes, "upload, finalize"
            return Reply(json={"file": GEMINI_FILE}, headers={"x-goog-upload-status": "final"})
        if method == "DELETE":
            return Reply(json={})
        return Reply(json={"files": [GEMINI_FILE]})

    def model_bodies(self) -> list[Any]:
        return [
            r.json()
            for r in self.server.requests
            if "files" not in r.path and "upload" not in r.path
        ]


@contextlib.contextmanager
def at_vendor(wire_id: str) -> Iterator[tuple[Wire, Vendor, Runtime]]:
    """The target's runtime pointed at a loopback vendor (closed on the way out)."""
    wire = by_id(wire_id)
    vendor = Vendor(wire)
    with vendor.server:
        rt = make_runtime(wire, vendor.server, max_retries=1)
        try:
            yield wire, vendor, rt
        finally:
            rt.close()


def upload(rt: Any, wire: Wire) -> FileRef:
    return rt.upload(
        {"type": "file", "data": PDF, "media_type": "application/pdf", "filename": "report.pdf"},
        provider=wire.provider,
    )


def reference_part(wire_id: str, ref: FileRef) -> dict[str, Any]:
    """Where the reference lands in a model request, in the vendor's documented shape."""
    return {
        "openai-chat": {"type": "file", "file": {"file_id": ref.id}},
        "openai-responses": {"type": "input_file", "file_id": ref.id},
        "anthropic": {"type": "document", "source": {"type": "file", "file_id": ref.id}},
        "gemini": {"fileData": {"fileUri": ref.id, "mimeType": "application/pdf"}},
    }[wire_id]


def parts_of(wire_id: str, body: Any) -> list[Any]:
    """Every content part of every user turn of a request body."""
    if wire_id == "gemini":
        return [p for c in body["contents"] if c["role"] == "user" for p in c["parts"]]
    turns = body["input" if wire_id == "openai-responses" else "messages"]
    return [
        p
        for t in turns
        if t.get("role") == "user" and isinstance(t.get("content"), list)
        for p in t["content"]
    ]


@pytest.mark.parametrize("wire_id", FILES_VENDORS)
def test_upload_answers_a_reference_of_the_vendor(wire_id: str) -> None:
    with at_vendor(wire_id) as (wire, vendor, rt):
        ref = upload(rt, wire)
    assert ref.media_type == "application/pdf"
    assert ref.size == len(PDF)
    assert ref.provider == ("openai" if wire_id.startswith("openai") else wire_id)
    assert (
        ref.id
        == {
            "openai-chat": OPENAI_FILE["id"],
            "openai-responses": OPENAI_FILE["id"],
            "anthropic": ANTHROPIC_FILE["id"],
            "gemini": GEMINI_URI,
        }[wire_id]
    )
    uploads = [r for r in vendor.server.requests if MARKER in r.body]
    assert len(uploads) == 1, "the bytes go up once, in the upload"
    if wire_id == "anthropic":
        assert "files-api-2025-04-14" in uploads[0].headers.get("anthropic-beta", "")
    if wire_id.startswith("openai"):
        assert b'name="purpose"\r\n\r\nuser_data' in uploads[0].body


def run_three_ways(rt: Any, content: list[Any]) -> list[str]:
    """exec, async_exec and stream with ``content``; their answers."""
    out = [str(rt.exec(content)), str(asyncio.run(rt.async_exec(content)))]
    final = [e for e in rt.stream(content) if isinstance(e, FinalEvent)]
    out.append(str(final[-1].result.output))
    return out


@pytest.mark.parametrize("wire_id", FILES_VENDORS)
def test_a_reference_is_sent_by_id_in_exec_async_exec_and_stream(wire_id: str) -> None:
    with at_vendor(wire_id) as (wire, vendor, rt):
        ref = upload(rt, wire)
        answers = run_three_ways(rt, ["Summarize the report.", ref])
    assert answers == ["The report."] * 3
    bodies = vendor.model_bodies()
    assert len(bodies) == 3
    for body in bodies:
        assert reference_part(wire_id, ref) in parts_of(wire_id, body)
    if wire_id == "anthropic":
        for request in vendor.server.requests[1:]:
            assert "files-api-2025-04-14" in request.headers.get("anthropic-beta", "")


@pytest.mark.parametrize("wire_id", FILES_VENDORS)
def test_a_three_turn_conversation_about_an_uploaded_pdf_sends_its_bytes_once(
    wire_id: str,
) -> None:
    with at_vendor(wire_id) as (wire, vendor, rt):
        ref = upload(rt, wire)
        result = rt.run(["What is this report about?", ref])
        for question in ("Who wrote it?", "Summarize it in one line."):
            history = [Message.from_dict(m.to_dict()) for m in result.messages]
            result = rt.run(question, history=history)
    requests = vendor.server.requests
    assert len(requests) >= 4  # the upload and three turns (Gemini: two for the upload)
    assert sum(r.body.count(MARKER) for r in requests) == 1, "the PDF went up more than once"
    assert sum(len(r.body) for r in requests if MARKER not in r.body) < 20 * len(PDF)
    assert reference_part(wire_id, ref) in parts_of(wire_id, vendor.model_bodies()[-1])


@pytest.mark.parametrize("wire_id", FILES_VENDORS)
def test_files_lists_and_delete_file_deletes_sync_and_async(wire_id: str) -> None:
    with at_vendor(wire_id) as (wire, vendor, rt):
        listed = rt.files(provider=wire.provider)
        alisted = asyncio.run(rt.afiles(provider=wire.provider))
        rt.delete_file(listed[0])
        asyncio.run(rt.adelete_file(alisted[0]))
        aref = asyncio.run(
            rt.aupload(
                {"type": "file", "data": PDF, "media_type": "application/pdf"},
                provider=wire.provider,
            )
        )
    assert listed == alisted and len(listed) == 1
    assert listed[0].id == aref.id
    deletes = [r for r in vendor.server.requests if r.method == "DELETE"]
    expected = {
        "openai-chat": "/v1/files/" + OPENAI_FILE["id"],
        "openai-responses": "/v1/files/" + OPENAI_FILE["id"],
        "anthropic": "/v1/files/" + ANTHROPIC_FILE["id"],
        "gemini": "/v1beta/files/k8plo4aq1e1w",
    }[wire_id]
    assert [r.path.split("?", 1)[0] for r in deletes] == [expected, expected]


@pytest.mark.parametrize("wire_id", FILES_VENDORS)
def test_files_record_once_and_replay_offline(wire_id: str, tmp_path: Path) -> None:
    # A user's own cassette (llmport.testing.cassette): upload, ask about it, list, delete;
    # the upload's multipart boundary is random, so it is matched part by part.
    wire, vendor = by_id(wire_id), Vendor(by_id(wire_id))
    path = tmp_path / "files.yaml"

    def session(url: str) -> tuple[Any, ...]:
        rt = make_runtime(wire, type("At", (), {"url": url})(), max_retries=1)
        try:
            ref = upload(rt, wire)
            answer = rt.exec(["Summarize the report.", ref])
            listed = rt.files(provider=wire.provider)
            rt.delete_file(listed[0])
            return ref, answer, [f.id for f in listed]
        finally:
            rt.close()

    with vendor.server, cassette(path):
        recorded = session(vendor.server.url)
    with cassette(path, record="none") as replay:
        replayed = session(vendor.server.url)  # nothing listens there any more
    assert replay.play_count == len(vendor.server.requests) >= 4
    assert replayed == recorded and recorded[1] == "The report."


@pytest.mark.parametrize("wire_id", FILES_VENDORS)
def test_an_upload_answered_with_an_empty_object_is_malformed(wire_id: str) -> None:
    wire = by_id(wire_id)
    with LoopbackServer([Reply(json={})], repeat=True) as server:
        rt = make_runtime(wire, server, max_retries=1)
        with pytest.raises(MalformedResponseError):
            upload(rt, wire)
        rt.close()


def test_openai_code_interpreter_container_matches_the_recording() -> None:
    with at_vendor("openai-responses") as (_, vendor, rt):
        ref = rt.upload(
            {
                "type": "file",
                "data": b"item,value\napple,30\nbanana,70\n",
                "media_type": "text/csv",
                "filename": "data.csv",
            },
            provider="openai-responses",
            purpose="assistants",
        )
        rt.exec("Sum the value column.", tools=[NativeTool("code_execution", files=[ref])])
    upload_body = vendor.server.requests[0].body
    assert b'name="purpose"\r\n\r\nassistants' in upload_body
    assert b'filename="data.csv"' in upload_body
    sent = vendor.model_bodies()[0]["tools"][0]
    assert sent["type"] == "code_interpreter"
    assert sent["container"] == RECORDED_CONTAINER


def test_anthropic_container_upload_matches_the_recording() -> None:
    with at_vendor("anthropic") as (_, vendor, rt):
        ref = FileRef("anthropic", "file_011CcQH3nbP5brKi4DsVcj7j", "text/csv", filename="data.csv")
        rt.exec(RECORDED_TEXT, tools=[NativeTool("code_execution", files=[ref])])
    (request,) = vendor.server.requests
    assert request.json()["messages"] == RECORDED_MESSAGES
    assert "files-api-2025-04-14" in request.headers.get("anthropic-beta", "")
    tool = request.json()["tools"][0]
    assert tool["name"] == "code_execution" and "files" not in tool


def test_gemini_file_data_part_matches_the_recording() -> None:
    part = RECORDED_PART
    uri = part["fileData"]["fileUri"]
    with at_vendor("gemini") as (_, vendor, rt):
        rt.exec(["This is file 543a3c:", FileRef("gemini", uri, "application/pdf")])
    assert vendor.model_bodies()[0]["contents"][0]["parts"][1] == part


# --- refusals: nothing reaches the vendor --------------------------------------------------------


@pytest.mark.parametrize("wire_id", [w.id for w in TARGETS])
def test_a_reference_from_another_vendor_is_an_input_error_before_any_request(
    wire_id: str,
) -> None:
    wire = by_id(wire_id)
    other = "anthropic" if wire_id != "anthropic" else "openai"
    ref = FileRef(other, "file-1", "application/pdf")
    with LoopbackServer([wire.text_reply("no")], repeat=True) as server:
        rt = make_runtime(wire, server, max_retries=1)
        for call in (
            lambda: rt.exec(["read", ref]),
            lambda: asyncio.run(rt.async_exec(["read", ref])),
            lambda: list(rt.stream(["read", ref])),
            # Counted or estimated: what exec would refuse is not counted either.
            lambda: rt.count_tokens(["read", ref]),
            lambda: asyncio.run(rt.acount_tokens(["read", ref])),
        ):
            with pytest.raises(InputError, match=f"uploaded to '{other}'"):
                call()
        rt.close()
        assert server.requests == []


def refusals(rt: Any, provider: str) -> list[Callable[[], Any]]:
    block = {"type": "file", "data": PDF, "media_type": "application/pdf"}
    ref = FileRef(provider, "s3://bucket/report.pdf", "application/pdf")
    return [
        lambda: rt.upload(block, provider=provider),
        lambda: asyncio.run(rt.aupload(block, provider=provider)),
        lambda: rt.files(provider=provider),
        lambda: asyncio.run(rt.afiles(provider=provider)),
        lambda: rt.delete_file(ref),
        lambda: asyncio.run(rt.adelete_file(ref)),
    ]


@pytest.mark.parametrize("wire_id", ["bedrock", "callonly", "anthropic-vertex", "gemini-vertex"])
def test_vendors_without_a_files_api_refuse_typed_before_any_request(wire_id: str) -> None:
    wire = by_id(wire_id)
    with LoopbackServer([wire.text_reply("no")], repeat=True) as server:
        rt = make_runtime(wire, server, max_retries=1)
        for call in refusals(rt, wire.provider):
            with pytest.raises(UnsupportedFeatureError):
                call()
        rt.close()
        assert server.requests == []


def test_bedrock_takes_an_s3_object_and_sends_its_location() -> None:
    wire = by_id("bedrock")
    with LoopbackServer([wire.text_reply("The report.")], repeat=True) as server:
        rt = make_runtime(wire, server, max_retries=1)
        ref = rt.upload("s3://my-bucket/docs/report.pdf", provider="bedrock")
        assert server.requests == []  # no files API: nothing was sent
        assert ref == FileRef(
            "bedrock", "s3://my-bucket/docs/report.pdf", "application/pdf", filename="report.pdf"
        )
        rt.exec(["Summarize.", ref], model="bedrock:us.amazon.nova-pro-v1:0")
        rt.close()
    (request,) = server.requests
    content = request.json()["messages"][0]["content"]
    document = next(c["document"] for c in content if "document" in c)
    assert document["source"] == {"s3Location": {"uri": "s3://my-bucket/docs/report.pdf"}}
    assert document["format"] == "pdf"


def test_gemini_on_vertex_reads_no_files_api_reference_and_has_no_files_api() -> None:
    wire = by_id("gemini")
    ref = FileRef("gemini", RECORDED_PART["fileData"]["fileUri"], "application/pdf")
    with LoopbackServer([wire.text_reply("no")], repeat=True) as server:
        rt = make_runtime(wire, server, max_retries=1, settings={"vertexai": True})
        with pytest.raises(InputError, match="Vertex AI"):
            rt.exec(["Summarize.", ref])
        for call in refusals(rt, "gemini"):  # no files API; a delete names the mismatch
            with pytest.raises(InputError, match="Vertex AI"):
                call()
        rt.close()
        assert server.requests == []


PNG_REF = {
    "openai-responses": FileRef("openai", "file-img", "image/png"),
    "anthropic": FileRef("anthropic", "file_img", "image/png"),
    "gemini": FileRef("gemini", GEMINI_URI, "image/png"),
}


@pytest.mark.parametrize("wire_id", sorted(PNG_REF))
def test_an_uploaded_image_is_sent_as_the_vendors_image_by_reference(wire_id: str) -> None:
    wire, ref = by_id(wire_id), PNG_REF[wire_id]
    vendor = Vendor(wire)
    with vendor.server:
        rt = make_runtime(wire, vendor.server, max_retries=1)
        rt.exec(["What is in it?", ref])
        rt.close()
    expected = {
        "openai-responses": {"type": "input_image", "file_id": "file-img", "detail": "auto"},
        "anthropic": {"type": "image", "source": {"type": "file", "file_id": "file_img"}},
        "gemini": {"fileData": {"fileUri": GEMINI_URI, "mimeType": "image/png"}},
    }[wire_id]
    assert expected in parts_of(wire_id, vendor.model_bodies()[0])


def test_chat_completions_refuses_an_uploaded_image_before_any_request() -> None:
    wire = by_id("openai-chat")
    with LoopbackServer([wire.text_reply("no")], repeat=True) as server:
        rt = make_runtime(wire, server, max_retries=1)
        with pytest.raises(InputError, match="file_id"):
            rt.exec(["What is in it?", FileRef("openai", "file-img", "image/png")])
        rt.close()
        assert server.requests == []


def test_a_code_execution_file_of_another_vendor_is_refused_before_any_request() -> None:
    for wire_id, other in (("openai-responses", "anthropic"), ("anthropic", "openai")):
        wire = by_id(wire_id)
        tool = NativeTool("code_execution", files=[FileRef(other, "f-1", "text/csv")])
        with LoopbackServer([wire.text_reply("no")], repeat=True) as server:
            rt = make_runtime(wire, server, max_retries=1)
            with pytest.raises(InputError, match="FileRefs"):
                rt.exec("Sum it.", tools=[tool])
            rt.close()
            assert server.requests == []


@pytest.mark.parametrize("operation", ["delete", "list", "upload"])
def test_gemini_files_errors_are_typed_and_carry_no_foreign_exception(operation: str) -> None:
    from invariant_checks import foreign_exceptions
    from llmport.errors import AuthenticationError

    wire = by_id("gemini")
    denied = Reply(
        status=401, json={"error": {"code": 401, "message": "bad key", "status": "UNAUTHENTICATED"}}
    )
    with LoopbackServer([denied], repeat=True) as server:
        rt = make_runtime(wire, server, max_retries=1)
        with pytest.raises(AuthenticationError) as raised:
            if operation == "delete":
                rt.delete_file(FileRef("gemini", GEMINI_URI, "application/pdf"))
            elif operation == "list":
                rt.files(provider="gemini")
            else:
                upload(rt, wire)
        rt.close()
    assert foreign_exceptions(raised.value) == []


def test_openai_uploads_an_image_with_the_vision_purpose() -> None:
    with at_vendor("openai-responses") as (wire, vendor, rt):
        png = {"type": "image", "data": tiny_png(), "media_type": "image/png"}
        rt.upload(png, provider=wire.provider)
    assert b'name="purpose"\r\n\r\nvision' in vendor.server.requests[0].body


# --- a hostile files API: listings that never end ---------------------------------


def endless_page(wire_id: str, fresh: bool, counter: Iterator[int], request: Any) -> Reply:
    """A listing page that always says there is more: the same file again, or a new one."""
    n = next(counter)
    if wire_id.startswith("openai"):
        item = {**OPENAI_FILE, "id": f"file-{n}" if fresh else OPENAI_FILE["id"]}
        return Reply(json={"object": "list", "data": [item], "has_more": True})
    if wire_id == "anthropic":
        item = {**ANTHROPIC_FILE, "id": f"file_{n}" if fresh else ANTHROPIC_FILE["id"]}
        # The SDK's files pages follow ``next_page`` (SyncPageCursor).
        return Reply(json={"data": [item], "has_more": True, "next_page": "more"})
    uri = f"{GEMINI_URI}{n}" if fresh else GEMINI_URI
    return Reply(json={"files": [{**GEMINI_FILE, "uri": uri}], "nextPageToken": "more"})


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("fresh", [False, True], ids=["same-page", "new-files"])
@pytest.mark.parametrize("wire_id", FILES_VENDORS)
def test_a_listing_that_never_ends_is_malformed_within_its_bound(
    wire_id: str, fresh: bool, is_async: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import llmport.provider.files

    monkeypatch.setattr(llmport.provider.files, "MAX_PAGES", 30)  # 5000 in use: a few seconds
    wire = by_id(wire_id)
    answer = functools.partial(endless_page, wire_id, fresh, itertools.count())
    with LoopbackServer([Reply(handler=answer)], repeat=True) as server:
        rt = make_runtime(wire, server, max_retries=1)
        try:
            with pytest.raises(MalformedResponseError, match="listing"):
                if is_async:
                    asyncio.run(rt.afiles(provider=wire.provider))
                else:
                    rt.files(provider=wire.provider)
        finally:
            rt.close()
        asked = len(server.requests)
    assert asked == (31 if fresh else 2)


#: Forged references (a stored or hand-written dict): each is refused before any request.
FORGED = {
    "media-type-nonsense": {"media_type": "nonsense"},
    "negative-size": {"size": -5},
    "newline-in-id": {"id": "file-1\nX-Injected: 1"},
    "1mb-id": {"id": "f" * 1_000_000},
    "empty-id": {"id": ""},
}


@pytest.mark.parametrize("forged", list(FORGED.values()), ids=list(FORGED))
@pytest.mark.parametrize("wire_id", (*FILES_VENDORS, "bedrock"))
def test_a_forged_reference_is_an_input_error_before_any_request(
    wire_id: str, forged: dict[str, Any]
) -> None:
    wire = by_id(wire_id)
    vendor = "openai" if wire_id.startswith("openai") else wire_id
    block = {
        "type": "file_ref",
        "provider": vendor,
        "id": "file-1",
        "media_type": "application/pdf",
    }
    block.update(forged)
    with LoopbackServer([wire.text_reply("no")], repeat=True) as server:
        rt = make_runtime(wire, server, max_retries=1)
        try:
            for call in (
                lambda: rt.exec(["read", block]),
                lambda: Message.from_dict({"role": "user", "blocks": [block]}),
                lambda: rt.count_tokens(["read", block]),
            ):
                with pytest.raises(InputError, match="file_ref"):
                    call()
        finally:
            rt.close()
        assert server.requests == []


@pytest.mark.parametrize(
    "uri",
    [
        "s3://",
        "s3://bucket",
        "s3://bucket/",
        "s3://my-bucket/k\nX: 1",
        "s3://Bad_Bucket/key",
        "s3://ab/key",
        "s3://my-bucket/" + "k" * 1025,
    ],
    ids=["no-bucket", "no-key", "empty-key", "newline", "bad-bucket", "short-bucket", "long-key"],
)
def test_bedrock_upload_refuses_what_names_no_s3_object(uri: str) -> None:
    wire = by_id("bedrock")
    with LoopbackServer([wire.text_reply("no")], repeat=True) as server:
        rt = make_runtime(wire, server, max_retries=1)
        try:
            with pytest.raises(InputError, match="no S3 object"):
                rt.upload(uri, provider="bedrock")
            with pytest.raises(InputError, match="no S3 object"):
                asyncio.run(rt.aupload(uri, provider="bedrock"))
            # The same URI given as content, or as a reference made by hand, is not sent.
            nova = "bedrock:us.amazon.nova-pro-v1:0"
            block = {"type": "file", "url": uri, "media_type": "application/pdf"}
            ref = FileRef("bedrock", uri, "application/pdf") if "\n" not in uri else block
            for content in (block, ref):
                with pytest.raises(InputError):
                    rt.exec(["Summarize.", content], model=nova)
        finally:
            rt.close()
        assert server.requests == []
