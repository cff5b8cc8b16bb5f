"""Images embedded where the model's API reference documents it; refused typed elsewhere.

No recorded traffic exists for image embeddings: the loopback answers here
(``support/embed_media_scenarios.py``) and the cassettes ``cassettes/embeddings/media_*``
made from them (``tests/make_embed_media_cassettes.py``) are built from each vendor's API
reference (the request shapes asserted are the documented ones,
named beside each builder in the plugins and in docs/embeddings-vendors.md):

* Cohere ``embed-v4.0`` on ``/v2/embed``: ``inputs: [{content: [text, image_url]}]``;
* Voyage AI ``voyage-multimodal-3.5`` on ``/v1/multimodalembeddings``: ``image_base64``;
* Bedrock Titan Multimodal Embeddings G1: ``inputText`` / ``inputImage``;
* Bedrock Nova 2 multimodal embeddings: ``singleEmbeddingParams.image``;
* Bedrock Cohere Embed v4: ``inputs[].content[]`` with ``image_url`` a data URL.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from llmport import Runtime
from llmport.controls.retry import Backoff
from llmport.errors import ContentError, InputError, UnsupportedContentError
from llmport.sessions.kv import MemoryStore
from llmport.testing.loopback import LoopbackServer, Reply
from support.embed_media_scenarios import (
    DIMS,
    IMAGE,
    INPUTS,
    MEDIA_SCENARIOS,
    bedrock_reply,
    cohere_reply,
    vertex_reply,
    voyage_reply,
)
from support.embed_scenarios import AWS
from support.media_samples import JPEG, PNG
from support.vertex_support import FakeCredentials

PNG_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


def runtime(provider: str, url: str, **kw: Any) -> Runtime:
    settings: dict[str, Any] = dict(AWS) if provider == "bedrock" else {"api_key": "test-key"}
    settings["endpoint_url" if provider == "bedrock" else "base_url"] = url
    return Runtime(providers={provider: settings}, backoff=Backoff.none(), **kw)


def test_cohere_v4_sends_each_input_as_content_parts() -> None:
    with LoopbackServer([Reply(handler=cohere_reply)], repeat=True) as server:
        result = runtime("cohere", server.url).embed(INPUTS, model="cohere:embed-v4.0")
    (request,) = server.requests
    body = request.json()
    assert request.path == "/v2/embed" and "texts" not in body
    image = {"type": "image_url", "image_url": {"url": PNG_URL}}
    assert body["inputs"] == [
        {"content": [image]},
        {"content": [{"type": "text", "text": "a red square"}, image]},
        {"content": [{"type": "text", "text": "plain text"}]},
    ]
    assert body["input_type"] == "search_document" and body["embedding_types"] == ["float"]
    assert len(result) == 3 and result.dimensions == DIMS and result[1][0] == 1.0


def test_cohere_text_only_calls_keep_the_recorded_texts_body() -> None:
    with LoopbackServer([Reply(handler=cohere_reply)], repeat=True) as server:
        runtime("cohere", server.url).embed(["a", "b"], model="cohere:embed-v4.0")
    body = server.requests[0].json()
    assert body["texts"] == ["a", "b"] and "inputs" not in body


def test_voyage_multimodal_goes_to_its_own_endpoint() -> None:
    with LoopbackServer([Reply(handler=voyage_reply)], repeat=True) as server:
        rt = runtime("voyage", server.url)
        result = rt.embed(INPUTS, model="voyage:voyage-multimodal-3.5", input_type="query")
    (request,) = server.requests
    body = request.json()
    assert request.path == "/v1/multimodalembeddings"
    image = {"type": "image_base64", "image_base64": PNG_URL}
    assert body["inputs"] == [
        {"content": [image]},
        {"content": [{"type": "text", "text": "a red square"}, image]},
        {"content": [{"type": "text", "text": "plain text"}]},
    ]
    assert body["input_type"] == "query" and body["output_encoding"] == "base64"
    assert len(result) == 3 and result.dimensions == DIMS and result.usage.input_tokens == 9


def test_titan_multimodal_sends_one_input_per_call_text_and_image_averaged() -> None:
    with LoopbackServer([Reply(handler=bedrock_reply)], repeat=True) as server:
        rt = runtime("bedrock", server.url)
        result = rt.embed(INPUTS, model="bedrock:amazon.titan-embed-image-v1", dimensions=256)
    bodies = sorted((r.json() for r in server.requests), key=lambda b: sorted(b))
    encoded = base64.b64encode(PNG).decode()
    config = {"outputEmbeddingLength": 256}
    assert sorted(map(str, bodies)) == sorted(
        map(
            str,
            [
                {"inputImage": encoded, "embeddingConfig": config},
                {"inputText": "a red square", "inputImage": encoded, "embeddingConfig": config},
                {"inputText": "plain text", "embeddingConfig": config},
            ],
        )
    )
    assert all(r.path.endswith("amazon.titan-embed-image-v1/invoke") for r in server.requests)
    assert len(result) == 3 and result.dimensions == 256


def test_nova_embeds_an_image_as_the_documented_image_object() -> None:
    with LoopbackServer([Reply(handler=bedrock_reply)], repeat=True) as server:
        rt = runtime("bedrock", server.url)
        jpeg = {"type": "image", "data": JPEG, "media_type": "image/jpeg"}
        result = rt.embed([jpeg], model="bedrock:amazon.nova-2-multimodal-embeddings-v1:0")
    (request,) = server.requests
    assert request.json() == {
        "taskType": "SINGLE_EMBEDDING",
        "singleEmbeddingParams": {
            "embeddingPurpose": "GENERIC_INDEX",
            "image": {"format": "jpeg", "source": {"bytes": base64.b64encode(JPEG).decode()}},
        },
    }
    assert len(result) == 1 and result.dimensions == DIMS


def test_cohere_v4_on_bedrock_sends_content_with_data_url_strings() -> None:
    with LoopbackServer([Reply(handler=bedrock_reply)], repeat=True) as server:
        rt = runtime("bedrock", server.url)
        result = rt.embed(INPUTS[:2], model="bedrock:cohere.embed-v4:0")
    (request,) = server.requests
    image = {"type": "image_url", "image_url": PNG_URL}
    assert request.json()["inputs"] == [
        {"content": [image]},
        {"content": [{"type": "text", "text": "a red square"}, image]},
    ]
    assert "texts" not in request.json() and len(result) == 2


# -- refused typed, before any request -----------------------------------------------------

BIG = {"type": "image", "media_type": "image/png", "data": PNG + b"\0" * (30 * 1024 * 1024)}
LIE = {"type": "image", "media_type": "image/png", "data": JPEG}  # JPEG bytes declared PNG


@pytest.mark.parametrize(
    ("provider", "model", "inputs", "error", "problem"),
    [
        ("cohere", "embed-v4.0", [BIG], ContentError, "over the 26214400-byte limit"),
        ("cohere", "embed-v4.0", [LIE], ContentError, "image/jpeg"),
        ("cohere", "embed-english-v3.0", [IMAGE], UnsupportedContentError, "embed-english-v3.0"),
        ("voyage", "voyage-3.5", [IMAGE], UnsupportedContentError, "voyage-3.5.*text only"),
        (
            "bedrock",
            "amazon.nova-2-multimodal-embeddings-v1:0",
            [["caption", IMAGE]],
            UnsupportedContentError,
            "2 blocks in one input",
        ),
        (
            "bedrock",
            "amazon.titan-embed-image-v1",
            [{"type": "image", "data": b"GIF89a" + b"\0" * 10, "media_type": "image/gif"}],
            UnsupportedContentError,
            "image/gif not accepted",
        ),
        (
            "cohere",
            "embed-v4.0",
            [{"type": "image", "media_type": "image/png", "data": PNG + b"\0" * (6 << 20)}],
            UnsupportedContentError,
            "over the vendor limit",
        ),
    ],
)
def test_media_a_model_cannot_embed_is_refused_before_the_wire(
    provider: str, model: str, inputs: Any, error: type, problem: str
) -> None:
    with (
        LoopbackServer([Reply(status=500)], repeat=True) as server,
        pytest.raises(error, match=problem) as caught,
    ):
        runtime(provider, server.url).embed(inputs, model=f"{provider}:{model}")
    assert isinstance(caught.value, InputError) and not server.requests


def test_the_cache_keys_an_image_by_its_bytes_and_media_type() -> None:
    store = MemoryStore()
    with LoopbackServer([Reply(handler=cohere_reply)], repeat=True) as server:
        rt = runtime("cohere", server.url, embed_cache=store)
        rt.embed(INPUTS, model="cohere:embed-v4.0")
        again = rt.embed([IMAGE, ["a red square", IMAGE]], model="cohere:embed-v4.0")
        other = {"type": "image", "data": JPEG, "media_type": "image/jpeg"}
        rt.embed([other, IMAGE], model="cohere:embed-v4.0")
    assert again.usage.requests == 0 and len(server.requests) == 2
    assert len(server.requests[1].json()["inputs"]) == 1  # only the new image sent


def test_an_embed_request_with_content_round_trips_through_json() -> None:
    from llmport.messages.embeddings import EmbedContent, EmbedRequest
    from llmport.provider.embedding import check_embed_inputs

    inputs = check_embed_inputs(["text", ["caption", IMAGE]])
    request = EmbedRequest("m", inputs)
    again = EmbedRequest.from_dict(request.to_dict())
    assert again.inputs[0] == "text" and isinstance(again.inputs[1], EmbedContent)
    assert again.inputs[1].texts == ("caption",) and again.inputs[1].media[0].data == PNG
    assert again.inputs[1].digest() == inputs[1].digest()  # type: ignore[union-attr]


def test_vertex_multimodal_sends_one_text_or_image_instance_per_call() -> None:
    with LoopbackServer([Reply(handler=vertex_reply)], repeat=True) as server:
        settings = {
            "project": "p",
            "location": "us-central1",
            "base_url": server.url,
            "credentials": FakeCredentials(),
        }
        rt = Runtime(providers={"gemini-vertex": settings}, backoff=Backoff.none())
        result = rt.embed(
            [IMAGE, "a red square"], model="gemini-vertex:multimodalembedding@001", dimensions=128
        )
    bodies = sorted((r.json() for r in server.requests), key=str)
    encoded = base64.b64encode(PNG).decode()
    assert bodies == sorted(
        [
            {
                "instances": [{"image": {"bytesBase64Encoded": encoded}}],
                "parameters": {"dimension": 128},
            },
            {"instances": [{"text": "a red square"}], "parameters": {"dimension": 128}},
        ],
        key=str,
    )
    assert all(
        ":predict" in r.path and "multimodalembedding@001" in r.path for r in server.requests
    )
    assert len(result) == 2 and result.dimensions == 128


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("name", list(MEDIA_SCENARIOS))
def test_media_cassette_replays(name: str, mode: str, cassette: Any) -> None:
    """Each media cassette replays at the vendor's own URL: the same bodies, every one played."""
    import asyncio

    scenario = MEDIA_SCENARIOS[name]
    settings = dict(scenario.settings)
    if scenario.provider == "gemini-vertex":
        settings["credentials"] = FakeCredentials()
    rt = Runtime(providers={scenario.provider: settings})
    model = f"{scenario.provider}:{scenario.model}"
    with cassette(scenario.cassette, allow_playback_repeats=False):
        if mode == "sync":
            result = rt.embed(scenario.inputs, model=model, **scenario.call)
        else:
            result = asyncio.run(rt.aembed(scenario.inputs, model=model, **scenario.call))
    rt.close()
    assert (len(result), result.dimensions) == (len(scenario.inputs), scenario.dimensions)
