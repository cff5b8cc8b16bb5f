"""Durable runs for llmport on DBOS (``pip install llmport[dbos]``).

``durable(fn)`` runs an ``@agentic_function`` as a DBOS workflow whose model
requests and tool calls are DBOS steps: a worker killed mid-run is resumed
by any worker from its last completed step. ``queue``/``enqueue``/``result``
spread runs over workers with DBOS queues. See ``docs/durable.md``.
"""

from __future__ import annotations

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
