"""``recording_backoff``: retry delays recorded instead of slept, for tests."""

from __future__ import annotations

from typing import Any


def recording_backoff(delays: list[float], **settings: Any) -> Any:
    """A :class:`~llmport.controls.retry.Backoff` that records each delay instead of sleeping.

    For testing retry behaviour without waiting, sync and async alike::

        delays: list[float] = []
        rt = Runtime(model=..., backoff=recording_backoff(delays, jitter=False))
        ...
        assert delays == [2.0]          # the vendor's Retry-After was honoured

    ``settings`` are the other Backoff fields (``initial``, ``jitter``, ...).
    """
    from ..controls.retry import Backoff

    async def async_sleep(seconds: float) -> None:
        delays.append(seconds)

    return Backoff(sleep=delays.append, async_sleep=async_sleep, **settings)
