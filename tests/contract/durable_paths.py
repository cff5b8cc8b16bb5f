"""The durable-run paths of the invariants table: an agentic function run as a DBOS workflow.

DBOS keeps one instance per process: it is launched once, on a SQLite system
database in a temporary folder, the first time a durable path is driven, and
stopped at the end of the test module (:func:`durable_paths_dbos`, a fixture
the module imports), so other test files in the process can launch their
own. The workflows are registered at import
(before the launch, as DBOS requires); the runtime under test reaches them
through a context variable (a workflow's arguments are checkpointed, and a
runtime is not data).
"""

from __future__ import annotations

import contextvars
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llmport_dbos
import pytest
from llmport import Runtime, agentic_function

#: The runtime and content of the turn being driven.
turn: contextvars.ContextVar[tuple[Runtime, Any]] = contextvars.ContextVar("durable_turn")


@agentic_function
def ask() -> str:
    """One exec of the turn's content, as a durable run."""
    rt, content = turn.get()
    return str(rt.exec(content))


@agentic_function
async def aask() -> str:
    """Async :func:`ask`."""
    rt, content = turn.get()
    return str(await rt.async_exec(content))


durable_ask = llmport_dbos.durable(ask, name="contract.ask")
durable_aask = llmport_dbos.durable(aask, name="contract.aask")
#: The DBOS instance the durable paths launched, and its folder (empty until the first).
launched: list[tuple[Any, str]] = []


def launch_once() -> None:
    if launched:
        return
    folder = tempfile.mkdtemp(prefix="llmport-contract-dbos-")
    database = f"sqlite:///{Path(folder) / 'dbos.sqlite'}"
    launched.append((llmport_dbos.launch(database, name="contract", log_level="WARNING"), folder))


@pytest.fixture(scope="module", autouse=True)
def durable_paths_dbos() -> Iterator[None]:
    """Stop the DBOS the durable paths launched (if they ran) when the module ends."""
    yield
    while launched:
        instance, folder = launched.pop()
        instance.destroy()
        shutil.rmtree(folder, ignore_errors=True)


def durable_run(rt: Runtime, content: Any) -> Any:
    launch_once()
    token = turn.set((rt, content))
    try:
        return durable_ask()
    finally:
        turn.reset(token)


async def adurable_run(rt: Runtime, content: Any) -> Any:
    launch_once()
    token = turn.set((rt, content))
    try:
        return await durable_aask()
    finally:
        turn.reset(token)


__all__ = ["adurable_run", "durable_paths_dbos", "durable_run"]
