"""Durable runs for llmport on DBOS (``pip install llmport[dbos]``).

``durable(fn)`` runs an ``@agentic_function`` as a DBOS workflow whose model
requests and tool calls are DBOS steps: a worker killed mid-run is resumed
by any worker from its last completed step. ``queue``/``enqueue``/``result``
spread runs over workers with DBOS queues. See ``docs/durable.md``.

The package is the plugin's ``llmport`` entry point, which every runtime's
plugin host imports, and it implements no hook: its names are imported from
:mod:`.durable` and :mod:`.recorder` (asyncio, DBOS) when first asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .durable import DEFAULT_QUEUE, DurableFunction, durable, enqueue, launch, queue, result
    from .recorder import DbosRecorder

__all__ = [
    "DEFAULT_QUEUE",
    "DbosRecorder",
    "DurableFunction",
    "durable",
    "enqueue",
    "launch",
    "queue",
    "result",
]

_HOMES = {name: "recorder" if name == "DbosRecorder" else "durable" for name in __all__}


# No module __dir__ listing these names: a plugin host looks at every name
# dir() lists, and a look that reached this function would import them all.
def __getattr__(name: str) -> Any:
    """Import the module that defines ``name`` the first time it is asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later lookups are ordinary attribute reads
    return value
