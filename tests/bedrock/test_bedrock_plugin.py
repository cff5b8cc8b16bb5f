"""Registration, settings, lazy imports and the client configuration of the Bedrock provider."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from llmport import Runtime
from llmport.errors import ConfigError
from llmport_bedrock.models import family_for
from llmport_bedrock.plugin import provider_info
from llmport_bedrock.provider import BedrockProvider
from support.bedrock_scenarios import CREDENTIALS, REGION


def provider(**settings: Any) -> BedrockProvider:
    return BedrockProvider({**CREDENTIALS, "region": REGION, **settings}, provider_info())


def test_importing_the_plugin_imports_no_boto3() -> None:
    code = (
        "import sys, llmport, llmport_bedrock.plugin; "
        "print(any(m.split('.')[0] in ('boto3', 'botocore') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_runtime_routes_bedrock_models_and_aliases() -> None:
    rt = Runtime(providers={"bedrock": {**CREDENTIALS, "region": REGION}})
    target, model, qualified, _, _ = rt.route(
        "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    )
    assert isinstance(target, BedrockProvider)
    assert (model, qualified) == (
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    )
    assert rt.route("nova-micro")[1] == "us.amazon.nova-micro-v1:0"
    rt.close()


@pytest.mark.parametrize(
    ("model", "structured", "vision"),
    [
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", True, True),
        ("eu.anthropic.claude-3-5-sonnet-20240620-v1:0", False, True),
        (
            "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0",
            False,
            False,
        ),
        ("us.amazon.nova-micro-v1:0", False, False),
        ("us.amazon.nova-lite-v1:0", False, True),
    ],
)
def test_capabilities_follow_the_model_family(model: str, structured: bool, vision: bool) -> None:
    caps = provider_info().capabilities_for(model)
    assert caps.native_structured_output is structured
    assert ("image" in caps.input_modalities) is vision
    assert caps.audio_types == frozenset()
    assert family_for(model).caps == caps


def test_unknown_setting_and_bad_pool_size_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="unknown setting"):
        provider(api_key="x")
    with pytest.raises(ConfigError, match="max_workers"):
        provider(max_workers=0)


def test_repr_never_shows_credentials() -> None:
    text = repr(provider(aws_session_token="fake-session-token"))
    assert "fake-secret" not in text and "fake-session-token" not in text and REGION in text


def test_missing_region_is_a_config_error() -> None:
    p = BedrockProvider(dict(CREDENTIALS), provider_info())
    with pytest.raises(ConfigError, match="region"):
        p.client()


def test_region_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    p = BedrockProvider(dict(CREDENTIALS), provider_info())
    assert p.client().meta.region_name == "eu-west-1"
    p.close()


def test_client_has_botocore_retries_off_and_timeouts() -> None:
    p = provider(timeout=30, connect_timeout=2, max_workers=4)
    client = p.client()
    config = client.meta.config
    assert config.retries["total_max_attempts"] == 1
    assert (config.read_timeout, config.connect_timeout, config.max_pool_connections) == (30, 2, 4)
    assert p.client() is client  # created once
    per_call = p.client(5)
    assert per_call is not client and per_call.meta.config.read_timeout == 5
    p.close()


def test_profile_that_does_not_exist_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="profile"):
        BedrockProvider({"profile": "no-such-profile", "region": REGION}, provider_info()).client()


def test_close_shuts_the_pool_and_clients() -> None:
    p = provider()
    pool = p.executor()
    p.client()
    p.close()
    assert pool._shutdown
    assert p.executor() is not pool  # a closed provider makes a fresh pool on next use
    p.close()


def test_models_are_shared_without_an_import_cycle() -> None:
    # plugin.py (the entry point) and provider.py both import models.py; never each other.
    code = (
        "import sys\n"
        "import llmport_bedrock.provider\n"
        "print('llmport_bedrock.plugin' in sys.modules)\n"
        "import llmport_bedrock.plugin as plugin, llmport_bedrock.models as models\n"
        "info = plugin.provider_info()\n"
        "chat = {p: f.caps for p, f in models.FAMILIES.items()}\n"
        "print(info.models == {**models.IMAGE_MODELS, **models.EMBEDDING_MODELS, **chat})\n"
        "print(info.aliases == models.ALIASES)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "True"]


def test_a_provider_made_without_its_registration_uses_the_family_table() -> None:
    p = BedrockProvider({**CREDENTIALS, "region": REGION})
    caps = p.capabilities("us.amazon.nova-micro-v1:0")
    assert caps == family_for("us.amazon.nova-micro-v1:0").caps
    assert "image" not in caps.input_modalities


@pytest.mark.parametrize("setting", ["timeout", "connect_timeout"])
@pytest.mark.parametrize("value", [0, -1, "30", True])
def test_bad_timeouts_are_config_errors(setting: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=setting):
        provider(**{setting: value})


async def test_aclose_closes_clients_and_the_pool() -> None:
    p = provider()
    pool = p.executor()
    client = p.client()
    await p.aclose()
    assert pool._shutdown
    assert p.client() is not client  # the closed client is never handed out again
    p.close()
