"""Fixtures for the CLI tests: isolation from the host and a scripted model.

Every test runs in its own empty working directory with no ``LLMPORT_*``
variables and no entry-point plugins, so no configuration file, key or
installed plugin on the host changes what the CLI does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from llmport.observe.redaction import isolated_secrets
from llmport.plugins import host as plugins_module
from llmport.testing import Script, Step


@pytest.fixture(autouse=True)
def isolated(isolated_from_host: None) -> Iterator[None]:
    """Every test here runs isolated from the host (see tests/conftest.py), and its keys go
    with it: a CLI call is a process of its own, and the fake keys these tests register
    (``sk-test-openai-env-...``) would otherwise mask a partial echo (``t-openai``) of
    ``llmport-openai`` in whatever test the worker runs next."""
    with isolated_secrets():
        yield


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``script = scripted(step, ...)``: the model ``scripted:test`` answers from a Script.

    ``prefix=`` changes the provider prefix (the model is then ``<prefix>:test``).

    The script is served as if it were an installed entry-point plugin (the
    ``discover()`` result for ``LLMPORT_PLUGINS=""``), so the CLI's own
    ``Runtime`` finds it with no change to the code under test.
    """

    def make(*steps: Step | str, prefix: str = "scripted") -> Script:
        script = Script(list(steps), prefix=prefix)
        load = plugins_module.PluginLoad("scripted", "llmport.testing:Script", None, None, script)
        monkeypatch.setattr(plugins_module, "_loaded", {"": (load,)})
        return script

    return make
