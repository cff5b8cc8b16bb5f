"""Fixtures of the embedding tests: isolation from the host, a third-party embedder."""

from __future__ import annotations

import os

import pytest
from embed_helpers import TablePlugin
from llmport import Runtime
from llmport.controls.retry import Backoff

#: The vendor plugins whose embeddings are tested here (entry-point names).
VENDOR_PLUGINS = "openai,anthropic,gemini,bedrock"


@pytest.fixture(autouse=True)
def isolated(isolated_from_host: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Isolated from the host (tests/conftest.py), with the vendor plugins and no vendor keys."""
    for key in list(os.environ):
        if key.startswith(("OPENAI_", "AZURE_OPENAI_", "MISTRAL_", "OLLAMA_", "LMSTUDIO_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("LLMPORT_PLUGINS", VENDOR_PLUGINS)


@pytest.fixture
def table() -> TablePlugin:
    return TablePlugin()


@pytest.fixture
def rt(table: TablePlugin) -> Runtime:
    return Runtime(model="table:embed", hooks=[table], backoff=Backoff.none())
