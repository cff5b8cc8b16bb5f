"""Fixtures of the image tests: isolated from the host (no keys, AWS or Google settings),
the vendor plugins loaded, and the mode (``rt.generate_image`` or ``rt.agenerate_image``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

#: The vendor plugins whose image endpoints (or refusals) are tested here.
VENDOR_PLUGINS = "openai,anthropic,gemini,bedrock"


@pytest.fixture(autouse=True)
def isolated(
    isolated_from_host: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> Iterator[None]:
    """Only what a test gives: no host credentials, AWS profiles, Google settings."""
    for key in list(os.environ):
        if key.startswith(("OPENAI_", "AZURE_OPENAI_", "AWS_", "GOOGLE_", "GEMINI_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("LLMPORT_PLUGINS", VENDOR_PLUGINS)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    yield


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs twice: ``rt.generate_image`` and ``rt.agenerate_image``."""
    return str(request.param)
