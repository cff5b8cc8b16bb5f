"""Gemini's embedding bodies and answers against the recorded wire samples."""

from __future__ import annotations

import pytest
from llmport.errors import MalformedResponseError
from llmport_gemini import embeddings
from support.embed_samples import request_body, response_body

TASK_TYPE = "gemini/embed-task-type-dimensions.json"
TASK_PREFIX = "gemini/embed-task-prefix.json"
VERTEX = "gemini-vertex/embed-predict.json"


def test_batch_body_with_task_type_and_dimensions_is_the_recorded_one() -> None:
    body = embeddings.batch_body(
        "gemini-embedding-2-preview", ["Hello, world!"], input_type="query", dimensions=768
    )
    assert body == request_body(TASK_TYPE)


def test_gemini_embedding_2_takes_the_task_in_the_text() -> None:
    body = embeddings.batch_body(
        "models/gemini-embedding-2",
        ["Hello, world!"],
        input_type="query",
        task="question answering",
    )
    assert body == request_body(TASK_PREFIX)


def test_gemini_embedding_2_documents_and_plain_texts() -> None:
    document = embeddings.batch_body("gemini-embedding-2", ["x"], input_type="document")
    plain = embeddings.batch_body("gemini-embedding-2", ["x"])
    assert document["requests"][0]["content"]["parts"][0]["text"] == "title: none | text: x"
    assert plain["requests"][0]["content"]["parts"][0]["text"] == "x"
    assert "taskType" not in document["requests"][0]


def test_predict_body_is_the_recorded_one() -> None:
    assert embeddings.predict_body(["Hello, world!"], input_type="query") == request_body(VERTEX)


def test_predict_body_parameters_only_when_asked() -> None:
    body = embeddings.predict_body(["a"], dimensions=256, auto_truncate=True)
    assert body["parameters"] == {"outputDimensionality": 256, "autoTruncate": True}
    assert body["instances"] == [{"content": "a"}]


def test_batch_answers_give_the_recorded_length_and_usage() -> None:
    rows, tokens = embeddings.read_batch(response_body(TASK_TYPE), "gemini")
    assert (len(rows), len(rows[0]), tokens) == (1, 768, None)
    rows, tokens = embeddings.read_batch(response_body(TASK_PREFIX), "gemini")
    assert (len(rows), len(rows[0]), tokens) == (1, 3072, 11)


def test_predict_answer_gives_the_recorded_length_and_usage() -> None:
    rows, tokens = embeddings.read_predict(response_body(VERTEX), "gemini-vertex")
    assert (len(rows), len(rows[0]), tokens) == (1, 3072, 4)


@pytest.mark.parametrize(
    "answer",
    [{}, {"error": {"code": 500, "message": "x"}}, {"embeddings": [{"value": []}]}, []],
)
def test_an_answer_of_another_shape_is_malformed(answer: object) -> None:
    with pytest.raises(MalformedResponseError):
        embeddings.read_batch(answer, "gemini")
    with pytest.raises(MalformedResponseError):
        embeddings.read_predict(answer, "gemini-vertex")
