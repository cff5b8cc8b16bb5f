"""What importing llmport loads: modules a plain import or a runtime never uses stay out.

Counts, not timings: a module left out is deterministic where a time is not
(``benchmarks/bench_import.py`` reports the times and the same counts).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# json is imported after the list is taken: it is one of the modules looked for.
_PROBE = "import sys; {code}; loaded = sorted(sys.modules); import json; print(json.dumps(loaded))"


def _loaded(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(code=code)], check=True, capture_output=True, text=True
    ).stdout
    return set(json.loads(out))


def test_import_llmport_loads_no_runtime_machinery() -> None:
    loaded = _loaded("import llmport")
    for name in ("asyncio", "random", "urllib.parse", "llmport.controls.retry", "llmport.runtime"):
        assert name not in loaded, name


@pytest.mark.parametrize(
    "module",
    ["decimal", "uuid", "platform", "datetime", "hashlib", "mimetypes", "random"],
)
def test_the_runtime_import_leaves_rarely_used_stdlib_modules_out(module: str) -> None:
    # decimal: costs and cost budgets; uuid / datetime: tool signatures that name them;
    # hashlib: summarizing context policies; mimetypes: unknown file suffixes;
    # random: the first jittered retry.
    assert module not in _loaded("from llmport import Runtime")


#: A user's test file: what is loaded before any cassette is used, then after one is.
_USER_TESTS = """
import sys

HEAVY = (
    "vcr",
    "yaml",
    "llmport.testing.scripted",
    "llmport.testing.recording",
    "llmport.provider.contract",
)


def test_before_any_cassette():
    assert "llmport.testing.pytest_plugin" in sys.modules  # the plugin is loaded...
    assert [m for m in HEAVY if m in sys.modules] == []  # ...and nothing heavy with it


def test_a_cassette_loads_the_recorder(llmport_cassette):
    assert "vcr" in sys.modules and "llmport.testing.recording" in sys.modules
"""


def test_the_pytest_plugin_loads_no_recorder_until_a_cassette_is_used(tmp_path: Path) -> None:
    # Every pytest run of every user with llmport installed loads the plugin.
    (tmp_path / "test_user.py").write_text(_USER_TESTS)
    environ = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "2 passed" in ran.stdout


@pytest.mark.parametrize(
    "module",
    [
        "pathlib",
        "uuid",
        "concurrent.futures",
        "difflib",
        "logging",
        "dataclasses",
        "inspect",
        "json",
        "hashlib",
    ],
)
def test_a_script_import_leaves_first_use_modules_out(module: str) -> None:
    # pathlib: reading or saving a file block; uuid: a new session's id;
    # concurrent.futures: the first sync tool turn; difflib: an unknown option's hint;
    # logging: the first record or runtime (llmport.observe.logs.logger);
    # dataclasses (which imports inspect): fields()/replace() on a class, or a
    # class llmport.slotted hands to the stdlib; inspect: the first @tool or
    # @agentic_function; json: the first body sent or slow-path answer read;
    # hashlib (OpenSSL): the first session attachment read back.
    assert module not in _loaded("from llmport import Runtime, tool, agentic_function")


#: Who calls ``re.compile`` while the script's import runs (a module-level regex).
_COMPILERS = """
import json, re, sys
callers = []
compile = re.compile
def recording(*args, **kwargs):
    callers.append(sys._getframe(1).f_globals.get("__name__", "?"))
    return compile(*args, **kwargs)
re.compile = recording
from llmport import Runtime, tool, agentic_function
print(json.dumps(callers))
"""


def test_a_script_import_compiles_no_llmport_regex() -> None:
    # Each module-level pattern is compiled on first use (llmport.patterns): a
    # wide character class alone cost ~4 ms of every script's start-up.
    out = subprocess.run(
        [sys.executable, "-c", _COMPILERS], check=True, capture_output=True, text=True
    ).stdout
    assert [name for name in json.loads(out) if name.startswith("llmport")] == []


def _with_every_plugin(code: str) -> set[str]:
    """The modules loaded by ``code`` with every installed plugin (no ``LLMPORT_PLUGINS``)."""
    environ = {k: v for k, v in os.environ.items() if k != "LLMPORT_PLUGINS"}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(code=code)],
        check=True,
        capture_output=True,
        text=True,
        env=environ,
    ).stdout
    return set(json.loads(out))


def test_a_runtime_s_plugin_host_loads_no_plugin_machinery() -> None:
    # Every process's first runtime imports each installed plugin's entry-point
    # module; llmport_dbos implements no hook, and its step recorder's asyncio
    # cost ~17 ms of every script's first call there, the PostgreSQL store
    # (psycopg, uuid, socket, its watchdog) ~20 ms more.
    loaded = _with_every_plugin("from llmport import Runtime; Runtime().plugins")
    assert {"llmport_dbos", "llmport_postgres"} <= loaded  # the plugins were loaded...
    behind = ("dbos", "asyncio", "llmport_postgres.store", "psycopg", "uuid", "socket")
    assert [module for module in behind if module in loaded] == []  # ...and nothing behind them


@pytest.mark.parametrize("module", ["importlib.metadata", "email", "zipfile"])
def test_finding_the_plugins_leaves_importlib_metadata_out(module: str) -> None:
    # importlib.metadata (with email, zipfile, pathlib, socket) was more than half
    # of a first runtime's plugin discovery: the entry points are read directly.
    loaded = _with_every_plugin("from llmport import Runtime; Runtime().plugins")
    assert "llmport_openai.plugin" in loaded
    assert module not in loaded


def test_making_a_runtime_leaves_the_misspelling_hints_out() -> None:
    # difflib (with heapq) serves only a Runtime keyword that is not known.
    loaded = _loaded(
        "import os; os.environ['LLMPORT_PLUGINS'] = ''; from llmport import Runtime; Runtime()"
    )
    assert "llmport.runtime" in loaded and "difflib" not in loaded
