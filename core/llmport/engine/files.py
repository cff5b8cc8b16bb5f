"""Files by reference: ``rt.upload``, ``rt.delete_file``, ``rt.files``.

A file is uploaded once to a vendor's files API and sent by reference
(a :class:`~llmport.messages.types.FileRef` in content) on every later turn,
instead of its bytes. The Runtime's methods delegate here; each vendor's
files client lives in its plugin, behind the provider contract's
``upload`` / ``delete_file`` / ``list_files`` (and async twins), which reach
the vendor through the plugin's vendor boundary (typed errors only). Everything
a caller can get wrong is an :class:`~llmport.errors.InputError` raised
here, before any request.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ContentError, InputError, OptionError
from ..messages.content import load_block
from ..messages.types import FileRef, MediaBlock

if TYPE_CHECKING:
    from ..provider.contract import Provider
    from .targets import Resolved, Routed, Targets


class FilesOwner(Protocol):
    """What these functions use of :class:`llmport.Runtime`."""

    max_block_bytes: int
    targets: Targets

    def route(self, model: str | None) -> Routed: ...

    def resolve(self, model: str) -> Resolved: ...

__all__ = [
    "adelete_file",
    "afiles",
    "aupload",
    "delete_file",
    "files",
    "files_provider",
    "holder",
    "upload",
    "upload_block",
]

#: The model name used to reach a provider instance by its prefix alone (any name
#: routes to the same instance, and no model is ever called through it).
_ANY_MODEL = "files"


def files_provider(rt: FilesOwner, provider: str | None) -> Provider:
    """The provider instance ``provider`` (a prefix or ``prefix:model``) names.

    None: the provider of the runtime's default model (a ``call=`` function's
    own, which has no files API). The instance is the one ``exec`` uses (same
    clients, same settings).
    """
    if provider is None:
        return rt.route(None)[0]
    if not isinstance(provider, str) or not provider.strip():
        raise OptionError(f"provider must be a provider name such as 'openai', got {provider!r}")
    return rt.resolve(provider if ":" in provider else f"{provider}:{_ANY_MODEL}")[0]


def upload_block(source: Any, max_bytes: int) -> MediaBlock:
    """What ``rt.upload`` was given, loaded and checked as one file block.

    A path (``str`` or ``os.PathLike``) is read; a ``str`` with a scheme
    (``s3://bucket/key``, ``https://...``) is a reference to a stored object;
    a dict is a content block (``{"type": "file", "data": ..., "media_type": ...}``);
    a :class:`MediaBlock` is taken as it is.
    """
    if isinstance(source, MediaBlock):
        return source
    if isinstance(source, str) and "://" in source:
        raw: Any = {"type": "file", "url": source}
    elif isinstance(source, (str, os.PathLike)):
        raw = {"type": "file", "path": source}
    elif isinstance(source, Mapping):
        raw = source
    else:
        raise ContentError(
            0,
            "upload takes a path, an s3:// URI, a content dict or a MediaBlock, "
            f"got {type(source).__name__}",
        )
    block = load_block(raw, 0, max_bytes=max_bytes)
    if not isinstance(block, MediaBlock):
        raise ContentError(0, f"upload takes a file, got a {block.type} block")
    return block


def _purpose(purpose: Any) -> str | None:
    if purpose is not None and (not isinstance(purpose, str) or not purpose):
        raise OptionError(f"purpose must be a non-empty string or None, got {purpose!r}")
    return purpose


def upload(rt: FilesOwner, source: Any, provider: str | None, purpose: Any) -> FileRef:
    """``rt.upload``: check everything, then one upload through the provider."""
    target = files_provider(rt, provider)
    block = upload_block(source, rt.max_block_bytes)
    return target.upload(block, _purpose(purpose))


async def aupload(rt: FilesOwner, source: Any, provider: str | None, purpose: Any) -> FileRef:
    """Async :func:`upload`."""
    target = files_provider(rt, provider)
    block = upload_block(source, rt.max_block_bytes)
    return await target.aupload(block, _purpose(purpose))


def holder(rt: FilesOwner, ref: Any) -> Provider:
    """The provider that can delete ``ref``: one of this runtime's that reads its account.

    A provider already made (the one that uploaded it, with its key and
    endpoint) first, else the default model's, else the one the reference's
    account names.
    """
    if not isinstance(ref, FileRef):
        raise OptionError(f"delete_file takes a FileRef (from rt.upload), got {type(ref).__name__}")
    made = [p for p in rt.targets.providers() if p.files_vendor == ref.provider]
    if not made:  # the default model's provider, when it reads that account
        with contextlib.suppress(InputError):
            made = [p for p in (rt.route(None)[0],) if p.files_vendor == ref.provider]
    return made[0] if made else _checked(ref, files_provider(rt, ref.provider))


def _checked(ref: FileRef, target: Provider) -> Provider:
    if ref.provider != target.files_vendor:
        raise OptionError(
            f"{ref.describe()} belongs to {ref.provider!r}, not {target.files_vendor!r}"
        )
    return target


def delete_file(rt: FilesOwner, ref: Any) -> None:
    """``rt.delete_file``: the provider holding the reference deletes it."""
    holder(rt, ref).delete_file(ref)


async def adelete_file(rt: FilesOwner, ref: Any) -> None:
    """Async :func:`delete_file`."""
    await holder(rt, ref).adelete_file(ref)


def files(rt: FilesOwner, provider: str | None) -> list[FileRef]:
    """``rt.files``: the files the vendor holds for this account."""
    return files_provider(rt, provider).list_files()


async def afiles(rt: FilesOwner, provider: str | None) -> list[FileRef]:
    """Async :func:`files`."""
    return await files_provider(rt, provider).alist_files()
