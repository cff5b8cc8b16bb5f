"""Fixtures for the batch tests: host isolation and the batch cassette replayer."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from batch_vcr import batch_vcr
from support.cassette_support import CASSETTES

VENDOR_ENV = ("LLMPORT_", "OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "AWS_")


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[None]:
    """No host keys, endpoints or configuration; fake AWS credentials and region."""
    for key in list(os.environ):
        if key.startswith(VENDOR_ENV):
            monkeypatch.delenv(key)
    monkeypatch.setenv("LLMPORT_PLUGINS", "")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEBATCHKEY0000")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-batch-secret")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.chdir(tmp_path)
    yield


@pytest.fixture
def batch_cassette() -> Any:
    """``with batch_cassette("openai/batch_run.yaml") as cass:`` replays it; all must play."""

    @contextmanager
    def use(name: str) -> Iterator[Any]:
        assert (CASSETTES / name).is_file(), f"no cassette {name}"
        with batch_vcr().use_cassette(name) as cass:
            yield cass
        unplayed = len(cass.data) - cass.play_count
        assert cass.all_played, f"{name}: {unplayed} interaction(s) left unplayed"

    return use
