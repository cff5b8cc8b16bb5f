"""Rate limits shared by many processes and machines through one Redis.

    rt = Runtime(limits={"openai:*": Limit(rpm=500, concurrency=20)},
                 limiter="redis://localhost:6379/0")

The same buckets as llmport's in-process limiter, kept in Redis and changed
only by atomic Lua scripts, so every process that names the same Redis and
the same limit keys shares them:

* rpm / tpm: GCRA buckets without a burst (a "theoretical arrival time" per
  bucket); tpm is charged with the estimate and corrected with real usage.
* concurrency: a sorted set of leases (permit id, expiry). A heartbeat
  thread renews the leases a process holds every ``lease / 3`` seconds, so a
  process that dies holding a slot gives it back when its lease expires
  (``?lease=SECONDS`` in the URL, default 15). Releases never run on an
  event loop (one ending with ``asyncio.run`` loses nothing).
* Redis down: a :class:`llmport.LimiterUnavailable` naming it within
  ``?timeout=SECONDS`` (default 4), or, with ``Limit(on_unavailable="allow")``,
  the call goes ahead unlimited. A release that fails after the model
  answered is logged; the answer is returned and the lease expires.
* The clock is Redis's own (``TIME``), so machines with skewed clocks agree.

URL: any ``redis://``, ``rediss://`` or ``unix://`` URL redis-py takes, plus
``prefix=`` (default ``llmport:limit:``), ``lease=`` and ``timeout=`` query parameters.
Redis Cluster is not supported (a request's buckets are one script's keys).

The same URLs open a key-value store (:class:`RedisKV`, :mod:`.kv`): the
embedding cache (``Runtime(embed_cache="redis://localhost:6379/0")``) and
any ``RunContext.store`` kept in Redis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .kv import RedisKV
    from .limiter import RedisLimiter

__all__ = ["RedisKV", "RedisLimiter"]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # llmport loads the entry point (``llmport_redis.plugin``) with every runtime:
    # the limiter, the store, asyncio and redis load only when a runtime first uses one.
    if name == "RedisLimiter":
        from .limiter import RedisLimiter

        return RedisLimiter
    if name == "RedisKV":
        from .kv import RedisKV

        return RedisKV
    raise AttributeError(f"module 'llmport_redis' has no attribute {name!r}")
