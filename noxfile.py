"""Developer sessions: tests, lint, typecheck, docs, benchmarks, record.

Run with ``uvx nox -s tests`` (or ``uv run nox -s tests``); every session
installs the workspace from uv.lock with the uv backend.
"""

from __future__ import annotations

import glob

import nox

nox.options.default_venv_backend = "uv"
nox.options.sessions = ["lint", "typecheck", "tests"]


def _sync(session: nox.Session) -> None:
    session.run_install(
        "uv", "sync", "--frozen", "--all-packages",
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
    )


@nox.session
def tests(session: nox.Session) -> None:
    """The whole test suite (offline: cassettes and loopback servers only)."""
    _sync(session)
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the core, the plugins, the tests and the benchmarks."""
    _sync(session)
    session.run("ruff", "check", "core", "plugins", "tests", "benchmarks", "noxfile.py")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the core, every plugin and the public API's typing check."""
    _sync(session)
    session.run("mypy", "--strict", "core/llmport")
    plugins = sorted(glob.glob("plugins/*/llmport_*"))
    session.run("mypy", "--strict", *plugins, "tests/typing")


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site (strict: broken links fail)."""
    _sync(session)
    session.run("mkdocs", "build", "--strict", "--site-dir", "site")


@nox.session
def benchmarks(session: nox.Session) -> None:
    """Run every benchmark script; each prints a table and one JSON line."""
    _sync(session)
    for script in sorted(glob.glob("benchmarks/bench_*.py")):
        session.run("python", script, *session.posargs)


@nox.session
def record(session: nox.Session) -> None:
    """Re-record one vendor's cassettes live: ``nox -s record -- openai`` (needs its API key)."""
    if not session.posargs:
        session.error("name a vendor: nox -s record -- openai|anthropic")
    _sync(session)
    vendor = session.posargs[0]
    session.run("pytest", f"tests/{vendor}", env={"LLMPORT_RECORD_MODE": "all"})
