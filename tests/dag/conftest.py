"""Fixtures for the DAG tests: host isolation and the sync/async parameter."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def isolated(isolated_from_host: None) -> None:
    """Every test here runs isolated from the host (see tests/conftest.py)."""


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)
