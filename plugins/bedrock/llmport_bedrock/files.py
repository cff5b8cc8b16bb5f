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

import re

from llmport.errors import ContentError, UnsupportedFeatureError
from llmport.messages.types import FileRef, MediaBlock

VENDOR = "bedrock"
_NO_FILES_API = (
    "Bedrock has no files API; put the object in S3 yourself and pass its s3:// URI "
    "(rt.upload('s3://bucket/key', provider='bedrock'))"
)


#: A bucket name as S3 allows it (Amazon S3 User Guide, "Bucket naming rules"): 3 to 63
#: lowercase letters, digits, dots and hyphens, beginning and ending with a letter or digit.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
#: An object key is 1 to 1,024 bytes of UTF-8 (same guide, "Naming objects").
_MAX_KEY_BYTES = 1024


def s3_ref(block: MediaBlock) -> FileRef:
    """The reference to an S3 object (``block.url``), as Converse reads it."""
    url = block.url or ""
    if not url.startswith("s3://"):
        raise UnsupportedFeatureError(VENDOR, "", "uploading bytes", _NO_FILES_API)
    problem = s3_uri_problem(url)
    if problem is not None:
        raise ContentError(block.index, f"{url!r} is no S3 object: {problem}")
    return FileRef(VENDOR, url, block.media_type, None, None, block.filename)


def s3_uri_problem(uri: str) -> str | None:
    """What keeps ``uri`` from naming one S3 object (``s3://bucket/key``), or None."""
    bucket, slash, key = uri.removeprefix("s3://").partition("/")
    if not _BUCKET.match(bucket) or ".." in bucket:
        return f"{bucket!r} is not an S3 bucket name"
    if not slash or not key:
        return "it names no object key (s3://bucket/key)"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in key):
        return "its key holds a control character"
    if len(key.encode("utf-8", "surrogatepass")) > _MAX_KEY_BYTES:
        return f"its key is longer than {_MAX_KEY_BYTES} bytes"
    return None


def as_block(ref: FileRef) -> MediaBlock:
    """The reference as the s3:// media block Converse conversion already sends."""
    if ref.media_type.startswith("image/"):
        return MediaBlock("image", ref.media_type, url=ref.id, filename=ref.filename)
    return MediaBlock("file", ref.media_type, url=ref.id, filename=ref.filename)


def no_files_api(what: str) -> UnsupportedFeatureError:
    """The typed refusal of a files operation Bedrock has no API for."""
    return UnsupportedFeatureError(VENDOR, "", what, _NO_FILES_API)
