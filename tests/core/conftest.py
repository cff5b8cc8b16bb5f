"""Fixtures for the core tests: isolation from the host and a sync/async driver.

Every test runs in its own empty working directory with no ``LLMPORT_*``
variables and no entry-point plugins (``LLMPORT_PLUGINS=""``), so nothing on
the host changes what the core does. Tests that exercise discovery or
configuration set what they need explicitly.
"""

from __future__ import annotations

import pytest
from support.core_helpers import Driver


@pytest.fixture(autouse=True)
def isolated(isolated_from_host: None) -> None:
    """Every test here runs isolated from the host (see tests/conftest.py)."""


@pytest.fixture(params=["sync", "async"])
def drive(request: pytest.FixtureRequest) -> Driver:
    """Parametrizes a test over ``exec``/``run``/``stream`` and their async twins."""
    return Driver(request.param)
