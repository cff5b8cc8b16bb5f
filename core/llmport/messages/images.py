"""Image generation as neutral values (``rt.generate_image``).

* :class:`ImageRequest` is what a provider converts for its vendor's image
  endpoint: the prompt and the neutral options (``size`` as
  ``"WIDTHxHEIGHT"``, ``n``, ``quality``, ``output_format``, ``seed``) plus
  the caller's vendor fields.
* :class:`ImageResponse` is what a provider returns: the images as checked
  :class:`~llmport.messages.types.MediaBlock`\\ s, the usage and the model.
* :class:`Images` is what ``rt.generate_image`` returns: the blocks in order
  (``[i]``, ``len()``, iteration), ``.model`` and ``.usage`` (cost through
  the price table).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field
from typing import Any, Literal

from ..errors import MessageError
from ..slotted import dataclass
from .types import MediaBlock, Usage

__all__ = ["ImageFormat", "ImageQuality", "ImageRequest", "ImageResponse", "Images"]

#: The neutral ``quality=`` values (each vendor maps them to its own).
ImageQuality = Literal["low", "medium", "high"]
#: The neutral ``output_format=`` values.
ImageFormat = Literal["png", "jpeg", "webp"]

_FIELDS = ("model", "prompt", "n", "size", "quality", "output_format", "seed")


@dataclass(slots=True, frozen=True)
class ImageRequest:
    """One image generation request, checked (:mod:`llmport.provider.imaging`)."""

    model: str
    prompt: str
    n: int = 1
    size: str | None = None
    quality: ImageQuality | None = None
    output_format: ImageFormat | None = None
    seed: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def dimensions(self) -> tuple[int, int] | None:
        """``size`` as ``(width, height)`` (None: the vendor's default size)."""
        if self.size is None:
            return None
        width, _, height = self.size.partition("x")
        return int(width), int(height)

    def to_dict(self) -> dict[str, Any]:
        """The request as a JSON-safe dict (options included)."""
        out: dict[str, Any] = {name: getattr(self, name) for name in _FIELDS}
        out["options"] = dict(self.options)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ImageRequest:
        """Read :meth:`to_dict`'s form back; a malformed dict is a :class:`MessageError`."""
        if not isinstance(data, Mapping) or not isinstance(data.get("prompt"), str):
            raise MessageError("an image request needs a 'prompt' string")
        options = data.get("options") or {}
        if not isinstance(options, Mapping):
            raise MessageError("an image request's 'options' must be an object")
        values: dict[str, Any] = {name: data.get(name) for name in _FIELDS}
        values["n"] = data.get("n", 1)
        return cls(**values, options=dict(options))


@dataclass(slots=True, frozen=True)
class ImageResponse:
    """A vendor's images for one :class:`ImageRequest` (each block's bytes already checked)."""

    images: tuple[MediaBlock, ...]
    usage: Usage = field(default_factory=Usage)
    model: str = ""


class Images:
    """The images one ``rt.generate_image`` call made, in order, with their usage."""

    __slots__ = ("images", "model", "usage")

    def __init__(self, images: tuple[MediaBlock, ...], model: str, usage: Usage) -> None:
        #: The images as :class:`~llmport.messages.types.MediaBlock` (``.save(path)``).
        self.images = images
        #: The model that made them (``provider:model``).
        self.model = model
        #: Tokens (where the vendor counts them), requests, and cost when priced.
        self.usage = usage

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> MediaBlock:
        return self.images[index]

    def __iter__(self) -> Iterator[MediaBlock]:
        return iter(self.images)

    def __repr__(self) -> str:
        kinds = ", ".join(block.media_type for block in self.images)
        return f"Images({self.model!r}, [{kinds}])"
