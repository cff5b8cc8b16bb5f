"""The ``llmport`` pytest plugin: record a test's LLM traffic once, replay it offline.

Registered through the ``pytest11`` entry point of the ``llmport``
distribution, so installing llmport is enough (``-p no:llmport`` turns it
off). It does nothing to a test that neither asks for the
``llmport_cassette`` fixture nor carries the marker::

    @pytest.mark.llmport_cassette                       # tests/cassettes/<module>/<test>.yaml
    def test_trip(): ...

    @pytest.mark.llmport_cassette("trip.yaml", match=("method", "path", "body"),
                                  ignore=["metadata.user_id"], record="new")
    def test_trip_again(llmport_cassette): ...

``--llmport-record=none|once|new|all`` sets the record mode (default
``once``, or ``none`` when the ``CI`` environment variable is set, so CI
never reaches a vendor); a marker's ``record=`` wins over it.
``--llmport-replay-timing=none|recorded|scale:F`` sets how recorded streams
replay (default ``none``: at once; ``recorded``: event by event with their
recorded gaps; ``scale:0.1``: ten times faster); a marker's ``timing=`` wins.

Importing this module costs nothing but pytest's: the recorder is imported
when a test first asks for a cassette.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

MARKER = "llmport_cassette"
RECORD_CHOICES = ("none", "once", "new", "all")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("llmport", "llmport recordings")
    group.addoption(
        "--llmport-record",
        choices=RECORD_CHOICES,
        default=None,
        help="record mode of llmport cassettes (default: once; none when CI is set)",
    )
    group.addoption(
        "--llmport-replay-timing",
        default=None,
        metavar="none|recorded|scale:F",
        help="replay recorded streams at once (none, the default), with their recorded "
        "gaps (recorded), or with the gaps times F (scale:0.1)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(path=None, *, record=None, match=..., ignore=(), timing=None): record "
        "this test's LLM traffic once and replay it offline (llmport.testing.cassette)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test carrying the marker gets the fixture, whether or not it names it."""
    for item in items:
        if item.get_closest_marker(MARKER) is not None:
            names = getattr(item, "fixturenames", None)
            if isinstance(names, list) and MARKER not in names:
                names.append(MARKER)


def record_mode(config: pytest.Config, environ: Any = os.environ) -> str:
    """The mode from ``--llmport-record``, else ``none`` under CI, else ``once``."""
    chosen = config.getoption("llmport_record", default=None)
    if chosen:
        return str(chosen)
    return "none" if environ.get("CI") else "once"


def replay_timing(config: pytest.Config) -> str:
    """How streams replay: ``--llmport-replay-timing``, else ``none`` (at once)."""
    return str(config.getoption("llmport_replay_timing", default=None) or "none")


def default_path(node: pytest.Item) -> Path:
    """``cassettes/<test module>/<test name>.yaml`` beside the test file."""
    module = Path(str(node.path))
    name = re.sub(r"[^\w.\-]+", "-", node.name).strip("-")
    return module.parent / "cassettes" / module.stem / f"{name}.yaml"


@pytest.fixture
def llmport_cassette(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The test's cassette, open for the whole test (see the module docstring)."""
    from .recording import cassette

    marker = request.node.get_closest_marker(MARKER)
    options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    path = options.pop("path", None)
    if marker is not None and marker.args:
        path = marker.args[0]
    node = request.node
    target = default_path(node) if path is None else Path(str(node.path)).parent / path
    if options.get("record") is None:
        options["record"] = record_mode(request.config)
    if options.get("timing") is None:
        options["timing"] = replay_timing(request.config)
    with cassette(target, **options) as opened:
        yield opened
