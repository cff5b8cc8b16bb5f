"""The entry point: ``redis://``, ``rediss://`` and ``unix://`` limiter URLs."""

from __future__ import annotations

from collections.abc import Callable

from llmport.plugins.hookspecs import hookimpl


def _make(url: str) -> object:
    from .limiter import RedisLimiter  # redis is imported when a runtime first needs it

    return RedisLimiter.from_url(url)


@hookimpl
def llmport_limiters(register: Callable[..., None]) -> None:
    for scheme in ("redis", "rediss", "unix"):
        register(scheme, _make)
