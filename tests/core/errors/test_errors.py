"""The error classes, what they carry, and that secrets never show."""

from __future__ import annotations

import builtins

import llmport
import llmport.errors as errors_module
import pytest
from llmport import Runtime
from llmport.controls.retry import Backoff
from llmport.errors import (
    AttemptFailure,
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ContentError,
    DecisionError,
    ExecFailed,
    GuardrailTripped,
    InputError,
    LlmportError,
    MaxIterationsExceeded,
    ModelBehaviorError,
    NotFoundError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    StructuredOutputError,
    TokenLimitExceeded,
    UnknownModelError,
    UnsupportedContentError,
    UnsupportedFeatureError,
    redact,
    redact_settings,
)
from llmport.provider.config import Config
from llmport.provider.contract import Provider
from llmport.testing import Script, fail
from support.core_helpers import Driver, scripted


def test_every_error_is_an_llmport_error_and_exported() -> None:
    classes = [
        obj
        for obj in vars(errors_module).values()
        if isinstance(obj, type)
        and issubclass(obj, Exception)
        and not issubclass(obj, Warning)  # UnknownModelWarning: a warning, exported below
        and obj.__module__ == errors_module.__name__
    ]
    assert llmport.UnknownModelWarning is errors_module.UnknownModelWarning
    assert len(classes) > 20
    for cls in classes:
        assert issubclass(cls, LlmportError), cls
        if cls.__name__ not in {"InputError", "ToolApprovalRequired"}:
            assert getattr(llmport, cls.__name__) is cls, cls


@pytest.mark.parametrize(
    "cls",
    [
        ContentError,
        UnsupportedContentError,
        UnsupportedFeatureError,
        ConfigError,
        UnknownModelError,
        TokenLimitExceeded,
    ],
)
def test_input_errors(cls: type[Exception]) -> None:
    assert issubclass(cls, InputError)
    assert not issubclass(cls, ProviderError)


def test_builtin_bases_let_callers_catch_broadly() -> None:
    assert issubclass(ContentError, ValueError)
    assert issubclass(ConfigError, ValueError)
    assert issubclass(UnknownModelError, LookupError)
    assert issubclass(ProviderTimeoutError, builtins.TimeoutError)
    assert issubclass(ProviderConnectionError, builtins.ConnectionError)
    assert issubclass(ExecFailed, RuntimeError)


def test_provider_error_attributes() -> None:
    err = RateLimitError(
        "slow down", provider="openai", status=429, retry_after=3.0, code="rate_limit"
    )
    assert (err.provider, err.status, err.retryable, err.retry_after, err.code) == (
        "openai",
        429,
        True,
        3.0,
        "rate_limit",
    )
    assert str(err) == "slow down"
    assert repr(err) == (
        "RateLimitError('slow down', provider='openai', status=429, retryable=True)"
    )


def test_error_messages() -> None:
    assert str(ContentError(3, "file not found: x.png")) == "content block 3: file not found: x.png"
    unsupported = UnsupportedContentError(
        "anthropic", "claude-x", "audio block #1 (audio/wav, a.wav)", "model takes no audio input"
    )
    assert str(unsupported) == (
        "anthropic model 'claude-x' cannot take audio block #1 "
        "(audio/wav, a.wav): model takes no audio input"
    )
    assert (unsupported.vendor, unsupported.model) == ("anthropic", "claude-x")
    feature = UnsupportedFeatureError("bedrock", "m", 'tool_choice="none"')
    assert str(feature) == "bedrock model 'm' does not support tool_choice=\"none\""
    unknown = UnknownModelError("gpt5", ["openai:<model>", "sonnet"], hint="not an alias")
    assert str(unknown) == "unknown model 'gpt5': not an alias; available: openai:<model>, sonnet"
    assert "no provider plugins are loaded" in str(UnknownModelError("x"))
    budget = TokenLimitExceeded(1200, 1000)
    assert (budget.estimated, budget.budget) == (1200, 1000)
    assert str(budget) == "input of ~1200 tokens exceeds the budget of 1000"


def test_run_errors_carry_details() -> None:
    class Run:
        tool_calls = ["a", "b"]

    err = MaxIterationsExceeded(5, Run())
    assert err.tool_calls == ["a", "b"] and "5 iterations (2 tool calls made)" in str(err)
    structured = StructuredOutputError("reply does not match", ["'a' is required"], "{}")
    assert str(structured) == "reply does not match\n  - 'a' is required"
    assert structured.text == "{}"
    decision = DecisionError("no valid pick", ["unknown choice 'x'"])
    assert decision.errors == ["unknown choice 'x'"]
    tripped = GuardrailTripped("pii found", guardrail="pii", stage="input")
    assert (tripped.guardrail, tripped.stage) == ("pii", "input")
    assert issubclass(ModelBehaviorError, LlmportError)


# --- secrets ---------------------------------------------------------------------------------

SECRETS = [
    "sk-proj-FakeAbCdEf0123456789xyz",
    "sk-ant-api03-FakeAbCdEf0123456789",
    "AIzaSyA1234567890abcdefghijklmnopq",
    "AKIAIOSFODNN7EXAMPLE",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_redact_removes_key_shapes(secret: str) -> None:
    text = f"Incorrect API key provided: {secret}. Find your key at https://example.com"
    assert secret not in redact(text)
    assert "Incorrect API key provided" in redact(text)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload", "eyJhbGciOiJIUzI1NiJ9"),
        ("GET /v1beta/models?key=hunter2hunter2&alt=sse", "hunter2hunter2"),
        ('{"x-api-key": "my-private-key"}', "my-private-key"),
    ],
)
def test_redact_removes_header_and_query_secrets(text: str, secret: str) -> None:
    assert secret not in redact(text)


def test_redact_keeps_ordinary_text() -> None:
    text = "429 Too Many Requests: rate limit for gpt-4o-mini, retry in 2s (task-1234)"
    assert redact(text) == text


def test_provider_error_never_holds_a_secret() -> None:
    err = AuthenticationError(f"invalid x-api-key: {SECRETS[1]}", provider="anthropic", status=401)
    assert SECRETS[1] not in str(err)
    assert SECRETS[1] not in repr(err)
    assert all(SECRETS[1] not in str(a) for a in err.args)


def test_exec_failed_never_holds_a_secret(drive: Driver) -> None:
    calls: list[int] = []

    def fn(content: object, model: str, response_format: object) -> str:
        calls.append(1)
        raise ConnectionError(f"proxy refused Bearer {SECRETS[0]}")

    with pytest.raises(ExecFailed) as info:
        drive.exec(Runtime(call=fn, max_retries=2, backoff=Backoff.none()), "q")
    assert SECRETS[0] not in str(info.value)
    assert SECRETS[0] not in AttemptFailure(1, ConnectionError(SECRETS[0])).line()


def test_settings_never_shown() -> None:
    settings = {
        "api_key": SECRETS[0],
        "base_url": "http://localhost:11434/v1",
        "aws_secret_access_key": "wJalrXUtnFEMI",
        "timeout": 3,
    }
    assert redact_settings(settings) == {
        "api_key": "***",
        "base_url": "http://localhost:11434/v1",
        "aws_secret_access_key": "***",
        "timeout": 3,
    }
    provider = Provider(settings)
    assert SECRETS[0] not in repr(provider) and "wJalrXUtnFEMI" not in repr(provider)
    assert "localhost:11434" in repr(provider)
    config = Config(providers={"openai": dict(settings)})
    assert SECRETS[0] not in repr(config) and "wJalrXUtnFEMI" not in repr(config)


def test_runtime_settings_do_not_leak_into_reprs_or_errors(drive: Driver) -> None:
    script = Script([fail(AuthenticationError("invalid key", status=401))])
    rt = scripted(script, providers={"scripted": {"api_key": SECRETS[0]}})
    with pytest.raises(AuthenticationError) as info:
        drive.exec(rt, "q")
    assert SECRETS[0] not in repr(rt) and SECRETS[0] not in str(info.value)
    (provider,) = rt.targets.providers()
    assert provider.settings["api_key"] == SECRETS[0]  # it reached the provider...
    assert SECRETS[0] not in repr(provider)  # ...and stays out of sight


def test_overloaded_default_is_transient() -> None:
    assert OverloadedError("529", status=529).retryable
    assert not NotFoundError("x").retryable and not BadRequestError("x").retryable


def test_redact_masks_half_masked_and_session_keys_whole() -> None:
    from llmport.errors import redact

    echoed = "Incorrect API key provided: sk-proj-****************************ab12."
    assert redact(echoed) == "Incorrect API key provided: sk-proj-***."
    assert "xyz9" not in redact("key sk-abc***xyz9 rejected")
    assert redact("session sess-FakeAbCdEf0123456789") == "session sess-***"


def test_error_class_for_status() -> None:
    from llmport.errors import error_class_for_status as cls

    assert cls(401) is AuthenticationError and cls(429) is RateLimitError
    assert cls(504) is ProviderTimeoutError and cls(529) is OverloadedError
    assert cls(503) is OverloadedError and cls(418) is ProviderError
    assert cls(503)("x").retryable and not cls(418)("x").retryable
