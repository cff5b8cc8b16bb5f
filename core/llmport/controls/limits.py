"""Client-side rate limits: requests wait for capacity instead of collecting 429s.

    from llmport import Limit, Runtime

    rt = Runtime(limits={"openai:*": Limit(rpm=500, tpm=200_000, concurrency=20)})

* :class:`Limit` says how much a group of targets may use: requests per
  minute, tokens per minute, requests in flight. The keys of ``limits=`` are
  ``provider:model`` globs matched against the resolved target of each
  request (``"openai:gpt-4o-mini"``); **every** matching limit applies, and
  each key is one bucket shared by every model it matches.
* Before each attempt of a model request, the run asks the limiter for a
  :class:`Permit`. The limiter never waits itself: it answers a permit or the
  seconds to wait, and the *driver* waits (``time.sleep`` in sync code,
  ``await asyncio.sleep`` in async code; see :func:`acquire` /
  :func:`aacquire`). A wait that would pass the run's deadline raises
  :class:`LimitWaitTimeout`.
* rpm and tpm are GCRA buckets without a burst: requests are spaced evenly
  (600 rpm is one request every 0.1 s; a request that woke late may catch
  up one interval, so sleep jitter does not lower the rate). tpm is charged up front with the
  request's estimated input tokens and corrected with the real usage
  (input + output) when the response arrives. Concurrency slots are held
  for one attempt and released when it ends, however it ends.
* The vendors' answers tighten the buckets (:class:`RateInfo`): a 429 with
  Retry-After pauses the bucket until then; ``x-ratelimit-remaining-*: 0``
  (OpenAI) or ``anthropic-ratelimit-*-remaining: 0`` pauses it until the
  reset the headers name.
* The limiter comes from the ``llmport_limiters`` hook (a URL scheme per
  limiter: ``Runtime(limiter="redis://localhost:6379/0")`` with
  ``llmport-redis``); the default is :class:`InProcessLimiter`, one per
  Runtime unless you pass the same instance to several.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from ..errors import (
    ConfigError,
    LimiterUnavailable,
    LimitWaitTimeout,
    LlmportError,
    ProviderError,
    redact,
)
from ..observe.logs import logger
from ..patterns import pattern
from ..slotted import dataclass, field
from .retry import retry_after_from_headers

if TYPE_CHECKING:
    from .retry import Backoff

__all__ = [
    "Acquire",
    "Gate",
    "HeldBefore",
    "InProcessLimiter",
    "Limit",
    "LimitWaitTimeout",
    "Limiter",
    "LimiterUnavailable",
    "Permit",
    "RateInfo",
    "aacquire",
    "acquire",
    "check_limits",
    "match_limits",
    "rate_info_from_headers",
]


@dataclass(slots=True, frozen=True)
class Limit:
    """How much one bucket may use: requests/minute, tokens/minute, requests in flight."""

    rpm: float | None = None
    tpm: float | None = None
    concurrency: int | None = None
    #: When the limiter's backing service is down: ``"fail"`` raises
    #: :class:`~llmport.errors.LimiterUnavailable`, ``"allow"`` sends unlimited.
    on_unavailable: Literal["fail", "allow"] = "fail"

    def __post_init__(self) -> None:
        if self.on_unavailable not in ("fail", "allow"):
            raise ConfigError(
                f"Limit on_unavailable must be 'fail' or 'allow', got {self.on_unavailable!r}"
            )
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"Limit {name} must be a number > 0, got {value!r}")
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f"Limit {name} must be a number > 0, got {value!r}")
        c = self.concurrency
        if c is not None and (isinstance(c, bool) or not isinstance(c, int) or c < 1):
            raise ConfigError(f"Limit concurrency must be an integer >= 1, got {c!r}")

    @classmethod
    def of(cls, value: Limit | Mapping[str, Any], where: str = "limits") -> Limit:
        """A Limit from itself or a configuration table ``{rpm = 500, tpm = 1e5}``."""
        if isinstance(value, Limit):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: a limit must be a Limit or a table, got {value!r}")
        unknown = set(value) - {"rpm", "tpm", "concurrency", "on_unavailable"}
        if unknown:
            raise ConfigError(f"{where}: unknown limit key(s) {', '.join(sorted(unknown))}")
        return cls(**dict(value))


def check_limits(limits: Mapping[str, Any] | None, where: str = "limits") -> dict[str, Limit]:
    """``{glob: Limit}`` checked: string keys, Limit (or table) values."""
    if limits is None:
        return {}
    if not isinstance(limits, Mapping):
        raise ConfigError(f"{where} must be a dict of 'provider:model' globs to Limit")
    out: dict[str, Limit] = {}
    for key, value in limits.items():
        if not isinstance(key, str) or not key:
            raise ConfigError(f"{where}: keys must be 'provider:model' globs, got {key!r}")
        out[key] = Limit.of(value, f"{where}[{key!r}]")
    return out


def match_limits(limits: Mapping[str, Limit], target: str) -> tuple[tuple[str, Limit], ...]:
    """Every ``(glob, Limit)`` whose glob matches ``target``, in declaration order."""
    return tuple((k, v) for k, v in limits.items() if fnmatchcase(target, k))


# --- what the vendors say ----------------------------------------------------------------

_DURATION_PART = pattern(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _seconds(raw: Any, now_wall: float) -> float | None:
    """``6m0s`` / ``1.5s`` / ``20ms`` (OpenAI), an RFC 3339 time (Anthropic) or seconds."""
    if raw is None:
        return None
    text = str(raw).strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION_PART.findall(text)
    if parts and "".join(n + u for n, u in parts) == text:
        return sum(float(n) * _UNITS[u] for n, u in parts)
    try:
        from datetime import datetime

        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, when.timestamp() - now_wall)


def _int(raw: Any) -> int | None:
    try:
        return int(float(str(raw)))
    except (TypeError, ValueError):
        return None


@dataclass(slots=True, frozen=True)
class RateInfo:
    """What a vendor said about its limits: remaining capacity, and seconds until reset."""

    remaining_requests: int | None = None
    remaining_tokens: int | None = None
    reset_requests: float | None = None
    reset_tokens: float | None = None
    retry_after: float | None = None

    def pause(self) -> tuple[float, float]:
        """(seconds the request bucket must pause, seconds the token bucket must pause)."""
        requests = tokens = 0.0
        if self.retry_after:
            requests = tokens = self.retry_after
        if self.remaining_requests == 0 and self.reset_requests:
            requests = max(requests, self.reset_requests)
        if self.remaining_tokens == 0 and self.reset_tokens:
            tokens = max(tokens, self.reset_tokens)
        return requests, tokens


def rate_info_from_headers(
    headers: Mapping[str, Any] | None, *, now_wall: float | None = None
) -> RateInfo | None:
    """Parse OpenAI's ``x-ratelimit-*``, Anthropic's ``anthropic-ratelimit-*`` and Retry-After."""
    if not headers:
        return None
    h = {str(k).lower(): v for k, v in headers.items()}
    wall = time.time() if now_wall is None else now_wall
    retry_after = retry_after_from_headers(h)
    if "x-ratelimit-remaining-requests" in h or "x-ratelimit-remaining-tokens" in h:
        info = RateInfo(
            _int(h.get("x-ratelimit-remaining-requests")),
            _int(h.get("x-ratelimit-remaining-tokens")),
            _seconds(h.get("x-ratelimit-reset-requests"), wall),
            _seconds(h.get("x-ratelimit-reset-tokens"), wall),
            retry_after,
        )
    elif any(k.startswith("anthropic-ratelimit-") for k in h):
        tokens = h.get("anthropic-ratelimit-input-tokens-remaining")
        tokens_reset = h.get("anthropic-ratelimit-input-tokens-reset")
        if tokens is None:
            tokens = h.get("anthropic-ratelimit-tokens-remaining")
            tokens_reset = h.get("anthropic-ratelimit-tokens-reset")
        info = RateInfo(
            _int(h.get("anthropic-ratelimit-requests-remaining")),
            _int(tokens),
            _seconds(h.get("anthropic-ratelimit-requests-reset"), wall),
            _seconds(tokens_reset, wall),
            retry_after,
        )
    elif retry_after is not None:
        info = RateInfo(retry_after=retry_after)
    else:
        return None
    return info


def rate_info_of_error(exc: BaseException) -> RateInfo | None:
    """What a failed attempt says about the limits: headers if the error kept them, else 429."""
    headers = getattr(exc, "headers", None)
    if isinstance(headers, Mapping):
        info = rate_info_from_headers(headers)
        if info is not None:
            return info
    if isinstance(exc, ProviderError) and exc.status == 429:
        return RateInfo(retry_after=exc.retry_after if exc.retry_after is not None else 1.0)
    return None


# --- the limiter contract -------------------------------------------------------------------


@runtime_checkable
class Permit(Protocol):
    """Capacity granted for one attempt; ``release`` exactly once when the attempt ends.

    ``used_tokens`` (input + output of the response, when known) corrects the
    up-front tpm charge; ``info`` tightens the buckets. ``release`` never
    raises (it may run after the model answered): a limiter that cannot give
    the capacity back logs it, and its lease expires. It must not need the
    event loop it was called on to outlive the call (``asyncio.run`` may end
    right after it).
    """

    def release(self, used_tokens: int | None = None, info: RateInfo | None = None) -> None: ...


@runtime_checkable
class Limiter(Protocol):
    """Where the buckets live. Never sleeps: answers a :class:`Permit` or seconds to wait.

    ``limits`` are the ``(bucket key, Limit)`` pairs that apply to the request,
    ``tokens`` its estimated input tokens. The async variant must not block
    the event loop (an in-memory limiter may simply call the sync one). A
    backing service that does not answer within a bounded time raises
    :class:`~llmport.errors.LimiterUnavailable` (anything else raised is
    turned into one).
    """

    def try_acquire(self, limits: tuple[tuple[str, Limit], ...], tokens: int) -> Permit | float: ...

    async def atry_acquire(
        self, limits: tuple[tuple[str, Limit], ...], tokens: int
    ) -> Permit | float: ...

    def close(self) -> None: ...


#: How long a request waiting for a concurrency slot sleeps before asking again.
CONCURRENCY_POLL = 0.02


@dataclass(slots=True)
class _Bucket:
    """One key's state: GCRA arrival times and the calls in flight."""

    tat_requests: float = 0.0  # GCRA theoretical arrival times (monotonic seconds)
    tat_tokens: float = 0.0
    in_flight: int = 0


class InProcessLimiter:
    """The default limiter: buckets in this process's memory, thread- and task-safe.

    Share one instance between runtimes that draw on the same vendor account
    (``Runtime(limiter=shared)``); it never sleeps (the drivers do).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, _Bucket] = {}

    def try_acquire(self, limits: tuple[tuple[str, Limit], ...], tokens: int) -> Permit | float:
        now = self._clock()
        with self._lock:
            wait = 0.0
            buckets = []
            for key, limit in limits:
                b = self._buckets.get(key)
                if b is None:
                    b = self._buckets[key] = _Bucket(now, now)
                buckets.append(b)
                if limit.rpm is not None:
                    wait = max(wait, b.tat_requests - now)
                if limit.tpm is not None:
                    wait = max(wait, b.tat_tokens - now)
                if limit.concurrency is not None and b.in_flight >= limit.concurrency:
                    wait = max(wait, CONCURRENCY_POLL)
            if wait > 0:
                return wait
            for b, (_, limit) in zip(buckets, limits, strict=True):
                if limit.rpm is not None:  # a late waker may catch up one interval
                    interval = 60.0 / limit.rpm
                    b.tat_requests = max(b.tat_requests, now - interval) + interval
                if limit.tpm is not None:
                    b.tat_tokens = max(b.tat_tokens, now) + tokens * 60.0 / limit.tpm
                if limit.concurrency is not None:
                    b.in_flight += 1
        return _InProcessPermit(self, limits, tokens)

    async def atry_acquire(
        self, limits: tuple[tuple[str, Limit], ...], tokens: int
    ) -> Permit | float:
        return self.try_acquire(limits, tokens)  # memory only: never blocks the loop

    def _release(
        self,
        limits: tuple[tuple[str, Limit], ...],
        charged: int,
        used: int | None,
        info: RateInfo | None,
    ) -> None:
        now = self._clock()
        pause_requests, pause_tokens = info.pause() if info is not None else (0.0, 0.0)
        with self._lock:
            for key, limit in limits:
                b = self._buckets[key]
                if limit.concurrency is not None:
                    b.in_flight = max(0, b.in_flight - 1)
                if limit.tpm is not None and used is not None:
                    b.tat_tokens += (used - charged) * 60.0 / limit.tpm
                if pause_requests:
                    b.tat_requests = max(b.tat_requests, now + pause_requests)
                if pause_tokens:
                    b.tat_tokens = max(b.tat_tokens, now + pause_tokens)

    def close(self) -> None:
        pass


class _InProcessPermit:
    __slots__ = ("_done", "_limiter", "_limits", "_tokens")

    def __init__(
        self, limiter: InProcessLimiter, limits: tuple[tuple[str, Limit], ...], tokens: int
    ) -> None:
        self._limiter = limiter
        self._limits = limits
        self._tokens = tokens
        self._done = False

    def release(self, used_tokens: int | None = None, info: RateInfo | None = None) -> None:
        if self._done:
            return
        self._done = True
        self._limiter._release(self._limits, self._tokens, used_tokens, info)


# --- in a run: the effect the drivers perform --------------------------------------------------


@dataclass(slots=True, frozen=True)
class Gate:
    """The limits that apply to one run's target, with the limiter that keeps them."""

    limiter: Limiter
    limits: tuple[tuple[str, Limit], ...]
    target: str


@dataclass(slots=True, frozen=True)
class Acquire:
    """Wait for capacity, then hold it for one attempt; the answer is a :class:`Permit`.

    The driver asks the limiter, sleeps (or awaits) the delay it answers, and
    asks again; ``deadline`` (``time.monotonic()`` seconds) bounds the wait.
    """

    gate: Gate
    tokens: int
    backoff: Backoff
    deadline: float | None = None
    waited: list[float] = field(default_factory=list, compare=False)


def _check_deadline(effect: Acquire, wait: float) -> None:
    if effect.deadline is not None and time.monotonic() + wait > effect.deadline:
        raise LimitWaitTimeout(effect.gate.target, wait)


class _Unlimited:
    """The permit of a call let through while the limiter is down (nothing to give back)."""

    __slots__ = ()

    def release(self, used_tokens: int | None = None, info: RateInfo | None = None) -> None:
        pass


class HeldBefore:
    """The permit of a durable run's request whose capacity an earlier attempt of the run
    took (the wait is a recorded step): nothing is taken now, so nothing is given back."""

    __slots__ = ()

    def release(self, used_tokens: int | None = None, info: RateInfo | None = None) -> None:
        pass


def _unavailable(gate: Gate, failure: LimiterUnavailable) -> Permit:
    """``on_unavailable``: unlimited when every matching limit allows it, else raise."""
    if any(limit.on_unavailable != "allow" for _, limit in gate.limits):
        raise failure
    logger().warning(
        "%s: %s; sending without the limit (on_unavailable='allow')",
        gate.target,
        failure,
        extra={"llmport_event": "limiter_unavailable", "llmport_model": gate.target},
    )
    return _Unlimited()


def _as_unavailable(limiter: Limiter, exc: Exception) -> LimiterUnavailable | None:
    """The typed error for what a limiter raised; None for llmport's own other errors."""
    if isinstance(exc, LimiterUnavailable):
        return exc
    if isinstance(exc, LlmportError):
        return None
    return LimiterUnavailable(repr(limiter), redact(f"{type(exc).__name__}: {exc}"))


def _ask(gate: Gate, tokens: int) -> Permit | float:
    try:
        return gate.limiter.try_acquire(gate.limits, tokens)
    except Exception as exc:
        failure = _as_unavailable(gate.limiter, exc)
        if failure is None:
            raise
    return _unavailable(gate, failure)  # raised outside the handler: no driver error chained


async def _aask(gate: Gate, tokens: int) -> Permit | float:
    try:
        return await gate.limiter.atry_acquire(gate.limits, tokens)
    except Exception as exc:
        failure = _as_unavailable(gate.limiter, exc)
        if failure is None:
            raise
    return _unavailable(gate, failure)


def acquire(effect: Acquire) -> Permit:
    """Perform :class:`Acquire` in sync code: ``backoff.sleep`` between asks."""
    while True:
        got = _ask(effect.gate, effect.tokens)
        if not isinstance(got, (int, float)):
            return got
        _check_deadline(effect, got)
        effect.waited.append(got)
        effect.backoff.sleep(got)


async def aacquire(effect: Acquire) -> Permit:
    """Perform :class:`Acquire` in async code: ``await backoff.async_sleep`` between asks."""
    while True:
        got = await _aask(effect.gate, effect.tokens)
        if not isinstance(got, (int, float)):
            return got
        _check_deadline(effect, got)
        effect.waited.append(got)
        await effect.backoff.async_sleep(got)


def make_limiter(spec: Any, factories: Mapping[str, Callable[[str], Limiter]]) -> Limiter:
    """A limiter from ``Runtime(limiter=...)``: None/"memory" (in process), an instance, a URL."""
    if spec is None or spec == "memory":
        return InProcessLimiter()
    if not isinstance(spec, str):
        if isinstance(spec, Limiter):
            return spec
        raise ConfigError(f"limiter must be a URL or a Limiter, got {type(spec).__name__}")
    scheme = spec.split(":", 1)[0].lower()
    factory = factories.get(scheme)
    if factory is None:
        known: Iterable[str] = sorted({"memory", *factories})
        hint = " (pip install llmport-redis)" if scheme.startswith(("redis", "unix")) else ""
        raise ConfigError(f"no limiter for {scheme!r} URLs{hint}; known: {', '.join(known)}")
    return factory(spec)
