"""What every plugin's files client shares: bytes to upload, pages of files.

The plugins call their SDK's own files client; these helpers are the parts
that are the same for every vendor, so they are written once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import UnsupportedContentError
from ..messages.types import FileRef, MediaBlock
from .translate import malformed

__all__ = [
    "DEFAULT_MEDIA_TYPE",
    "MAX_PAGES",
    "Listing",
    "aall_pages",
    "all_pages",
    "field_of",
    "upload_bytes",
]

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


#: Pages one listing reads at most: a peer that always says "more" ends here.
MAX_PAGES = 5000


class Listing:
    """One listing's files, checked as they arrive: bounded, and never the same file twice.

    A page whose files were all listed already is the same page again (the
    cursor did not move: an endless listing); past :data:`MAX_PAGES` pages
    the vendor never said it was done; a last page that says more follow
    (``has_more: true``) with no cursor to them would end the listing short,
    silently. Each is a MalformedResponseError: a listing is whole or an error.
    """

    def __init__(self, vendor: str) -> None:
        self.vendor = vendor
        self.found: list[FileRef] = []
        self.seen: set[str] = set()
        self.pages = 0

    def add(self, refs: Iterable[FileRef]) -> None:
        """Take one page's references."""
        self.pages += 1
        if self.pages > MAX_PAGES:
            raise malformed(self.vendor, f"a file listing went on past {MAX_PAGES} pages")
        page = list(refs)
        if page and all(ref.id in self.seen for ref in page):
            raise malformed(self.vendor, "a file listing repeated a page (its cursor did not move)")
        self.seen.update(ref.id for ref in page)
        self.found += page

    def finish(self, last_page: Any) -> list[FileRef]:
        """Every file listed, once the SDK found no next page after ``last_page``."""
        if field_of(last_page, "has_more") is True:
            raise malformed(
                self.vendor,
                "a file listing ended on a page that says more files follow, with no cursor "
                "to them (the listing would be cut short)",
            )
        return self.found


def all_pages(page: Any, refs: Callable[[Any], list[FileRef]], vendor: str) -> list[FileRef]:
    """Every file of a paginated SDK list (``has_next_page`` / ``get_next_page``), bounded."""
    listing = Listing(vendor)
    listing.add(refs(page))
    while page.has_next_page():
        page = page.get_next_page()
        listing.add(refs(page))
    return listing.finish(page)


async def aall_pages(page: Any, refs: Callable[[Any], list[FileRef]], vendor: str) -> list[FileRef]:
    """Async :func:`all_pages` (the async SDK's pages)."""
    listing = Listing(vendor)
    listing.add(refs(page))
    while page.has_next_page():
        page = await page.get_next_page()
        listing.add(refs(page))
    return listing.finish(page)
