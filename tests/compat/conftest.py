"""Fixtures for the OpenAI-compatible services: no host key, endpoint or config leaks in."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from llmport_openai.profiles import PROFILES

#: Every variable a profile reads, OpenAI's own and llmport's.
_PREFIXES = ("LLMPORT_", "OPENAI_", "AZURE_OPENAI_")
_VARIABLES = {p.key_env for p in PROFILES.values()} | {
    p.base_url_env for p in PROFILES.values() if p.base_url_env
}


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[None]:
    for key in list(os.environ):
        if key.startswith(_PREFIXES) or key in _VARIABLES:
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    yield
