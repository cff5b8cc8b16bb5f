"""rt.generate_image on every image vendor through the real plugin and SDK, and the refusals.

The cassettes (``cassettes/images/``) are made from each vendor's API
reference, not recorded (``make_image_cassettes.py``): vcrpy matches the
JSON body the plugin sends against the documented one, and the images come
back decoded, of the documented media type, with the documented usage.
Hostile answers come from the loopback server on OpenAI's wire.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from image_scenarios import SCENARIOS, png
from llmport import Images, Runtime
from llmport.controls.retry import Backoff
from llmport.errors import (
    ExecFailed,
    LlmportError,
    MalformedResponseError,
    OptionError,
    UnsupportedFeatureError,
)
from llmport.testing.loopback import LoopbackServer, Reply
from support.vertex_support import FakeCredentials

KEY = "sk-fake-images-0123456789abcdef"
UFE = UnsupportedFeatureError
VERTEX = {"project": "p", "location": "global", "credentials": FakeCredentials()}


def generate(rt: Runtime, mode: str, prompt: str, **kw: Any) -> Images:
    if mode == "sync":
        return rt.generate_image(prompt, **kw)
    return asyncio.run(rt.agenerate_image(prompt, **kw))


# -- each vendor's documented call, through the real plugin ------------------------------


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_documented_call_replays(name: str, mode: str, cassette: Any) -> None:
    scenario = SCENARIOS[name]
    settings = dict(scenario.settings)
    if scenario.provider == "gemini-vertex":
        settings["credentials"] = FakeCredentials()
    rt = Runtime(providers={scenario.provider: settings})
    model = f"{scenario.provider}:{scenario.model}"
    with cassette(scenario.cassette, allow_playback_repeats=False):
        images = generate(rt, mode, scenario.prompt, model=model, **scenario.call)
    rt.close()
    assert [block.data for block in images] == scenario.images
    assert {block.media_type for block in images} == {scenario.media_type}
    assert (images.usage.input_tokens, images.usage.output_tokens) == scenario.usage
    assert images.usage.requests == 1 and images.model == model


# -- refused typed before any request ---------------------------------------------------


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        ("anthropic:claude-sonnet-4-5", "Anthropic has no image generation endpoint"),
        ("openai:gpt-4o", "use openai:gpt-image-1"),
        ("openai-responses:gpt-image-1", "NativeTool('image_generation')"),
        ("openai:text-embedding-3-small", "use openai:gpt-image-1"),
        ("gemini:gemini-2.5-flash", "use gemini-vertex:imagen-4.0-generate-001"),
        ("gemini:imagen-4.0-generate-001", "generate_images is Vertex AI only"),
        ("gemini-vertex:gemini-2.5-flash", "not an Imagen model"),
        ("bedrock:anthropic.claude-3-haiku-20240307-v1:0", "amazon.nova-canvas"),
        ("groq:llama-3.3-70b-versatile", "no image requests"),
        ("xai:grok-4", "not one of its image models"),
        ("mistral:mistral-large-latest", "no image requests"),
    ],
)
def test_targets_without_an_image_endpoint_refuse_typed(mode: str, model: str, reason: str) -> None:
    with LoopbackServer([]) as server:  # nothing may reach it
        rt = Runtime(
            providers={
                "anthropic": {"api_key": KEY, "base_url": server.url},
                "openai": {"api_key": KEY, "base_url": server.url},
                "openai-responses": {"api_key": KEY, "base_url": server.url},
                "gemini": {"api_key": KEY},
                "gemini-vertex": VERTEX,
                "groq": {"api_key": KEY, "base_url": server.url},
                "xai": {"api_key": KEY, "base_url": server.url},
                "mistral": {"api_key": KEY, "base_url": server.url},
                "bedrock": {"region": "us-east-1"},
            }
        )
        with pytest.raises(UnsupportedFeatureError, match="image generation") as caught:
            generate(rt, mode, "a fox", model=model)
        assert reason in str(caught.value)
        assert server.requests == []


@pytest.mark.parametrize(
    ("model", "kw", "error", "match"),
    [
        ("openai:dall-e-3", {"n": 2}, UnsupportedFeatureError, "at most 1 images"),
        ("openai:gpt-image-1", {"n": 11}, UnsupportedFeatureError, "at most 10"),
        ("openai:gpt-image-1", {"size": "512x512"}, UnsupportedFeatureError, "offered"),
        ("openai:gpt-image-1", {"seed": 1}, UnsupportedFeatureError, "takes no seed"),
        ("openai:dall-e-3", {"output_format": "webp"}, UnsupportedFeatureError, "offered: png"),
        ("openai:dall-e-2", {"quality": "high"}, UnsupportedFeatureError, "leave it unset"),
        ("gemini-vertex:imagen-4.0-generate-001", {"size": "1000x1000"}, UFE, "offered"),
        ("gemini-vertex:imagen-4.0-generate-001", {"output_format": "webp"}, UFE, "offered"),
        ("gemini-vertex:imagen-4.0-generate-001", {"quality": "high"}, UFE, "leave it"),
        ("gemini-vertex:imagen-4.0-fast-generate-001", {"size": "2048x2048"}, UFE, "offered"),
        ("gemini-vertex:imagen-4.0-ultra-generate-001", {"n": 2}, UFE, "at most 1"),
        (
            "bedrock:amazon.nova-canvas-v1:0",
            {"size": "1000x1000"},
            UnsupportedFeatureError,
            "multiple of 16",
        ),
        (
            "bedrock:amazon.nova-canvas-v1:0",
            {"size": "4096x4096"},
            UnsupportedFeatureError,
            "pixels",
        ),
        ("bedrock:amazon.nova-canvas-v1:0", {"size": "320x2000"}, UnsupportedFeatureError, "ratio"),
        ("bedrock:amazon.nova-canvas-v1:0", {"n": 6}, UnsupportedFeatureError, "at most 5"),
        (
            "bedrock:amazon.nova-canvas-v1:0",
            {"seed": 858_993_460},
            UnsupportedFeatureError,
            "at most",
        ),
        (
            "bedrock:amazon.titan-image-generator-v2:0",
            {"size": "1000x1000"},
            UnsupportedFeatureError,
            "offered",
        ),
        (
            "bedrock:amazon.titan-image-generator-v2:0",
            {"quality": "low"},
            UnsupportedFeatureError,
            "offered",
        ),
        ("openai:gpt-image-1", {"size": 1024}, OptionError, "WIDTHxHEIGHT"),
        ("xai:grok-2-image", {"size": "1024x1024"}, UnsupportedFeatureError, "takes no size"),
        ("xai:grok-2-image", {"quality": "high"}, UnsupportedFeatureError, "leave it unset"),
        ("xai:grok-2-image", {"output_format": "png"}, UnsupportedFeatureError, "leave it"),
    ],
)
def test_what_a_model_does_not_take_is_refused_before_any_request(
    mode: str, model: str, kw: dict[str, Any], error: type[Exception], match: str
) -> None:
    with LoopbackServer([]) as server:
        rt = Runtime(
            providers={
                "openai": {"api_key": KEY, "base_url": server.url},
                "xai": {"api_key": KEY, "base_url": server.url},
                "gemini-vertex": VERTEX,
                "bedrock": {"region": "us-east-1"},
            }
        )
        with pytest.raises(error, match=match):
            generate(rt, mode, "a fox", model=model, **kw)
        assert server.requests == []


def test_a_prompt_over_the_model_limit_is_refused(mode: str) -> None:
    rt = Runtime(providers={"openai": {"api_key": KEY, "base_url": "http://127.0.0.1:9"}})
    with pytest.raises(LlmportError, match="at most 1,000 characters"):
        generate(rt, mode, "x" * 1001, model="openai:dall-e-2")


# -- hostile answers on OpenAI's wire: typed, bounded, no secret ---------------------------

GOOD = base64.b64encode(png("hostile", 0)).decode()


def _json(body: Any) -> Reply:
    return Reply(200, json=body)


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (
            _json({"error": {"message": f"bad key {KEY}", "type": "invalid_request_error"}}),
            "error object",
        ),
        (_json({}), "no 'data' list"),
        (_json([1, 2]), "no 'data' list"),
        (_json({"data": "x"}), "no 'data' list"),
        (_json({"data": [None]}), "other than objects"),
        (_json({"data": [{}]}), "neither b64_json"),
        (_json({"data": [{"b64_json": "not base64!!"}]}), "does not decode"),
        (
            _json({"data": [{"b64_json": base64.b64encode(b"%PDF-1.7 x").decode()}]}),
            "application/pdf",
        ),
        (_json({"data": [{"b64_json": GOOD}], "output_format": "gif"}), "output_format"),
        (_json({"data": [{"b64_json": GOOD}, {"b64_json": GOOD}]}), "2 images for n=1"),
        (_json({"data": []}), "0 images for n=1"),
        (_json({"data": [{"b64_json": GOOD}], "usage": {"input_tokens": "NaN"}}), "usage"),
        (_json({"data": [{"b64_json": GOOD}], "usage": {"output_tokens": -1}}), "usage"),
        (Reply(200, body=b"NaN", headers={"content-type": "application/json"}), "not valid JSON"),
        (Reply(200, body=b"<html>oops</html>", headers={"content-type": "text/html"}), "JSON"),
        (
            Reply(200, body=b"\xff\xfe garbage", headers={"content-type": "application/json"}),
            "not text",
        ),
    ],
)
def test_a_hostile_answer_is_malformed_typed_and_keeps_the_key(
    mode: str, reply: Reply, match: str
) -> None:
    with LoopbackServer([reply]) as server:
        rt = Runtime(
            providers={"openai": {"api_key": KEY, "base_url": server.url}},
            backoff=Backoff.none(),
            max_retries=1,
        )
        with pytest.raises(LlmportError) as caught:
            generate(rt, mode, "a fox", model="openai:gpt-image-1")
    error = caught.value
    # A body that is not JSON may be a passing proxy's: retried, then ExecFailed naming it.
    last = error.attempts[-1].error if isinstance(error, ExecFailed) else error
    assert isinstance(last, MalformedResponseError)
    assert match in str(last)
    assert KEY not in str(error) and KEY[:12] not in repr(error.args)
    chained: BaseException | None = error
    while chained is not None:  # I1: nothing foreign in the chain
        assert isinstance(chained, LlmportError)
        chained = chained.__cause__ or chained.__context__


def test_a_url_answer_keeps_its_signature_with_the_key_masked(mode: str) -> None:
    url = f"https://images.example/img.png?sig=abc&leak={KEY}"
    with LoopbackServer([_json({"created": 1, "data": [{"url": url}]})]) as server:
        rt = Runtime(providers={"openai": {"api_key": KEY, "base_url": server.url}})
        images = generate(
            rt,
            mode,
            "a fox",
            model="openai:dall-e-2",
            vendor={"openai": {"response_format": "url"}},
        )
    (block,) = images
    # The link is usable (the vendor's signature kept); the caller's key echoed into it is not.
    assert block.url is not None and block.url.startswith("https://images.example/img.png?sig=abc&")
    assert KEY not in block.url and "leak=***" in block.url
    assert json.loads(server.requests[0].body)["response_format"] == "url"


# -- llmport models -----------------------------------------------------------------------


def test_models_shows_which_models_make_images(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from llmport.cli.main import main

    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("LLMPORT_PLUGINS", "openai")
    assert main(["models", "--provider", "openai"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("dall-e-3*"))
    assert "makes ≤1 images" in line
    assert main(["models", "--provider", "openai", "--json"]) == 0
    rows = {r["model"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["gpt-image-1*"]["images"] == 10
    assert rows["gpt-4o*"]["images"] is None


@pytest.mark.parametrize(
    "item",
    [{"b64_json": "not base64!!"}, {"b64_json": base64.b64encode(b"%PDF-1.7 x").decode()}],
)
def test_an_image_that_lies_is_not_paid_for_twice(mode: str, item: dict[str, str]) -> None:
    with LoopbackServer([_json({"data": [item]})], repeat=True) as server:
        rt = Runtime(
            providers={"openai": {"api_key": KEY, "base_url": server.url}},
            backoff=Backoff.none(),
            max_retries=3,
        )
        with pytest.raises(MalformedResponseError):
            generate(rt, mode, "a fox", model="openai:gpt-image-1")
        assert len(server.requests) == 1  # each retry would make (and bill) the images again
