"""The Redis limiter (see the package docstring for the model)."""

from __future__ import annotations

import asyncio
import threading
import uuid
import weakref
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from llmport.controls.limits import CONCURRENCY_POLL, Limit, Permit, RateInfo

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

Limits = tuple[tuple[str, Limit], ...]


def _shape(limits: Limits) -> list[float]:
    out: list[float] = []
    for _, limit in limits:
        out += [
            60.0 / limit.rpm if limit.rpm else 0.0,
            60.0 / limit.tpm if limit.tpm else 0.0,
            float(limit.concurrency or 0),
        ]
    return out


class RedisLimiter:
    """The :class:`llmport.controls.limits.Limiter` whose buckets live in Redis.

    One sync client for sync runs, one async client per event loop for
    async runs (redis-py's async connections belong to one loop).
    """

    def __init__(self, url: str, *, prefix: str = "llmport:limit:", lease: float = 600.0) -> None:
        import redis

        self.url = url
        self.prefix = prefix
        self.lease = lease
        self._client = redis.Redis.from_url(url)
        self._acquire = self._client.register_script(ACQUIRE)
        self._release = self._client.register_script(RELEASE)
        self._lock = threading.Lock()
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._pending: set[asyncio.Task[Any]] = set()

    @classmethod
    def from_url(cls, url: str) -> RedisLimiter:
        """``redis://host:port/db?prefix=...&lease=...``: the llmport options leave the URL."""
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        ours = {k: v for k, v in query if k in ("prefix", "lease")}
        rest = urlencode([(k, v) for k, v in query if k not in ("prefix", "lease")])
        clean = urlunsplit(parts._replace(query=rest))
        return cls(
            clean,
            prefix=ours.get("prefix", "llmport:limit:"),
            lease=float(ours.get("lease", 600.0)),
        )

    def __repr__(self) -> str:
        host = urlsplit(self.url).hostname or self.url.split("?")[0]
        return f"RedisLimiter({host!r}, prefix={self.prefix!r})"

    def _keys(self, limits: Limits) -> list[str]:
        keys = []
        for key, _ in limits:
            base = self.prefix + key
            keys += [base + ":req", base + ":tok", base + ":conc"]
        return keys

    def _acquire_args(self, limits: Limits, tokens: int, permit: str) -> list[Any]:
        return [len(limits), tokens, permit, self.lease, CONCURRENCY_POLL, *_shape(limits)]

    def try_acquire(self, limits: Limits, tokens: int) -> Permit | float:
        permit = uuid.uuid4().hex
        answer = self._acquire(self._keys(limits), self._acquire_args(limits, tokens, permit))
        return self._answer(answer, limits, tokens, permit)

    async def atry_acquire(self, limits: Limits, tokens: int) -> Permit | float:
        permit = uuid.uuid4().hex
        script = self._async_scripts()[0]
        answer = await script(self._keys(limits), self._acquire_args(limits, tokens, permit))
        return self._answer(answer, limits, tokens, permit)

    def _answer(self, answer: Any, limits: Limits, tokens: int, permit: str) -> Permit | float:
        text = answer.decode() if isinstance(answer, bytes) else str(answer or "")
        if text:
            return max(float(text), 0.001)
        return _RedisPermit(self, limits, tokens, permit)

    def _async_scripts(self) -> tuple[Any, Any]:
        loop = asyncio.get_running_loop()
        with self._lock:
            scripts = self._loops.get(loop)
            if scripts is None:
                import redis.asyncio

                client = redis.asyncio.Redis.from_url(self.url)
                scripts = (
                    client.register_script(ACQUIRE),
                    client.register_script(RELEASE),
                    client,
                )
                self._loops[loop] = scripts
        return scripts[0], scripts[1]

    def release(
        self,
        limits: Limits,
        charged: int,
        used: int | None,
        permit: str,
        info: RateInfo | None,
    ) -> None:
        """Give back a permit: from a running event loop asynchronously, else now."""
        pause_requests, pause_tokens = info.pause() if info is not None else (0.0, 0.0)
        keys = self._keys(limits)
        args: list[Any] = [
            len(limits),
            charged,
            -1 if used is None else used,
            permit,
            pause_requests,
            pause_tokens,
            *_shape(limits),
        ]
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._release(keys, args)
            return
        script = self._async_scripts()[1]
        task = asyncio.ensure_future(script(keys, args))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def close(self) -> None:
        self._client.close()


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
