"""Shared fixtures: cassettes that replay only (never the network)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from cassette_support import CASSETTES, make_vcr


@pytest.fixture
def cassette() -> Any:
    """``with cassette("openai/text.yaml") as cass:`` replays, then checks all was played."""

    @contextmanager
    def use(name: str, **overrides: Any) -> Iterator[Any]:
        path = CASSETTES / name
        assert path.is_file() or os.environ.get("LLMPORT_RECORD_MODE"), f"no cassette {path}"
        with make_vcr(**overrides).use_cassette(name) as cass:
            yield cass
        unplayed = len(cass.data) - cass.play_count
        assert cass.all_played, f"{name}: {unplayed} interaction(s) left unplayed"

    return use
