"""Fixtures for the core tests: isolation from the host and a sync/async driver.

Every test runs in its own empty working directory with no ``LLMPORT_*``
variables and no entry-point plugins (``LLMPORT_PLUGINS=""``), so nothing on
the host changes what the core does. Tests that exercise discovery or
configuration set what they need explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from core_helpers import Driver
from llmport import plugins as plugins_module


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[None]:
    for key in list(os.environ):
        if key.startswith("LLMPORT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("LLMPORT_PLUGINS", "")
    monkeypatch.chdir(tmp_path)
    # discover() caches per LLMPORT_PLUGINS value; start every test from scratch.
    monkeypatch.setattr(plugins_module, "_loaded", {})
    yield


@pytest.fixture(params=["sync", "async"])
def drive(request: pytest.FixtureRequest) -> Driver:
    """Parametrizes a test over ``exec``/``run``/``stream`` and their async twins."""
    return Driver(request.param)
