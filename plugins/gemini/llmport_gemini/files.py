"""The Gemini Files API for ``rt.upload`` / ``rt.delete_file`` / ``rt.files``.

Uploads go through google-genai's own ``files.upload`` (a resumable upload:
``POST /upload/v1beta/files`` starts it and answers the upload URL in
``x-goog-upload-url``, then the bytes are posted there with ``upload,
finalize``), deletes through ``files.delete`` and listing through
``files.list``: the provider's cached clients, its vendor boundary. A
file's reference is its URI (``https://generativelanguage.googleapis.com/
v1beta/files/...``), which content sends as ``fileData: {fileUri,
mimeType}`` (the recorded request in cassettes/README.md). Gemini deletes a
file 48 hours after its upload (``expires_at``). The Developer API only:
Vertex AI reads ``gs://`` URIs instead (pass them as content URLs).
"""

from __future__ import annotations

import io
from datetime import datetime
from typing import Any

from llmport.errors import UnsupportedFeatureError
from llmport.messages.types import FileRef, MediaBlock
from llmport.provider.files import DEFAULT_MEDIA_TYPE, field_of, upload_bytes
from llmport.provider.translate import answer_field

VENDOR = "gemini"


def upload_args(block: MediaBlock, vendor: str) -> dict[str, Any]:
    """``files.upload`` arguments: the bytes as a seekable stream, their type and name."""
    name, data, media_type = upload_bytes(block, vendor)
    return {"file": io.BytesIO(data), "config": {"mime_type": media_type, "display_name": name}}


def file_ref(answer: Any, vendor: str) -> FileRef:
    """A ``File`` (``uri``, ``mime_type``, ``size_bytes``, ``expiration_time``) as a FileRef."""
    uri = answer_field(answer, "uri", str, vendor)
    mime, size, expires, name = (
        field_of(answer, k) for k in ("mime_type", "size_bytes", "expiration_time", "display_name")
    )
    return FileRef(
        vendor,
        uri,
        mime if isinstance(mime, str) and mime else DEFAULT_MEDIA_TYPE,
        int(size) if isinstance(size, (int, str)) and str(size).isdigit() else None,
        expires if isinstance(expires, datetime) else None,
        name if isinstance(name, str) else None,
    )


def file_name(ref: FileRef) -> str:
    """The API's name of a file (``files/abc``) from its URI."""
    return "files/" + ref.id.rstrip("/").rsplit("/", 1)[-1]


def part(ref: FileRef) -> dict[str, Any]:
    """An uploaded file as a content part, as the recorded request sends it."""
    return {"fileData": {"fileUri": ref.id, "mimeType": ref.media_type}}


def not_on_vertex(what: str) -> UnsupportedFeatureError:
    """google-genai's files client serves the Developer API only (its own check)."""
    return UnsupportedFeatureError(
        VENDOR,
        "",
        what,
        "the Gemini Files API is the Developer API's; on Vertex AI pass gs:// URIs as content",
    )
