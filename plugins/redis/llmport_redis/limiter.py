"""The Redis limiter (see the package docstring for the model).

Every Redis command runs on one thread-safe sync client, never on an event
loop: async acquires run it in the limiter's own worker threads, and a
release made on an event loop is handed to a releaser thread. So a release
never depends on a loop that may be gone (``asyncio.run`` ending right after
the call), and the next acquire of this limiter first waits for the
releases handed off before it.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import os
import threading
import uuid
import weakref
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from llmport.controls.limits import CONCURRENCY_POLL, Limit, Permit, RateInfo
from llmport.errors import ConfigError, LimiterUnavailable, redact
from llmport.observe.logs import logger

from .connection import DEFAULT_TIMEOUT, bounded_client, service, split_url

__all__ = ["RedisLimiter"]

# KEYS: 3 per limit (requests TAT, tokens TAT, leases).
# ARGV: n, tokens, permit id, lease seconds, poll, then per limit:
#       seconds per request (0: none), seconds per token (0: none), concurrency (0: none).
# Returns "" when granted, else the seconds to wait (as a string: Lua numbers become integers).
ACQUIRE = """
pcall(redis.replicate_commands)
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local n = tonumber(ARGV[1])
local tokens = tonumber(ARGV[2])
local permit = ARGV[3]
local lease = tonumber(ARGV[4])
local poll = tonumber(ARGV[5])
local wait = 0
for i = 1, n do
  local a = 5 + (i - 1) * 3
  local per_req, per_tok, conc = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local k = (i - 1) * 3
  if per_req > 0 then
    local tat = tonumber(redis.call('GET', KEYS[k + 1]) or now)
    if tat - now > wait then wait = tat - now end
  end
  if per_tok > 0 then
    local tat = tonumber(redis.call('GET', KEYS[k + 2]) or now)
    if tat - now > wait then wait = tat - now end
  end
  if conc > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[k + 3], '-inf', now)
    if redis.call('ZCARD', KEYS[k + 3]) >= conc and poll > wait then wait = poll end
  end
end
if wait > 0 then return tostring(wait) end
for i = 1, n do
  local a = 5 + (i - 1) * 3
  local per_req, per_tok, conc = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local k = (i - 1) * 3
  if per_req > 0 then
    local tat = math.max(tonumber(redis.call('GET', KEYS[k + 1]) or now), now - per_req) + per_req
    redis.call('SET', KEYS[k + 1], tostring(tat), 'PX', math.ceil((tat - now + 60) * 1000))
  end
  if per_tok > 0 then
    local tat = math.max(tonumber(redis.call('GET', KEYS[k + 2]) or now), now) + tokens * per_tok
    redis.call('SET', KEYS[k + 2], tostring(tat), 'PX', math.ceil((tat - now + 60) * 1000))
  end
  if conc > 0 then
    redis.call('ZADD', KEYS[k + 3], now + lease, permit)
    redis.call('PEXPIRE', KEYS[k + 3], math.ceil(lease * 2000))
  end
end
return ''
"""

# KEYS as ACQUIRE. ARGV: n, charged, used (-1: unknown), permit id, pause requests, pause
# tokens, then per limit: seconds per request, seconds per token, concurrency.
RELEASE = """
pcall(redis.replicate_commands)
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local n = tonumber(ARGV[1])
local charged, used = tonumber(ARGV[2]), tonumber(ARGV[3])
local permit = ARGV[4]
local pause_req, pause_tok = tonumber(ARGV[5]), tonumber(ARGV[6])
local function push(key, tat)
  if tat > now then
    redis.call('SET', key, tostring(tat), 'PX', math.ceil((tat - now + 60) * 1000))
  end
end
for i = 1, n do
  local a = 6 + (i - 1) * 3
  local per_req, per_tok, conc = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local k = (i - 1) * 3
  if conc > 0 then redis.call('ZREM', KEYS[k + 3], permit) end
  if per_tok > 0 then
    local tat = tonumber(redis.call('GET', KEYS[k + 2]) or now)
    if used >= 0 then tat = tat + (used - charged) * per_tok end
    if pause_tok > 0 then tat = math.max(tat, now + pause_tok) end
    push(KEYS[k + 2], tat)
  end
  if pause_req > 0 then
    local tat = tonumber(redis.call('GET', KEYS[k + 1]) or now)
    push(KEYS[k + 1], math.max(tat, now + pause_req))
  end
end
return ''
"""

# KEYS: the concurrency sets holding the leases; ARGV: lease seconds, then one permit id per key.
# Pushes each live lease's expiry to now + lease (XX: a lease that already expired stays gone).
RENEW = """
pcall(redis.replicate_commands)
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local lease = tonumber(ARGV[1])
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], 'XX', now + lease, ARGV[i + 1])
  redis.call('PEXPIRE', KEYS[i], math.ceil(lease * 2000))
end
return ''
"""

Limits = tuple[tuple[str, Limit], ...]

log = logger()

#: Lease seconds (a concurrency slot held without a heartbeat).
DEFAULT_LEASE = 15.0


def _shape(limits: Limits) -> list[float]:
    out: list[float] = []
    for _, limit in limits:
        out += [
            60.0 / limit.rpm if limit.rpm else 0.0,
            60.0 / limit.tpm if limit.tpm else 0.0,
            float(limit.concurrency or 0),
        ]
    return out


def _on_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class RedisLimiter:
    """The :class:`llmport.controls.limits.Limiter` whose buckets live in Redis.

    ``lease``: seconds a concurrency slot stays held without a heartbeat (a
    thread renews the leases this process holds every ``lease / 3`` s, so a
    killed holder's slot frees within ``lease``). ``timeout``: seconds within
    which an unreachable Redis is a :class:`~llmport.errors.LimiterUnavailable`.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "llmport:limit:",
        lease: float = DEFAULT_LEASE,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        for name, value in (("lease", lease), ("timeout", timeout)):
            if not value > 0:
                raise ConfigError(f"RedisLimiter {name} must be > 0 seconds, got {value!r}")
        self.url = url
        self.prefix = prefix
        self.lease = lease
        self.timeout = timeout
        self._client = bounded_client(url, timeout)
        self._acquire = self._client.register_script(ACQUIRE)
        self._release = self._client.register_script(RELEASE)
        self._renew = self._client.register_script(RENEW)
        self._lock = threading.Lock()
        self._fresh_threads()
        #: Releases that failed (Redis down): logged, and their leases expire by themselves.
        self.failed_releases: collections.deque[LimiterUnavailable] = collections.deque(maxlen=100)

    def _fresh_threads(self) -> None:
        """No worker, heartbeat or lease of this process yet (at start, and in a forked child)."""
        self._pid = os.getpid()
        self._held: dict[str, list[str]] = {}  # permit id -> its concurrency keys
        self._pending: set[concurrent.futures.Future[None]] = set()
        self._askers: concurrent.futures.ThreadPoolExecutor | None = None
        self._releaser: concurrent.futures.ThreadPoolExecutor | None = None
        self._heartbeat: threading.Thread | None = None
        self._stop = threading.Event()

    def _check_fork(self) -> None:
        # Threads do not survive a fork: a child starts its own (call with the lock held).
        if self._pid != os.getpid():
            self._fresh_threads()

    @classmethod
    def from_url(cls, url: str) -> RedisLimiter:
        """``redis://host:6379/0?prefix=...&lease=...&timeout=...``: ours leave the URL."""
        clean, ours = split_url(url, ("prefix", "lease", "timeout"))
        return cls(
            clean,
            prefix=ours.get("prefix", "llmport:limit:"),
            lease=float(ours.get("lease", DEFAULT_LEASE)),
            timeout=float(ours.get("timeout", DEFAULT_TIMEOUT)),
        )

    @property
    def service(self) -> str:
        """What a :class:`~llmport.errors.LimiterUnavailable` names: ``Redis at host:port``."""
        return service(self.url)

    def __repr__(self) -> str:
        host = urlsplit(self.url).hostname or self.url.split("?")[0]
        return f"RedisLimiter({host!r}, prefix={self.prefix!r})"

    def _keys(self, limits: Limits) -> list[str]:
        keys = []
        for key, _ in limits:
            base = self.prefix + key
            keys += [base + ":req", base + ":tok", base + ":conc"]
        return keys

    def _run(self, script: Callable[..., Any], keys: list[str], args: list[Any]) -> Any:
        """One script call; whatever Redis or the network raise becomes LimiterUnavailable."""
        import redis

        try:
            return script(keys, args)
        except (redis.RedisError, OSError) as exc:
            detail = redact(f"{type(exc).__name__}: {exc}")
        raise LimiterUnavailable(self.service, detail)  # outside the handler: nothing chained

    # -- acquiring -----------------------------------------------------------------------

    def try_acquire(self, limits: Limits, tokens: int) -> Permit | float:
        with self._lock:
            self._check_fork()
            handed_off = list(self._pending)
        if handed_off:  # this limiter's own releases land first: no wait on our own slot
            concurrent.futures.wait(handed_off, timeout=self.timeout)
        permit = uuid.uuid4().hex
        args = [len(limits), tokens, permit, self.lease, CONCURRENCY_POLL, *_shape(limits)]
        answer = self._run(self._acquire, self._keys(limits), args)
        text = answer.decode() if isinstance(answer, bytes) else str(answer or "")
        if text:
            return max(float(text), 0.001)
        sets = self._keys(limits)[2::3]
        leases = [k for k, (_, lim) in zip(sets, limits, strict=True) if lim.concurrency]
        if leases:
            self._hold(permit, leases)
        return _RedisPermit(self, limits, tokens, permit)

    async def atry_acquire(self, limits: Limits, tokens: int) -> Permit | float:
        """:meth:`try_acquire` in a worker thread: the loop never waits on Redis."""
        future = self._pool("askers").submit(self.try_acquire, limits, tokens)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.add_done_callback(_give_back)  # granted after its caller left
            raise

    # -- holding: the heartbeat ------------------------------------------------------------

    def _hold(self, permit: str, keys: list[str]) -> None:
        with self._lock:
            self._check_fork()
            self._held[permit] = keys
            if self._heartbeat is None:
                self._heartbeat = threading.Thread(
                    target=_heartbeat,
                    args=(weakref.ref(self), self._stop, self.lease / 3),
                    name="llmport-redis-heartbeat",
                    daemon=True,
                )
                self._heartbeat.start()

    def renew(self) -> None:
        """Push the expiry of every lease this limiter holds to now + ``lease`` (the heartbeat)."""
        with self._lock:
            pairs = [(k, p) for p, keys in self._held.items() for k in keys]
        if not pairs:
            return
        try:
            self._run(self._renew, [k for k, _ in pairs], [self.lease, *(p for _, p in pairs)])
        except LimiterUnavailable as exc:  # the leases run out: other callers are not stuck
            log.warning("could not renew rate-limit leases: %s", exc)

    # -- releasing ---------------------------------------------------------------------

    def release(
        self,
        limits: Limits,
        charged: int,
        used: int | None,
        permit: str,
        info: RateInfo | None,
    ) -> None:
        """Give back a permit; never raises (a failure is logged and the lease expires).

        Called on an event loop, the release goes to the releaser thread: it
        does not block the loop, and does not need the loop to outlive it.
        """
        with self._lock:
            self._held.pop(permit, None)  # no more heartbeats, whatever happens next
        pause_requests, pause_tokens = info.pause() if info is not None else (0.0, 0.0)
        args: list[Any] = [
            len(limits),
            charged,
            -1 if used is None else used,
            permit,
            pause_requests,
            pause_tokens,
            *_shape(limits),
        ]
        keys = self._keys(limits)
        if not _on_loop():
            self._release_now(keys, args)
            return
        future = self._pool("releaser").submit(self._release_now, keys, args)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._settled)

    def _settled(self, future: concurrent.futures.Future[None]) -> None:
        with self._lock:
            self._pending.discard(future)

    def _release_now(self, keys: list[str], args: list[Any]) -> None:
        try:
            self._run(self._release, keys, args)
        except LimiterUnavailable as exc:
            self.failed_releases.append(exc)
            log.warning(
                "rate-limit release failed (the lease expires within %.0fs): %s",
                self.lease,
                exc,
                extra={"llmport_event": "limiter_release_failed"},
            )

    def _pool(self, which: str) -> concurrent.futures.ThreadPoolExecutor:
        with self._lock:
            self._check_fork()
            if which == "releaser":
                if self._releaser is None:
                    self._releaser = concurrent.futures.ThreadPoolExecutor(
                        2, thread_name_prefix="llmport-redis-release"
                    )
                return self._releaser
            if self._askers is None:
                self._askers = concurrent.futures.ThreadPoolExecutor(
                    8, thread_name_prefix="llmport-redis-acquire"
                )
            return self._askers

    def close(self) -> None:
        """Finish the handed-off releases, stop the heartbeat, close the connections.

        A closed limiter can still be used: it starts its threads and connects again.
        """
        with self._lock:
            self._stop.set()
            pools = (self._askers, self._releaser)
            self._fresh_threads()
        for pool in pools:
            if pool is not None:
                pool.shutdown(wait=True)
        self._client.close()


def _heartbeat(ref: weakref.ref[RedisLimiter], stop: threading.Event, every: float) -> None:
    """The heartbeat thread: renew until the limiter closes or is collected."""
    while not stop.wait(every):
        limiter = ref()
        if limiter is None:
            return
        limiter.renew()
        del limiter  # hold no reference while waiting


def _give_back(future: concurrent.futures.Future[Permit | float]) -> None:
    """A permit granted to an acquire whose caller was cancelled: release it at once."""
    if future.cancelled() or future.exception() is not None:
        return
    got = future.result()
    if not isinstance(got, (int, float)):
        got.release()


class _RedisPermit:
    __slots__ = ("_done", "_limiter", "_limits", "_permit", "_tokens")

    def __init__(self, limiter: RedisLimiter, limits: Limits, tokens: int, permit: str) -> None:
        self._limiter = limiter
        self._limits = limits
        self._tokens = tokens
        self._permit = permit
        self._done = False

    def release(self, used_tokens: int | None = None, info: RateInfo | None = None) -> None:
        if self._done:
            return
        self._done = True
        self._limiter.release(self._limits, self._tokens, used_tokens, self._permit, info)
