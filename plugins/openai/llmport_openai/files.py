"""OpenAI's Files API for ``rt.upload`` / ``rt.delete_file`` / ``rt.files``.

``POST /v1/files`` (multipart: ``purpose`` and ``file``), ``DELETE
/v1/files/{id}``, ``GET /v1/files``, through the SDK's own ``files`` client
(the provider's cached clients, its vendor boundary). The purpose defaults
to ``"user_data"`` (files given as model input, OpenAI's "File inputs"
guide), ``"vision"`` for images ("Images and vision");
``purpose="assistants"`` is what the code interpreter's container reads (the
recorded upload in cassettes/README.md). A :class:`FileRef` in
content is sent as ``input_file`` / ``input_image`` with ``file_id``
(Responses) or a ``file`` part with ``file_id`` (Chat Completions):
:mod:`.convert_in`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from llmport.messages.content import guess_from_name
from llmport.messages.types import FileRef, MediaBlock
from llmport.provider.files import DEFAULT_MEDIA_TYPE, field_of, upload_bytes
from llmport.provider.translate import answer_field

#: The purpose of a file given as model input (OpenAI "File inputs" guide).
DEFAULT_PURPOSE = "user_data"
#: The purpose of an image given as model input by file id (OpenAI "Images and vision" guide).
IMAGE_PURPOSE = "vision"


def upload_args(block: MediaBlock, purpose: str | None, vendor: str) -> dict[str, Any]:
    """``files.create`` arguments: the block's bytes as a named multipart file."""
    if purpose is None:
        purpose = IMAGE_PURPOSE if block.media_type.startswith("image/") else DEFAULT_PURPOSE
    return {"file": upload_bytes(block, vendor), "purpose": purpose}


def when(value: Any) -> datetime | None:
    """A Unix time the API gave (``expires_at``) as a UTC datetime; None when absent."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, UTC)
    return None


def file_ref(answer: Any, vendor: str, media_type: str | None = None) -> FileRef:
    """A file object of the API as a :class:`FileRef` (its ``id`` is required)."""
    file_id = answer_field(answer, "id", str, vendor)
    name = field_of(answer, "filename")
    size = field_of(answer, "bytes")
    return FileRef(
        vendor,
        file_id,
        media_type
        or (guess_from_name(name) if isinstance(name, str) else None)
        or DEFAULT_MEDIA_TYPE,
        size if isinstance(size, int) and not isinstance(size, bool) else None,
        when(field_of(answer, "expires_at")),
        name if isinstance(name, str) else None,
    )


def file_refs(page: Any, vendor: str) -> list[FileRef]:
    """A list answer (``{"data": [...]}``) as references."""
    items = answer_field(page, "data", list, vendor)
    return [file_ref(item, vendor) for item in items]


def deleted(answer: Any, vendor: str) -> None:
    """A delete answer must say ``deleted`` (an empty object is malformed)."""
    answer_field(answer, "deleted", bool, vendor)
