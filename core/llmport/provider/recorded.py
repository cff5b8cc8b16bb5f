"""What a provider plugin shows of a recorded exchange (``llmport cassette show``).

A cassette stores each vendor's own wire, and only that vendor's plugin knows
it. Through the ``llmport_cassette_readers`` hook a plugin registers readers:
a reader takes a :class:`RecordedExchange` (one interaction: method, URL, the
request's JSON and the stored response body) and returns a
:class:`ShownExchange` in neutral types (the request's conversation, the
answer as a :class:`~llmport.messages.types.Response`), or ``None`` when the
exchange is not its vendor's. Readers reuse the plugin's own converters: a
stream's events go through the plugin's stream reader and the core's one
assembler (:func:`~llmport.provider.assembly.assemble`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import LlmportError
from ..messages.types import Message, Response, TextBlock
from ..slotted import dataclass

if TYPE_CHECKING:
    from ..messages.embeddings import EmbedResponse


@dataclass(slots=True, frozen=True)
class RecordedExchange:
    """One recorded interaction, as a reader gets it.

    ``sent`` is the request body's JSON (``None`` when it was not JSON);
    ``received`` the stored response body: ``{"json": ...}``, ``{"events":
    [...]}`` (Server-Sent Events, each ``{"event", "data"}``), ``{"aws_events":
    [...]}`` (AWS event-stream frames, each ``{"headers", "payload"}``),
    ``{"text": ...}``, ``{"base64": ...}`` or ``None``.
    """

    method: str
    url: str
    sent: Any = None
    received: dict[str, Any] | None = None
    status: int = 200

    @property
    def path(self) -> str:
        """The URL's path (``/v1/chat/completions``)."""
        return urlsplit(self.url).path

    @property
    def answer(self) -> Any:
        """The response's JSON body (``None`` for a stream or another body)."""
        return (self.received or {}).get("json")

    @property
    def events(self) -> list[Any]:
        """A streamed response's events: each SSE event's data, or each frame's JSON payload."""
        body = self.received or {}
        if isinstance(body.get("events"), list):
            return [e.get("data") for e in body["events"] if isinstance(e, dict) and "data" in e]
        frames = body.get("aws_events")
        if isinstance(frames, list):
            return [(f.get("payload") or {}).get("json") for f in frames if isinstance(f, dict)]
        return []


@dataclass(slots=True)
class ShownExchange:
    """A recorded exchange in neutral types: what ``llmport cassette show`` prints.

    ``sent`` is the request's conversation (all of it: the command prints the
    turns after the last assistant message, the ones this request added);
    ``received`` the answer, ``None`` for a failed request.
    """

    sent: list[Message]
    received: Response | None = None
    model: str = ""

    @classmethod
    def embedding(cls, model: str, inputs: int, vectors: EmbedResponse | None) -> ShownExchange:
        """An embedding call: how many inputs went, how many vectors of what size came back.

        The vectors themselves are never shown (thousands of numbers say nothing
        to a reader); the answer carries the call's usage.
        """
        sent = Message("user", (TextBlock(f"{_counted(inputs, 'input')} to embed"),))
        if vectors is None:
            return cls([sent], None, model)
        shown = f"{_counted(vectors.count, 'vector')} of {vectors.dimensions} dimensions"
        return cls([sent], Response(shown, usage=vectors.usage, model=model), model)

    @classmethod
    def read_embedding(
        cls,
        exchange: RecordedExchange,
        model: str,
        inputs: int,
        read: Callable[[dict[str, Any]], EmbedResponse],
    ) -> ShownExchange | None:
        """An embedding exchange whose JSON answer ``read`` (the plugin's own reader) reads.

        An answer ``read`` refuses gives ``None``: the command then reads the
        exchange generically (a garbled recording never stops it).
        """
        answer = exchange.answer
        if not isinstance(answer, dict):  # a failed call, or a body that is not JSON
            return cls.embedding(model, inputs, None)
        try:
            vectors = read(answer)
        except (LlmportError, ValueError):  # ValueError: base64 that is not
            return None
        return cls.embedding(model, inputs, vectors)


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


#: A plugin's reader: a :class:`ShownExchange`, or ``None`` for another vendor's exchange.
CassetteReader = Callable[[RecordedExchange], "ShownExchange | None"]


def recorded_bytes(encoded: object) -> bytes:
    """The bytes of a recorded request's base64 field; ``b""`` for what is not base64.

    A reader shows what was sent, whatever it was: a field that does not
    decode is shown as empty media, never an error.
    """
    try:
        return base64.b64decode(str(encoded or ""), validate=False)
    except (binascii.Error, ValueError):
        return b""
