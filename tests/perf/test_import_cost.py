"""What importing llmport loads: modules a plain import or a runtime never uses stay out.

Counts, not timings: a module left out is deterministic where a time is not
(``benchmarks/bench_import.py`` reports the times and the same counts).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_PROBE = "import sys, json; {code}; print(json.dumps(sorted(sys.modules)))"


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
