"""Developer sessions: tests, lint, typecheck, docs, benchmarks, record.

Run with ``uvx nox -s tests`` (or ``uv run nox -s tests``); every session
installs the workspace from uv.lock with the uv backend.
"""

from __future__ import annotations

import glob
import tomllib

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


#: The suites that speak to the vendor SDKs: each vendor's own tests and the contract suite.
SDK_SUITES = ("tests/openai", "tests/anthropic", "tests/gemini", "tests/bedrock", "tests/contract")
#: The SDK-range sessions run the contract suite's full matrix: the hostile peers on every
#: target, not one target per wire format as the README's test run does.
FULL_MATRIX = {"CONTRACT_FULL_MATRIX": "1"}


def _declared_sdks() -> list[str]:
    """Every requirement the vendor plugins declare, except llmport itself (the SDK ranges)."""
    requirements = []
    for vendor in ("openai", "anthropic", "gemini", "bedrock"):
        with open(f"plugins/{vendor}/pyproject.toml", "rb") as file:
            declared = tomllib.load(file)["project"]["dependencies"]
        requirements += [req for req in declared if not req.startswith("llmport")]
    return requirements


def _print_sdk_versions(session: nox.Session) -> None:
    """Say which SDK versions the session tests, so a failure names them."""
    names = "openai anthropic google-genai boto3 botocore aiohttp"
    code = (
        "from importlib.metadata import version\n"
        f"for name in {names!r}.split(): print(f'{{name}} {{version(name)}}')"
    )
    session.run("python", "-c", code)


@nox.session
def sdk_lowest(session: nox.Session) -> None:
    """The vendor and contract suites at the lowest SDK versions the plugins declare.

    uv's ``lowest-direct`` resolution over the plugins' own requirement
    strings; ``--upgrade`` drops the installed versions as preferences (a newer
    installed release would otherwise satisfy the range and stay).
    """
    _sync(session)
    session.install("--upgrade", "--resolution", "lowest-direct", *_declared_sdks())
    _print_sdk_versions(session)
    session.run("pytest", "-p", "no:cacheprovider", *SDK_SUITES, *session.posargs, env=FULL_MATRIX)


@nox.session
def sdk_newest(session: nox.Session) -> None:
    """The vendor and contract suites at the newest SDK releases (upgraded past uv.lock)."""
    _sync(session)
    session.install("--upgrade", *_declared_sdks())
    _print_sdk_versions(session)
    session.run("pytest", "-p", "no:cacheprovider", *SDK_SUITES, *session.posargs, env=FULL_MATRIX)


#: The benchmark environment: the peers and both transports of every SDK, never the
#: project's own lock. LiteLLM is pinned below a release known to be compromised (1.107.0).
#: The peers go in first: the SDKs come last, at the versions the plugins require, so
#: llmport and the raw SDKs run on the same SDK the project tests (a peer that pins
#: an older SDK, as pydantic-ai does google-genai < 3, then runs on the newer one).
BENCH_DEPS = (
    "litellm>=1.70,<1.107",
    "pydantic-ai-slim[openai,anthropic,google,bedrock]",
    "openai[aiohttp]>=3.24",
    "anthropic[aiohttp]>=2.10",
    "google-genai[aiohttp]>=3",
    "boto3>=1.42.59",
)


@nox.session(python=False)
def bench(session: nox.Session) -> None:
    """Targets side by side (llmport, raw SDKs on httpx and aiohttp, LiteLLM, pydantic-ai).

    A separate uv venv (.nox/bench-env) with llmport and the four vendor plugins
    installed from this checkout, plus the peers; runs benchmarks/bench_peers.py
    there. Peers that fail to install are left out (their rows say n/a).
    ``uvx nox -s bench -- --vendors openai --concurrency 500``
    """
    env_dir = ".nox/bench-env"
    python = f"{env_dir}/bin/python"
    session.run("uv", "venv", "--quiet", "--allow-existing", env_dir, external=True)
    local = ["."] + [f"./plugins/{p}" for p in ("openai", "anthropic", "gemini", "bedrock")]
    session.run("uv", "pip", "install", "--quiet", "--python", python, *local, external=True)
    for dep in BENCH_DEPS:
        try:
            session.run("uv", "pip", "install", "--quiet", "--python", python, dep, external=True)
        except Exception:  # nox raises its own CommandFailed; keep going without that peer
            session.warn(f"could not install {dep}; its rows will say n/a")
    # LiteLLM fetches its price list from the network at import unless told not to.
    env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    session.run(python, "benchmarks/bench_peers.py", *session.posargs, external=True, env=env)


@nox.session
def record(session: nox.Session) -> None:
    """Re-record one vendor's cassettes live: ``nox -s record -- openai`` (needs its API key)."""
    if not session.posargs:
        session.error("name a vendor: nox -s record -- openai|anthropic")
    _sync(session)
    vendor = session.posargs[0]
    # One process (-n 0): live calls one at a time, as the vendor's rate limits expect.
    session.run("pytest", "-n", "0", f"tests/{vendor}", env={"LLMPORT_RECORD_MODE": "all"})
