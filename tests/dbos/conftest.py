"""The durable-run tests use the PostgreSQL server fixture of the PostgreSQL plugin's tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "llmport_tests_postgres_server",
    Path(__file__).resolve().parents[1] / "postgres" / "conftest.py",
)
assert _spec is not None and _spec.loader is not None
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)

pg_server = _fixtures.pg_server  # one server per xdist worker, started once
pg_url = _fixtures.pg_url  # a fresh database per test
own_pg = _fixtures.own_pg  # a server of the module's own, to stop and start
