"""Recorded Voyage embedding exchanges in neutral types (``llmport cassette show``).

``/v1/embeddings`` (texts) and ``/v1/multimodalembeddings`` (content with
images) on Voyage's host: how many inputs went, how many vectors of what size
came back, read by :func:`~.embeddings.answer` as a live call reads them,
and the usage; never the vectors. Imported by the cassette-reader hook only.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from llmport.plugin_api import RecordedExchange, ShownExchange

from .embeddings import answer

_PATHS = ("/v1/embeddings", "/v1/multimodalembeddings")


def read_embeddings(exchange: RecordedExchange) -> ShownExchange | None:
    """A Voyage embedding exchange: the input count, the vectors' count and size, the usage.

    Only on Voyage's own host: other services answer ``/v1/embeddings`` too.
    """
    sent = exchange.sent
    host = urlsplit(exchange.url).hostname or ""
    voyage = host == "voyageai.com" or host.endswith(".voyageai.com")
    if not voyage or exchange.path not in _PATHS or not isinstance(sent, dict):
        return None
    given = sent.get("input", sent.get("inputs"))
    count = len(given) if isinstance(given, list) else 1
    model = str(sent.get("model") or "")
    return ShownExchange.read_embedding(
        exchange, model, count, lambda a: answer(a, model, "voyage")
    )
