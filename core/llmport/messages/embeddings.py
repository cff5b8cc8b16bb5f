"""Embeddings as neutral values: one request, one vendor answer, the user's result.

* :class:`EmbedRequest` is what a provider converts for its vendor (one
  request's worth of inputs: the core splits a long list before a plugin
  sees it). An input is a text, or an :class:`EmbedContent` (an image, or
  text and images the model embeds as one vector) where the model embeds media.
* :class:`EmbedResponse` is what a provider returns: the vectors as one
  little-endian float32 buffer, row-major, one row per input in request
  order. Its constructors :meth:`EmbedResponse.from_rows` and
  :meth:`EmbedResponse.from_base64` check the vendor's answer (count, equal
  lengths, finite values) and raise
  :class:`~llmport.errors.MalformedResponseError` otherwise (never an empty success).
* :class:`Embeddings` is what ``rt.embed`` returns: the same compact buffer
  for every input of the call, read as rows (``[i]``, iteration), or as a
  numpy array (``.numpy()``, numpy imported only then).

No list of Python floats is kept: a float in a list costs ~32 bytes, in the
buffer 4.
"""

from __future__ import annotations

import binascii
import hashlib
import math
import sys
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import field
from typing import Any, Literal, overload

from ..errors import ContentError, MalformedResponseError, MessageError
from ..slotted import dataclass
from .types import MediaBlock, TextBlock, Usage, block_from_dict, block_to_dict

__all__ = [
    "EmbedContent",
    "EmbedInput",
    "EmbedRequest",
    "EmbedResponse",
    "Embeddings",
    "InputType",
    "Truncate",
    "float32_rows",
    "is_finite",
]

#: The neutral input types: a search query, or a document to be found by one.
InputType = Literal["query", "document"]
#: Which end of an over-long input the vendor may cut (None: refuse it before the wire).
Truncate = Literal["start", "end"]

_INPUT_TYPES = ("query", "document")
_TRUNCATES = ("start", "end")
_BIG_ENDIAN = sys.byteorder == "big"


@dataclass(slots=True, frozen=True)
class EmbedContent:
    """One input made of content blocks: an image, or text and images embedded as one vector.

    Built by the core from what the caller passed (``{"type": "image", "path": ...}``,
    a :class:`~llmport.messages.types.MediaBlock`, or a list of strings and blocks
    for one fused input), every block loaded and its bytes checked against its media
    type before any request. Only a model that embeds media takes one (its
    ``input_modalities`` holds ``"image"``); the others refuse it typed.
    """

    blocks: tuple[TextBlock | MediaBlock, ...]

    @property
    def media(self) -> tuple[MediaBlock, ...]:
        """The media blocks, in order."""
        return tuple(b for b in self.blocks if isinstance(b, MediaBlock))

    @property
    def texts(self) -> tuple[str, ...]:
        """The texts, in order."""
        return tuple(b.text for b in self.blocks if isinstance(b, TextBlock))

    def digest(self) -> str:
        """The cache key of this input: SHA-256 over each block's kind, media type and
        bytes (a media block's own SHA-256, never kept), or text, in order."""
        digest = hashlib.sha256(b"llmport-embed-content")
        for block in self.blocks:
            if isinstance(block, TextBlock):
                part = b"text\x00" + block.text.encode("utf-8", "surrogatepass")
            else:
                raw = block.data if block.inline else (block.url or "").encode()
                kind = f"{block.type}\x00{block.media_type}\x00".encode()
                part = kind + hashlib.sha256(raw or b"").digest()
            digest.update(len(part).to_bytes(8, "little") + part)
        return digest.hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``{"content": [block, ...]}`` (blocks as ``Message.to_dict`` has them)."""
        return {"content": [block_to_dict(block) for block in self.blocks]}


#: One embed input: a text, or content blocks where the model embeds media.
EmbedInput = str | EmbedContent


def _input_from_dict(item: Any) -> EmbedInput:
    if isinstance(item, str):
        return item
    content = item.get("content") if isinstance(item, Mapping) else None
    if not isinstance(content, list) or not content:
        raise MessageError("an embed request's input is a string or {'content': [blocks]}")
    blocks = [block_from_dict(dict(b)) if isinstance(b, Mapping) else b for b in content]
    kept = [b for b in blocks if isinstance(b, (TextBlock, MediaBlock))]
    if len(kept) != len(blocks):
        raise MessageError("an embed input's content holds text and media blocks only")
    return EmbedContent(tuple(kept))


@dataclass(slots=True, frozen=True)
class EmbedRequest:
    """One request's inputs for one embedding model (already checked and split by the core).

    ``truncate=None`` means an over-long input is refused before the wire;
    ``"start"`` / ``"end"`` ask the vendor to cut it there. ``options`` are
    vendor fields (``vendor={"openai": {...}}``) merged into the body.
    """

    model: str
    inputs: tuple[EmbedInput, ...]
    input_type: InputType | None = None
    dimensions: int | None = None
    truncate: Truncate | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def texts(self) -> tuple[str, ...]:
        """The inputs as texts: what a text-only model's plugin sends.

        :func:`~llmport.provider.embedding.check_embed` has refused content for a
        model without media; a plugin that skipped it gets a typed error here.
        """
        for index, item in enumerate(self.inputs):
            if not isinstance(item, str):
                raise ContentError(index, f"{self.model} embeds text only, not content blocks")
        return self.inputs  # type: ignore[return-value]  # every item is a str (checked)

    @property
    def has_media(self) -> bool:
        """True when an input is content blocks (the media path of a multimodal model)."""
        return any(not isinstance(item, str) for item in self.inputs)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (fields at their default are left out)."""
        inputs = [item if isinstance(item, str) else item.to_dict() for item in self.inputs]
        out: dict[str, Any] = {"model": self.model, "inputs": inputs}
        for key in ("input_type", "dimensions", "truncate"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.options:
            out["options"] = dict(self.options)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EmbedRequest:
        """Read :meth:`to_dict`'s form back; a malformed dict is a :class:`MessageError`."""
        if not isinstance(data, Mapping):
            raise MessageError(f"an embed request must be an object, got {type(data).__name__}")
        model, inputs = data.get("model"), data.get("inputs")
        if not isinstance(model, str) or not isinstance(inputs, list):
            raise MessageError("an embed request needs 'model' (a string) and 'inputs' (a list)")
        items = tuple(_input_from_dict(item) for item in inputs)
        input_type, truncate = data.get("input_type"), data.get("truncate")
        dimensions, options = data.get("dimensions"), data.get("options", {})
        if input_type is not None and input_type not in _INPUT_TYPES:
            raise MessageError(f"'input_type' must be 'query' or 'document', got {input_type!r}")
        if truncate is not None and truncate not in _TRUNCATES:
            raise MessageError(f"'truncate' must be 'start' or 'end', got {truncate!r}")
        if dimensions is not None and (type(dimensions) is not int or dimensions < 1):
            raise MessageError(f"'dimensions' must be a positive integer, got {dimensions!r}")
        if not isinstance(options, Mapping):
            raise MessageError("an embed request's 'options' must be an object")
        return cls(model, items, input_type, dimensions, truncate, dict(options))


@dataclass(slots=True, frozen=True)
class EmbedResponse:
    """A vendor's vectors for one :class:`EmbedRequest`.

    ``data`` is little-endian float32, row-major: ``count`` rows of
    ``dimensions`` values, in request order. Build it with :meth:`from_rows`
    or :meth:`from_base64`, which check what the vendor sent.
    """

    data: bytes | bytearray
    count: int
    dimensions: int
    usage: Usage = field(default_factory=Usage)
    model: str = ""

    @classmethod
    def from_rows(
        cls,
        rows: Sequence[Sequence[float]],
        *,
        expected: int | None = None,
        usage: Usage | None = None,
        model: str = "",
    ) -> EmbedResponse:
        """Vectors given as lists of numbers (Gemini, Bedrock, Cohere).

        ``expected`` is the request's input count. Raises
        :class:`MalformedResponseError` when the count differs, rows differ in
        length or are empty, or a value is not a finite float32.
        """
        _check_count(len(rows), expected)
        width = _row_width(rows)
        buffer = array("f")
        try:
            for row in rows:
                if len(row) != width:
                    raise _malformed(f"vectors differ in length ({len(row)} vs {width})")
                if type(row) is list:
                    buffer.fromlist(row)  # JSON's lists: ~2.5x faster than extend
                else:
                    buffer.extend(iter(row))  # iter: an array of another type code too
        except TypeError:
            raise _malformed("a vector holds something other than numbers") from None
        return cls._checked(buffer, len(rows), width, usage, model)

    @classmethod
    def from_base64(
        cls,
        items: Sequence[str],
        *,
        expected: int | None = None,
        usage: Usage | None = None,
        model: str = "",
    ) -> EmbedResponse:
        """Vectors given as base64 little-endian float32 (OpenAI, Voyage AI), decoded once."""
        _check_count(len(items), expected)
        if not items:
            raise _malformed("the answer holds no vectors")
        first = _unbase64(items[0])
        width = len(first)
        if width == 0 or width % 4:
            raise _malformed(f"a vector of {width} bytes is not float32 values")
        # Each vector decoded straight into its row: no list of decoded vectors to join.
        data = bytearray(len(items) * width)
        data[:width] = first
        for row, item in enumerate(items[1:], 1):
            chunk = _unbase64(item)
            if len(chunk) != width:
                raise _malformed(f"vectors differ in length ({len(chunk) // 4} vs {width // 4})")
            data[row * width : (row + 1) * width] = chunk
        if not is_finite(data):
            raise _malformed("a vector holds a value that is not finite (NaN or infinity)")
        return cls(data, len(items), width // 4, usage or Usage(), model)

    @classmethod
    def _checked(
        cls, buffer: array[float], count: int, width: int, usage: Usage | None, model: str
    ) -> EmbedResponse:
        # A sum of float32 values in float64 cannot overflow: it is finite iff every value is.
        if not math.isfinite(sum(buffer)):
            raise _malformed("a vector holds a value that is not finite (NaN or infinity)")
        if _BIG_ENDIAN:
            buffer.byteswap()
        return cls(buffer.tobytes(), count, width, usage or Usage(), model)

    def rows(self) -> list[tuple[float, ...]]:
        """The vectors as tuples of floats (for tests and small answers)."""
        return list(Embeddings(self.data, self.count, self.dimensions, self.model, self.usage))


class Embeddings(Sequence[tuple[float, ...]]):
    """The vectors of one ``rt.embed`` call, in input order, in one float32 buffer.

    ``len(e)`` inputs; ``e[i]`` is input ``i``'s vector as a tuple of floats
    (made on demand); iteration yields them in order; ``e.numpy()`` is a
    ``(len(e), e.dimensions)`` float32 array sharing the buffer (numpy is
    optional, imported only there). ``e.model`` is the model that answered,
    ``e.usage`` the tokens (and cost) of the call.
    """

    __slots__ = ("_buffer", "_count", "_view", "dimensions", "model", "usage")

    def __init__(
        self,
        data: bytes | bytearray,
        count: int,
        dimensions: int,
        model: str = "",
        usage: Usage | None = None,
    ) -> None:
        if len(data) != count * dimensions * 4:
            raise ValueError(f"{len(data)} bytes are not {count} vectors of {dimensions} float32")
        self._buffer = data
        self._count = count
        #: Values per vector.
        self.dimensions = dimensions
        #: The model that made them.
        self.model = model
        #: Tokens (and cost) of the call that made them.
        self.usage = usage if usage is not None else Usage()
        self._view = float32_rows(data)

    @property
    def data(self) -> bytes | bytearray:
        """The little-endian float32 buffer, row-major (``len(self) * dimensions * 4`` bytes)."""
        return self._buffer

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> tuple[float, ...]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[float, ...]]: ...
    def __getitem__(self, index: int | slice) -> tuple[float, ...] | list[tuple[float, ...]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(f"embedding {index} out of range ({self._count} vectors)")
        start = index * self.dimensions
        return tuple(self._view[start : start + self.dimensions])

    def __iter__(self) -> Iterator[tuple[float, ...]]:
        for i in range(self._count):
            yield self[i]

    def __repr__(self) -> str:
        return f"Embeddings({self._count} x {self.dimensions}, model={self.model!r})"

    def numpy(self) -> Any:
        """A ``(len, dimensions)`` float32 ``numpy.ndarray`` over the buffer (no copy).

        Typed ``Any``: numpy is optional, not a dependency to type against.
        """
        import importlib

        try:
            np = importlib.import_module("numpy")  # optional: never a dependency
        except ImportError:
            raise ImportError("Embeddings.numpy() needs numpy: pip install numpy") from None
        return np.frombuffer(self._buffer, dtype="<f4").reshape(self._count, self.dimensions)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the vectors as lists, model, dimensions and usage."""
        return {
            "model": self.model,
            "dimensions": self.dimensions,
            "vectors": [list(row) for row in self],
            "usage": self.usage.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Embeddings:
        """Read :meth:`to_dict`'s form back (values checked as a vendor's would be)."""
        vectors = data.get("vectors")
        if not isinstance(vectors, list) or not vectors:
            raise MessageError("embeddings need 'vectors' (a non-empty list of lists of numbers)")
        usage = Usage.from_dict(data.get("usage") or {})
        answer = EmbedResponse.from_rows(vectors, usage=usage)
        return cls(answer.data, answer.count, answer.dimensions, str(data.get("model", "")), usage)


def float32_rows(data: bytes | bytearray) -> Sequence[float]:
    """A read-only sequence of the float32 values in ``data`` (little-endian), without copying
    where the machine is little-endian."""
    if _BIG_ENDIAN:
        values = array("f", bytes(data))
        values.byteswap()
        return values
    return memoryview(data).cast("f")


def is_finite(data: bytes | bytearray) -> bool:
    """True if every float32 in ``data`` (little-endian) is finite (no NaN, no infinity).

    A float32 is NaN or infinite only when its exponent bits are all ones, so its last
    byte is ``0x7f`` or ``0xff``: when no last byte is, every value is finite, told by
    one C-speed slice (~100x faster than making a Python float of each value, which
    held the event loop of ``rt.aembed`` for ~3 ms an answer). Otherwise the values
    are summed in float64, where float32 values cannot overflow: the sum is finite
    iff each one is.
    """
    if not data:
        return True
    high = data[3::4]  # each value's last byte (a C-speed copy, searched by memchr)
    if b"\x7f" not in high and b"\xff" not in high:
        return True
    return math.isfinite(sum(float32_rows(data)))


def _unbase64(item: Any) -> bytes:
    try:
        return binascii.a2b_base64(item)
    except (binascii.Error, TypeError, ValueError):
        raise _malformed("a vector is not base64") from None


def _check_count(count: int, expected: int | None) -> None:
    if expected is not None and count != expected:
        raise _malformed(f"the answer holds {count} vectors for {expected} inputs")


def _row_width(rows: Sequence[Sequence[float]]) -> int:
    if not rows:
        raise _malformed("the answer holds no vectors")
    first = rows[0]
    # Any sized row of numbers (a list, a tuple, an array of an SDK); never a string.
    if isinstance(first, (str, bytes)) or not hasattr(first, "__len__") or len(first) == 0:
        raise _malformed("a vector is empty or not a list of numbers")
    return len(first)


def _malformed(problem: str) -> MalformedResponseError:
    # Not retried: the same request gets the same wrong answer.
    return MalformedResponseError(f"embedding answer: {problem}", retryable=False)
