"""The fourth batch's embedding wire samples (``../shared/wire-samples/``), read for tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

WIRE = Path(__file__).resolve().parents[3] / "shared" / "wire-samples"


def interactions(name: str) -> list[dict[str, Any]]:
    """The recorded request/response pairs of ``name`` (``"cohere/embed-query-truncate.json"``)."""
    data: dict[str, Any] = json.loads((WIRE / name).read_text())
    return list(data["interactions"])


def request_body(name: str, index: int = 0) -> Any:
    """The JSON body of the ``index``-th recorded request."""
    return interactions(name)[index]["request"]["body"]


def response_body(name: str, index: int = 0) -> Any:
    """The JSON body of the ``index``-th recorded answer."""
    return interactions(name)[index]["response"]["body"]
