"""Voyage AI's ``/v1/embeddings`` bodies and answers against the wire samples."""

from __future__ import annotations

import pytest
from llmport.errors import MalformedResponseError
from llmport_voyage import embeddings
from support.embed_samples import request_body, response_body

DOCUMENTS = "voyage/embed-documents.json"
ERROR = "voyage/error-400-unknown-model.json"


def test_embed_body_is_the_recorded_one() -> None:
    body = embeddings.embed_body("voyage-3.5", ["hello", "world"], input_type="document")
    assert body == request_body(DOCUMENTS)
    error = embeddings.embed_body("nonexistent", ["Hello, world!"], input_type="query")
    assert error == request_body(ERROR)


def test_embed_answer_gives_the_rows_in_index_order_and_usage() -> None:
    answer = response_body(DOCUMENTS)
    rows, tokens = embeddings.read_embed(answer, "voyage")
    assert rows == [item["embedding"] for item in answer["data"]]
    assert tokens == 0
    swapped = {**answer, "data": answer["data"][::-1]}
    assert embeddings.read_embed(swapped, "voyage")[0] == rows


def test_the_fastapi_error_body_is_read() -> None:
    message = embeddings.error_message(response_body(ERROR))
    assert message is not None and message.startswith("Model nonexistent is not supported")
    assert embeddings.error_message({"detail": [{"msg": "field required"}]}) == "field required"
    assert embeddings.error_message({"error": "x"}) is None


@pytest.mark.parametrize(
    "answer", [{}, {"detail": "Model x is not supported"}, {"data": [{"embedding": [0.1]}]}, None]
)
def test_an_answer_of_another_shape_is_malformed(answer: object) -> None:
    with pytest.raises(MalformedResponseError):
        embeddings.read_embed(answer, "voyage")
