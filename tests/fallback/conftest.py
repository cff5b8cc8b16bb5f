"""Fallback across models."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def isolated(isolated_from_host: None) -> None:
    """Every test here runs isolated from the host (see tests/conftest.py)."""
