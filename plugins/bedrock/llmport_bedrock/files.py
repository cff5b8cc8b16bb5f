"""Files by reference on Bedrock: S3 locations, no files API.

Bedrock has no upload endpoint: Converse reads images and documents from
S3 (``source: {"s3Location": {"uri": "s3://bucket/key"}}``, Converse API
reference, ``ImageSource`` / ``DocumentSource``). So ``rt.upload`` on
``bedrock`` takes an object already in S3 (``rt.upload("s3://bucket/key",
provider="bedrock")``) and returns its reference, making no request;
llmport does not put objects in S3 itself (that needs a bucket, its
region and write permissions the caller's own tooling already manages), and
does not delete or list them either: those are refused, typed.
"""

from __future__ import annotations

from llmport.errors import UnsupportedFeatureError
from llmport.messages.types import FileRef, MediaBlock

VENDOR = "bedrock"
_NO_FILES_API = (
    "Bedrock has no files API; put the object in S3 yourself and pass its s3:// URI "
    "(rt.upload('s3://bucket/key', provider='bedrock'))"
)


def s3_ref(block: MediaBlock) -> FileRef:
    """The reference to an S3 object (``block.url``), as Converse reads it."""
    url = block.url or ""
    if not url.startswith("s3://"):
        raise UnsupportedFeatureError(VENDOR, "", "uploading bytes", _NO_FILES_API)
    return FileRef(VENDOR, url, block.media_type, None, None, block.filename)


def as_block(ref: FileRef) -> MediaBlock:
    """The reference as the s3:// media block Converse conversion already sends."""
    if ref.media_type.startswith("image/"):
        return MediaBlock("image", ref.media_type, url=ref.id, filename=ref.filename)
    return MediaBlock("file", ref.media_type, url=ref.id, filename=ref.filename)


def no_files_api(what: str) -> UnsupportedFeatureError:
    """The typed refusal of a files operation Bedrock has no API for."""
    return UnsupportedFeatureError(VENDOR, "", what, _NO_FILES_API)
