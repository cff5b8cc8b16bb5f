"""Fixtures for the OpenAI plugin tests: isolation, runtimes, a sync/async driver."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from llmport import Runtime
from openai_helpers import Delays, Driver, make_runtime


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[None]:
    """No host configuration, keys or endpoints leak into a test."""
    for key in list(os.environ):
        if key.startswith(("LLMPORT_", "OPENAI_", "AZURE_OPENAI_")):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    yield


@pytest.fixture(params=["sync", "async"])
def drive(request: pytest.FixtureRequest) -> Driver:
    """Runs each test once through the sync API and once through the async one."""
    return Driver(request.param)


@pytest.fixture
def delays() -> Delays:
    return Delays()


@pytest.fixture
def runtime(delays: Delays) -> Callable[..., Runtime]:
    """``runtime(model, **provider_settings)``: a Runtime with only this plugin loaded."""
    made: list[Runtime] = []

    def make(model: str, max_retries: int = 3, **settings: Any) -> Runtime:
        rt = make_runtime(model, delays, max_retries=max_retries, **settings)
        made.append(rt)
        return rt

    yield make  # type: ignore[misc]
    for rt in made:
        rt.close()
