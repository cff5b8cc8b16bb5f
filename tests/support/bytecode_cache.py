"""One bytecode cache for a whole test run, its xdist workers and its subprocesses.

Where ``PYTHONDONTWRITEBYTECODE`` is set (container images often set it) and
the virtualenv was installed without compiled bytecode (``uv sync`` compiles
none by default), every Python process compiles every module it imports from
source: each xdist worker compiled the test modules (pytest's assertion
rewriting included) and the vendor SDKs again, and so did every worker,
demo, CLI and example-app subprocess a test starts (seconds of CPU each).
The run writes and reads bytecode in ``.pytest_cache/pycache`` instead
(``sys.pycache_prefix``, and ``PYTHONPYCACHEPREFIX`` for subprocesses), so
each module is compiled once per checkout; nothing is written beside the
sources. ``LLMPORT_TEST_NO_BYTECODE_CACHE=1`` leaves the interpreter's
settings alone.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: Set to 1 to keep the environment's own bytecode settings.
OPT_OUT = "LLMPORT_TEST_NO_BYTECODE_CACHE"


def share_bytecode(root: Path) -> None:
    """Cache bytecode under ``root/.pytest_cache/pycache`` for this process and its children.

    Called as the suite's first conftest is imported, before any test module
    is collected.
    """
    if os.environ.get(OPT_OUT) == "1":
        return
    cache = root / ".pytest_cache" / "pycache"
    cache.mkdir(parents=True, exist_ok=True)
    sys.pycache_prefix = str(cache)
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = str(cache)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
