"""Rate limits shared by many processes and machines through one Redis.

    rt = Runtime(limits={"openai:*": Limit(rpm=500, concurrency=20)},
                 limiter="redis://localhost:6379/0")

The same buckets as llmport's in-process limiter, kept in Redis and changed
only by atomic Lua scripts, so every process that names the same Redis and
the same limit keys shares them:

* rpm / tpm: GCRA buckets without a burst (a "theoretical arrival time" per
  bucket); tpm is charged with the estimate and corrected with real usage.
* concurrency: a sorted set of leases (permit id, expiry); a process that
  dies holding a slot gives it back when the lease expires
  (``?lease=SECONDS`` in the URL, default 600).
* The clock is Redis's own (``TIME``), so machines with skewed clocks agree.

URL: any ``redis://``, ``rediss://`` or ``unix://`` URL redis-py takes, plus
``prefix=`` (default ``llmport:limit:``) and ``lease=`` query parameters.
Redis Cluster is not supported (a request's buckets are one script's keys).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .limiter import RedisLimiter

__all__ = ["RedisLimiter"]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # llmport loads the entry point (``llmport_redis.plugin``) with every runtime:
    # the limiter, asyncio and redis load only when a runtime first uses one.
    if name == "RedisLimiter":
        from .limiter import RedisLimiter

        return RedisLimiter
    raise AttributeError(f"module 'llmport_redis' has no attribute {name!r}")
