"""Retries: exponential backoff with full jitter, honouring Retry-After.

Only one model request is retried at a time (never a tool that already
ran). A provider classifies its errors (``ProviderError.retryable``); for a
plain ``call=`` function every exception is transient except ``TypeError``,
``NotImplementedError`` and llmport's own input errors.

The wait a vendor asks for (``retry-after-ms``, ``retry-after`` in seconds
or as an HTTP date, Google's ``google.rpc.RetryInfo``) is read here once:
the retries honour it, the error plumbing and the limiters put it on errors.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import AttemptFailure, ExecFailed, InputError, LlmportError, ProviderError
from ..patterns import pattern
from ..slotted import dataclass, field

if TYPE_CHECKING:
    import random


# --- retry-after: where a vendor said how long to wait (one parser) --------------

_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_DURATION = pattern(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def retry_after_from_headers(headers: Mapping[str, Any] | None) -> float | None:
    """Seconds a vendor asked us to wait: ``retry-after-ms``, else ``retry-after``.

    ``retry-after`` may be seconds or an HTTP date. Unparseable values are
    ignored (None); negative waits become 0.
    """
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    import email.utils  # only for HTTP-date values: keeps ``import llmport`` cheap

    parsed = email.utils.parsedate_tz(str(raw))
    if parsed is None:
        return None
    return max(0.0, email.utils.mktime_tz(parsed) - time.time())


def retry_after_from_details(details: Any) -> float | None:
    """Seconds from a ``google.rpc.RetryInfo`` detail (``"retryDelay": "7s"``), if any."""
    error = details.get("error", details) if isinstance(details, dict) else None
    items = error.get("details") if isinstance(error, dict) else None
    for item in items or []:
        if isinstance(item, dict) and item.get("@type") == _RETRY_INFO:
            match = _DURATION.match(str(item.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


async def _asyncio_sleep(delay: float) -> None:
    import asyncio  # not at import time: ``import llmport`` stays cheap

    await asyncio.sleep(delay)


@dataclass(slots=True, frozen=True)
class Backoff:
    """How long to wait between attempts.

    The delay before attempt ``n + 1`` is uniform in
    ``[0, min(maximum, initial * multiplier ** (n - 1))]`` (full jitter), or
    exactly the vendor's Retry-After when it gave one (capped at
    ``max_retry_after``). ``Backoff.none()`` never sleeps (for tests);
    ``sleep`` / ``async_sleep`` may be replaced to observe the delays.
    """

    initial: float = 0.5
    maximum: float = 20.0
    multiplier: float = 2.0
    jitter: bool = True
    respect_retry_after: bool = True
    max_retry_after: float = 60.0
    sleep: Callable[[float], Any] = field(default=time.sleep, compare=False)
    async_sleep: Callable[[float], Awaitable[Any]] = field(default=_asyncio_sleep, compare=False)
    rng: random.Random | None = field(default=None, compare=False)

    @classmethod
    def none(cls) -> Backoff:
        """No waiting at all, Retry-After included."""
        return cls(initial=0.0, maximum=0.0, respect_retry_after=False)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        if retry_after is not None and self.respect_retry_after:
            return max(0.0, min(retry_after, self.max_retry_after))
        cap = min(self.maximum, self.initial * self.multiplier ** (attempt - 1))
        if not self.jitter:
            return cap
        if self.rng is not None:
            return self.rng.uniform(0.0, cap)
        import random  # the first jittered retry loads it, not `import llmport`

        return random.uniform(0.0, cap)


def is_retryable(exc: BaseException, *, plain_callable: bool) -> bool:
    """The retry rule: which failures are retried, and how often."""
    if isinstance(exc, ProviderError):
        return exc.retryable
    if isinstance(exc, (InputError, TypeError, NotImplementedError)):
        return False
    if isinstance(exc, LlmportError):
        return False
    if not isinstance(exc, Exception):  # KeyboardInterrupt, CancelledError, SystemExit
        return False
    return plain_callable


def retry_after_of(exc: BaseException) -> float | None:
    return exc.retry_after if isinstance(exc, ProviderError) else None


@dataclass(slots=True)
class Attempts:
    """Record of every attempt of one model request."""

    #: A tuple grown on failure: the shared empty one until then (no list held for
    #: every request in flight).
    failures: tuple[AttemptFailure, ...] = ()
    count: int = 0

    def note(self, failure: AttemptFailure) -> None:
        """Record a failed attempt."""
        self.failures += (failure,)


def after_failure(
    exc: Exception,
    number: int,
    *,
    max_attempts: int,
    backoff: Backoff,
    plain_callable: bool,
    function_name: str | None,
    attempts: Attempts,
    on_failure: Callable[[AttemptFailure], None] | None,
    model: str = "",
) -> float:
    """Record a failed attempt; raise if it is the last one, else return the delay.

    Permanent errors are re-raised as they are (their typed error at once);
    transient ones that used up every attempt become :class:`ExecFailed`.
    """
    retryable = is_retryable(exc, plain_callable=plain_callable)
    last = not retryable or number >= max_attempts
    delay = 0.0 if last else backoff.delay(number, retry_after_of(exc))
    failure = AttemptFailure(number, exc, delay, model)
    attempts.note(failure)
    if on_failure is not None:
        on_failure(failure)
    if not retryable:
        raise exc
    if last:
        raise ExecFailed(attempts.failures, function_name) from exc
    return delay
