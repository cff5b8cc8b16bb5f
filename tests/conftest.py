"""Shared fixtures: cassettes that replay only (never the network); a mute loopback port;
one botocore loader and a one-certificate CA bundle for the session; one bytecode cache
for the run (support/bytecode_cache)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from support.bytecode_cache import share_bytecode

# Before any test module (or the SDKs they import) is collected: see support/bytecode_cache.
share_bytecode(Path(__file__).resolve().parents[1])

from support.botocore_share import one_botocore_loader  # noqa: E402
from support.cassette_support import CASSETTES, make_vcr  # noqa: E402
from support.tls_support import write_one_cert_bundle  # noqa: E402


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers per core (at least as many as cores, at most 8 more).

    The suite waits more than it computes (loopback servers, timeouts it
    asserts, subprocesses, PostgreSQL and Redis), so one worker per core left
    the cores half idle: on 2 cores, 4 workers took 5:35 against 7:53.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(cores, min(2 * cores, cores + 8))


@pytest.fixture(scope="session", autouse=True)
def cli_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test writes the CLI's log, keys or settings into the user's home directory.

    The XDG directories too: several test folders clear every ``LLMPORT_*`` variable.
    """
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LLMPORT_HOME", str(tmp_path_factory.mktemp("llmport-home")))
        env.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
        env.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
        yield


@pytest.fixture(scope="session")
def tiny_ca_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_one_cert_bundle(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="session", autouse=True)
def one_cert_trusted(tiny_ca_bundle: Path) -> Iterator[None]:
    """Every SDK client (and subprocess) loads a one-certificate CA bundle: no test speaks TLS."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SSL_CERT_FILE", str(tiny_ca_bundle))
        env.delenv("SSL_CERT_DIR", raising=False)
        yield


@pytest.fixture(scope="session", autouse=True)
def shared_botocore_loader() -> Iterator[None]:
    """botocore's service JSON parsed once per worker, not once per Bedrock client."""
    with one_botocore_loader():
        yield


@pytest.fixture
def isolated_from_host(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[None]:
    """No ``LLMPORT_*`` variables, no entry-point plugins, an empty working directory,
    and the CLI's home (logs, keys, settings) in a temporary directory.

    ``discover()`` caches per ``LLMPORT_PLUGINS`` value, so the cache starts empty too.
    Test folders whose tests must not see the host use it from an autouse fixture.
    """
    from llmport.plugins import host as plugins_module

    for key in list(os.environ):
        if key.startswith("LLMPORT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("LLMPORT_PLUGINS", "")
    monkeypatch.setenv("LLMPORT_HOME", str(tmp_path / "llmport-home"))  # the CLI's logs, keys
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(plugins_module, "_loaded", {})
    yield


@pytest.fixture
def mute_port() -> Iterator[int]:
    """A loopback port that accepts connections (its backlog) and never says a word."""
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(16)
        yield int(mute.getsockname()[1])


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
