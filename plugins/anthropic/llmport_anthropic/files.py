"""Anthropic's Files API for ``rt.upload`` / ``rt.delete_file`` / ``rt.files``.

A beta API: ``POST /v1/files`` (multipart ``file``), ``DELETE
/v1/files/{id}``, ``GET /v1/files``, each with the ``anthropic-beta:
files-api-2025-04-14`` header, through the SDK's own ``beta.files`` client
(the provider's cached clients, its vendor boundary). A Messages request that
references an uploaded file carries the same header (Anthropic's "Files API"
guide). In content a :class:`FileRef` becomes an ``image`` or ``document``
block with ``source: {"type": "file", "file_id": ...}``, and any other file
a ``container_upload`` block (what the code execution tool reads):
:func:`file_block`.
"""

from __future__ import annotations

from typing import Any

from llmport.messages.types import FileRef, MediaBlock
from llmport.provider.files import DEFAULT_MEDIA_TYPE, field_of, upload_bytes
from llmport.provider.translate import answer_field

#: The beta the Files API, and every request that references a file, needs.
FILES_BETA = "files-api-2025-04-14"
#: Files the Messages API reads as documents by reference (Files API guide).
DOCUMENT_TYPES = frozenset({"application/pdf", "text/plain"})


def upload_args(block: MediaBlock, vendor: str) -> dict[str, Any]:
    """``beta.files.upload`` arguments."""
    return {"file": upload_bytes(block, vendor), "betas": [FILES_BETA]}


def file_ref(answer: Any, vendor: str) -> FileRef:
    """A file's metadata (``id``, ``mime_type``, ``size_bytes``, ``filename``) as a FileRef."""
    file_id = answer_field(answer, "id", str, vendor)
    mime, size, name = (field_of(answer, k) for k in ("mime_type", "size_bytes", "filename"))
    return FileRef(
        vendor,
        file_id,
        mime if isinstance(mime, str) and mime else DEFAULT_MEDIA_TYPE,
        size if isinstance(size, int) and not isinstance(size, bool) else None,
        None,  # Anthropic keeps files until they are deleted
        name if isinstance(name, str) else None,
    )


def file_refs(page: Any, vendor: str) -> list[FileRef]:
    """A list answer (``{"data": [...]}``) as references."""
    return [file_ref(item, vendor) for item in answer_field(page, "data", list, vendor)]


def deleted(answer: Any, vendor: str) -> None:
    """A delete answer is ``{"id", "type": "file_deleted"}`` (an empty object is malformed)."""
    answer_field(answer, "id", str, vendor)


def file_block(ref: FileRef) -> dict[str, Any]:
    """An uploaded file in content: an image, a document, or a code-execution container input."""
    source = {"type": "file", "file_id": ref.id}
    if ref.media_type.startswith("image/"):
        return {"type": "image", "source": source}
    if ref.media_type in DOCUMENT_TYPES:
        return {"type": "document", "source": source}
    return {"type": "container_upload", "file_id": ref.id}


def container_uploads(refs: Any) -> list[dict[str, Any]]:
    """``NativeTool("code_execution", files=[...])``: one ``container_upload`` block a file."""
    return [{"type": "container_upload", "file_id": ref.id} for ref in refs]
