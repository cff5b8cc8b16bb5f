"""Fixtures for the DAG tests: host isolation and the sync/async parameter."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[None]:
    for key in list(os.environ):
        if key.startswith("LLMPORT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("LLMPORT_PLUGINS", "")
    monkeypatch.chdir(tmp_path)
    yield


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)
