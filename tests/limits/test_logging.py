"""The llmport logger: retries at WARNING, fallbacks at INFO, usage at DEBUG, all redacted."""

from __future__ import annotations

import logging

import pytest
from llmport import ExecFailed, ProviderConnectionError
from llmport.messages.types import Usage
from llmport.observe.logs import log_fallback
from llmport.observe.redaction import LOGGERS, install_log_redaction
from llmport.provider.config import Config
from llmport.testing import Script, fail, reply


def test_retries_warn_and_usage_is_debug(caplog: pytest.LogCaptureFixture) -> None:
    script = Script(
        [fail(ProviderConnectionError("reset", retryable=True)), reply("ok", usage=Usage(7, 2))]
    )
    rt = script.runtime(config=Config())
    with caplog.at_level(logging.DEBUG, logger="llmport"):
        assert rt.exec("hi") == "ok"
    records = [r for r in caplog.records if r.name == "llmport"]
    assert [r.levelname for r in records] == ["WARNING", "DEBUG"]
    retry, usage = records
    assert retry.getMessage() == (
        "scripted:test: attempt 1/2 failed with ProviderConnectionError: reset; retrying in 0.00s"
    )
    assert (retry.llmport_model, retry.llmport_attempt, retry.llmport_error) == (  # type: ignore[attr-defined]
        "scripted:test",
        1,
        "ProviderConnectionError",
    )
    assert "input=7 output=2" in usage.getMessage()


def test_the_last_failure_is_not_logged_as_a_retry(caplog: pytest.LogCaptureFixture) -> None:
    script = Script([fail(ProviderConnectionError("down", retryable=True))] * 2)
    rt = script.runtime(config=Config())
    with caplog.at_level(logging.WARNING, logger="llmport"), pytest.raises(ExecFailed):
        rt.exec("hi")
    assert len([r for r in caplog.records if r.levelname == "WARNING"]) == 1


def test_nothing_is_formatted_when_the_level_is_off(caplog: pytest.LogCaptureFixture) -> None:
    rt = Script(["ok"]).runtime(config=Config())
    with caplog.at_level(logging.INFO, logger="llmport"):
        rt.exec("hi")
    assert not [r for r in caplog.records if r.name == "llmport"]


def test_fallback_is_info(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="llmport"):
        log_fallback("anthropic:claude", "openai:gpt-4o", ProviderConnectionError("x"))
    (record,) = caplog.records
    assert record.levelname == "INFO"
    assert record.getMessage() == (
        "anthropic:claude failed (ProviderConnectionError: x); falling back to openai:gpt-4o"
    )


@pytest.mark.parametrize(
    "name",
    [
        "llmport",
        "llmport.engine",
        "openai",
        "openai._base_client",
        "anthropic",
        "google_genai",
        "google_genai.models",
        "botocore",
        "botocore.auth",
        "httpx",
        "httpx2",
        "httpcore",
    ],
)
def test_the_vendor_loggers_are_redacted(name: str, caplog: pytest.LogCaptureFixture) -> None:
    install_log_redaction()
    secret = "sk-proj-" + "A" * 30  # a fake key shape
    with caplog.at_level(logging.DEBUG, logger=name):
        logging.getLogger(name).warning("sending Authorization: Bearer %s", secret)
    (record,) = [r for r in caplog.records if r.name == name]
    assert secret not in record.getMessage()
    assert "***" in record.getMessage()


def test_every_logger_the_spec_names_is_covered() -> None:
    for root in ("llmport", "openai", "anthropic", "google_genai", "botocore", "httpx", "httpx2"):
        assert root in LOGGERS


def test_an_unrelated_logger_is_left_alone(caplog: pytest.LogCaptureFixture) -> None:
    install_log_redaction()
    with caplog.at_level(logging.INFO, logger="myapp"):
        logging.getLogger("myapp").info("token sk-proj-%s", "B" * 30)
    assert "sk-proj-BBBB" in caplog.records[0].getMessage()


def test_the_llmport_logger_has_its_null_handler_once() -> None:
    # Made on first use (logging stays out of a script's import), with the
    # NullHandler that keeps Python's last-resort handler off a library's records.
    from llmport.observe.logs import logger

    assert logger() is logger() is logging.getLogger("llmport")
    nulls = [h for h in logger().handlers if isinstance(h, logging.NullHandler)]
    assert len(nulls) == 1
