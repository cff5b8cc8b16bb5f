"""What every plugin's files client shares: bytes to upload, pages of files.

The plugins call their SDK's own files client; these helpers are the parts
that are the same for every vendor, so they are written once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import UnsupportedContentError
from ..messages.types import FileRef, MediaBlock

__all__ = ["DEFAULT_MEDIA_TYPE", "aall_pages", "all_pages", "field_of", "upload_bytes"]

#: The media type of a listed file whose type the vendor does not say.
DEFAULT_MEDIA_TYPE = "application/octet-stream"


def upload_bytes(block: MediaBlock, vendor: str) -> tuple[str, bytes, str]:
    """``(filename, bytes, media type)``: the multipart file an SDK's upload takes.

    A block that holds a URL, not bytes, is refused before any request.
    """
    data = block.data
    if data is None:
        raise UnsupportedContentError(
            vendor, "", block.describe(), "a files API uploads bytes, not a URL"
        )
    return block.filename or f"file-{block.index}", data, block.media_type


def field_of(answer: Any, name: str) -> Any:
    """An optional field of a vendor answer (a dict or an SDK model); None when absent."""
    return answer.get(name) if isinstance(answer, dict) else getattr(answer, name, None)


def all_pages(page: Any, refs: Callable[[Any], list[FileRef]]) -> list[FileRef]:
    """Every file of a paginated SDK list (``has_next_page`` / ``get_next_page``)."""
    found = refs(page)
    while page.has_next_page():
        page = page.get_next_page()
        found += refs(page)
    return found


async def aall_pages(page: Any, refs: Callable[[Any], list[FileRef]]) -> list[FileRef]:
    """Async :func:`all_pages` (the async SDK's pages)."""
    found = refs(page)
    while page.has_next_page():
        page = await page.get_next_page()
        found += refs(page)
    return found
