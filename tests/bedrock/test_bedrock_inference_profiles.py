"""Bedrock inference profiles: ARNs and cross-region ids resolve to their model's capabilities.

A loopback server stands in for ``bedrock-runtime``. Checked: the ARN is
percent-encoded in the path exactly as boto3's own ``converse`` encodes it
(sync, async and streamed, SigV4-signed); cross-region ids (``us.``, ``eu.``,
``apac.``, ``global.``) have their model's capabilities; the
``inference_profiles`` setting names the model behind an application
inference profile ARN (capabilities, refusals before the wire, CountTokens'
model id); an ARN that names no model is allowed, with permissive
capabilities and one warning.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from llmport import ConfigError, Runtime
from llmport.errors import InputError
from llmport.messages.types import MediaBlock, Message, TextBlock
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_bedrock.plugin import provider_info
from llmport_bedrock.provider import BedrockProvider
from support.api_modes import MODES, run_via
from support.bedrock_scenarios import CREDENTIALS, REGION, answer, stream_reply, text_events, usage

ARN = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5"
ENCODED = (
    "arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3d4e5"
)
SONNET = "anthropic.claude-sonnet-4-5-20250929-v1:0"
TITAN = "amazon.titan-text-express-v1"
OK = Reply(json=answer([{"text": "fine"}], "end_turn", usage(5, 1)))
OK_STREAM = stream_reply(text_events(["fi", "ne"], 5, 1), "req-ok")


def settings(server: LoopbackServer, **extra: Any) -> dict[str, Any]:
    return {**CREDENTIALS, "region": REGION, "endpoint_url": server.url, **extra}


def runtime(server: LoopbackServer, **extra: Any) -> Runtime:
    return Runtime(model=f"bedrock:{ARN}", providers={"bedrock": settings(server, **extra)})


def provider(**extra: Any) -> BedrockProvider:
    return BedrockProvider({**CREDENTIALS, "region": REGION, **extra}, provider_info())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
async def test_the_arn_is_encoded_in_the_path_as_boto3_encodes_it(mode: str, stream: bool) -> None:
    import boto3

    with LoopbackServer([OK_STREAM if stream else OK, OK_STREAM if stream else OK]) as server:
        rt = runtime(server, inference_profiles={ARN: SONNET})
        result = await run_via(mode, rt, "Hi", stream=stream)
        rt.close()
        client = boto3.client(
            "bedrock-runtime", region_name=REGION, endpoint_url=server.url, **CREDENTIALS
        )
        call = client.converse_stream if stream else client.converse
        answer_ = call(modelId=ARN, messages=[{"role": "user", "content": [{"text": "Hi"}]}])
        if stream:
            list(answer_["stream"])
    assert result.output == "fine"
    ours, boto3s = server.requests
    verb = "converse-stream" if stream else "converse"
    assert ours.path == boto3s.path == f"/model/{ENCODED}/{verb}"
    assert ours.headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=")


@pytest.mark.parametrize(
    "model",
    [
        f"us.{SONNET}",
        f"eu.{SONNET}",
        f"apac.{SONNET}",
        f"global.{SONNET}",
        f"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.{SONNET}",
        f"arn:aws:bedrock:us-east-1::foundation-model/{SONNET}",
    ],
)
def test_profile_ids_and_arns_that_name_their_model_have_its_capabilities(model: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: the model is known
        caps = provider().capabilities(model)
    assert caps == provider().capabilities(SONNET)
    assert caps.reasoning and caps.native_structured_output


def test_a_listed_profile_arn_has_its_models_capabilities() -> None:
    mapped = provider(inference_profiles={ARN: SONNET})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mapped.capabilities(ARN) == mapped.capabilities(SONNET)
    assert mapped.family(ARN) is mapped.family(SONNET)
    titan = provider(inference_profiles={ARN: TITAN})
    assert not titan.capabilities(ARN).native_tools


def test_what_the_listed_model_cannot_do_is_refused_before_any_request() -> None:
    image = MediaBlock("image", "image/png", data=b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    with LoopbackServer([]) as server:
        rt = runtime(server, inference_profiles={ARN: TITAN})  # Titan Text: no images
        with pytest.raises(InputError):
            rt.run([Message("user", (TextBlock("look"), image))])
        rt.close()
    assert server.requests == []


def test_count_tokens_sends_the_listed_models_base_id() -> None:
    counted = {"inputTokens": 9}
    with LoopbackServer([Reply(json=counted)]) as server:
        rt = runtime(server, inference_profiles={ARN: f"us.{SONNET}"})
        assert rt.count_tokens("Hi").input_tokens == 9
        rt.close()
    (sent,) = server.requests
    assert sent.path == f"/model/{SONNET.replace(':', '%3A')}/count-tokens"


def test_an_arn_naming_no_model_is_allowed_with_one_warning() -> None:
    unknown = provider()
    with pytest.warns(UserWarning, match="inference_profiles") as caught:
        caps = unknown.capabilities(ARN)
        unknown.capabilities(ARN)
        unknown.family(ARN)
    assert len(caught) == 1
    assert caps.native_tools and caps.streaming  # permissive: Bedrock refuses what it must
    with LoopbackServer([OK, OK]) as server:
        rt = runtime(server)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert rt.run("Hi").output == "fine"
            assert rt.run("Hi again", model=f"bedrock:{ARN}").output == "fine"
        rt.close()
    assert len([w for w in seen if "inference_profiles" in str(w.message)]) == 1


@pytest.mark.parametrize("bad", [["arn"], {"arn": 3}, {"": SONNET}, "arn=model"])
def test_a_bad_inference_profiles_setting_is_a_config_error(bad: Any) -> None:
    with pytest.raises(ConfigError, match="inference_profiles"):
        provider(inference_profiles=bad)


def test_the_setting_comes_from_llmport_toml(tmp_path: Any) -> None:
    (tmp_path / "llmport.toml").write_text(
        "[providers.bedrock.inference_profiles]\n"
        f'"{ARN}" = "{TITAN}"\n'
    )
    image = MediaBlock("image", "image/png", data=b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    with LoopbackServer([]) as server:
        rt = Runtime(
            model=f"bedrock:{ARN}",
            providers={"bedrock": {**CREDENTIALS, "region": REGION, "endpoint_url": server.url}},
        )
        with pytest.raises(InputError):  # Titan Text takes no images: the file named it
            rt.run([Message("user", (TextBlock("look"), image))])
        rt.close()
    assert server.requests == []
