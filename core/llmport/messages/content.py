"""Content blocks: from the caller's dicts to loaded, type-checked blocks.

``normalize_content`` runs once per ``exec`` and before any network call; it
reads every file once, decides every media type and raises
:class:`~llmport.errors.ContentError` (naming the block index) for anything
wrong. Plugins receive :class:`~llmport.messages.types.MediaBlock` objects whose bytes
and base64 form are already cached.

Media type rules, in order: the ``media_type`` the caller declared; else the
file name or URL extension; else the magic bytes. A declared type that the
magic bytes contradict is an error.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import ContentError, OptionError, UnsupportedContentError
from ..slotted import dataclass
from .check import (
    canonical_media_type,
    check_input_size,
    check_turns,
    media_problem,
    sniff_media_type,
)
from .types import (
    Block,
    CacheControl,
    FileRef,
    MediaBlock,
    Message,
    ServerToolCall,
    ServerToolResult,
    TextBlock,
    ThinkingBlock,
    block_from_dict,
)

DEFAULT_MAX_BLOCK_BYTES = 50 * 1024 * 1024
SOURCE_KEYS = ("path", "url", "data", "base64")
MEDIA_KINDS = ("image", "audio", "file")

# Our own table first: mimetypes depends on the host's /etc/mime.types.
_EXTENSIONS: dict[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".heic": "image/heic",
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
    ".m4a": "audio/mp4",
    ".aac": "audio/aac",
    ".webm": "audio/webm",
    ".pdf": "application/pdf",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".txt": "text/plain",
    ".log": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".xml": "application/xml",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".html": "text/html",
    ".htm": "text/html",
    ".py": "text/x-python",
    ".toml": "application/toml",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".doc": "application/msword",
}

_TEXT_LIKE_APPLICATION = {
    "application/json",
    "application/jsonl",
    "application/xml",
    "application/yaml",
    "application/toml",
    "application/javascript",
    "application/x-sh",
}


def is_text_like(media_type: str) -> bool:
    """True for media types that are UTF-8 text and may be inlined as text."""
    mt = canonical_media_type(media_type)
    return mt.startswith("text/") or mt in _TEXT_LIKE_APPLICATION or mt.endswith("+json")


def guess_from_name(name: str) -> str | None:
    suffix = os.path.splitext(name.split("?", 1)[0].split("#", 1)[0])[1].lower()
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    if not suffix:
        return None
    import mimetypes  # the fallback after our own table (it reads the host's mime.types)

    guessed, _ = mimetypes.guess_type("x" + suffix)
    return canonical_media_type(guessed) if guessed else None


def _kind_matches(kind: str, media_type: str) -> bool:
    if kind == "image":
        return media_type.startswith("image/")
    if kind == "audio":
        return media_type.startswith("audio/")
    return True  # a "file" may be anything, including an image or audio


def load_block(raw: Any, index: int, *, max_bytes: int = DEFAULT_MAX_BLOCK_BYTES) -> Block:
    """Turn one caller block (dict, str, or an already loaded block) into a Block."""
    if isinstance(
        raw, (TextBlock, MediaBlock, ThinkingBlock, ServerToolCall, ServerToolResult, FileRef)
    ):
        return raw
    if isinstance(raw, str):
        return TextBlock(raw)
    if not isinstance(raw, Mapping):
        hint = (
            " (a Message goes first in content, or in history=)"
            if type(raw).__name__ == "Message"
            else ""
        )
        raise ContentError(index, f"expected a dict or str, got {type(raw).__name__}{hint}")
    kind = raw.get("type")
    cache = _cache_mark(raw.get("cache"), index)
    if kind == "text":
        text = raw.get("text")
        if not isinstance(text, str):
            raise ContentError(index, "text block needs a 'text' string")
        return TextBlock(text, cache=cache)
    if kind == "file_ref":  # an uploaded file, in its Message.to_dict form
        return block_from_dict(dict(raw))
    if kind not in MEDIA_KINDS:
        raise ContentError(
            index, f"unknown block type {kind!r} (expected text, image, audio, file or file_ref)"
        )
    source = _read_source(raw, kind, index, max_bytes)
    media_type = _media_type(kind, source, index)
    return _media_block(raw, kind, media_type, source, index, cache)


@dataclass(slots=True)
class _Source:
    """What a media block's one source key gave: bytes or a URL, and what names them."""

    key: str
    declared: str | None
    filename: str | None
    url: str | None = None
    data: bytes | None = None


def _read_source(raw: Mapping[str, Any], kind: str, index: int, max_bytes: int) -> _Source:
    """Read the block's one source (path, url, data or base64), within ``max_bytes``."""
    sources = [k for k in SOURCE_KEYS if raw.get(k) is not None]
    if not sources:
        raise ContentError(
            index, f"{kind} block has no source key (one of {', '.join(SOURCE_KEYS)})"
        )
    if len(sources) > 1:
        raise ContentError(index, f"{kind} block has two source keys: {' and '.join(sources)}")
    declared = raw.get("media_type")
    if declared is not None and not isinstance(declared, str):
        raise ContentError(index, "media_type must be a string")
    source = _Source(
        sources[0],
        canonical_media_type(declared) if declared else None,
        raw.get("filename") or raw.get("name"),
    )
    if source.key == "path":
        _read_path(raw["path"], source, index, max_bytes)
    elif source.key == "url":
        _read_url(raw["url"], source, index)
    else:
        source.data = _inline_bytes(raw[source.key], source.key, index)
    if source.data is not None:
        if not source.data:
            raise ContentError(index, f"{kind} block is empty")
        if len(source.data) > max_bytes:
            raise ContentError(
                index, f"{kind} block is {len(source.data)} bytes, over the {max_bytes}-byte limit"
            )
    return source


def _read_path(value: Any, source: _Source, index: int, max_bytes: int) -> None:
    from pathlib import Path  # at the first use, not at import (start-up)

    try:
        path = Path(os.fspath(value))
    except TypeError:
        raise ContentError(index, f"'path' must be a path, got {type(value).__name__}") from None
    source.filename = source.filename or path.name
    if not path.exists():
        raise ContentError(index, f"file not found: {path}")
    if not path.is_file():
        raise ContentError(index, f"not a regular file: {path}")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise ContentError(index, f"{path} is {size} bytes, over the {max_bytes}-byte limit")
        source.data = path.read_bytes()
    except OSError as exc:
        raise ContentError(index, f"cannot read {path}: {exc.strerror or exc}") from exc


def _read_url(url: Any, source: _Source, index: int) -> None:
    if not isinstance(url, str):
        raise ContentError(index, "url must be a string")
    if url.startswith("data:"):
        declared_in_url, source.data = _decode_data_url(url, index)
        source.declared = source.declared or declared_in_url
    elif not url.startswith(("http://", "https://", "gs://", "s3://")):
        raise ContentError(index, f"unsupported URL scheme in {url[:40]!r}")
    else:
        source.url = url
        source.filename = source.filename or url.rsplit("/", 1)[-1].split("?", 1)[0] or None


def _inline_bytes(value: Any, key: str, index: int) -> bytes:
    """The bytes of a ``data`` (bytes) or ``base64`` (text) source."""
    if key == "data":
        if isinstance(value, (bytearray, memoryview)):
            value = bytes(value)
        if not isinstance(value, bytes):
            raise ContentError(index, f"'data' must be bytes, got {type(value).__name__}")
        return value
    if not isinstance(value, str):
        raise ContentError(index, "'base64' must be a string")
    try:
        return decode_base64(value)
    except ValueError as exc:
        raise ContentError(index, "'base64' is not valid base64") from exc


def _media_type(kind: str, source: _Source, index: int) -> str:
    """The block's media type: declared, else named, else sniffed; bytes that contradict it fail."""
    declared, filename, data = source.declared, source.filename, source.data
    named = guess_from_name(filename) if filename and not declared else None
    sniffed = sniff_media_type(data) if data is not None else None
    if declared and data is not None:
        problem = media_problem(declared, data, sniffed)
        if problem:
            raise ContentError(index, f"declared media type {declared} but {problem}")
    if named is not None and data is not None and media_problem(named, data, sniffed):
        # The name says one type and the bytes another (or nothing): refuse rather
        # than send what the user did not mean; an explicit media_type decides.
        if sniffed is not None:
            raise ContentError(
                index,
                f"{filename} is named as {named} but its bytes are {sniffed} "
                f"(rename it, or pass media_type={sniffed!r})",
            )
        raise ContentError(
            index,
            f"{filename} is named as {named} but its bytes are not {named} "
            "(pass media_type if the name is wrong)",
        )
    media_type = declared or named or sniffed
    if media_type is None:
        if source.url is not None:
            media_type = {"image": "image/*", "audio": "audio/*"}.get(
                kind, "application/octet-stream"
            )
        elif data is not None and kind == "file" and _looks_like_text(data):
            media_type = "text/plain"
        else:
            raise ContentError(index, f"cannot tell the media type of this {kind}; pass media_type")
    if not _kind_matches(kind, media_type):
        raise ContentError(index, f"{kind} block holds {media_type}")
    return media_type


def _media_block(
    raw: Mapping[str, Any],
    kind: str,
    media_type: str,
    source: _Source,
    index: int,
    cache: CacheControl | None,
) -> MediaBlock:
    """The loaded block, with its ``citations`` and ``send`` options checked."""
    citations = raw.get("citations", False)
    if not isinstance(citations, bool):
        raise ContentError(index, f"'citations' must be true or false, got {citations!r}")
    send = raw.get("send", "auto")
    if send not in ("auto", "native", "text"):
        raise ContentError(index, f"'send' must be 'auto', 'native' or 'text', got {send!r}")
    if send != "auto" and not is_text_like(media_type):
        raise ContentError(index, f"'send' applies to text-like files, not {media_type}")
    data = source.data
    return MediaBlock(
        kind,  # type: ignore[arg-type]
        media_type,
        data=data,
        url=source.url,
        filename=source.filename,
        index=index,
        cache=cache,
        citations=citations,
        send=send,
        # Bytes read from a path are llmport's own: dropped once encoded (the caller holds none).
        _own=[len(data), data] if source.key == "path" and data is not None else [],
    )


def _cache_mark(value: Any, index: int) -> CacheControl | None:
    """A block's ``"cache"``: ``True`` or ``{"ttl": "1h"}`` (a prompt-cache breakpoint)."""
    if value is None or value is False:
        return None
    if value is True:
        return CacheControl()
    if isinstance(value, Mapping) and set(value) <= {"ttl"}:
        ttl = value.get("ttl")
        if ttl is not None and not isinstance(ttl, str):
            raise ContentError(index, f"cache ttl must be a string like '5m' or '1h', got {ttl!r}")
        return CacheControl(ttl)
    raise ContentError(index, f"'cache' must be true or {{'ttl': '1h'}}, got {value!r}")


def _decode_data_url(url: str, index: int) -> tuple[str | None, bytes]:
    header, _, payload = url.partition(",")
    if not header.endswith(";base64"):
        raise ContentError(index, "only base64 data: URLs are supported")
    media_type = header[5:-7] or None
    try:
        data = decode_base64(payload)
    except ValueError as exc:
        raise ContentError(index, "data: URL holds invalid base64") from exc
    return (canonical_media_type(media_type) if media_type else None), data


def decode_base64(value: str) -> bytes:
    """Standard or URL-safe base64, padding optional; ``ValueError`` for anything else.

    Both alphabets are checked strictly: a lenient decoder would drop stray
    characters and hand a vendor silently corrupted bytes.
    """
    compact = "".join(value.split())  # pasted base64 often has line breaks
    compact += "=" * (-len(compact) % 4)
    try:
        return base64.b64decode(compact, validate=True)
    except binascii.Error:
        return base64.b64decode(compact.translate(_URLSAFE), validate=True)


_URLSAFE = str.maketrans("-_", "+/")


def _looks_like_text(data: bytes) -> bool:
    try:
        data[:4096].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in data[:4096]


def normalize_content(
    content: str | Iterable[Any] | None, *, max_bytes: int = DEFAULT_MAX_BLOCK_BYTES
) -> list[Block]:
    """Load and check every block. A ``str`` is one text block; ``""`` is no content at all."""
    check_max_bytes(max_bytes)
    if content is None:
        return []
    if isinstance(content, str) and not content:
        raise ContentError(0, "content is empty (give text, blocks, or history=)")
    if isinstance(content, (str, Mapping, TextBlock, MediaBlock, ThinkingBlock, FileRef)):
        content = [content]
    if not isinstance(content, Iterable) or isinstance(content, (bytes, bytearray)):
        raise ContentError(
            0, f"content must be a string or a list of blocks, got {type(content).__name__}"
        )
    return [load_block(raw, i, max_bytes=max_bytes) for i, raw in enumerate(content)]


def check_max_bytes(value: Any) -> None:
    """``max_block_bytes`` is a whole number of bytes > 0 (else :class:`OptionError`)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError(f"max_block_bytes must be an integer >= 1, got {value!r}")


def checked_input(
    content: Any,
    history: Sequence[Message],
    *,
    max_bytes: int = DEFAULT_MAX_BLOCK_BYTES,
    window: int | None = None,
    model: str = "",
) -> list[Block]:
    """A request's input through the one input checker: the new content's blocks.

    ``history`` (``history=``, the Messages leading ``content``, a
    continuation's conversation, a handoff's) is checked turn by turn and as a
    conversation together with the new user turn, and its size against the
    model's ``window`` (:func:`~llmport.messages.check.check_input_size`).
    """
    blocks = normalize_content(content, max_bytes=max_bytes)
    turn = Message("user", tuple(blocks)) if blocks else None
    check_turns([*history, turn] if turn is not None else history)
    check_input_size(history, turn, window, model)
    return blocks


def utf8_text(block: MediaBlock, vendor: str, model: str, what: str = "file") -> str:
    """A text-like block's inline bytes as UTF-8 text (a URL or other bytes: refused, typed)."""
    data = block.data
    if data is None:
        raise UnsupportedContentError(
            vendor, model, block.describe(), f"a text {what} must be inline, not a URL"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsupportedContentError(
            vendor, model, block.describe(), "file is not UTF-8 text"
        ) from exc


def inline_text_file(block: MediaBlock, vendor: str, model: str) -> TextBlock:
    """The documented rule for text-like files a vendor cannot take as files.

    The file becomes one text block::

        <file name="data.csv" media_type="text/csv">
        ...the file's UTF-8 text...
        </file>
    """
    text = utf8_text(block, vendor, model)
    name = block.filename or f"block-{block.index}"
    return TextBlock(f'<file name="{name}" media_type="{block.media_type}">\n{text}\n</file>')


def block_to_dict(block: Block) -> dict[str, Any]:
    """The seed-API dict form handed to ``call=`` functions and ``_call`` overrides."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if not isinstance(block, MediaBlock):
        return {"type": "text", "text": block.text if isinstance(block, ThinkingBlock) else ""}
    out: dict[str, Any] = {"type": block.type, "media_type": block.media_type}
    if block.url is not None:
        out["url"] = block.url
    else:
        out["data"] = block.data
    if block.filename:
        out["filename"] = block.filename
    return out
