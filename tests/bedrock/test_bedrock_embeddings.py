"""Bedrock's per-family InvokeModel embedding bodies and answers against the wire samples."""

from __future__ import annotations

import pytest
from llmport.errors import MalformedResponseError
from llmport_bedrock import embeddings
from llmport_bedrock.embeddings import Options
from support.embed_samples import interactions, request_body

TITAN_V2 = "bedrock-invoke/titan-v2-dimensions.json"
COHERE_V3 = "bedrock-invoke/cohere-v3-input-type.json"
COHERE_V4 = "bedrock-invoke/cohere-v4-dimensions.json"
REGIONAL = "bedrock-invoke/cohere-v4-regional-prefix.json"
NOVA = "bedrock-invoke/nova-multiple-texts.json"


def family(name: str) -> embeddings.EmbedFamily:
    found = embeddings.embed_family(name)
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("model", "name"),
    [
        ("amazon.titan-embed-text-v1", "titan-v1"),
        ("amazon.titan-embed-text-v2:0", "titan-v2"),
        ("cohere.embed-english-v3", "cohere-v3"),
        ("cohere.embed-multilingual-v3", "cohere-v3"),
        ("cohere.embed-v4:0", "cohere-v4"),
        ("us.cohere.embed-v4:0", "cohere-v4"),
        ("arn:aws:bedrock:us-east-1::foundation-model/cohere.embed-v4:0", "cohere-v4"),
        ("amazon.nova-2-multimodal-embeddings-v1:0", "nova"),
    ],
)
def test_families_by_model_id(model: str, name: str) -> None:
    assert family(model).name == name


def test_a_chat_model_has_no_embedding_family() -> None:
    assert embeddings.embed_family("anthropic.claude-sonnet-4-5") is None


def test_titan_v2_body_and_answer() -> None:
    body = family("amazon.titan-embed-text-v2:0").build(
        ["Test embedding dimensions"], Options(dimensions=256)
    )
    assert body == request_body(TITAN_V2)
    answer = interactions(TITAN_V2)[0]["response"]
    rows = embeddings.read_titan(answer["body"], "bedrock")
    assert (len(rows), len(rows[0])) == (1, 256)
    assert embeddings.input_tokens(answer["headers"], answer["body"]) == 4
    assert embeddings.input_tokens({}, answer["body"]) == 4  # Titan repeats it in the body


def test_titan_v1_takes_only_the_text() -> None:
    assert family("amazon.titan-embed-text-v1").build(["a"], Options(input_type="query")) == {
        "inputText": "a"
    }


def test_cohere_v3_body_and_answer() -> None:
    body = family("cohere.embed-english-v3").build(["Test input type setting"], Options())
    # the recorded call chose Cohere's own "classification" (a vendor field over the body)
    assert {**body, "input_type": "classification"} == request_body(COHERE_V3)
    answer = interactions(COHERE_V3)[0]["response"]
    rows = embeddings.read_cohere_v3(answer["body"], "bedrock")
    assert (len(rows), len(rows[0])) == (1, 1024)
    assert embeddings.input_tokens(answer["headers"], answer["body"]) == 4


@pytest.mark.parametrize(
    ("sample", "text", "dimensions", "length", "tokens"),
    [
        (COHERE_V4, "Test dimensions setting", 512, 512, 3),
        (REGIONAL, "Hello from regional endpoint!", None, 1536, 5),
    ],
)
def test_cohere_v4_body_and_answer(
    sample: str, text: str, dimensions: int | None, length: int, tokens: int
) -> None:
    body = family("us.cohere.embed-v4:0").build(
        [text], Options(input_type="query", dimensions=dimensions)
    )
    assert body == request_body(sample)
    answer = interactions(sample)[0]["response"]
    rows = embeddings.read_cohere_v4(answer["body"], "bedrock")
    assert (len(rows), len(rows[0])) == (1, length)
    assert embeddings.input_tokens(answer["headers"], answer["body"]) == tokens


@pytest.mark.parametrize("index", [0, 1])
def test_nova_one_text_per_call(index: int) -> None:
    text = ["hello", "world"][index]
    body = family("amazon.nova-2-multimodal-embeddings-v1:0").build([text], Options())
    assert body == request_body(NOVA, index)
    answer = interactions(NOVA)[index]["response"]
    rows = embeddings.read_nova(answer["body"], "bedrock")
    assert (len(rows), len(rows[0])) == (1, 3072)
    assert embeddings.input_tokens(answer["headers"], answer["body"]) == 3


def test_nova_query_dimensions_and_truncation() -> None:
    body = embeddings.nova_body(["q"], Options(input_type="query", dimensions=256, truncate="end"))
    assert body["singleEmbeddingParams"] == {
        "embeddingPurpose": "GENERIC_RETRIEVAL",
        "embeddingDimension": 256,
        "text": {"value": "q", "truncationMode": "END"},
    }


@pytest.mark.parametrize(
    "read",
    [
        embeddings.read_titan,
        embeddings.read_cohere_v3,
        embeddings.read_cohere_v4,
        embeddings.read_nova,
    ],
)
@pytest.mark.parametrize("answer", [{}, {"message": "throttled"}, {"embeddings": "x"}, None])
def test_an_answer_of_another_shape_is_malformed(read: object, answer: object) -> None:
    with pytest.raises(MalformedResponseError):
        read(answer, "bedrock")  # type: ignore[operator]
