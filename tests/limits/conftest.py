"""Rate-limit tests run isolated from the host (see tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def isolated(isolated_from_host: None) -> None:
    """No LLMPORT_* variables, no entry-point plugins, an empty working directory."""
