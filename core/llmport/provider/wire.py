"""JSON request bodies serialized once, to ``bytes``, with media spliced in as bytes.

A plugin's converter puts a :class:`Splice` where a media block's base64 (or
data URL) goes; :func:`encode` serializes the rest of the body once (compact
separators, ``ensure_ascii=False``: what most vendor SDKs send; or, with
``style="python"``, ``json.dumps``'s defaults, as google-genai sends) and
keeps the JSON pieces between the splices. :meth:`Body.bytes` joins those
pieces with each block's cached base64 bytes (:meth:`MediaBlock.base64_bytes`,
or :meth:`MediaBlock.urlsafe_base64_bytes` for :func:`urlsafe_base64_of`), so
a 20 MB image exists once encoded, once in the body, and never as a ``str``.

Consumers that need plain JSON (batch files, token counting through an SDK)
take :func:`plain`, which puts the strings in. Imports nothing beyond the
standard library's ``math`` and ``os`` (``json`` and jiter, a core dependency, when
:func:`loads` first reads): ``import llmport`` stays light.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..messages.types import MediaBlock

__all__ = [
    "Body",
    "Splice",
    "base64_of",
    "data_url_of",
    "dumps",
    "encode",
    "loads",
    "plain",
    "urlsafe_base64_of",
]

#: ``"compact"``: ``,`` / ``:`` separators, UTF-8 text, no NaN (the OpenAI and
#: Anthropic SDKs' bodies); ``"python"``: ``json.dumps``'s defaults (``", "`` /
#: ``": "``, ASCII escapes, NaN written as ``json.dumps`` writes it), google-genai's.
Style = Literal["compact", "python"]


class Splice:
    """Where a media block's base64 goes in a JSON body: one string, ``prefix`` + base64.

    ``urlsafe`` selects URL-safe base64 (``-`` / ``_``) instead of the
    standard alphabet. Compares equal to the string it stands for (so a
    converted body can be checked against plain JSON), and to another splice
    of the same block, prefix and alphabet. Its ``repr`` never shows the bytes.
    """

    __slots__ = ("block", "prefix", "urlsafe")

    def __init__(self, block: MediaBlock, prefix: str = "", *, urlsafe: bool = False) -> None:
        self.block = block
        self.prefix = prefix
        self.urlsafe = urlsafe

    def text(self) -> str:
        """The string this splice stands for (builds it: for plain JSON, not the wire)."""
        if self.urlsafe:
            return self.prefix + self.block.urlsafe_base64()
        if self.prefix == f"data:{self.block.media_type};base64,":
            return self.block.data_url()
        return self.prefix + self.block.base64()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Splice):
            return (
                other.block is self.block
                and other.prefix == self.prefix
                and other.urlsafe == self.urlsafe
            )
        if isinstance(other, str):
            return other == self.text()
        return NotImplemented

    def __hash__(self) -> int:
        return hash((id(self.block), self.prefix, self.urlsafe))

    def __repr__(self) -> str:
        safe = ", urlsafe=True" if self.urlsafe else ""
        return f"Splice({self.block.describe()}, prefix={self.prefix!r}{safe})"


def base64_of(block: MediaBlock) -> Splice:
    """The block's standard base64, as a JSON string."""
    return Splice(block)


def data_url_of(block: MediaBlock) -> Splice:
    """``data:<media_type>;base64,...`` of the block, as a JSON string."""
    return Splice(block, f"data:{block.media_type};base64,")


def urlsafe_base64_of(block: MediaBlock) -> Splice:
    """The block's URL-safe base64 (``-`` / ``_``, padded), as a JSON string."""
    return Splice(block, urlsafe=True)


class Body:
    """A JSON body serialized once: its UTF-8 JSON pieces and the media between them.

    ``pieces`` has one more item than ``media``; the body is ``pieces[0]``,
    ``media[0]``'s base64, ``pieces[1]``, ... ``urlsafe`` (when given) says,
    per medium, whether its URL-safe base64 goes in. Cheap to keep (the
    media are references to blocks); :meth:`bytes` builds the body for one send.
    """

    __slots__ = ("media", "pieces", "urlsafe")

    def __init__(
        self,
        pieces: Sequence[bytes],
        media: Sequence[MediaBlock],
        urlsafe: Sequence[bool] | None = None,
    ) -> None:
        self.pieces = pieces
        self.media = media
        self.urlsafe = urlsafe

    def bytes(self) -> bytes:
        """The whole body (one join; no copy at all when it holds no media)."""
        if not self.media:
            return self.pieces[0]
        parts = [self.pieces[0]]
        safe = self.urlsafe or [False] * len(self.media)
        for block, urlsafe, piece in zip(self.media, safe, self.pieces[1:], strict=True):
            parts.append(block.urlsafe_base64_bytes() if urlsafe else block.base64_bytes())
            parts.append(piece)
        return b"".join(parts)

    def __len__(self) -> int:
        """The body's size in bytes (without building it)."""
        size = sum(len(p) for p in self.pieces)
        return size + sum(4 * ((b.size + 2) // 3) for b in self.media)

    def __repr__(self) -> str:
        return f"Body({len(self)} bytes, {len(self.media)} media)"


def loads(data: str | bytes) -> Any:
    """JSON as RFC 8259 has it, read from a vendor's answer or a model's output.

    Python's ``json.loads`` also takes ``NaN``, ``Infinity`` and ``1e400``
    (as inf), and raises ``RecursionError`` for deep nesting and a bare
    ``ValueError`` for an integer past the interpreter's digit limit; here
    each is a :class:`json.JSONDecodeError`, which the vendor boundary turns
    into a :class:`~llmport.errors.MalformedResponseError`, so a value read
    here can always be sent again (:func:`encode` refuses non-finite numbers).
    """
    fast = _fast_loads(data)
    if fast is not _SLOW:
        return fast
    import json  # here: the fast path is jiter's, and json costs ~2 ms of start-up

    text = data.decode() if isinstance(data, (bytes, bytearray)) else data
    try:
        return json.loads(text, parse_float=_finite_float, parse_constant=_no_constant)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None
    except ValueError as exc:  # an integer longer than int() reads
        raise json.JSONDecodeError(str(exc).split(":")[0], text, 0) from None


#: :func:`_fast_loads` could not say: read the document with the standard library.
_SLOW: Any = object()
#: Integers longer than this (in bits) go to the standard library, which refuses one of
#: more than ``sys.get_int_max_str_digits()`` digits (4,300 by default: ~14,284 bits).
_LONG_INT_BITS = 14_000


def _fast_loads(data: str | bytes) -> Any:
    """``data`` read by jiter (a core dependency, ~15x faster on the long number arrays
    of embedding answers than ``json`` calling back per float), or :data:`_SLOW`.

    jiter refuses ``NaN`` and ``Infinity`` itself (``allow_inf_nan=False``). Anything
    it refuses (deep nesting, a lone surrogate escape, a syntax error) goes to the
    standard library's reading, and so does a document whose reading holds a number
    jiter read differently (:func:`_as_json_reads`: an overflow read as infinity, a
    very long integer), so what is accepted and every error stay exactly as
    :func:`loads` documents. The check looks at the numbers read, not the text: a
    scan of the text cost ~300x jiter's reading on an 800 kB base64 embedding answer
    (and its base64 often looked like an exponent).
    """
    import jiter  # lazily: ``import llmport`` stays light

    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    try:
        value = jiter.from_json(raw, allow_inf_nan=False)
    except ValueError:
        return _SLOW
    return value if _as_json_reads(value) else _SLOW


def _as_json_reads(value: Any) -> bool:
    """True when every number in ``value`` (jiter's reading) is finite and every integer
    short enough for the standard library: it would read the document the same.

    Walked without recursion; a list of numbers is summed in C at once (an embedding's
    thousands of floats), its items looked at one by one only when the sum is not finite.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list:
            if not _finite_numbers(item):
                stack.extend(item)
        elif kind is float:
            if not math.isfinite(item):
                return False
        elif kind is int and item.bit_length() > _LONG_INT_BITS:
            return False
    return True


def _finite_numbers(items: list[Any]) -> bool:
    """True when ``items`` are numbers whose float sum is finite (then each of them is)."""
    try:
        return math.isfinite(sum(items, 0.0))
    except (TypeError, OverflowError):  # not all numbers, or an integer past a float
        return False


def _finite_float(text: str) -> float:
    number = float(text)
    if number != number or number in (float("inf"), float("-inf")):
        import json

        raise json.JSONDecodeError(f"{text} is not a finite number", text, 0)
    return number


def _no_constant(name: str) -> Any:
    import json

    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


def encode(body: Any, *, style: Style = "compact") -> Body:
    """Serialize ``body`` once, as the SDKs would, splices kept apart.

    ``style="compact"`` (the default): compact, UTF-8, no NaN;
    ``style="python"``: ``json.dumps(body)`` with its defaults, encoded.
    """
    import json  # here, not at import: json costs ~2 ms of a script's start-up

    token = f"llmport-splice-{os.urandom(8).hex()}"
    media: list[MediaBlock] = []
    urlsafe: list[bool] = []

    def default(value: Any) -> Any:
        if isinstance(value, Splice):
            media.append(value.block)
            urlsafe.append(value.urlsafe)
            return value.prefix + token
        return _jsonable(value)

    if style == "python":
        text = json.dumps(body, default=default)
    else:
        text = json.dumps(
            body, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=default
        )
    data = text.encode()
    if not media:  # the common body: tuples (the empty one shared), no lists kept per request
        return Body((data,), ())
    pieces = data.split(token.encode())
    if len(pieces) != len(media) + 1:  # the token turned up elsewhere: cannot happen by chance
        raise ValueError("a JSON string in the body holds the splice marker")
    return Body(pieces, media, urlsafe if any(urlsafe) else None)


def dumps(body: Any, *, style: Style = "compact") -> bytes:
    """``body`` as the UTF-8 JSON bytes sent on the wire, media spliced in as bytes."""
    return encode(body, style=style).bytes()


def plain(value: Any) -> Any:
    """``value`` with every :class:`Splice` replaced by its string (for plain-JSON consumers)."""
    if isinstance(value, Splice):
        return value.text()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _jsonable(value: Any) -> Any:
    # What the SDKs' encoders also accept beyond plain JSON types.
    if callable(getattr(value, "isoformat", None)):  # dates and datetimes
        return value.isoformat()
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Iterable) and not isinstance(value, str | bytes | bytearray):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
