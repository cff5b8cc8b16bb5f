"""Recorded Cohere ``/v2/embed`` exchanges in neutral types (``llmport cassette show``).

How many inputs went (``texts``, or ``inputs`` when one holds media), how many
vectors of what size came back, read by :func:`~.embeddings.answer` as a live
call reads them, and the billed input tokens; never the vectors. Imported by
the cassette-reader hook only.
"""

from __future__ import annotations

from llmport.plugin_api import RecordedExchange, ShownExchange

from .embeddings import answer


def read_embed(exchange: RecordedExchange) -> ShownExchange | None:
    """A ``/v2/embed`` exchange: the input count, the vectors' count and size, the usage."""
    sent = exchange.sent
    if not exchange.path.endswith("/v2/embed") or not isinstance(sent, dict):
        return None
    given = sent.get("texts", sent.get("inputs"))
    count = len(given) if isinstance(given, list) else 0
    model = str(sent.get("model") or "")
    return ShownExchange.read_embedding(
        exchange, model, count, lambda a: answer(a, model, "cohere")
    )
