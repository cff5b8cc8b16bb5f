"""Fixtures of the embedding tests: isolation from the host, a third-party embedder, the
mode (``rt.embed`` or ``rt.aembed``); helpers are in ``tests/support/embed_helpers.py``."""

from __future__ import annotations

import os

import pytest
from llmport import Runtime
from llmport.controls.retry import Backoff
from support.embed_helpers import TablePlugin

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


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs twice: ``rt.embed`` and ``rt.aembed``."""
    return str(request.param)
