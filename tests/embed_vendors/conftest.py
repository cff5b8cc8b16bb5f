"""Fixtures for the vendors' embedding tests: no host keys, AWS setup or llmport config."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

#: Variables a vendor plugin would read a key or an endpoint from.
HOST_KEYS = ("CO_API_KEY", "VOYAGE_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[None]:
    """Only what a test gives: no host credentials, AWS profiles, Google settings."""
    for key in list(os.environ):
        if key.startswith(("LLMPORT_", "AWS_", "GOOGLE_")) or key in HOST_KEYS:
            monkeypatch.delenv(key)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.chdir(tmp_path)
    yield
