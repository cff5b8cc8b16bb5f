"""The source file ``fix(write=True)`` rewrites: read once, written back only as it was read.

:meth:`SourceFile.read` takes the file's bytes through a descriptor that
does not follow a symbolic link, decodes them in the file's own encoding
(its PEP 263 coding line or BOM, else UTF-8) and splits them into lines
that keep their endings (``\\r\\n`` stays ``\\r\\n``). :meth:`SourceFile.write`
writes only when the file is still the same regular file holding the same
bytes, encodes in the same encoding, and replaces the file atomically (a
temporary file in the same folder, its mode bits copied, then
``os.replace``): a reader sees the old file or the new one, never half of
one, and a symbolic link swapped in meanwhile is refused, never followed.

Every problem is an :class:`~llmport.errors.OptionError` naming the file.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import tempfile
import tokenize
from pathlib import Path

from ..errors import OptionError
from ..slotted import dataclass

__all__ = ["SourceFile", "with_newline"]

#: One line and its ending, as Python's tokenizer sees lines (\r\n, \r or \n).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@dataclass(slots=True, frozen=True)
class SourceFile:
    """A Python source file as read: its bytes, encoding, identity and lines."""

    path: Path
    raw: bytes
    encoding: str
    #: ``(st_dev, st_ino)`` of the regular file read.
    identity: tuple[int, int]
    mode: int
    #: The lines, each with its own ending.
    lines: tuple[str, ...]

    @classmethod
    def read(cls, path: Path) -> SourceFile:
        """The file at ``path``; :class:`OptionError` if it is a link or not readable text."""
        raw, identity, mode = _read_regular(path)
        try:
            encoding = tokenize.detect_encoding(io.BytesIO(raw).readline)[0]
            text = raw.decode(encoding)
        except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
            raise OptionError(f"{path} is not readable Python source text: {exc}") from None
        return cls(path, raw, encoding, identity, mode, tuple(_LINE.findall(text)))

    @property
    def newline(self) -> str:
        """The file's line ending (that of its first line; ``\\n`` for a one-line file)."""
        first = self.lines[0] if self.lines else "\n"
        return first[len(first.rstrip("\r\n")) :] or "\n"

    def normalized(self) -> list[str]:
        """The lines with ``\\n`` endings (as :mod:`inspect` and :mod:`difflib` see them)."""
        return [_with_ending(line, "\n") for line in self.lines]

    def encoded(self, lines: list[str]) -> bytes:
        """``lines`` in the file's encoding; :class:`OptionError` if one cannot be written so."""
        try:
            return "".join(lines).encode(self.encoding)
        except UnicodeEncodeError as exc:
            raise OptionError(
                f"{self.path}: the fix holds {exc.object[exc.start : exc.end]!r}, which the "
                f"file's encoding ({self.encoding}) cannot hold; not written"
            ) from None

    def check_unchanged(self) -> None:
        """:class:`OptionError` unless the path is still this regular file with these bytes."""
        raw, identity, _ = _read_regular(self.path)
        if identity != self.identity or raw != self.raw:
            raise OptionError(f"{self.path} changed since fix() read it; not written")

    def write(self, data: bytes) -> None:
        """Replace the file by ``data`` atomically, if it is still as read."""
        self.check_unchanged()
        folder = self.path.parent
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{self.path.name}.", suffix=".fix")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temporary, stat.S_IMODE(self.mode))
            self.check_unchanged()  # the last moment before the swap
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


def with_newline(lines: list[str], newline: str) -> list[str]:
    """``lines`` (``\\n``-ended) with ``newline`` endings instead."""
    return [_with_ending(line, newline) for line in lines]


def _with_ending(line: str, ending: str) -> str:
    body = line.rstrip("\r\n")
    return body + ending if len(body) != len(line) else line


def _read_regular(path: Path) -> tuple[bytes, tuple[int, int], int]:
    """The bytes, ``(dev, inode)`` and mode of the regular file at ``path`` (no link followed)."""
    try:
        if path.is_symlink():
            raise OptionError(f"{path} is a symbolic link; fix() writes only a regular file")
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError as exc:
        raise OptionError(f"cannot read {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OptionError(f"{path} is not a regular file; not written")
        return handle.read(), (info.st_dev, info.st_ino), info.st_mode
