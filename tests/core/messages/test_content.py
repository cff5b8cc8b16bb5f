"""Content blocks: sources, media types, errors, read-once, inlining."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
from llmport import ContentError, MediaBlock, TextBlock, UnsupportedContentError
from llmport.messages.content import (
    block_to_dict,
    inline_text_file,
    is_text_like,
    load_block,
    normalize_content,
    sniff_media_type,
)
from llmport.messages.types import ModelCapabilities
from llmport.testing import ALL_INPUTS, Script, call_tools, reply
from support.core_helpers import Driver, make_tool, scripted

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(32))
JPEG = b"\xff\xd8\xff\xe0" + bytes(32)
GIF = b"GIF89a" + bytes(16)
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 " + bytes(8)
WAV = b"RIFF\x10\x00\x00\x00WAVEfmt " + bytes(8)
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"
CSV = b"city,temp\nParis,21\n"


def media(raw: dict[str, Any], index: int = 0, **kw: Any) -> MediaBlock:
    block = load_block(raw, index, **kw)
    assert isinstance(block, MediaBlock)
    return block


# --- every source key ------------------------------------------------------------------------


def test_path_source(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    block = media({"type": "image", "path": str(tmp_path / "shot.png")})
    assert (block.type, block.media_type, block.data, block.filename) == (
        "image",
        "image/png",
        PNG,
        "shot.png",
    )


def test_path_source_accepts_pathlike(tmp_path: Path) -> None:
    (tmp_path / "doc.pdf").write_bytes(PDF)
    assert media({"type": "file", "path": tmp_path / "doc.pdf"}).media_type == "application/pdf"


def test_data_source() -> None:
    assert media({"type": "image", "data": PNG}).data == PNG
    assert media({"type": "image", "data": bytearray(PNG)}).data == PNG


def test_base64_source_standard_and_urlsafe() -> None:
    assert media({"type": "image", "base64": base64.b64encode(PNG).decode()}).data == PNG
    assert media({"type": "image", "base64": base64.urlsafe_b64encode(PNG).decode()}).data == PNG


def test_data_url_source() -> None:
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    block = media({"type": "image", "url": url})
    assert block.data == PNG and block.url is None and block.media_type == "image/png"


def test_remote_url_is_passed_through() -> None:
    block = media({"type": "image", "url": "https://example.com/img/cat.jpg?size=2"})
    assert block.url == "https://example.com/img/cat.jpg?size=2"
    assert block.data is None
    assert block.media_type == "image/jpeg"
    assert block.filename == "cat.jpg"


def test_text_block_and_plain_strings() -> None:
    assert load_block({"type": "text", "text": "hi"}, 0) == TextBlock("hi")
    assert normalize_content("one string, one block") == [TextBlock("one string, one block")]
    assert normalize_content(["a", {"type": "text", "text": "b"}]) == [
        TextBlock("a"),
        TextBlock("b"),
    ]
    assert normalize_content({"type": "text", "text": "single dict"}) == [TextBlock("single dict")]


# --- media types ----------------------------------------------------------------------------


def test_media_type_from_declaration() -> None:
    block = media({"type": "file", "data": CSV, "media_type": "text/csv"})
    assert block.media_type == "text/csv"


def test_declared_alias_is_canonical() -> None:
    assert (
        media({"type": "image", "data": JPEG, "media_type": "image/jpg"}).media_type == "image/jpeg"
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("data.csv", "text/csv"),
        ("notes.md", "text/markdown"),
        ("a.json", "application/json"),
        ("r.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        ("clip.mp3", "audio/mpeg"),
        ("x.txt", "text/plain"),
    ],
)
def test_media_type_from_extension(tmp_path: Path, name: str, expected: str) -> None:
    (tmp_path / name).write_bytes(
        b"PK\x03\x04rest"
        if name.endswith(".docx")
        else b"ID3\x03" + bytes(8)
        if name.endswith(".mp3")
        else b"text\n"
    )
    kind = "audio" if expected.startswith("audio/") else "file"
    assert media({"type": kind, "path": str(tmp_path / name)}).media_type == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (PNG, "image/png"),
        (JPEG, "image/jpeg"),
        (GIF, "image/gif"),
        (WEBP, "image/webp"),
    ],
)
def test_media_type_from_magic_bytes(tmp_path: Path, data: bytes, expected: str) -> None:
    (tmp_path / "no_extension").write_bytes(data)
    assert media({"type": "image", "path": str(tmp_path / "no_extension")}).media_type == expected
    assert media({"type": "image", "data": data}).media_type == expected


def test_magic_bytes_for_audio_and_pdf() -> None:
    assert sniff_media_type(WAV) == "audio/wav"
    assert sniff_media_type(PDF) == "application/pdf"
    assert media({"type": "audio", "data": WAV}).media_type == "audio/wav"
    assert media({"type": "file", "data": PDF}).media_type == "application/pdf"


def test_a_wrong_extension_is_refused_unless_media_type_says_so(tmp_path: Path) -> None:
    (tmp_path / "really_a.jpg").write_bytes(PNG)
    with pytest.raises(ContentError, match=r"named as image/jpeg but its bytes are image/png"):
        media({"type": "image", "path": str(tmp_path / "really_a.jpg")})
    explicit = {"type": "image", "path": str(tmp_path / "really_a.jpg"), "media_type": "image/png"}
    assert media(explicit).media_type == "image/png"


@pytest.mark.parametrize("name", ["shot.png", "clip.wav", "doc.pdf"])
def test_a_named_type_whose_bytes_show_no_signature_is_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_bytes(b"just some text, not the file the name promises")
    kind = "audio" if name.endswith(".wav") else "image" if name.endswith(".png") else "file"
    with pytest.raises(ContentError, match="its bytes are not") as info:
        media({"type": kind, "path": str(tmp_path / name)})
    assert info.value.index == 0


def test_utf8_data_without_a_type_is_plain_text() -> None:
    assert media({"type": "file", "data": CSV}).media_type == "text/plain"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (
            {"type": "image", "data": PNG, "media_type": "image/jpeg"},
            "image/jpeg but the bytes are image/png",
        ),
        ({"type": "file", "data": PDF, "media_type": "image/png"}, "image/png"),
        (
            {"type": "image", "data": b"plain text, not a picture", "media_type": "image/png"},
            "image/png",
        ),
        ({"type": "audio", "data": PNG, "media_type": "audio/wav"}, "audio/wav"),
    ],
)
def test_declared_type_contradicting_the_bytes_is_an_error(
    raw: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ContentError, match=problem):
        load_block(raw, 0)


def test_data_url_type_contradicting_the_bytes_is_an_error() -> None:
    url = "data:image/jpeg;base64," + base64.b64encode(PNG).decode()
    with pytest.raises(ContentError, match="image/jpeg"):
        load_block({"type": "image", "url": url}, 0)


def test_kind_must_match_the_media_type() -> None:
    with pytest.raises(ContentError, match="audio block holds image/png"):
        load_block({"type": "audio", "data": PNG}, 0)


# --- every ContentError, naming the block index -------------------------------------------


def _cases(tmp: Path) -> list[tuple[dict[str, Any], str]]:
    (tmp / "empty.png").write_bytes(b"")
    (tmp / "big.png").write_bytes(PNG + bytes(2000))
    (tmp / "folder").mkdir()
    return [
        ({"type": "video", "path": "x.mp4"}, "unknown block type 'video'"),
        ({"path": "x.png"}, "unknown block type None"),
        ({"type": "image", "path": str(tmp / "missing.png")}, "file not found"),
        ({"type": "image", "path": str(tmp / "folder")}, "not a regular file"),
        ({"type": "image", "path": str(tmp / "empty.png")}, "empty"),
        ({"type": "image", "data": b""}, "empty"),
        ({"type": "image", "path": str(tmp / "big.png")}, "over the 1000-byte limit"),
        ({"type": "image", "data": PNG + bytes(2000)}, "over the 1000-byte limit"),
        (
            {"type": "image", "base64": base64.b64encode(PNG + bytes(2000)).decode()},
            "over the 1000-byte limit",
        ),
        ({"type": "image"}, "no source key"),
        ({"type": "image", "media_type": "image/png"}, "no source key"),
        (
            {"type": "image", "path": str(tmp / "x.png"), "data": PNG},
            "two source keys: path and data",
        ),
        (
            {"type": "image", "url": "https://x/y.png", "base64": "AAAA"},
            "two source keys: url and base64",
        ),
        ({"type": "image", "base64": "***not base64***"}, "not valid base64"),
        ({"type": "image", "url": "data:image/png;base64,***"}, "invalid base64"),
        ({"type": "image", "url": "ftp://host/x.png"}, "unsupported URL scheme"),
        ({"type": "image", "data": "a str, not bytes"}, "must be bytes"),
        ({"type": "file", "data": b"\x00\x01\x02\x03"}, "cannot tell the media type"),
        ({"type": "text"}, "needs a 'text' string"),
        (42, "expected a dict or str"),  # type: ignore[list-item]
    ]


def test_each_content_error_names_the_index_and_the_problem(tmp_path: Path) -> None:
    for raw, problem in _cases(tmp_path):
        with pytest.raises(ContentError) as info:
            normalize_content(["intro text", "more", raw], max_bytes=1000)
        assert info.value.index == 2, raw
        assert str(info.value).startswith("content block 2: "), raw
        assert problem in str(info.value), (raw, str(info.value))
        assert isinstance(info.value, ValueError)


def test_unreadable_file_is_a_content_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tests run as root, where chmod 000 does not stop reading: fail the read itself.
    target = tmp_path / "locked.png"
    target.write_bytes(PNG)

    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(ContentError, match=r"cannot read .*Permission denied") as info:
        normalize_content(["look", {"type": "image", "path": str(target)}])
    assert info.value.index == 1


def test_bad_blocks_fail_before_any_request(drive: Driver, tmp_path: Path) -> None:
    for raw, problem in _cases(tmp_path):
        script = Script(["never"])
        rt = scripted(script, max_block_bytes=1000, max_retries=3)
        with pytest.raises(ContentError, match="content block 1: "):
            drive.exec(rt, ["look at this", raw])
        assert script.requests == [], problem


def test_max_block_bytes_is_a_runtime_setting(drive: Driver) -> None:
    script = Script(["ok", "ok"])
    with pytest.raises(ContentError, match="over the 40-byte limit"):
        drive.exec(
            scripted(script, max_block_bytes=40), [{"type": "image", "data": PNG + bytes(40)}]
        )
    assert drive.exec(scripted(script), [{"type": "image", "data": PNG + bytes(40)}]) == "ok"


# --- what a vendor cannot take ---------------------------------------------------------------


def test_unsupported_block_is_rejected_before_any_request(drive: Driver) -> None:
    no_audio = ModelCapabilities(input_modalities=frozenset({"text", "image"}))
    script = Script(["never"], capabilities=no_audio)
    with pytest.raises(UnsupportedContentError) as info:
        drive.exec(scripted(script), ["listen", {"type": "audio", "data": WAV}])
    err = info.value
    assert (err.vendor, err.model) == ("scripted", "test")
    assert "audio block #1" in err.block and "audio/wav" in err.block
    assert script.requests == []


def test_text_like_file_passes_the_check_for_inlining(drive: Driver) -> None:
    pdf_only = ModelCapabilities(
        input_modalities=frozenset({"text", "image", "file"}),
        file_types=frozenset({"application/pdf"}),
    )
    script = Script(["ok"], capabilities=pdf_only)
    drive.exec(scripted(script), [{"type": "file", "data": CSV, "filename": "t.csv"}])
    (block,) = script.requests[0].messages[0].blocks
    assert isinstance(block, MediaBlock) and block.media_type == "text/csv"


def test_binary_file_a_vendor_cannot_take_is_rejected(drive: Driver) -> None:
    pdf_only = ModelCapabilities(
        input_modalities=frozenset({"text", "file"}), file_types=frozenset({"application/pdf"})
    )
    script = Script(["never"], capabilities=pdf_only)
    docx = {"type": "file", "data": b"PK\x03\x04" + bytes(20), "filename": "r.docx"}
    with pytest.raises(UnsupportedContentError, match="not accepted"):
        drive.exec(scripted(script), [docx])
    assert script.requests == []


def test_inline_text_file_rule() -> None:
    block = media({"type": "file", "data": CSV, "filename": "data.csv"}, index=3)
    inlined = inline_text_file(block, "openai", "gpt-4o-mini")
    assert inlined == TextBlock(
        '<file name="data.csv" media_type="text/csv">\ncity,temp\nParis,21\n\n</file>'
    )
    unnamed = media({"type": "file", "data": b"hello", "media_type": "text/plain"}, index=4)
    assert inline_text_file(unnamed, "v", "m").text.startswith(
        '<file name="block-4" media_type="text/plain">'
    )


def test_inline_text_file_refuses_non_text() -> None:
    latin1 = media(
        {"type": "file", "data": "caf\xe9".encode("latin-1"), "media_type": "text/plain"}
    )
    with pytest.raises(UnsupportedContentError, match="not UTF-8"):
        inline_text_file(latin1, "openai", "gpt-4o")
    remote = media({"type": "file", "url": "https://x/y.csv"})
    with pytest.raises(UnsupportedContentError, match="URL"):
        inline_text_file(remote, "openai", "gpt-4o")


@pytest.mark.parametrize(
    ("media_type", "text_like"),
    [
        ("text/csv", True),
        ("text/markdown; charset=utf-8", True),
        ("application/json", True),
        ("application/ld+json", True),
        ("application/yaml", True),
        ("application/pdf", False),
        ("image/png", False),
        ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", False),
    ],
)
def test_is_text_like(media_type: str, text_like: bool) -> None:
    assert is_text_like(media_type) is text_like


# --- read and encoded once per exec --------------------------------------------------------


def test_files_are_read_once_per_exec_not_per_turn(
    drive: Driver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = tmp_path / "screen.png"
    image.write_bytes(PNG)
    reads: list[str] = []
    real_read = Path.read_bytes

    def counting(self: Path) -> bytes:
        reads.append(self.name)
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    encodes: list[int] = []
    real_b64 = base64.b64encode

    def counting_b64(data: bytes, *args: Any) -> bytes:
        encodes.append(len(data))
        return real_b64(data, *args)

    monkeypatch.setattr(base64, "b64encode", counting_b64)

    def noop(n: int) -> str:
        """Do nothing."""
        return "ok"

    # Each scripted turn encodes every image it is sent, as a vendor plugin does.
    script = Script(
        [
            _encoding(call_tools(("noop", {"n": 1}))),
            _encoding(call_tools(("noop", {"n": 2}))),
            _encoding(reply("done")),
        ]
    )
    tools = [make_tool(noop, n={"type": "integer"})]
    assert (
        drive.exec(
            scripted(script), ["what now?", {"type": "image", "path": str(image)}], tools=tools
        )
        == "done"
    )
    assert len(script.requests) == 3
    assert reads == ["screen.png"]
    assert encodes == [len(PNG)]
    first = script.requests[0].messages[0].blocks[1]
    assert all(r.messages[0].blocks[1] is first for r in script.requests)


def _encoding(step: Any) -> Any:
    """A step that base64-encodes every media block of the request, then answers as ``step``."""
    from llmport.messages.types import Response
    from llmport.testing import respond

    def answer(request: Any) -> Response:
        for message in request.messages:
            for block in message.blocks:
                if isinstance(block, MediaBlock):
                    block.base64()
        return Response(
            text=step.text,
            tool_calls=list(step.tool_calls),
            stop_reason="tool_use" if step.tool_calls else "end_turn",
        )

    return respond(answer)


def test_each_exec_reads_the_file_again(drive: Driver, tmp_path: Path) -> None:
    image = tmp_path / "changing"  # no extension: the bytes tell the type each time
    image.write_bytes(PNG)
    script = Script(["one", "two"])
    rt = scripted(script)
    drive.exec(rt, [{"type": "image", "path": str(image)}])
    image.write_bytes(JPEG)
    drive.exec(rt, [{"type": "image", "path": str(image)}])
    kinds = [r.messages[0].blocks[0].media_type for r in script.requests]
    assert kinds == ["image/png", "image/jpeg"]


def test_base64_and_data_url_are_cached() -> None:
    block = media({"type": "image", "data": PNG})
    assert block.base64() is block.base64()
    assert block.data_url() == "data:image/png;base64," + base64.b64encode(PNG).decode()
    with pytest.raises(ValueError):
        media({"type": "image", "url": "https://x/y.png"}).base64()


def test_block_to_dict_is_the_seed_api_form() -> None:
    assert block_to_dict(TextBlock("t")) == {"type": "text", "text": "t"}
    assert block_to_dict(media({"type": "image", "data": PNG, "filename": "a.png"})) == {
        "type": "image",
        "media_type": "image/png",
        "data": PNG,
        "filename": "a.png",
    }
    assert block_to_dict(media({"type": "image", "url": "https://x/a.gif"})) == {
        "type": "image",
        "media_type": "image/gif",
        "url": "https://x/a.gif",
        "filename": "a.gif",
    }


def test_call_function_receives_loaded_media(drive: Driver, tmp_path: Path) -> None:
    from llmport import Runtime

    (tmp_path / "pic.png").write_bytes(PNG)
    seen: list[Any] = []

    def fn(content: list[dict[str, Any]], model: str, response_format: Any) -> str:
        seen.extend(content)
        return "ok"

    drive.exec(
        Runtime(call=fn), ["describe", {"type": "image", "path": os.fspath(tmp_path / "pic.png")}]
    )
    assert seen == [
        {"type": "text", "text": "describe"},
        {"type": "image", "media_type": "image/png", "data": PNG, "filename": "pic.png"},
    ]


def test_all_inputs_capabilities_take_everything(drive: Driver) -> None:
    script = Script([reply("ok")], capabilities=ALL_INPUTS)
    drive.exec(scripted(script), [{"type": "audio", "data": WAV}, {"type": "file", "data": PDF}])
    assert len(script.requests) == 1
