"""``llmport cassette show`` on Cohere ``/v2/embed`` recordings: the plugin's own reader.

An embedding call shows how many inputs went, how many vectors of what size
came back and the billed tokens, never the vectors; a garbled exchange is
left to the generic reading.
"""

from __future__ import annotations

import pytest
from llmport.plugin_api import ShownExchange
from llmport_cohere.recorded import read_embed
from support.cassette_support import CASSETTES, hostile_exchanges, shown


def test_embeddings_show_counts_and_dimensions_not_the_vectors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert shown(CASSETTES / "embeddings" / "cohere_query_truncate.yaml", capsys) == [
        "#1 POST /v2/embed  (embed-v4.0)",
        "  you: 1 input to embed",
        "  model: 1 vector of 1536 dimensions",
        "  usage: 4 in, 0 out",
    ]


def test_media_inputs_are_counted_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert shown(CASSETTES / "embeddings" / "media_cohere_v4.yaml", capsys)[1:] == [
        "  you: 3 inputs to embed",
        "  model: 3 vectors of 4 dimensions",
        "  usage: 7 in, 0 out",
    ]


def test_a_garbled_exchange_is_left_to_the_generic_reading() -> None:
    for exchange in hostile_exchanges("https://api.cohere.com/v2/embed"):
        shown = read_embed(exchange)
        assert shown is None or isinstance(shown, ShownExchange), exchange
