"""``llmport cassette show`` on Voyage embedding recordings: the plugin's own reader.

Text and multimodal embedding calls show how many inputs went, how many
vectors of what size came back and the usage, never the vectors; a garbled
exchange is left to the generic reading, and another host's ``/v1/embeddings``
is not Voyage's to read.
"""

from __future__ import annotations

import pytest
from llmport.plugin_api import RecordedExchange, ShownExchange
from llmport_voyage.recorded import read_embeddings
from support.cassette_support import CASSETTES, hostile_exchanges, shown


def test_embeddings_show_counts_and_dimensions_not_the_vectors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert shown(CASSETTES / "embeddings" / "voyage_documents.yaml", capsys) == [
        "#1 POST /v1/embeddings  (voyage-3.5)",
        "  you: 2 inputs to embed",
        "  model: 2 vectors of 1024 dimensions",
    ]


def test_multimodal_embeddings_show_their_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert shown(CASSETTES / "embeddings" / "media_voyage_multimodal.yaml", capsys) == [
        "#1 POST /v1/multimodalembeddings  (voyage-multimodal-3.5)",
        "  you: 3 inputs to embed",
        "  model: 3 vectors of 4 dimensions",
        "  usage: 9 in, 0 out",
    ]


def test_only_voyages_host_is_read() -> None:
    sent = {"model": "voyage-3.5", "input": ["a"]}
    other = RecordedExchange("POST", "https://api.example.com/v1/embeddings", sent, None)
    assert read_embeddings(other) is None
    own = RecordedExchange("POST", "https://api.voyageai.com/v1/embeddings", sent, None)
    assert read_embeddings(own) == ShownExchange.embedding("voyage-3.5", 1, None)


@pytest.mark.parametrize("path", ["/v1/embeddings", "/v1/multimodalembeddings"])
def test_a_garbled_exchange_is_left_to_the_generic_reading(path: str) -> None:
    for exchange in hostile_exchanges("https://api.voyageai.com" + path):
        shown = read_embeddings(exchange)
        assert shown is None or isinstance(shown, ShownExchange), exchange
