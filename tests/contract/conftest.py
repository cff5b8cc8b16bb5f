"""Fixtures of the contract suite: host isolation, a loopback-only network, runtimes.

Every test runs in an empty working directory with no vendor keys, no AWS
profile, no ``LLMPORT_*`` configuration and no CA bundle from the host, and may open
connections to 127.0.0.1 only: anything else fails the test (at teardown,
naming the host) instead of reaching the network.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llmport import Runtime
from llmport.plugins.host import add_global_plugin, remove_global_plugin
from llmport.testing.loopback import LoopbackServer
from wire import TARGETS, Wire, make_runtime

_HOST_PREFIXES = (
    "LLMPORT_",
    "OPENAI_",
    "AZURE_OPENAI_",
    "ANTHROPIC_",
    "GEMINI_",
    "GOOGLE_",
    "AWS_",
    "CALLONLY_",
    # OpenAI-compatible services
    "GROQ_",
    "DEEPSEEK_",
    "OLLAMA_",
    "MISTRAL_",
    "OPENROUTER_",
    "VLLM_",
    "LMSTUDIO_",
    "XAI_",
    "TOGETHER_",
    "FIREWORKS_",
    "CEREBRAS_",
    "HF_TOKEN",
    # vendors that only embed
    "CO_API_KEY",
    "VOYAGE_",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The anthropic SDK warns on every call to claude-sonnet-4-5 (the model the
    # contract names): keep the report readable, in this directory only.
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(
                pytest.mark.filterwarnings(
                    "ignore:The model 'claude-sonnet-4-5' is deprecated:DeprecationWarning"
                )
            )


@pytest.fixture(autouse=True)
def isolated(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tiny_ca_bundle: Path
) -> Iterator[None]:
    for key in list(os.environ):
        if key.startswith(_HOST_PREFIXES):
            monkeypatch.delenv(key)
    monkeypatch.setenv("SSL_CERT_FILE", str(tiny_ca_bundle))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.chdir(tmp_path)
    yield


@pytest.fixture(autouse=True)
def no_application_default_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Google Application Default Credentials on a contract host, as no AWS profile.

    google-auth would otherwise read the host's gcloud login or ask the GCE metadata
    server (a connection off the loopback); the Vertex AI targets are given their
    credentials in their settings (``wire.AnthropicVertexWire``, ``GeminiVertexWire``).
    """
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    def none(*args: Any, **kwargs: Any) -> Any:
        raise DefaultCredentialsError("no Application Default Credentials on a contract host")

    monkeypatch.setattr(google.auth, "default", none)


@pytest.fixture(autouse=True)
def installed() -> Iterator[None]:
    """The suite's own plugins (``Wire.plugins``), seen by every Runtime and the CLI.

    As an installed entry point would be; registered for the test only, so
    no other test directory sees them.
    """
    plugins = [p for wire in TARGETS for p in wire.plugins]
    for plugin in plugins:
        add_global_plugin(plugin)
    yield
    for plugin in plugins:
        remove_global_plugin(plugin)


def _local(host: Any) -> bool:
    if host in (None, "", "localhost"):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Refuse every connection and name lookup that is not the loopback interface."""
    blocked: list[str] = []
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def refuse(what: str) -> OSError:
        blocked.append(what)
        return ConnectionRefusedError(f"contract tests are loopback-only: {what} blocked")

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
            raise refuse(f"connect to {address!r}")
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
            raise refuse(f"connect to {address!r}")
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _local(host.decode() if isinstance(host, bytes) else host):
            raise socket.gaierror(socket.EAI_NONAME, str(refuse(f"name lookup of {host!r}")))
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield blocked
    assert not blocked, f"a test tried to leave the loopback interface: {blocked}"


@pytest.fixture
def runtime() -> Iterator[Callable[..., Runtime]]:
    """``runtime(wire, server, **kwargs)``: :func:`wire.make_runtime`, closed after the test."""
    made: list[Runtime] = []

    def make(wire: Wire, server: LoopbackServer, **kwargs: Any) -> Runtime:
        rt = make_runtime(wire, server, **kwargs)
        made.append(rt)
        return rt

    yield make
    for rt in made:
        rt.close()
