"""Cohere's ``/v2/embed`` and ``/v1/tokenize`` bodies and answers against the wire samples."""

from __future__ import annotations

import pytest
from llmport.errors import MalformedResponseError
from llmport_cohere import embeddings
from support.embed_samples import request_body, response_body

EMBED = "cohere/embed-query-truncate.json"
TOKENIZE = "cohere/count-tokens.json"


def test_embed_body_is_the_recorded_one() -> None:
    body = embeddings.embed_body(
        "embed-v4.0", ["Hello, world!"], input_type="query", truncate="end"
    )
    assert body == request_body(EMBED)


def test_embed_body_defaults() -> None:
    body = embeddings.embed_body("embed-v4.0", ["a", "b"], dimensions=256)
    assert body["input_type"] == "search_document"
    assert body["truncate"] == "NONE"  # no truncate=: the API refuses an over-long text
    assert body["output_dimension"] == 256


def test_embed_answer_gives_the_recorded_length_and_usage() -> None:
    rows, tokens = embeddings.read_embed(response_body(EMBED), "cohere")
    assert (len(rows), len(rows[0]), tokens) == (1, 1536, 4)


def test_tokenize_body_and_answer() -> None:
    assert embeddings.tokenize_body("embed-v4.0", "Hello, world!") == request_body(TOKENIZE)
    assert embeddings.read_tokenize(response_body(TOKENIZE), "cohere") == 4


@pytest.mark.parametrize(
    "answer", [{}, {"message": "invalid api token"}, {"embeddings": [[0.1]]}, None]
)
def test_an_answer_of_another_shape_is_malformed(answer: object) -> None:
    with pytest.raises(MalformedResponseError):
        embeddings.read_embed(answer, "cohere")
    with pytest.raises(MalformedResponseError):
        embeddings.read_tokenize(answer, "cohere")
